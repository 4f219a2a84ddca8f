import type { Micros, StoredEntry } from "@dashstream/core"
import { type BlockEntry, entriesAfter, entriesFrom, type EntryRef, refsBetween } from "@dashstream/core/entryBlocks"

/**
 * The reads of entries stored in blocks (`entry_blocks`, migration 0007): the SQL that finds the blocks, and the
 * decoding of only the entries a read returns (`@dashstream/core/entryBlocks`).
 */

/**
 * The SQL condition on `first_ts` of the blocks of stream `stream` that may hold entries with `ts > after` (SQL
 * expressions): the block holding `after` (the last one starting at or before it) and every later one. One index
 * probe, then the `(stream_id, first_ts)` range.
 */
export const fromBlockSql = (stream: string, after: string): string =>
  `first_ts >= coalesce((SELECT first_ts FROM entry_blocks WHERE stream_id = ${stream} AND first_ts <= ${after} ` +
  `ORDER BY first_ts DESC LIMIT 1), ${after})`

/**
 * A query of the blocks of stream `stream` a read of at most `limit` entries with `ts > after` needs (SQL
 * expressions; `limit` a `bigint`, null: all), as `first_ts, n, data` ascending; `extra` is more of the `WHERE`.
 * From the block holding `after` ({@link fromBlockSql}), at most `limit + 1` blocks (each holds at least one entry,
 * the first maybe none above `after`), and of those only the ones before which fewer than `limit` entries above
 * `after` lie (counted by `n`: the entries of the blocks between the first and this one): a page of 1,000 entries
 * sends about 32 blocks, not 1,001. The running count is a window over the scan, which stops at the limit.
 */
export const blocksAfterSql = (stream: string, after: string, limit: string, extra = ""): string =>
  `SELECT first_ts, n, data FROM (SELECT first_ts, n, data, sum(n) OVER w - n - first_value(n) OVER w AS skipped ` +
  `FROM entry_blocks WHERE stream_id = ${stream} AND ${fromBlockSql(stream, after)}${extra} ` +
  `WINDOW w AS (ORDER BY first_ts ROWS UNBOUNDED PRECEDING) ORDER BY first_ts LIMIT ${limit} + 1) AS b ` +
  `WHERE ${limit} IS NULL OR b.skipped < ${limit} ORDER BY first_ts`

/**
 * The entries with `after < ts <= to` (`to` null: no bound) of `blocks` (ascending), at most `limit`, with their
 * bucket values, JSON decoded when asked for: a range read's page (`RangeSource.page`).
 */
export const entriesBetweenOf = (
  blocks: ReadonlyArray<Buffer>,
  after: number,
  to: number | null,
  limit: number
): Array<EntryRef> => refsBetween(blocks, after, to ?? Infinity, limit)

/** A stored entry of a block, as the core port has it. */
export const storedEntry = (e: BlockEntry): StoredEntry => ({ ts: e.ts as Micros, json: e.json })

/** The entries with `ts > after` of `blocks` (ascending), at most `limit` (`null`: all). */
export const entriesSince = <T>(
  blocks: ReadonlyArray<Buffer>,
  after: number,
  limit: number | null,
  each: (e: BlockEntry) => T
): Array<T> => entriesAfter(blocks, after, limit ?? -1, each)

/**
 * The oldest `limit` of the `count` most recent entries of a stream, ascending, from the blocks that hold them given
 * newest first, each with `n` and `newer` (the entries in the blocks newer than it; see `liveRecentQuery`): only the
 * entries returned are decoded.
 */
export const recentEntries = (
  newestFirst: ReadonlyArray<{ readonly n: number; readonly newer: number; readonly data: Buffer }>,
  count: number,
  limit: number
): Array<StoredEntry> => {
  if (newestFirst.length === 0) return []
  const oldest = newestFirst[newestFirst.length - 1]!
  const blocks: Array<Buffer> = []
  for (let i = newestFirst.length - 1; i >= 0; i--) blocks.push(newestFirst[i]!.data)
  // The oldest block's entries older than the `count`-th most recent are skipped.
  return entriesFrom(blocks, Math.max(0, oldest.newer + oldest.n - count), Math.min(limit, count), storedEntry)
}
