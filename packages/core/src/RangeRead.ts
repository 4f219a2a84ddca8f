import { Effect } from "effect"
import { BucketKeeper, type SelectionMode } from "./BucketSelection.js"
import type { StorageFailure } from "./Errors.js"
import type { RangeQuery, StoredEntry } from "./StreamStore.js"
import type { Micros } from "./Time.js"

/**
 * Range reads (README, "Range reads"): a stream's entries in a time window, whole or reduced to `points` buckets by
 * the per-bucket rule of decimation (`BucketSelection.ts`), so a chart draws a minute or a year of a stream from a
 * few thousand stored entries. The bucketing and the streaming selection are here, once; a storage adapter only
 * supplies the window's entries a page at a time ({@link RangeSource}) and calls {@link readRangeFrom}.
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
export interface RangeSelector<T> {
  readonly push: (ts: number, value: number | null, item: T) => void
  readonly finish: () => Array<T>
}

/** A {@link RangeSelector} of `n` buckets over `[lower, upper]` keeping by `mode`. */
export const makeRangeSelector = <T>(
  mode: SelectionMode,
  lower: number,
  upper: number,
  n: number
): RangeSelector<T> => {
  const buckets = pointBuckets(lower, upper, n)
  const keeper = new BucketKeeper<T>(mode)
  const kept: Array<T> = []
  const dropped: Array<T> = []
  let end = -Infinity
  let open = false
  return {
    push: (ts, value, item) => {
      if (ts < end) {
        keeper.add(ts, value, item, dropped)
        // The dropped items are not needed here; truncating the array on every entry cost about a sixth of a
        // 30-day read's CPU (a runtime call each), so it is emptied once it has grown.
        if (dropped.length >= 1024) dropped.length = 0
        return
      }
      if (open) keeper.keptInto(kept)
      open = true
      end = buckets.endOf(buckets.bucketOf(ts))
      keeper.open(ts, value, item)
    },
    finish: () => {
      if (open) keeper.keptInto(kept)
      open = false
      return kept
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
}

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

/**
 * A range read (see {@link RangeQuery}) over `source`, the one implementation of `StreamStore.readRange` that every
 * adapter calls. Without `points`: the window's entries, ascending, at most `limit`, read `pageSize` at a time. With
 * `points=N`: the window's bounds `L` (`from`, or `since`, or the oldest `ts` in the window) and `U` (`to`, or the
 * newest `ts` in the window) are settled first (one cheap read each, only for a missing bound), then every entry of
 * `[L, U]` is fed page by page to {@link makeRangeSelector}: memory is one page plus the kept entries (4N at
 * most). Between pages the fiber yields once it has run 20 ms, so a source that reads synchronously holds the event
 * loop a few pages at a time.
 * A window without entries, or with `U < L`, reads `[]`. Fails with the source's `StorageFailure`.
 */
export const readRangeFrom = (
  source: RangeSource,
  query: RangeQuery,
  pageSize: number = defaultRangePageSize
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
    const selector = makeRangeSelector<RangeEntry>(query.mode, lower, upper, query.points)
    // Bounded by `upper` even when `to` was not given, so entries stored after `U` was read stay out of the buckets.
    let cursor = after
    for (;;) {
      const page = yield* source.page(cursor, upper, pageSize)
      for (let i = 0; i < page.length; i++) {
        const e = page[i]!
        selector.push(e.ts, e.value, e)
      }
      if (page.length < pageSize) break
      cursor = page[page.length - 1]!.ts
      yield* turn.next
    }
    return selector.finish().map(stored)
  })
