import * as Path from "node:path"
import type Database from "better-sqlite3"
import {
  type DecimationEntry,
  type DecimationStore,
  type DecimationStream,
  type EntryId,
  isWidgetType,
  StorageError,
  type StreamId
} from "@dashstream/core"
import { type Context, Effect } from "effect"
import { storageFailure } from "./internal/errors.js"
import { summaryOf } from "./internal/blockMerge.js"
import { DecimationSql, Sql } from "./internal/statements.js"
import { type BlockEntry, decodeBlock, encodeBlock } from "@dashstream/core/entryBlocks"

/**
 * An entry is named by its stream and its `ts` (unique per stream): its {@link EntryId} is the text
 * `<stream id>/<ts>`, distinct across streams, as on PostgreSQL.
 */
const entryId = (stream: number, ts: number): EntryId => `${stream}/${ts}` as EntryId

interface StreamRow {
  readonly id: number
  readonly type: string
}

// Pass locks held in this process, by database file. SQLite has no lock that outlives a transaction without
// blocking writers, so exclusivity is per process: `serve` and a `dashstream decimate` beside it may both run a
// pass. That is safe: their deletes are serialised by SQLite's write lock, and since buckets nest, what either pass
// keeps is never deleted by the other (a coarse bucket's first, last, lowest and highest entries are also those of
// their finer buckets), so the data ends as a single pass at the later time leaves it.
const heldLocks = new Set<unknown>()

// Below every valid bound: ids start at 1, microsecond timestamps at 0 (or slightly below, for clients' own).
const NO_LOWER_BOUND = Number.MIN_SAFE_INTEGER

/**
 * The `DecimationStore` port over an open, migrated better-sqlite3 connection (docs/api.md section 9).
 *
 * Every operation is one prepared statement, run synchronously: a delete of a batch is one short `BEGIN IMMEDIATE`
 * transaction (another process's write lock is waited for up to the connection's busy timeout), over by the time
 * the event loop runs again, so it never overlaps a group commit of pushes (which also runs start to finish in one
 * turn) and pushes wait for one batch at most. `deleteEntries` never deletes the
 * stream's newest entry (guarded in the statement). `withPassLock` is exclusive within this process for this
 * database file (see `heldLocks`). SQLite errors map to `StorageUnavailable` (busy, locked, closed) or
 * `StorageError` (also for a stream of an unknown widget type). Throws when the statements cannot be prepared
 * (schema missing).
 */
export const make = (db: Database.Database): Context.Tag.Service<DecimationStore> => {
  const streams = db.prepare<[number, number, number], StreamRow>(DecimationSql.streams)
  const from = db.prepare<[number, number, number, number], Buffer>(Sql.blocksFrom).pluck()
  const newest = db.prepare<[number], number>(DecimationSql.newest).pluck()
  const blockAt = db.prepare<[number, number], { id: number; data: Buffer }>(Sql.blockAt)
  const updateBlock = db.prepare<[number, number, number, number, Buffer, Buffer | null, number]>(Sql.updateBlock)
  const deleteBlock = db.prepare<[number]>(Sql.deleteBlock)
  const entriesBetween = (stream: number, after: number, before: number, limit: number) => {
    const out: Array<DecimationEntry> = []
    if (limit <= 0) return out
    for (const data of from.iterate(stream, stream, after, after)) {
      for (const e of decodeBlock(data)) {
        if (e.ts <= after) continue
        if (e.ts >= before || out.length === limit) return out
        out.push({ id: entryId(stream, e.ts), ts: e.ts as DecimationEntry["ts"], value: e.value })
      }
    }
    return out
  }
  // Deletes the entries of `stream` at `tss` except its newest entry, block by block; the count deleted.
  const deleteAt = db.transaction((stream: number, tss: ReadonlyArray<number>): number => {
    const last = newest.get(stream)
    if (last === undefined) return 0
    const doomed = new Set(tss.filter((ts) => ts < last))
    const sorted = [...doomed].sort((a, b) => a - b)
    let deleted = 0
    let i = 0
    while (i < sorted.length) {
      const block = blockAt.get(stream, sorted[i]!)
      if (block === undefined) {
        i++
        continue
      }
      const entries = decodeBlock(block.data)
      const lastTs = entries[entries.length - 1]!.ts
      const kept: Array<BlockEntry> = []
      for (const e of entries)
        if (doomed.has(e.ts)) deleted++
        else kept.push(e)
      if (kept.length === 0) deleteBlock.run(block.id)
      else if (kept.length < entries.length) {
        const { data, lastAt } = encodeBlock(kept)
        const summary = summaryOf(data, kept.length)
        updateBlock.run(kept[0]!.ts, kept[kept.length - 1]!.ts, kept.length, lastAt, data, summary, block.id)
      }
      do i++
      while (i < sorted.length && sorted[i]! <= lastTs)
    }
    return deleted
  })
  // An in-memory database is private to its connection.
  const lockKey: unknown = db.memory ? db : Path.resolve(db.name)

  const toStream = (row: StreamRow): DecimationStream => {
    if (!isWidgetType(row.type)) {
      throw new StorageError({ cause: new Error(`stream ${row.id} has an unknown widget type ${row.type}`) })
    }
    return { id: row.id as StreamId, type: row.type }
  }

  return {
    streams: ({ after, limit, olderThan }) =>
      Effect.try({
        try: () => streams.all(after ?? NO_LOWER_BOUND, olderThan, limit).map(toStream),
        catch: (cause) => (cause instanceof StorageError ? cause : storageFailure(cause))
      }),
    entries: (stream, { after, before, limit }) =>
      Effect.try({
        try: (): ReadonlyArray<DecimationEntry> => entriesBetween(stream, after ?? NO_LOWER_BOUND, before, limit),
        catch: storageFailure
      }),
    deleteEntries: (stream, ids) =>
      ids.length === 0
        ? Effect.succeed(0)
        : Effect.try({
            try: () => {
              const prefix = `${stream}/`
              const tss: Array<number> = []
              for (const id of ids) {
                if (typeof id !== "string" || !id.startsWith(prefix)) continue
                const ts = Number(id.slice(prefix.length))
                if (Number.isSafeInteger(ts)) tss.push(ts)
              }
              // IMMEDIATE: the write lock is taken (waiting up to busy_timeout) before the transaction reads. A
              // deferred one reads first and then asks for the lock; if another process (`serve` beside
              // `dashstream decimate`) committed meanwhile, SQLite fails it at once with SQLITE_BUSY ("database is
              // locked"), without waiting, since its snapshot is stale.
              return deleteAt.immediate(stream, tss)
            },
            catch: storageFailure
          }),
    withPassLock: (effect) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.suspend(() => {
          if (heldLocks.has(lockKey)) return Effect.succeedNone
          heldLocks.add(lockKey)
          return restore(Effect.asSome(effect)).pipe(Effect.ensuring(Effect.sync(() => heldLocks.delete(lockKey))))
        })
      )
  }
}
