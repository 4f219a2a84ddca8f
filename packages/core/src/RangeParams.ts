import { Either } from "effect"
import { InvalidRequest, quoted } from "./Errors.js"
import { MAX_POINTS, MIN_POINTS } from "./RangeRead.js"
import type { RangeQuery } from "./StreamStore.js"
import { MAX_SECONDS, type Micros, MICROS_PER_SECOND, sinceFromText } from "./Time.js"

/**
 * The query string of a range read (README, "Range reads") as it arrives: every parameter optional, all strings.
 * A read with any of `from`, `to` or `points` is a range read.
 */
export interface RangeParams {
  readonly since?: string | undefined
  readonly limit?: string | undefined
  readonly from?: string | undefined
  readonly to?: string | undefined
  readonly points?: string | undefined
}

/** True when `params` ask for a range read: any of `from`, `to` or `points` is given. */
export const isRangeRead = (params: RangeParams): boolean =>
  params.from !== undefined || params.to !== undefined || params.points !== undefined

// A bound: digits with an optional fraction (`1700000000`, `1700000000.25`, `.5`); no sign, no exponent.
const boundText = /^(\d*)(?:\.(\d*))?$/
const digits = /^\d+$/

/** The most entries a read's `limit` may ask for (README, "API"). */
export const MAX_LIMIT = 100_000

/** A read's `limit` (README, "API"): a whole number from 1 to {@link MAX_LIMIT} in decimal digits, else `undefined`. */
export const limitFromText = (text: string): number | undefined => {
  const n = digits.test(text) ? Number(text) : NaN
  return n >= 1 && n <= MAX_LIMIT ? n : undefined
}

/**
 * A bound's text to integer microseconds, exactly (digit arithmetic, no floating point), rounded up (`"up"`, for an
 * inclusive lower bound: no entry below it) or down (an inclusive upper bound); `undefined` when it is not a decimal
 * number of seconds from 0 to {@link MAX_SECONDS}.
 */
const boundMicros = (text: string, round: "up" | "down"): Micros | undefined => {
  const match = boundText.exec(text)
  if (match === null) return undefined
  const whole = match[1]!
  const fraction = match[2] ?? ""
  if (whole === "" && fraction === "") return undefined
  const seconds = whole === "" ? 0 : Number(whole)
  if (seconds > MAX_SECONDS) return undefined
  const micros = Number(fraction.slice(0, 6).padEnd(6, "0"))
  const beyond = round === "up" && /[1-9]/.test(fraction.slice(6)) ? 1 : 0
  const total = seconds * MICROS_PER_SECOND + micros + beyond
  return total > MAX_SECONDS * MICROS_PER_SECOND ? undefined : (total as Micros)
}

const invalid = (path: string, message: string) => Either.left(new InvalidRequest({ message, path }))

/** A range read's parameters, validated: its {@link RangeQuery} but for the stream's selection mode. */
export type RangeWindow = Omit<RangeQuery, "mode">

/**
 * The {@link RangeWindow} of a range read's parameters (README, "Range reads"), checked before the stream is looked
 * up, as the export read checks `since` and `limit` (docs/api.md section 6: 400 before 404); `from` and `to` are
 * inclusive bounds (rounded inwards to whole microseconds), `since` the exclusive cursor
 * of the export read (as `since` is read there). Fails with `InvalidRequest` (400 `invalid_request`) whose `path`
 * names the parameter: `since` together with `from` (`"since"`); a bound that is not a decimal number of seconds from
 * 0 to 4,294,967,295 (no sign, no exponent, not empty; its own name); `from` after `to` (`"to"`); `points` that is not
 * a whole number from 2 to 10,000 in decimal digits (`"points"`); `limit` not from 1 to 100,000, or together with
 * `points` (`"limit"`).
 */
export const rangeQueryOf = (params: RangeParams): Either.Either<RangeWindow, InvalidRequest> => {
  if (params.since !== undefined && params.from !== undefined) {
    return invalid("since", "since and from cannot be used together: since is the exclusive form of from")
  }
  let from: Micros | null = null
  if (params.from !== undefined) {
    const bound = boundMicros(params.from, "up")
    if (bound === undefined) return invalid("from", notABound("from", params.from))
    from = bound
  }
  let since: Micros | null = null
  if (params.since !== undefined) {
    const bound = sinceFromText(params.since)
    if (bound === undefined || params.since.includes("e") || params.since.includes("E")) {
      return invalid("since", notABound("since", params.since))
    }
    since = bound
  }
  let to: Micros | null = null
  if (params.to !== undefined) {
    const bound = boundMicros(params.to, "down")
    if (bound === undefined) return invalid("to", notABound("to", params.to))
    to = bound
  }
  if (from !== null && to !== null && from > to) {
    return invalid("to", `to must not be before from, got from=${params.from} and to=${params.to}`)
  }
  let points: number | null = null
  if (params.points !== undefined) {
    const n = digits.test(params.points) ? Number(params.points) : NaN
    if (!(n >= MIN_POINTS && n <= MAX_POINTS)) {
      return invalid("points", `points must be a whole number from 2 to 10000, got ${quoted(params.points)}`)
    }
    points = n
  }
  let limit: number | null = null
  if (params.limit !== undefined) {
    if (points !== null) return invalid("limit", "limit cannot be used with points: a read with points is one answer")
    const n = limitFromText(params.limit)
    if (n === undefined) return invalid("limit", badLimit(params.limit))
    limit = n
  }
  return Either.right({ from, since, to, points, limit })
}

/** The message of a bad `limit`. */
export const badLimit = (text: string) => `limit must be a whole number from 1 to 100000, got ${quoted(text)}`

const notABound = (name: string, text: string) =>
  `${name} must be a decimal number of UNIX seconds from 0 to ${MAX_SECONDS} (no sign, no exponent), got ${quoted(text)}`
