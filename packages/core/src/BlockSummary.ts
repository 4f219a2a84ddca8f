import { BucketKeeper } from "./BucketSelection.js"

/**
 * Per-block summaries (README, "Range reads"): what the bucket rule keeps of a stored block alone, so that a range
 * read with `points` reads a block lying wholly inside one bucket as a few entries instead of all of its bytes.
 *
 * The rule decomposes: what a bucket keeps (its first, last, lowest and highest entries, the earliest among equal
 * values; `BucketSelection.ts`) is among what each run of its entries keeps, so a bucket ranked over the summaries of
 * its inner blocks (and the whole bytes of the blocks it shares with another bucket) keeps the same entries as over
 * every entry. The summary is kept in mode `"extremes"`: it holds the block's last entry, all mode `"last"` needs.
 */

/** Blocks of at most this many entries store no summary: it would hold (nearly) all of their entries. */
export const summaryMaxSkipped = 4

/** Whether a block of `n` entries stores a summary when it is written (`n` above {@link summaryMaxSkipped}). */
export const storesSummary = (n: number): boolean => n > summaryMaxSkipped

/**
 * The summary of a block's bytes (`data`: entries ascending by `ts`, the layout of `@dashstream/core/entryBlocks`):
 * the entries the bucket rule keeps of the block alone (`BucketKeeper`, mode `"extremes"`), 1 to 4 of them, copied
 * in the same layout, ascending. An empty `data` gives an empty buffer.
 */
export const summarizeBlock = (data: Uint8Array): Buffer => {
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength)
  const keeper = new BucketKeeper<number>("extremes")
  const none: Array<number> = []
  for (let at = 0, first = true; at < buf.length; at += 20 + view.getUint32(at + 16, true), first = false) {
    const ts = view.getFloat64(at, true)
    const v = view.getFloat64(at + 8, true)
    const value = v === v ? v : null
    if (first) keeper.open(ts, value, at)
    else {
      keeper.add(ts, value, at, none)
      none.length = 0
    }
  }
  const kept: Array<number> = []
  keeper.keptInto(kept)
  let bytes = 0
  for (const at of kept) bytes += 20 + view.getUint32(at + 16, true)
  const out = Buffer.allocUnsafe(bytes)
  let o = 0
  for (const at of kept) o += buf.copy(out, o, at, at + 20 + view.getUint32(at + 16, true))
  return out
}

/**
 * The buckets of a `points=N` read over `[lower, upper]` as a storage adapter's query tests them (see
 * `pointBuckets` in `RangeRead.ts`): the entry at `t` lies in bucket `min(N - 1, floor((t - lower) * N / span))`.
 * Integer microseconds; `span * n` below 2^62, so `(t - lower) * n` never overflows a 64-bit integer for any
 * `lower <= t <= upper` (see {@link summaryBuckets}).
 */
export interface SummaryBuckets {
  readonly lower: number
  readonly span: number
  readonly n: number
}

/**
 * The {@link SummaryBuckets} of `n` buckets over `[lower, upper]`, `null` when no block may be read as its summary:
 * a single bucket of one instant (`upper = lower`), or a window so long that `(upper - lower) * n` reaches 2^62
 * (about 14.6 years at 10,000 points), where 64-bit integer SQL could overflow; those reads take every block whole.
 */
export const summaryBuckets = (lower: number, upper: number, n: number): SummaryBuckets | null => {
  const span = upper - lower
  if (span <= 0 || span * n >= 2 ** 62) return null
  return { lower, span, n }
}

/**
 * Whether a range read's page may take a stored block (`first`..`last`, its first and last `ts`) as its summary:
 * the block lies wholly inside the read (`after < first`, `lower <= first`, `last <= upper`) and inside one bucket
 * of `b`. Each
 * storage adapter's page query tests the same condition in SQL (64-bit integer division, exact by
 * {@link SummaryBuckets}); a block that fails it, or has no summary, is read whole.
 */
export const readsAsSummary = (
  b: SummaryBuckets,
  after: number,
  upper: number,
  first: number,
  last: number
): boolean => {
  if (first <= after || first < b.lower || last > upper) return false
  const k = (t: number) => Number((BigInt(t - b.lower) * BigInt(b.n)) / BigInt(b.span))
  const a = k(first)
  return a === k(last) || a >= b.n - 1
}
