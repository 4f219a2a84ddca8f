import { retryAfterSeconds, TokenBuckets } from "@dashstream/core"

/**
 * Per-access-key rate limiting (docs/api.md section 5: `serve --rate-limit N` allows N requests per second with
 * bursts of N). The lanes ask a {@link RateLimiter} once per request. The default one holds the token buckets in
 * memory (core's `TokenBuckets`); `serve --workers N` passes one whose buckets are the server's, held by its primary
 * process, so the limit is per server, not per worker: its answer may then come later (a promise).
 */
export interface RateLimiter {
  /**
   * Takes one token for `key`: 0 when allowed, otherwise the whole seconds to wait (the `Retry-After` value); or a
   * promise of that when the answer needs another process.
   */
  readonly take: (key: string) => number | PromiseLike<number>
  /** How many keys it holds a bucket for (idle keys are forgotten as the map grows). */
  readonly size: () => number
}

/** A limiter allowing `perSecond` requests per second per key, bursts of `perSecond`, in memory. */
export const makeRateLimiter = (
  perSecond: number,
  now: () => number = performance.now.bind(performance)
): RateLimiter => {
  const buckets = new TokenBuckets(perSecond, now)
  return {
    size: () => buckets.size,
    take: (key) => {
      const grant = buckets.take(key)
      return grant.granted > 0 ? 0 : retryAfterSeconds(grant.waitMs)
    }
  }
}

/**
 * Runs `then` with the limiter's answer: at once when it is a number (the common case, no promise and no extra
 * turn), once it arrives otherwise. A promise that rejects counts as allowed (0): a limiter that cannot answer does
 * not refuse requests.
 */
export const whenTaken = (answer: number | PromiseLike<number>, then: (wait: number) => void): void => {
  if (typeof answer === "number") return then(answer)
  answer.then(then, () => then(0))
}
