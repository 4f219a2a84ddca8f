/** Retry timing: exponential backoff with full jitter, `Retry-After`, and a sleep that an abort signal ends. */

/** How a call retries (see `RetryOptions` in `Dashstream.ts` for the public description). */
export interface RetryPolicy {
  readonly retries: number
  readonly baseDelayMs: number
  readonly maxDelayMs: number
  readonly maxRetryAfterMs: number
}

/**
 * The delay before retry number `attempt` (0 for the first retry): uniformly random in
 * `[0, min(maxDelayMs, baseDelayMs * 2^attempt)]` ("full jitter"), so clients that failed together do not retry
 * together.
 */
export const fullJitter = (policy: RetryPolicy, attempt: number): number =>
  Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt)

/**
 * A `Retry-After` header in milliseconds: delta-seconds (`"2"`) or an HTTP date; `undefined` when absent or unreadable.
 */
export const parseRetryAfter = (value: string | null, now = Date.now()): number | undefined => {
  if (value === null) return undefined
  const text = value.trim()
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** Resolves after `ms`, or rejects with the signal's reason once `signal` aborts. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    signal?.addEventListener("abort", onAbort, { once: true })
  })
