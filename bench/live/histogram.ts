/**
 * Latency histograms of the live benchmark: 1%-wide buckets from 1 µs, so that the latencies recorded by several
 * subscriber processes (`clients.ts`) can be merged into one p50/p99 without sending every sample.
 */

/** A latency's (milliseconds) bucket. */
export const bucketOf = (ms: number): number => Math.max(0, Math.round(Math.log(ms * 1000) / Math.log(1.01)))

/** The latency (milliseconds) a bucket stands for (within 0.5%). */
export const msOfBucket = (bucket: number): number => Math.pow(1.01, bucket) / 1000

/** Counts per bucket. */
export type Histogram = Record<number, number>

/** The sum of several histograms. */
export const mergeHistograms = (histograms: ReadonlyArray<Histogram>): Histogram => {
  const out: Histogram = {}
  for (const h of histograms) for (const [b, n] of Object.entries(h)) out[Number(b)] = (out[Number(b)] ?? 0) + n
  return out
}

/** The `p`-th percentile (0-100) of a histogram, milliseconds; NaN when empty. */
export const percentileOf = (h: Histogram, p: number): number => {
  const buckets = Object.keys(h)
    .map(Number)
    .sort((a, b) => a - b)
  const total = buckets.reduce((s, b) => s + h[b]!, 0)
  if (total === 0) return NaN
  const rank = Math.max(1, Math.ceil((p / 100) * total))
  let seen = 0
  for (const b of buckets) {
    seen += h[b]!
    if (seen >= rank) return msOfBucket(b)
  }
  return msOfBucket(buckets[buckets.length - 1]!)
}
