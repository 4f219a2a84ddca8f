import type Database from "better-sqlite3"
import type { StoredEntry } from "@dashstream/core"
import { type BlockEntry, decodeBlock, entriesAfter, renderEntry } from "./entryBlocks.js"
import { Sql } from "./statements.js"

const stored = (e: BlockEntry): StoredEntry => ({ ts: e.ts, json: e.json }) as StoredEntry

/** The block reads of one connection, prepared once. Throw SQLite errors. */
export interface BlockReads {
  /** The oldest `limit` entries with `ts > since` (`limit` -1: all), ascending. */
  readonly since: (stream: number, since: number, limit: number) => Array<StoredEntry>
  /** The same, each rendered as a read body's `data` element. */
  readonly page: (stream: number, since: number, limit: number) => Array<string>
  /** The `count` most recent entries, ascending. */
  readonly recent: (stream: number, count: number) => Array<StoredEntry>
}

/** Prepares {@link BlockReads} on `db`. */
export const prepareBlockReads = (db: Database.Database): BlockReads => {
  const from = db.prepare<[number, number, number, number], Buffer>(Sql.blocksFrom).pluck()
  const newestFirst = db.prepare<[number], Buffer>(Sql.blocksNewestFirst).pluck()
  return {
    since: (stream, since, limit) => entriesAfter(from.iterate(stream, stream, since, since), since, limit, stored),
    page: (stream, since, limit) => entriesAfter(from.iterate(stream, stream, since, since), since, limit, renderEntry),
    recent: (stream, count) => {
      const out: Array<StoredEntry> = []
      if (count <= 0) return out
      for (const data of newestFirst.iterate(stream)) {
        const entries = decodeBlock(data)
        for (let i = entries.length - 1; i >= 0; i--) {
          out.push(stored(entries[i]!))
          if (out.length === count) return out.reverse()
        }
      }
      return out.reverse()
    }
  }
}
