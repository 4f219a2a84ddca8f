/**
 * Pure helpers of the widgets list (docs/api.md section 14): an editable example point for each widget type (the
 * "push a test point" form starts from it), a one-line summary of a stored point, and the age of an entry.
 */
import type { WidgetType } from "@dashstream/contract"
import { formatValue, numericPoint } from "@dashstream/dashboard-web/browser/format"

/**
 * An example `point` for each widget type of docs/api.md section 2, in the shape section 3 accepts: what the test
 * point form shows first. Image URLs are placeholders on `example.com`; edit them to a real picture. Keyed by
 * `WidgetType`, so a new type does not compile until it has an example.
 */
export const examplePoints: Readonly<Record<WidgetType, unknown>> = {
  number: { number: 1284.5, prefix: "$" },
  "horizontal-bar": { number: 72, suffix: "%" },
  "vertical-bar": { number: 340 },
  dial: { number: 87, suffix: "%" },
  sparkline: { number: 64.8 },
  "line-graph": { number: 1520 },
  "usa-map": { latitude: 40.71, longitude: -74.01, color: "blue", title: "New York" },
  "world-map": { latitude: 51.51, longitude: -0.13, color: "green", title: "London" },
  "text-feed": { title: "Deploy finished", msg: "Version 1.4.2 is live." },
  leaderboard: {
    leaderboard: [
      { name: "Alice", value: 42 },
      { name: "Bob", value: 37 },
      { name: "Chen", value: 30 }
    ]
  },
  "pie-chart": {
    leaderboard: [
      { name: "Web", value: 55 },
      { name: "Mobile", value: 30 },
      { name: "Other", value: 15 }
    ]
  },
  "bar-chart": {
    chart: [
      { name: "Mon", value: 12 },
      { name: "Tue", value: 19 },
      { name: "Wed", value: 15 }
    ]
  },
  list: { list: [{ listItem: "Call the supplier" }, { listItem: "Ship order 1042" }] },
  image: { imgUrl: "https://example.com/picture.png" },
  label: { label: "All systems normal" },
  table: {
    table: [
      ["Region", "Sales"],
      ["North", "1,204"],
      ["South", "987"]
    ]
  },
  gallery: { title: "Office", msg: "Monday morning", imgUrl: "https://example.com/office.jpg" },
  html: { html: "<b>Hello</b> from the console" },
  "xy-graph": { x: 3, y: 7.5 },
  "multi-bar-graph": {
    matrix: [
      ["Quarter", "2024", "2025"],
      ["Q1", 10, 12],
      ["Q2", 14, 15]
    ]
  }
}

/** The example point of `type` as the form's text: pretty JSON (`{}` for a type this page does not know). */
export const exampleText = (type: string): string =>
  JSON.stringify((examplePoints as Readonly<Record<string, unknown>>)[type] ?? {}, null, 2)

type Item = { readonly name?: unknown; readonly value?: unknown; readonly prefix?: unknown; readonly suffix?: unknown }
type Fields = Readonly<Record<string, unknown>>

const text = (value: unknown): string =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : ""
const amount = (item: Item): string =>
  typeof item.value === "number"
    ? formatValue(item.value, text(item.prefix) || undefined, text(item.suffix) || undefined)
    : text(item.value)
/** At most `n` items of a list, joined by " · ", with "(+k more)" for the rest. */
const firstOf = (items: ReadonlyArray<string>, n = 3): string =>
  items.slice(0, n).join(" \u00b7 ") + (items.length > n ? ` (+${items.length - n} more)` : "")
const itemsOf = (value: unknown): ReadonlyArray<Item> => (Array.isArray(value) ? (value as Array<Item>) : [])
const numeric = (p: Fields): string => {
  const found = numericPoint(p)
  return found === undefined ? "" : formatValue(found.number, found.prefix, found.suffix)
}

/**
 * How each widget type's stored point (docs/api.md section 3.3) reads in one line: numbers with prefix and suffix, a
 * leaderboard's leader first, a list's first items, a feed item's title and message. Keyed by `WidgetType`, so a new
 * type does not compile until it has one. An empty text means the point is not of its type's shape.
 */
const readers: Readonly<Record<WidgetType, (point: Fields) => string>> = {
  number: numeric,
  "horizontal-bar": numeric,
  "vertical-bar": numeric,
  dial: numeric,
  sparkline: numeric,
  "line-graph": numeric,
  "usa-map": (p) => text(p["title"]) || `${text(p["latitude"])}, ${text(p["longitude"])}`,
  "world-map": (p) => text(p["title"]) || `${text(p["latitude"])}, ${text(p["longitude"])}`,
  "text-feed": (p) => [text(p["title"]), text(p["msg"])].filter((t) => t !== "").join(": "),
  leaderboard: (p) =>
    firstOf(itemsOf(p["leaderboard"]).map((item, i) => `${i + 1}. ${text(item.name)} ${amount(item)}`)),
  "pie-chart": (p) => firstOf(itemsOf(p["leaderboard"]).map((item) => `${text(item.name)} ${amount(item)}`)),
  "bar-chart": (p) =>
    firstOf(
      itemsOf(p["chart"]).map((item) => `${text(item.name)} ${amount(item)}`),
      4
    ),
  list: (p) => firstOf(itemsOf(p["list"]).map((item) => text((item as { listItem?: unknown }).listItem))),
  image: (p) => text(p["imgUrl"]),
  label: (p) => text(p["label"]),
  table: (p) => {
    const rows = Array.isArray(p["table"]) ? (p["table"] as Array<Array<unknown>>) : []
    const first = rows[1]
    if (first === undefined) return rows[0] === undefined ? "" : `${rows[0].map(text).join(", ")} (no rows)`
    return `${first.map(text).join(", ")}${rows.length > 2 ? ` (+${rows.length - 2} more rows)` : ""}`
  },
  gallery: (p) => [text(p["title"]), text(p["msg"])].filter((t) => t !== "").join(": ") || text(p["imgUrl"]),
  html: (p) =>
    text(p["html"])
      .replace(/<[^>]*>/g, " ")
      .replace(/\s+/g, " ")
      .trim(),
  "xy-graph": (p) => `x ${text(p["x"])}, y ${text(p["y"])}`,
  "multi-bar-graph": (p) => {
    const rows = Array.isArray(p["matrix"]) ? (p["matrix"] as Array<Array<unknown>>) : []
    const series = (rows[0] ?? []).slice(1).map(text)
    return firstOf(
      rows.slice(1).map(
        (row) =>
          `${text(row[0])}: ${row
            .slice(1)
            .map((v, i) => `${series[i] ?? ""} ${text(v)}`.trim())
            .join(", ")}`
      ),
      2
    )
  }
}

/**
 * A stored point in one line of at most `max` characters, as a person reads it (see `readers`): `$1,284.5`, `1.
 * Alice 42 · 2. Bob 37 · 3. Chen 30`, `Call the supplier · Ship order 1042`, `Deploy finished: Version 1.4.2 is
 * live.`; cut with an ellipsis. A point that is not of its type's shape (or of a type this page does not know) is
 * shown as compact JSON.
 */
export const summarize = (type: string, point: unknown, max = 60): string => {
  const reader = (readers as Readonly<Record<string, (point: Fields) => string>>)[type]
  const read = reader !== undefined && typeof point === "object" && point !== null ? reader(point as Fields) : ""
  const shown = read !== "" ? read : (JSON.stringify(point) ?? String(point))
  return shown.length > max ? `${shown.slice(0, max - 1)}\u2026` : shown
}

/**
 * How long ago an entry was stored, from its `ts` and the current time (both UNIX seconds): "just now" under 5
 * seconds, then "12 s", "5 min", "3 h", "2 d" (whole units, rounded down). A `ts` in the future reads "just now".
 */
export const formatAge = (ts: number, now: number): string => {
  const s = Math.floor(now - ts)
  if (s < 5) return "just now"
  if (s < 60) return `${s} s`
  if (s < 3600) return `${Math.floor(s / 60)} min`
  if (s < 86_400) return `${Math.floor(s / 3600)} h`
  return `${Math.floor(s / 86_400)} d`
}
