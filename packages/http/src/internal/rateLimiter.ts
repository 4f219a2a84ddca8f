/**
 * Per-access-key token buckets (contract section 5: `serve --rate-limit N` allows N requests per second with
 * bursts of N). Buckets live in memory, keyed by the key itself; full buckets are swept when the map grows, so
 * keys that stop sending are forgotten.
 */
export interface RateLimiter {
  /** Takes one token for `key`: 0 when allowed, otherwise the whole seconds to wait (the `Retry-After` value). */
  readonly take: (key: string) => number
  /** How many keys it holds a bucket for (idle keys are forgotten as the map grows). */
  readonly size: () => number
}

interface Bucket {
  tokens: number
  last: number
}

const sweepAbove = 10_000

/** A limiter allowing `perSecond` requests per second per key, bursts of `perSecond`. */
export const makeRateLimiter = (
  perSecond: number,
  now: () => number = performance.now.bind(performance)
): RateLimiter => {
  const capacity = Math.max(1, perSecond)
  const perMs = perSecond / 1000
  const buckets = new Map<string, Bucket>()
  let nextSweep = sweepAbove
  const sweep = (t: number) => {
    for (const [key, bucket] of buckets) {
      if (bucket.tokens + (t - bucket.last) * perMs >= capacity) buckets.delete(key)
    }
    nextSweep = Math.max(sweepAbove, buckets.size * 2)
  }
  return {
    size: () => buckets.size,
    take: (key) => {
      const t = now()
      let bucket = buckets.get(key)
      if (bucket === undefined) {
        if (buckets.size >= nextSweep) sweep(t)
        bucket = { tokens: capacity, last: t }
        buckets.set(key, bucket)
      } else {
        bucket.tokens = Math.min(capacity, bucket.tokens + (t - bucket.last) * perMs)
        bucket.last = t
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1
        return 0
      }
      return perSecond > 0 ? Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)) : 1
    }
  }
}
