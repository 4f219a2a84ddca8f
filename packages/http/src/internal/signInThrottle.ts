/**
 * The console's sign-in throttling (docs/api.md section 14): the sixth failed sign-in from one address within a minute,
 * and every sign-in from it for the rest of that minute, is refused with 429. Counted per process (the contract allows
 * it): `serve --workers N` lets an address try up to 5 times per worker per minute, still far too few to guess a
 * 128-bit token.
 */
export interface SignInThrottle {
  /**
   * Before checking a sign-in from `address` at `now` (milliseconds): the whole seconds to wait when the address is
   * refused for the rest of its minute, else 0.
   */
  readonly refusedFor: (address: string, now: number) => number
  /**
   * After a failed sign-in from `address` at `now`: the whole seconds to wait when this failure is the sixth within a
   * minute (then it is answered 429, not 401, and the address is refused until the minute of those six failures
   * ends), else 0.
   */
  readonly failed: (address: string, now: number) => number
}

/** Failures allowed per address within {@link windowMs}; the next one is refused. */
export const maxFailures = 5
const windowMs = 60_000
/** Addresses tracked at most; past it, those with no failure within the window are forgotten first. */
const maxAddresses = 10_000

interface Record {
  /** Times (milliseconds) of the failures within the last window, oldest first. */
  failures: Array<number>
  /** Refused until then (milliseconds), or 0. */
  blockedUntil: number
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000))

/** A throttle holding its counts in memory (see {@link SignInThrottle}). */
export const makeSignInThrottle = (): SignInThrottle => {
  const records = new Map<string, Record>()
  const sweep = (now: number) => {
    for (const [address, record] of records) {
      const last = record.failures[record.failures.length - 1] ?? 0
      if (record.blockedUntil <= now && last <= now - windowMs) records.delete(address)
    }
    // Every address failed within the minute: the oldest go (they are the first in the map).
    for (const address of records.keys()) {
      if (records.size < maxAddresses) break
      records.delete(address)
    }
  }
  return {
    refusedFor: (address, now) => {
      const blockedUntil = records.get(address)?.blockedUntil ?? 0
      return blockedUntil > now ? seconds(blockedUntil - now) : 0
    },
    failed: (address, now) => {
      let record = records.get(address)
      if (record === undefined) {
        if (records.size >= maxAddresses) sweep(now)
        record = { failures: [], blockedUntil: 0 }
        records.set(address, record)
      }
      const failures = record.failures.filter((t) => t > now - windowMs)
      failures.push(now)
      record.failures = failures
      if (failures.length <= maxFailures) return 0
      // Refused until the minute that holds these failures ends.
      record.blockedUntil = failures[failures.length - 1 - maxFailures]! + windowMs
      return seconds(record.blockedUntil - now)
    }
  }
}
