import type { Limits } from "../Limits.js"
import type { ChartItem, LeaderboardItem, PointOp } from "../Point.js"
import {
  at,
  checkLength,
  CLEAR,
  collection,
  invalid,
  isRecord,
  type Json,
  type Mutable,
  numberField,
  oneOf,
  optionalString,
  put1,
  record,
  show,
  stringField,
  toNumber,
  wrongShape
} from "./pointFields.js"

// Points of the state widget kinds whose point is a collection: leaderboard, pie chart, bar chart, list, table and
// multi-bar matrix. Each replaces the stored state, or adds one item to it (leaderboardItem, listItem, tableRow).

type Row = Array<string>

// --- state: leaderboard, pie chart, bar chart ---

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

export const board = (
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
    // Real clients send pie charts under either key and bar charts under `leaderboard` too (docs/api.md section 3).
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

/**
 * A list item's text: a string, or a finite number stored as its `String()` text (the original Python and Ruby
 * clients send numbers as list items, as they do as table cells).
 */
const listItemField = (o: Json, path: string, index: number): string => {
  const u = o["listItem"]
  return typeof u === "number" && Number.isFinite(u) ? String(u) : stringField(o, "listItem", path, index)
}

// --- state: list, table, multi-bar matrix ---

export const list = (point: unknown, path: string, limits: Limits): PointOp => {
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

export const table = (point: unknown, path: string, limits: Limits): PointOp => {
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
    // Every row as wide as the header, the same rule a tableRow push is held to (docs/api.md section 3).
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

export const matrix = (point: unknown, path: string, limits: Limits): PointOp => {
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
