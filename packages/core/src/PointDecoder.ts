import { Either } from "effect"
import { InvalidPoint, PayloadTooLarge } from "./Errors.js"
import type { Limits } from "./Limits.js"
import type {
  ChartItem,
  GalleryPoint,
  LeaderboardItem,
  MapColor,
  MapPoint,
  NumberPoint,
  PointOp,
  StoredPoint,
  TextFeedPoint,
  XyPoint
} from "./Point.js"
import { formatTs, MAX_SECONDS, type Micros, secondsToMicros } from "./Time.js"
import { supportsClearCommand, type WidgetType } from "./WidgetType.js"

/**
 * Decodes a pushed `point` against the stream's widget type (contract sections 3 and 4) into the operation it asks
 * for. Pure and synchronous; `path` is where the point stands in the request body (`point`, `streams[3].point`) and
 * prefixes the `path` of every error.
 *
 * - Numbers are finite JSON numbers or numeric strings (decimal, optional sign and exponent, surrounding blanks
 *   ignored: `"42"`, `" -3.5e2 "`); they are stored as numbers. Hex, `"Infinity"`, `"NaN"` and `""` are rejected.
 * - `timestamp` (number, bar, dial, sparkline, line-graph only) is UNIX seconds, number or numeric string, in
 *   [0, {@link MAX_SECONDS}]; on other types it is an unknown field and ignored.
 * - Optional fields given as `null` count as absent; unknown fields are ignored and not stored. Stored points are
 *   built with a fixed key order and only the optional keys that were given.
 * - An empty point (`null`, `""`, `{}`, `[]`, or the type's collection key holding `[]`) is `Clear` for the types
 *   cleared that way; for the six types with the clear command it is rejected, except `[]`, which is an array push
 *   of no elements (`Put` with no entries).
 *
 * Fails with `InvalidPoint` (a sentence and the `path` of the offending value) or `PayloadTooLarge` when an array
 * (events, series, or a leaderboard/chart/list/table/matrix collection, or one table or matrix row) has more than
 * `limits.maxArrayElements` elements.
 */
export const decodePoint = (
  type: WidgetType,
  point: unknown,
  path: string,
  limits: Limits
): Either.Either<PointOp, InvalidPoint | PayloadTooLarge> => {
  try {
    return Either.right(decode(type, point, path, limits))
  } catch (e) {
    if (e instanceof InvalidPoint || e instanceof PayloadTooLarge) return Either.left(e)
    throw e
  }
}

// Decoding is on the push hot path. The helpers below throw the first domain error they find, caught once in
// `decodePoint`, so the success path carries no intermediate `Either` per field, and error paths (strings) are only
// built when an error is thrown: an element's path is passed as (collection path, index) rather than pre-joined.

type Mutable<T> = { -readonly [K in keyof T]: T[K] }
type DeltaOp = Extract<PointOp, { readonly _tag: "Delta" }>
type Row = Array<string>
type Json = Record<string, unknown>

const CLEAR: PointOp = Object.freeze({ _tag: "Clear" })
const EMPTY_PUT: PointOp = Object.freeze({ _tag: "Put", entries: Object.freeze([]) })

const invalid = (path: string, message: string) => new InvalidPoint({ message, path })

/** `path`, then `[index]` when `index >= 0`, then `.key` when given. */
const at = (path: string, index: number, key?: string): string => {
  const base = index >= 0 ? `${path}[${index}]` : path
  return key === undefined ? base : base === "" ? key : `${base}.${key}`
}

/** A value as it appears in an error message: JSON, shortened. */
const show = (u: unknown): string => {
  if (u === undefined) return "nothing"
  if (Array.isArray(u)) return "an array"
  if (typeof u === "object" && u !== null) return "an object"
  const s = String(JSON.stringify(u))
  return s.length > 40 ? `${s.slice(0, 37)}...` : s
}

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const isEmptyObject = (o: object): boolean => {
  for (const key in o) if (Object.hasOwn(o, key)) return false
  return true
}

// Decimal only: an optional sign, digits with an optional point, an optional exponent. Rejects hex, binary, "",
// "Infinity", "NaN" and digit separators, all of which `Number()` would otherwise turn into something.
const NUMERIC = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/

/** A finite number from a JSON number or a numeric string, or `undefined`. */
const toNumber = (u: unknown): number | undefined => {
  if (typeof u === "number") return Number.isFinite(u) ? u : undefined
  if (typeof u === "string") {
    const s = u.trim()
    if (!NUMERIC.test(s)) return undefined
    const n = Number(s)
    return Number.isFinite(n) ? n : undefined
  }
  return undefined
}

const numberField = (o: Json, key: string, path: string, index: number): number => {
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

const stringField = (o: Json, key: string, path: string, index: number): string => {
  const u = o[key]
  if (typeof u === "string") return u
  throw invalid(
    at(path, index, key),
    u === undefined || u === null ? `${key} is required` : `${key} must be a string, got ${show(u)}`
  )
}

/**
 * A list item's text: a string, or a finite number stored as its `String()` text (the original Python and Ruby
 * clients send numbers as list items, as they do as table cells).
 */
const listItemField = (o: Json, path: string, index: number): string => {
  const u = o["listItem"]
  return typeof u === "number" && Number.isFinite(u) ? String(u) : stringField(o, "listItem", path, index)
}

/** An optional string field: `undefined` when absent or `null`. */
const optionalString = (o: Json, key: string, path: string, index: number): string | undefined => {
  const u = o[key]
  if (u === undefined || u === null || typeof u === "string") return u ?? undefined
  throw invalid(at(path, index, key), `${key} must be a string, got ${show(u)}`)
}

const HTTP_URL = /^https?:\/\//i

/** An absolute http(s) URL, stored as given; required unless `optional`. */
const urlField = (o: Json, key: string, path: string, index: number, optional: boolean): string | undefined => {
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
const timestampField = (o: Json, path: string, index: number): Micros | undefined => {
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
const checkLength = (array: ReadonlyArray<unknown>, path: string, limits: Limits): void => {
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

const wrongShape = (type: WidgetType, point: unknown, path: string) =>
  invalid(path, `a ${type} point must look like ${examples[type]}, got ${show(point)}`)

const put1 = (point: StoredPoint): PointOp => ({ _tag: "Put", entries: [{ point }] })

const decode = (type: WidgetType, point: unknown, path: string, limits: Limits): PointOp => {
  if (point === null || point === "") return emptyPoint(type, point, path)
  if (Array.isArray(point)) {
    // `[]` on the clear-command types is an array push of nothing; elsewhere it is the empty point.
    if (point.length === 0) return supportsClearCommand(type) ? EMPTY_PUT : CLEAR
  } else if (typeof point === "object" && isEmptyObject(point)) {
    return emptyPoint(type, point, path)
  }
  switch (type) {
    case "number":
    case "horizontal-bar":
    case "vertical-bar":
    case "dial":
      return numeric(type, point, path, limits, false)
    case "sparkline":
    case "line-graph":
      return numeric(type, point, path, limits, true)
    case "usa-map":
    case "world-map":
      return events(type, point, path, limits, mapPoint)
    case "text-feed":
      return events(type, point, path, limits, textFeedPoint)
    case "xy-graph":
      return events(type, point, path, limits, xyPoint)
    case "gallery":
      if (!isRecord(point)) throw wrongShape(type, point, path)
      return put1(galleryPoint(point, path, -1))
    case "leaderboard":
    case "pie-chart":
    case "bar-chart":
      return board(type, point, path, limits)
    case "list":
      return list(point, path, limits)
    case "table":
      return table(point, path, limits)
    case "multi-bar-graph":
      return matrix(point, path, limits)
    case "image":
      if (!isRecord(point)) throw wrongShape(type, point, path)
      return put1({ imgUrl: urlField(point, "imgUrl", path, -1, false)! })
    case "label":
      if (!isRecord(point)) throw wrongShape(type, point, path)
      return put1({ label: stringField(point, "label", path, -1) })
    case "html":
      if (!isRecord(point)) throw wrongShape(type, point, path)
      return put1({ html: stringField(point, "html", path, -1) })
  }
}

const emptyPoint = (type: WidgetType, point: unknown, path: string): PointOp => {
  if (!supportsClearCommand(type)) return CLEAR
  throw invalid(
    path,
    `the empty point ${JSON.stringify(point)} does not clear a ${type} stream: send {"command": "clear"} instead`
  )
}

// --- numeric: number, bars, dial; series: sparkline, line-graph ---

const numeric = (type: WidgetType, point: unknown, path: string, limits: Limits, series: boolean): PointOp => {
  if (typeof point === "number" || typeof point === "string") {
    const n = toNumber(point)
    if (n === undefined) {
      throw invalid(path, `point must be a finite number, a numeric string or an object, got ${show(point)}`)
    }
    return put1({ number: n })
  }
  if (Array.isArray(point)) {
    if (!series) throw invalid(path, `a ${type} point is a single number or object, not an array`)
    return seriesArray(point, path, limits)
  }
  if (!isRecord(point)) throw wrongShape(type, point, path)
  const hasNumber = point["number"] !== undefined
  const hasDelta = point["delta"] !== undefined
  if (hasNumber && hasDelta) {
    throw invalid(at(path, -1, "delta"), "a point carries either number or delta, not both")
  }
  if (!hasDelta) {
    if (!hasNumber) throw invalid(at(path, -1, "number"), "number (or delta) is required")
    const p = numberPoint(point, path, -1)
    const ts = timestampField(point, path, -1)
    return { _tag: "Put", entries: [ts === undefined ? { point: p } : { point: p, ts }] }
  }
  const op: Mutable<DeltaOp> = { _tag: "Delta", delta: numberField(point, "delta", path, -1) }
  const prefix = optionalString(point, "prefix", path, -1)
  if (prefix !== undefined) op.prefix = prefix
  const suffix = optionalString(point, "suffix", path, -1)
  if (suffix !== undefined) op.suffix = suffix
  const ts = timestampField(point, path, -1)
  if (ts !== undefined) op.ts = ts
  return op
}

const numberPoint = (o: Json, path: string, index: number): NumberPoint => {
  const p: Mutable<NumberPoint> = { number: numberField(o, "number", path, index) }
  const prefix = optionalString(o, "prefix", path, index)
  if (prefix !== undefined) p.prefix = prefix
  const suffix = optionalString(o, "suffix", path, index)
  if (suffix !== undefined) p.suffix = suffix
  return p
}

const seriesArray = (array: ReadonlyArray<unknown>, path: string, limits: Limits): PointOp => {
  checkLength(array, path, limits)
  const entries: Array<{ readonly point: StoredPoint; readonly ts: Micros }> = new Array(array.length)
  let previous = -1
  for (let i = 0; i < array.length; i++) {
    const e = array[i]
    if (!isRecord(e)) {
      throw invalid(
        at(path, i),
        `each element of an array must be an object {"number": n, "timestamp": seconds}, got ${show(e)}`
      )
    }
    if (e["delta"] !== undefined) {
      throw invalid(at(path, i, "delta"), "delta is not accepted inside an array: give number and timestamp")
    }
    const point = numberPoint(e, path, i)
    const ts = timestampField(e, path, i)
    if (ts === undefined) {
      throw invalid(at(path, i, "timestamp"), "each element of an array needs its own timestamp (UNIX seconds)")
    }
    if (ts <= previous) {
      throw invalid(
        at(path, i, "timestamp"),
        `timestamps in an array must be strictly increasing: ${formatTs(ts)} does not come after ${formatTs(previous as Micros)}`
      )
    }
    previous = ts
    entries[i] = { point, ts }
  }
  return { _tag: "Put", entries }
}

// --- events: maps, text feed, xy-graph (single or array) and gallery (single) ---

type Decode1 = (o: unknown, path: string, index: number) => StoredPoint

const events = (type: WidgetType, point: unknown, path: string, limits: Limits, one: Decode1): PointOp => {
  if (!Array.isArray(point)) {
    if (!isRecord(point)) throw wrongShape(type, point, path)
    return put1(one(point, path, -1))
  }
  checkLength(point, path, limits)
  const entries: Array<{ readonly point: StoredPoint }> = new Array(point.length)
  for (let i = 0; i < point.length; i++) entries[i] = { point: one(point[i], path, i) }
  return { _tag: "Put", entries }
}

const record = (u: unknown, path: string, index: number, shape: string): Json => {
  if (isRecord(u)) return u
  throw invalid(at(path, index), `each element must be an object ${shape}, got ${show(u)}`)
}

const mapColors: ReadonlySet<string> = new Set<MapColor>(["red", "blue", "green", "purple", "yellow"])

const mapPoint = (u: unknown, path: string, index: number): MapPoint => {
  const o = record(u, path, index, `{"latitude", "longitude"}`)
  const latitude = numberField(o, "latitude", path, index)
  if (latitude < -90 || latitude > 90) {
    throw invalid(at(path, index, "latitude"), `latitude must be between -90 and 90, got ${latitude}`)
  }
  const longitude = numberField(o, "longitude", path, index)
  if (longitude < -180 || longitude > 180) {
    throw invalid(at(path, index, "longitude"), `longitude must be between -180 and 180, got ${longitude}`)
  }
  const p: Mutable<MapPoint> = { latitude, longitude }
  // As in the original service, an unknown colour (or null) is stored without one and displays as the default.
  const color = o["color"]
  if (typeof color === "string" && mapColors.has(color)) p.color = color as MapColor
  const title = optionalString(o, "title", path, index)
  if (title !== undefined) p.title = title
  const body = optionalString(o, "body", path, index)
  if (body !== undefined) p.body = body
  return p
}

const textFeedPoint = (u: unknown, path: string, index: number): TextFeedPoint => {
  const o = record(u, path, index, `{"title", "msg"}`)
  const p: Mutable<TextFeedPoint> = {
    title: stringField(o, "title", path, index),
    msg: stringField(o, "msg", path, index)
  }
  const imgUrl = urlField(o, "imgUrl", path, index, true)
  if (imgUrl !== undefined) p.imgUrl = imgUrl
  const date = o["date"]
  if (typeof date === "string" || (typeof date === "number" && Number.isFinite(date))) p.date = date
  else if (date !== undefined && date !== null) {
    throw invalid(at(path, index, "date"), `date must be a string or a number, got ${show(date)}`)
  }
  return p
}

const galleryPoint = (o: Json, path: string, index: number): GalleryPoint => {
  const title = stringField(o, "title", path, index)
  const msg = optionalString(o, "msg", path, index)
  const imgUrl = urlField(o, "imgUrl", path, index, false)!
  return msg === undefined ? { title, imgUrl } : { title, msg, imgUrl }
}

const xyPoint = (u: unknown, path: string, index: number): XyPoint => {
  const o = record(u, path, index, `{"x", "y"}`)
  return { x: numberField(o, "x", path, index), y: numberField(o, "y", path, index) }
}

// --- state: leaderboard, pie chart, bar chart ---

/** The one of two alternative keys a point uses; throws when it uses both. */
const oneOf = (o: Json, a: string, b: string, path: string): string | undefined => {
  const hasA = o[a] !== undefined
  const hasB = o[b] !== undefined
  if (hasA && hasB) throw invalid(at(path, -1, b), `a point carries either ${a} or ${b}, not both`)
  return hasA ? a : hasB ? b : undefined
}

/** A collection array at `o[key]`: checked to be an array within the limit. */
const collection = (o: Json, key: string, path: string, limits: Limits): ReadonlyArray<unknown> => {
  const u = o[key]
  const where = at(path, -1, key)
  if (!Array.isArray(u)) throw invalid(where, `${key} must be an array, got ${show(u)}`)
  checkLength(u, where, limits)
  return u
}

const leaderboardItem = (u: unknown, path: string, index: number): LeaderboardItem => {
  const o = record(u, path, index, `{"name", "value"}`)
  const item: Mutable<LeaderboardItem> = {
    name: stringField(o, "name", path, index),
    value: numberField(o, "value", path, index)
  }
  const prefix = optionalString(o, "prefix", path, index)
  if (prefix !== undefined) item.prefix = prefix
  const suffix = optionalString(o, "suffix", path, index)
  if (suffix !== undefined) item.suffix = suffix
  return item
}

const chartItem = (u: unknown, path: string, index: number): ChartItem => {
  const o = record(u, path, index, `{"name", "value"}`)
  const item: Mutable<ChartItem> = {
    name: stringField(o, "name", path, index),
    value: numberField(o, "value", path, index)
  }
  const color = optionalString(o, "color", path, index)
  if (color !== undefined) item.color = color
  return item
}

const board = (
  type: "leaderboard" | "pie-chart" | "bar-chart",
  point: unknown,
  path: string,
  limits: Limits
): PointOp => {
  if (!isRecord(point)) throw wrongShape(type, point, path)
  let key: string | undefined
  if (type === "leaderboard") {
    key = oneOf(point, "leaderboard", "leaderboardItem", path)
    if (key === "leaderboardItem") {
      const item = point["leaderboardItem"]
      if (!isRecord(item)) {
        throw invalid(at(path, -1, "leaderboardItem"), `leaderboardItem must be an object {"name", "value"}`)
      }
      return { _tag: "LeaderboardItem", item: leaderboardItem(item, at(path, -1, "leaderboardItem"), -1) }
    }
  } else {
    // Real clients send pie charts under either key and bar charts under `leaderboard` too (contract section 3).
    key = type === "bar-chart" ? oneOf(point, "chart", "leaderboard", path) : oneOf(point, "leaderboard", "chart", path)
  }
  if (key === undefined) throw wrongShape(type, point, path)
  const items = collection(point, key, path, limits)
  if (items.length === 0) return CLEAR
  const where = at(path, -1, key)
  if (type === "bar-chart") {
    const chart: Array<ChartItem> = new Array(items.length)
    for (let i = 0; i < items.length; i++) chart[i] = chartItem(items[i], where, i)
    return put1({ chart })
  }
  const leaderboard: Array<LeaderboardItem> = new Array(items.length)
  for (let i = 0; i < items.length; i++) leaderboard[i] = leaderboardItem(items[i], where, i)
  return put1({ leaderboard })
}

// --- state: list, table, multi-bar matrix ---

const list = (point: unknown, path: string, limits: Limits): PointOp => {
  if (!isRecord(point)) throw wrongShape("list", point, path)
  const key = oneOf(point, "list", "listItem", path)
  if (key === "listItem") return { _tag: "ListItem", listItem: listItemField(point, path, -1) }
  if (key === undefined) throw wrongShape("list", point, path)
  const items = collection(point, "list", path, limits)
  if (items.length === 0) return CLEAR
  const where = at(path, -1, "list")
  const out: Array<{ readonly listItem: string }> = new Array(items.length)
  for (let i = 0; i < items.length; i++) {
    const o = record(items[i], where, i, `{"listItem"}`)
    out[i] = { listItem: listItemField(o, where, i) }
  }
  return put1({ list: out })
}

const cells = (n: number): string => (n === 1 ? "1 cell" : `${n} cells`)

/** A row of table cells: strings, or finite numbers stored as their `String()` text. */
const tableCells = (u: unknown, path: string, limits: Limits): Row => {
  if (!Array.isArray(u)) throw invalid(path, `a table row must be an array of strings, got ${show(u)}`)
  if (u.length === 0) throw invalid(path, "a table row must have at least one cell")
  checkLength(u, path, limits)
  const row: Row = new Array(u.length)
  for (let j = 0; j < u.length; j++) {
    const cell: unknown = u[j]
    if (typeof cell === "string") row[j] = cell
    else if (typeof cell === "number" && Number.isFinite(cell)) row[j] = String(cell)
    else throw invalid(`${path}[${j}]`, `a table cell must be a string or a number, got ${show(cell)}`)
  }
  return row
}

const table = (point: unknown, path: string, limits: Limits): PointOp => {
  if (!isRecord(point)) throw wrongShape("table", point, path)
  const key = oneOf(point, "table", "tableRow", path)
  if (key === "tableRow")
    return { _tag: "TableRow", row: tableCells(point["tableRow"], at(path, -1, "tableRow"), limits) }
  if (key === undefined) throw wrongShape("table", point, path)
  const rows = collection(point, "table", path, limits)
  if (rows.length === 0) return CLEAR
  const where = at(path, -1, "table")
  const out: Array<Row> = new Array(rows.length)
  for (let i = 0; i < rows.length; i++) {
    const row = tableCells(rows[i], `${where}[${i}]`, limits)
    // Every row as wide as the header, the same rule a tableRow push is held to (contract section 3).
    if (i > 0 && row.length !== out[0]!.length) {
      throw invalid(
        `${where}[${i}]`,
        `table row has ${cells(row.length)} but the header row has ${cells(out[0]!.length)}`
      )
    }
    out[i] = row
  }
  return put1({ table: out })
}

const matrix = (point: unknown, path: string, limits: Limits): PointOp => {
  if (!isRecord(point) || point["matrix"] === undefined) throw wrongShape("multi-bar-graph", point, path)
  const rows = collection(point, "matrix", path, limits)
  if (rows.length === 0) return CLEAR
  const where = at(path, -1, "matrix")
  const header = rows[0]
  if (!Array.isArray(header)) {
    throw invalid(`${where}[0]`, `the header row must be an array ["", "series", ...], got ${show(header)}`)
  }
  if (header.length < 2) {
    throw invalid(`${where}[0]`, "the header row needs a corner cell and at least one series name")
  }
  checkLength(header, `${where}[0]`, limits)
  const out: Array<Array<string | number>> = new Array(rows.length)
  const head: Array<string> = new Array(header.length)
  for (let j = 0; j < header.length; j++) {
    const name: unknown = header[j]
    if (typeof name !== "string") {
      throw invalid(`${where}[0][${j}]`, `header row cells must be strings, got ${show(name)}`)
    }
    head[j] = name
  }
  out[0] = head
  for (let i = 1; i < rows.length; i++) {
    const r: unknown = rows[i]
    if (!Array.isArray(r)) {
      throw invalid(`${where}[${i}]`, `each row must be an array [category, n, ...], got ${show(r)}`)
    }
    if (r.length !== header.length) {
      throw invalid(
        `${where}[${i}]`,
        `row has ${cells(r.length)} but needs ${header.length}: a category label and one number per series`
      )
    }
    const row: Array<string | number> = new Array(r.length)
    const label: unknown = r[0]
    if (typeof label === "string") row[0] = label
    else if (typeof label === "number" && Number.isFinite(label)) row[0] = String(label)
    else throw invalid(`${where}[${i}][0]`, `the category label must be a string, got ${show(label)}`)
    for (let j = 1; j < r.length; j++) {
      const n = toNumber(r[j])
      if (n === undefined) {
        throw invalid(`${where}[${i}][${j}]`, `a series value must be a finite number, got ${show(r[j])}`)
      }
      row[j] = n
    }
    out[i] = row
  }
  return put1({ matrix: out })
}
