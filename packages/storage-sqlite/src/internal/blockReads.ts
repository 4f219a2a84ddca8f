import type Database from "better-sqlite3"
import type { PackedBlocks, StoredEntry, SummaryBuckets } from "@dashstream/core"
import {
  type BlockEntry,
  entriesAfter,
  entriesFrom,
  type EntryRef,
  refsBetween,
  renderEntry
} from "@dashstream/core/entryBlocks"
import { Sql } from "./statements.js"

const stored = (e: BlockEntry): StoredEntry => ({ ts: e.ts, json: e.json }) as StoredEntry

/** The block reads of one connection, prepared once. Throw SQLite errors. */
export interface BlockReads {
  /** The oldest `limit` entries with `ts > since` (`limit` -1: all), ascending. */
  readonly since: (stream: number, since: number, limit: number) => Array<StoredEntry>
  /**
   * The oldest `limit` (>= 1) entries with `after < ts <= to` (`to` null: no bound), ascending, with their bucket
   * values, JSON decoded when asked for: a range read's page (`RangeSource.page`). Stops reading blocks at the first
   * entry past `to`.
   */
  readonly between: (stream: number, after: number, to: number | null, limit: number) => Array<EntryRef>
  /**
   * A range read's page of blocks (`RangeSource.blocks`): the first `limit` holding entries in `(after, to]`, with
   * `buckets` those inside one bucket as their summaries.
   */
  readonly packed: (
    stream: number,
    after: number,
    to: number,
    limit: number,
    buckets: SummaryBuckets | null
  ) => PackedBlocks
  /** The same, each rendered as a read body's `data` element. */
  readonly page: (stream: number, since: number, limit: number) => Array<string>
  /**
   * The oldest `limit` (-1: all) of the `count` most recent entries, ascending. Only the blocks holding the entries
   * returned are read and only those entries decoded: a snapshot's first page of 8 of 1,000 entries reads one or two
   * blocks, not the 1,000 entries.
   */
  readonly recent: (stream: number, count: number, limit: number) => Array<StoredEntry>
}

/** Prepares {@link BlockReads} on `db`. */
export const prepareBlockReads = (db: Database.Database): BlockReads => {
  const from = db.prepare<[number, number, number, number], Buffer>(Sql.blocksFrom).pluck()
  const counts = db.prepare<[number], [number, number]>(Sql.blockCountsNewestFirst).raw()
  const startingAt = db.prepare<[number, number], Buffer>(Sql.blocksStartingAt).pluck()
  const packed = db
    .prepare<[number, number, number, number, number, number, number], [number, Buffer | null]>(Sql.packedBlocks)
    .raw()
  const summaries = db.prepare<[Record<string, number>], [number, Buffer | null]>(Sql.packedSummaries).raw()
  return {
    since: (stream, since, limit) => entriesAfter(from.iterate(stream, stream, since, since), since, limit, stored),
    between: (stream, after, to, limit) =>
      refsBetween(from.iterate(stream, stream, after, after), after, to ?? Infinity, limit),
    packed: (stream, after, to, limit, buckets) => {
      const [blocks, data] =
        buckets === null
          ? packed.get(stream, stream, after, after, after, to, limit)!
          : summaries.get({ stream, after, to, limit, lower: buckets.lower, span: buckets.span, n: buckets.n })!
      return { blocks, data: data === null ? [] : [data] }
    },
    page: (stream, since, limit) => entriesAfter(from.iterate(stream, stream, since, since), since, limit, renderEntry),
    recent: (stream, count, limit) => {
      if (count <= 0) return []
      // The block holding the oldest of the `count` most recent entries, and how many of its entries are older.
      let start: number | undefined
      let skip = 0
      let total = 0
      for (const [firstTs, n] of counts.iterate(stream) as IterableIterator<[number, number]>) {
        start = firstTs
        total += n
        if (total >= count) {
          skip = total - count
          break
        }
      }
      if (start === undefined) return []
      const take = limit < 0 ? count : Math.min(limit, count)
      return entriesFrom(startingAt.iterate(stream, start), skip, take, stored)
    }
  }
}
