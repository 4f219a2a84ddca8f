import { Effect } from "effect"
import { type SummaryBuckets, summaryBuckets } from "./BlockSummary.js"
import { BucketKeeper, type SelectionMode } from "./BucketSelection.js"
import { EntryRef } from "./entryBlocks.js"
import type { StorageFailure } from "./Errors.js"
import type { RangeQuery, StoredEntry } from "./StreamStore.js"
import type { Micros } from "./Time.js"

/**
 * Range reads (README, "Range reads"): a stream's entries in a time window, whole or reduced to `points` buckets by
 * the per-bucket rule of decimation (`BucketSelection.ts`), so a chart draws a minute or a year of a stream from a
 * few thousand stored entries. The bucketing and the streaming selection are here, once; a storage adapter only
 * supplies the window's entries, or with `points` its stored blocks, a page at a time ({@link RangeSource}) and calls
 * {@link readRangeFrom}.
 */

/** The most points a range read may ask for (README, "Range reads"). */
export const MAX_POINTS = 10_000

/** The fewest points a range read may ask for (README, "Range reads"). */
export const MIN_POINTS = 2

/**
 * The buckets of a `points=N` read over the window `[lower, upper]` (integer microseconds, `lower <= upper`): the
 * entry at `t` falls in bucket `min(N - 1, floor((t - lower) * N / (upper - lower)))`, so buckets are half-open
 * except the last, which also holds `upper`; one bucket when `upper = lower`. `(t - lower) * N` can exceed 2^53, so
 * both functions compute in exact integers (BigInt); a selector calls them once per bucket, not per entry.
 */
export interface PointBuckets {
  /** The bucket of `t` (`lower <= t <= upper`), 0 to N - 1. */
  readonly bucketOf: (t: number) => number
  /** The first `t` of bucket `k + 1`, i.e. the exclusive end of bucket `k`; `Infinity` for the last bucket. */
  readonly endOf: (k: number) => number
}

/** The {@link PointBuckets} of `n` (>= 1) buckets over `[lower, upper]`. */
export const pointBuckets = (lower: number, upper: number, n: number): PointBuckets => {
  if (upper === lower) return { bucketOf: () => 0, endOf: () => Infinity }
  const span = BigInt(upper - lower)
  const count = BigInt(n)
  return {
    bucketOf: (t) => Math.min(n - 1, Number((BigInt(t - lower) * count) / span)),
    // The smallest integer x with x * n >= (k + 1) * span is ceil((k + 1) * span / n).
    endOf: (k) => (k >= n - 1 ? Infinity : lower + Number((BigInt(k + 1) * span + count - 1n) / count))
  }
}

/**
 * The streaming selection of a `points=N` read: feed the window's entries in strictly increasing `ts` order (all
 * within `[lower, upper]`), then {@link finish} returns the kept items in ascending `ts`: in each bucket of
 * {@link pointBuckets}, what the bucket rule keeps (at most 4 entries a bucket in mode `"extremes"`, 1 in `"last"`).
 * Memory: the kept items of the buckets seen, never the entries dropped.
 */
export interface RangeSelector<T, K = T> {
  readonly push: (ts: number, value: number | null, item: T) => void
  /**
   * The exclusive end (`ts`, microseconds) of the bucket of the last entry pushed (`Infinity` for the last bucket,
   * `-Infinity` before the first push): every later entry below it falls in the same bucket.
   */
  readonly bucketEnd: () => number
  readonly finish: () => Array<K>
}

/**
 * A {@link RangeSelector} of `n` buckets over `[lower, upper]` keeping by `mode`; each kept item is turned into what
 * {@link RangeSelector.finish} returns by `keep` as soon as its bucket is complete (so an item that refers to a page
 * of stored bytes need not keep that page alive to the end of the read).
 */
export const makeRangeSelector: {
  <T>(mode: SelectionMode, lower: number, upper: number, n: number): RangeSelector<T>
  <T, K>(mode: SelectionMode, lower: number, upper: number, n: number, keep: (item: T) => K): RangeSelector<T, K>
} = <T, K>(
  mode: SelectionMode,
  lower: number,
  upper: number,
  n: number,
  keep?: (item: T) => K
): RangeSelector<T, K> => {
  const buckets = pointBuckets(lower, upper, n)
  const keeper = new BucketKeeper<T>(mode)
  const kept: Array<T | K> = []
  const dropped: Array<T> = []
  let end = -Infinity
  let open = false
  const close = () => {
    const from = kept.length
    keeper.keptInto(kept as Array<T>)
    if (keep !== undefined) for (let i = from; i < kept.length; i++) kept[i] = keep(kept[i] as T)
  }
  return {
    push: (ts, value, item) => {
      if (ts < end) {
        keeper.add(ts, value, item, dropped)
        // The dropped items are not needed here; truncating the array on every entry cost about a sixth of a
        // 30-day read's CPU (a runtime call each), so it is emptied once it has grown.
        if (dropped.length >= 1024) dropped.length = 0
        return
      }
      if (open) close()
      open = true
      end = buckets.endOf(buckets.bucketOf(ts))
      keeper.open(ts, value, item)
    },
    bucketEnd: () => end,
    finish: () => {
      if (open) close()
      open = false
      return kept as Array<K>
    }
  }
}

/** A stored entry as a range read sees it: `ts` (integer microseconds), the bucket value and the point's JSON. */
export interface RangeEntry {
  readonly ts: number
  readonly value: number | null
  readonly json: string
}

/**
 * What a storage adapter gives {@link readRangeFrom}: one stream's stored entries, read in pages so that no read
 * holds a window in memory.
 */
export interface RangeSource {
  /**
   * The oldest `limit` (>= 1) entries with `after < ts` and, unless `to` is `null`, `ts <= to` (microseconds),
   * ascending by `ts`: fewer than `limit` only when no more match, since a short page ends the read.
   */
  readonly page: (
    after: number,
    to: number | null,
    limit: number
  ) => Effect.Effect<ReadonlyArray<RangeEntry>, StorageFailure>
  /** The `ts` of the stream's newest entry; `null` when it has none. */
  readonly newest: Effect.Effect<number | null, StorageFailure>
  /**
   * The stored blocks holding the stream's entries with `after < ts <= to` (microseconds): the first `limit` (>= 1)
   * such blocks, ascending, their bytes in `data` in order (each entry in the layout of `@dashstream/core/entryBlocks`,
   * a buffer holding one block or several laid end to end), so the entries of `data` ascend by `ts`. The first
   * block may also hold entries at or before `after` and the last entries after `to`. Fewer than `limit` blocks only
   * when no more match; none: `blocks` 0. A page of a `points` read: the read ranks entries straight from these
   * bytes, without an object per entry. With `buckets`, a block that `readsAsSummary` (`BlockSummary.ts`) and has a
   * stored summary is given as its summary's bytes instead of its own (same layout, its first and last entries
   * included); a block without one (NULL, a database part-way through its backfill) is given whole.
   */
  readonly blocks: (
    after: number,
    to: number,
    limit: number,
    buckets: SummaryBuckets | null
  ) => Effect.Effect<PackedBlocks, StorageFailure>
}

/** A page of {@link RangeSource.blocks}: `blocks` stored blocks, their bytes in `data`, ascending. */
export interface PackedBlocks {
  readonly blocks: number
  readonly data: ReadonlyArray<Buffer>
}

/** Blocks per page {@link readRangeFrom} asks its source for by default (32 entries a block at most, a merge aside). */
export const defaultRangeBlocksPerPage = 512

/** Entries per page {@link readRangeFrom} asks its source for by default. */
export const defaultRangePageSize = 8_192

/** How long a range read holds the event loop at most before it yields, in milliseconds (see {@link yieldEvery}). */
const YIELD_AFTER_MS = 20

/**
 * `next` yields to the event loop once `ms` milliseconds have passed since the last yield, else does nothing: a source
 * that reads synchronously (SQLite) holds the loop a few pages at a time, not a window, without paying a timer turn
 * (about a millisecond) on every page.
 */
const yieldEvery = (ms: number) => {
  let since = performance.now()
  return {
    next: Effect.suspend(() => {
      const now = performance.now()
      if (now - since < ms) return Effect.void
      since = now
      return Effect.yieldNow()
    })
  }
}

const stored = (e: RangeEntry): StoredEntry => ({ ts: e.ts as Micros, json: e.json })

type Ranking = RangeSelector<RangeEntry, StoredEntry>

/**
 * A range read (see {@link RangeQuery}) over `source`, the one implementation of `StreamStore.readRange` that every
 * adapter calls. Without `points`: the window's entries, ascending, at most `limit`, read `pageSize` at a time. With
 * `points=N`: the window's bounds `L` (`from`, or `since`, or the oldest `ts` in the window) and `U` (`to`, or the
 * newest `ts` in the window) are settled first (one cheap read each, only for a missing bound), then the entries of
 * `[L, U]` are ranked from the source's stored blocks, `blocksPerPage` blocks a page, by {@link makeRangeSelector}
 * (only those that can still be kept are pushed, see `rankPacked`; a block inside one bucket comes as its summary,
 * see `BlockSummary.ts`): memory is one page plus the kept entries (4N at most). Between pages the fiber yields once
 * it has run 20 ms, so a source that reads synchronously holds the event loop a few pages at a time. Dies (a defect)
 * when a page's entries do not ascend.
 * A window without entries, or with `U < L`, reads `[]`. Fails with the source's `StorageFailure`.
 */
export const readRangeFrom = (
  source: RangeSource,
  query: RangeQuery,
  pageSize: number = defaultRangePageSize,
  blocksPerPage: number = defaultRangeBlocksPerPage
): Effect.Effect<ReadonlyArray<StoredEntry>, StorageFailure> =>
  Effect.gen(function* () {
    const turn = yieldEvery(YIELD_AFTER_MS)
    // Entries at ts 0 are valid: a `since` bound below 0 (`since=0`) means "from 0 on", as `from=0` does.
    const after = query.from !== null ? query.from - 1 : query.since !== null ? query.since : -1
    if (query.points === null) {
      const out: Array<StoredEntry> = []
      let cursor = after
      let remaining = query.limit ?? Infinity
      while (remaining > 0) {
        const asked = Math.min(pageSize, remaining)
        const page = yield* source.page(cursor, query.to, asked)
        for (const e of page) out.push(stored(e))
        if (page.length < asked) break
        remaining -= page.length
        cursor = page[page.length - 1]!.ts
        yield* turn.next
      }
      return out
    }
    let lower: number
    if (query.from !== null) lower = query.from
    else if (query.since !== null) lower = Math.max(0, query.since)
    else {
      const oldest = yield* source.page(after, query.to, 1)
      if (oldest.length === 0) return []
      lower = oldest[0]!.ts
    }
    let upper: number
    if (query.to !== null) upper = query.to
    else {
      const newest = yield* source.newest
      if (newest === null) return []
      upper = newest
    }
    if (upper < lower) return []
    const selector = makeRangeSelector(query.mode, lower, upper, query.points, stored)
    const buckets = summaryBuckets(lower, upper, query.points)
    // Bounded by `upper` even when `to` was not given, so entries stored after `U` was read stay out of the buckets.
    let cursor = after
    for (;;) {
      const page = yield* source.blocks(cursor, upper, blocksPerPage, buckets)
      let newest = cursor
      for (let i = 0; i < page.data.length && newest <= upper; i++) {
        newest = rankPacked(selector, page.data[i]!, newest, upper, i === 0)
      }
      if (page.blocks < blocksPerPage || newest >= upper) break
      cursor = newest
      yield* turn.next
    }
    return selector.finish()
  })

/**
 * Feeds `selector` the entries of `data` (entries ascending, the layout of `@dashstream/core/entryBlocks`) with
 * `after < ts <= upper`; returns the `ts` of the last entry read (`after` when `data` is empty). Throws
 * {@link UnorderedBlocks} when the entries do not ascend, or, unless `data` is the `first` buffer of its page (whose
 * first block may start before the cursor), when one is not above `after` (the read dies: a defect, never a wrong
 * answer).
 *
 * Not every entry is pushed: after the first entry of a bucket in `data`, the rest of that bucket's entries in `data`
 * are scanned without an object each, and only those that can still be kept are pushed, in `ts` order: the lowest
 * and the highest by value (the earliest of equal values) and the last. The selector keeps the same entries as if all
 * had been pushed, since what a bucket keeps (its first, last, lowest and highest, earliest among equals) is among
 * what each run of its entries would keep. A 30-day read of 10-second points at 1,000 points then creates about 4
 * objects per 259 entries instead of 259.
 */
const rankPacked = (selector: Ranking, data: Buffer, after: number, upper: number, first: boolean): number => {
  // DataView reads are inlined by the optimising compiler; Buffer's readDoubleLE is a call per value (it cost a
  // third of the ranking).
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength)
  const n = data.length
  let at = 0
  let newest = -Infinity
  while (at < n) {
    const ts = view.getFloat64(at, true)
    if (ts <= newest) throw new UnorderedBlocks()
    newest = ts
    const size = 20 + view.getUint32(at + 16, true)
    if (ts > upper) return ts
    if (ts <= after) {
      // Only the first buffer of a page may start at or before the cursor (its first block holds it).
      if (!first) throw new UnorderedBlocks()
      at += size
      continue
    }
    selector.push(ts, valueAt(view, at), new EntryRef(data, at, ts))
    at += size
    const end = selector.bucketEnd()
    let lowAt = -1
    let low = 0
    let highAt = -1
    let high = 0
    let lastAt = -1
    while (at < n) {
      const t = view.getFloat64(at, true)
      if (t >= end || t > upper) break
      if (t <= newest) throw new UnorderedBlocks()
      const v = view.getFloat64(at + 8, true)
      // NaN is a stored null: no value, never a lowest or highest.
      if (v === v) {
        if (lowAt < 0) {
          lowAt = highAt = at
          low = high = v
        } else if (v < low) {
          lowAt = at
          low = v
        } else if (v > high) {
          highAt = at
          high = v
        }
      }
      lastAt = at
      newest = t
      at += 20 + view.getUint32(at + 16, true)
    }
    if (lastAt < 0) continue
    // Offsets ascend with `ts`: push the candidates in offset order, each once.
    const a = lowAt < highAt ? lowAt : highAt
    const b = lowAt < highAt ? highAt : lowAt
    if (a >= 0 && a !== lastAt) pushAt(selector, data, view, a)
    if (b >= 0 && b !== a && b !== lastAt) pushAt(selector, data, view, b)
    pushAt(selector, data, view, lastAt)
  }
  return newest === -Infinity ? after : newest
}

/** Entries of a page of blocks that do not ascend: the source broke its contract (a defect of the adapter). */
class UnorderedBlocks extends Error {
  constructor() {
    super("a range read's page of blocks holds entries out of order")
  }
}

const valueAt = (view: DataView, at: number): number | null => {
  const v = view.getFloat64(at + 8, true)
  return v === v ? v : null
}

const pushAt = (selector: Ranking, data: Buffer, view: DataView, at: number): void => {
  const ts = view.getFloat64(at, true)
  selector.push(ts, valueAt(view, at), new EntryRef(data, at, ts))
}
