import { Either, Schema } from "effect"

/**
 * A point in time as integer microseconds since the UNIX epoch. Every stored `ts` is one
 * (docs/api.md section 3: "`ts` is UNIX seconds, microsecond precision"); JSON shows it in seconds.
 */
export type Micros = number & { readonly Micros: unique symbol }

/** Microseconds per second. */
export const MICROS_PER_SECOND = 1_000_000

/**
 * The largest accepted time: 4,294,967,295 seconds (2^32 - 1, 2106-02-07T06:28:15Z). Rejects millisecond
 * timestamps sent by mistake, and keeps every `ts` round-tripping exactly through its printed seconds: below 2^32
 * seconds a double holds seconds to within half a microsecond, so {@link formatTs} text parsed by a client maps back
 * to the same microsecond. (Above it the spacing of doubles exceeds a microsecond and distinct `ts` would print to
 * the same client-side number: the earlier bound of 9,999,999,999 seconds broke `since` cursors past 2^32 seconds.)
 */
export const MAX_SECONDS = 4_294_967_295

/** Wraps an integer number of microseconds. The caller guarantees it is a safe, non-negative integer. */
export const micros = (n: number): Micros => n as Micros

/**
 * UNIX seconds (integer or fractional, as a client sends them) to microseconds, rounded to the nearest
 * microsecond. Returns `undefined` for a value that is not finite or lies outside [0, {@link MAX_SECONDS}].
 * `-0` (and anything below half a microsecond) is ts `0`, never `-0`, which would print as `-0` in places and
 * compare apart from `0` in others.
 */
export const secondsToMicros = (seconds: number): Micros | undefined =>
  Number.isFinite(seconds) && seconds >= 0 && seconds <= MAX_SECONDS
    ? ((Math.round(seconds * MICROS_PER_SECOND) + 0) as Micros)
    : undefined

/**
 * Formats microseconds as the JSON number text of UNIX seconds, exact to the microsecond
 * (`1732000000123456` -> `"1732000000.123456"`, `1732000000000000` -> `"1732000000"`). Clients parse it to the
 * nearest double, which {@link secondsToMicros} maps back to the same microsecond.
 */
export const formatTs = (ts: Micros): string => {
  const whole = Math.floor(ts / MICROS_PER_SECOND)
  const frac = ts - whole * MICROS_PER_SECOND
  if (frac === 0) return String(whole)
  return `${whole}.${String(frac).padStart(6, "0").replace(/0+$/, "")}`
}

/**
 * The `ts` the server assigns to a new entry (docs/api.md section 3, "Time"): the receive time `now`, unless the
 * stream's highest `ts` is already at or past it, in which case that `ts` plus one microsecond. This keeps
 * server-assigned `ts` strictly increasing per stream even when the clock stalls or moves back.
 */
export const nextServerTs = (lastTs: Micros | null, now: Micros): Micros =>
  lastTs !== null && lastTs >= now ? ((lastTs + 1) as Micros) : now

/**
 * The current time in microseconds: the process start on the wall clock plus the monotonic clock since then,
 * so successive calls never go backwards within a process.
 */
/**
 * Integer microseconds since the epoch as an ISO 8601 UTC time with milliseconds (`2026-11-26T14:44:48.123Z`), as
 * the admin API and the console show times (`createdAt`, `expiresAt`).
 */
export const isoTime = (micros: number): string => new Date(Math.floor(micros / 1000)).toISOString()

export const nowMicros = (): Micros => Math.floor((performance.timeOrigin + performance.now()) * 1000) as Micros

/**
 * A decimal number as text: digits with an optional fraction and exponent (`1700000000`, `0.5`, `.5`, `1.7e9`). No
 * sign, no spaces, and none of the other forms `Number()` reads (`0x10`, `0b1`, `0o7`, `Infinity`, empty).
 */
const decimalText = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/

// A `since` cursor as text: a non-negative decimal number of UNIX seconds (see `decimalText`).
const decodeSinceSeconds = Schema.decodeUnknownEither(
  Schema.String.pipe(
    Schema.pattern(decimalText),
    Schema.compose(Schema.NumberFromString),
    Schema.finite(),
    Schema.nonNegative()
  )
)

/**
 * The strict lower bound of a `since` read in microseconds: entries with `ts > bound` are returned
 * (spec section 4.1 rule 3); `since=0` gives -1, so that it returns every entry, one at `ts` 0 included (rule 2). A `since` equal to an entry's printed `ts` excludes exactly that entry; any other
 * `since` that falls between two microseconds (beyond the rounding error of a double) is rounded down, so an entry
 * whose `ts` is above the real-valued `since` is never missed.
 */
export const sinceBound = (seconds: number): Micros => {
  // `since=0` returns every stored entry (spec section 4.1 rule 2), an entry at ts 0 included.
  if (seconds === 0) return -1 as Micros
  const scaled = seconds * MICROS_PER_SECOND
  const nearest = Math.round(scaled)
  // A printed ts parsed back to a double, then scaled, carries two roundings of at most half an ulp each: up to
  // `scaled * EPSILON` off the real value (about half a microsecond around 2^31 seconds), so a fixed tolerance would
  // floor some printed ts to the microsecond below and return the very entry `since` names.
  return (
    Math.abs(scaled - nearest) <= Math.max(0.01, scaled * Number.EPSILON) ? nearest : Math.floor(scaled)
  ) as Micros
}

/**
 * A `since` cursor as it arrives in a query string or a `Last-Event-ID` header (docs/api.md sections 6 and 10) to its
 * strict lower bound in microseconds ({@link sinceBound}); `undefined` when it is not a non-negative decimal number of
 * UNIX seconds (`since=0x10` is refused as `"0x10"` is refused as a number in a push). The one rule of both reads.
 */
export const sinceFromText = (text: string): Micros | undefined => {
  const decoded = decodeSinceSeconds(text)
  return Either.isLeft(decoded) ? undefined : sinceBound(decoded.right)
}
