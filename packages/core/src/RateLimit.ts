/**
 * The per-access-key rate limit of docs/api.md section 5 (`serve --rate-limit N`: N requests per second per key, with
 * bursts of N, 429 `rate_limited` with `Retry-After` beyond that) as token buckets, one per key. Pure: the clock is
 * passed in. The HTTP adapter takes one token per request; with `serve --workers`, the server's primary process
 * holds the buckets and grants tokens to the workers a few at a time (`take` with `want` above 1).
 */

interface Bucket {
  tokens: number
  last: number
}

/** What {@link TokenBuckets.take} gives. */
export interface Grant {
  /** Tokens granted, 0 to `want`. */
  readonly granted: number
  /** When none were granted: milliseconds until the next token (0 when some were). */
  readonly waitMs: number
}

/** Buckets are swept of full ones when the map holds more than this many (or twice what the last sweep kept). */
const sweepAbove = 10_000

/**
 * Token buckets of `perSecond` tokens per second each, holding at most `perSecond` (at least 1). `now` gives the time
 * in milliseconds (monotonic). A key's bucket starts full; full buckets of keys that stopped sending are forgotten as
 * the map grows.
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>()
  private readonly capacity: number
  private readonly perMs: number
  private nextSweep = sweepAbove

  constructor(
    readonly perSecond: number,
    private readonly now: () => number
  ) {
    this.capacity = Math.max(1, perSecond)
    this.perMs = perSecond / 1000
  }

  /** How many keys a bucket is held for. */
  get size(): number {
    return this.buckets.size
  }

  /** Takes up to `want` whole tokens of `key`'s bucket (see {@link Grant}). */
  take(key: string, want = 1): Grant {
    const t = this.now()
    let bucket = this.buckets.get(key)
    if (bucket === undefined) {
      if (this.buckets.size >= this.nextSweep) this.sweep(t)
      bucket = { tokens: this.capacity, last: t }
      this.buckets.set(key, bucket)
    } else {
      bucket.tokens = Math.min(this.capacity, bucket.tokens + (t - bucket.last) * this.perMs)
      bucket.last = t
    }
    const granted = Math.min(want, Math.floor(bucket.tokens))
    if (granted >= 1) {
      bucket.tokens -= granted
      return { granted, waitMs: 0 }
    }
    return { granted: 0, waitMs: this.perMs > 0 ? (1 - bucket.tokens) / this.perMs : Number.POSITIVE_INFINITY }
  }

  private sweep(t: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (t - bucket.last) * this.perMs >= this.capacity) this.buckets.delete(key)
    }
    this.nextSweep = Math.max(sweepAbove, this.buckets.size * 2)
  }
}

/** The `Retry-After` of a refusal (whole seconds, at least 1) from {@link Grant.waitMs}. */
export const retryAfterSeconds = (waitMs: number): number =>
  Number.isFinite(waitMs) ? Math.max(1, Math.ceil(waitMs / 1000)) : 1
