import { InvalidPoint, PayloadTooLarge } from "../Errors.js"
import type { Limits } from "../Limits.js"
import type { PointOp, StoredPoint } from "../Point.js"
import { MAX_SECONDS, type Micros, secondsToMicros } from "../Time.js"
import type { WidgetType } from "../WidgetType.js"

// What every widget kind's point decoder shares (see `PointDecoder.ts`): reading and checking one field, the
// element limit, and the errors with their `path`.
//
// Decoding is on the push hot path. The helpers below throw the first domain error they find, caught once in
// `decodePoint`, so the success path carries no intermediate `Either` per field, and error paths (strings) are only
// built when an error is thrown: an element's path is passed as (collection path, index) rather than pre-joined.

export type Mutable<T> = { -readonly [K in keyof T]: T[K] }
export type Json = Record<string, unknown>

export const CLEAR: PointOp = Object.freeze({ _tag: "Clear" })
export const EMPTY_PUT: PointOp = Object.freeze({ _tag: "Put", entries: Object.freeze([]) })

export const invalid = (path: string, message: string) => new InvalidPoint({ message, path })

/** `path`, then `[index]` when `index >= 0`, then `.key` when given. */
export const at = (path: string, index: number, key?: string): string => {
  const base = index >= 0 ? `${path}[${index}]` : path
  return key === undefined ? base : base === "" ? key : `${base}.${key}`
}

/** A value as it appears in an error message: JSON, shortened. */
export const show = (u: unknown): string => {
  if (u === undefined) return "nothing"
  if (Array.isArray(u)) return "an array"
  if (typeof u === "object" && u !== null) return "an object"
  const s = String(JSON.stringify(u))
  return s.length > 40 ? `${s.slice(0, 37)}...` : s
}

export const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

export const isEmptyObject = (o: object): boolean => {
  for (const key in o) if (Object.hasOwn(o, key)) return false
  return true
}

// Decimal only: an optional sign, digits with an optional point, an optional exponent. Rejects hex, binary, "",
// "Infinity", "NaN" and digit separators, all of which `Number()` would otherwise turn into something.
const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

/** A finite number from a JSON number or a numeric string, or `undefined`. */
export const toNumber = (u: unknown): number | undefined => {
  if (typeof u === "number") return Number.isFinite(u) ? u : undefined
  if (typeof u === "string") {
    const s = u.trim()
    if (!NUMERIC.test(s)) return undefined
    const n = Number(s)
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}

export const numberField = (o: Json, key: string, path: string, index: number): number => {
  const u = o[key]
  const n = toNumber(u)
  if (n !== undefined) return n
  throw invalid(
    at(path, index, key),
    u === undefined || u === null
      ? `${key} is required`
      : `${key} must be a finite number (or a numeric string), got ${show(u)}`
  )
}

export const stringField = (o: Json, key: string, path: string, index: number): string => {
  const u = o[key]
  if (typeof u === "string") return u
  throw invalid(
    at(path, index, key),
    u === undefined || u === null ? `${key} is required` : `${key} must be a string, got ${show(u)}`
  )
}

/** An optional string field: `undefined` when absent or `null`. */
export const optionalString = (o: Json, key: string, path: string, index: number): string | undefined => {
  const u = o[key]
  if (u === undefined || u === null || typeof u === "string") return u ?? undefined
  throw invalid(at(path, index, key), `${key} must be a string, got ${show(u)}`)
}

const HTTP_URL = /^https?:\/\//i

/** An absolute http(s) URL, stored as given; required unless `optional`. */
export const urlField = (o: Json, key: string, path: string, index: number, optional: boolean): string | undefined => {
  const u = o[key]
  if (typeof u === "string") {
    if (HTTP_URL.test(u) && URL.canParse(u)) return u
    throw invalid(at(path, index, key), `${key} must be an absolute http or https URL, got ${show(u)}`)
  }
  if ((u === undefined || u === null) && optional) return undefined
  throw invalid(
    at(path, index, key),
    u === undefined || u === null
      ? `${key} is required`
      : `${key} must be an absolute http or https URL, got ${show(u)}`
  )
}

/** A client `timestamp` (UNIX seconds) in microseconds; `undefined` when absent or `null`. */
export const timestampField = (o: Json, path: string, index: number): Micros | undefined => {
  const u = o["timestamp"]
  if (u === undefined || u === null) return undefined
  const seconds = toNumber(u)
  if (seconds === undefined) {
    throw invalid(
      at(path, index, "timestamp"),
      `timestamp must be UNIX time in seconds (a number or numeric string), got ${show(u)}`
    )
  }
  const ts = secondsToMicros(seconds)
  if (ts === undefined) {
    throw invalid(
      at(path, index, "timestamp"),
      `timestamp ${seconds} is out of range: it must be UNIX time in seconds (not milliseconds), from 0 to ${MAX_SECONDS}`
    )
  }
  return ts
}

/** Checks an array against `limits.maxArrayElements` (413 `payload_too_large` beyond it). */
export const checkLength = (array: ReadonlyArray<unknown>, path: string, limits: Limits): void => {
  if (array.length > limits.maxArrayElements) {
    throw new PayloadTooLarge({
      message: `this array has ${array.length} elements; at most ${limits.maxArrayElements} are allowed in a point`,
      path
    })
  }
}

/** One example of an accepted point per type, for error messages. */
const examples: Record<WidgetType, string> = {
  number: `42 or {"number": 42}`,
  "horizontal-bar": `42 or {"number": 42}`,
  "vertical-bar": `42 or {"number": 42}`,
  dial: `42 or {"number": 42}`,
  sparkline: `42, {"number": 42} or [{"number": 42, "timestamp": 1732000000}]`,
  "line-graph": `42, {"number": 42} or [{"number": 42, "timestamp": 1732000000}]`,
  "usa-map": `{"latitude": 40.7, "longitude": -74}`,
  "world-map": `{"latitude": 40.7, "longitude": -74}`,
  "text-feed": `{"title": "...", "msg": "..."}`,
  gallery: `{"title": "...", "imgUrl": "https://..."}`,
  "xy-graph": `{"x": 1, "y": 2}`,
  leaderboard: `{"leaderboard": [{"name": "...", "value": 1}]} or {"leaderboardItem": {"name": "...", "value": 1}}`,
  "pie-chart": `{"leaderboard": [{"name": "...", "value": 1}]}`,
  "bar-chart": `{"chart": [{"name": "...", "value": 1}]}`,
  list: `{"list": [{"listItem": "..."}]} or {"listItem": "..."}`,
  image: `{"imgUrl": "https://..."}`,
  label: `{"label": "..."}`,
  table: `{"table": [["header", ...], ["cell", ...]]} or {"tableRow": ["cell", ...]}`,
  html: `{"html": "<b>...</b>"}`,
  "multi-bar-graph": `{"matrix": [["", "series"], ["category", 1]]}`
}

export const wrongShape = (type: WidgetType, point: unknown, path: string) =>
  invalid(path, `a ${type} point must look like ${examples[type]}, got ${show(point)}`)

export const put1 = (point: StoredPoint): PointOp => ({ _tag: "Put", entries: [{ point }] })

export const record = (u: unknown, path: string, index: number, shape: string): Json => {
  if (isRecord(u)) return u
  throw invalid(at(path, index), `each element must be an object ${shape}, got ${show(u)}`)
}

/** The one of two alternative keys a point uses; throws when it uses both. */
export const oneOf = (o: Json, a: string, b: string, path: string): string | undefined => {
  const hasA = o[a] !== undefined
  const hasB = o[b] !== undefined
  if (hasA && hasB) throw invalid(at(path, -1, b), `a point carries either ${a} or ${b}, not both`)
  return hasA ? a : hasB ? b : undefined
}

/** A collection array at `o[key]`: checked to be an array within the limit. */
export const collection = (o: Json, key: string, path: string, limits: Limits): ReadonlyArray<unknown> => {
  const u = o[key]
  const where = at(path, -1, key)
  if (!Array.isArray(u)) throw invalid(where, `${key} must be an array, got ${show(u)}`)
  checkLength(u, where, limits)
  return u
}
