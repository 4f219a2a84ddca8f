/**
 * Pure helpers of the widgets list (docs/api.md section 14): an editable example point for each widget type (the
 * "push a test point" form starts from it), a one-line summary of a stored point, and the age of an entry.
 */
import { isNumericWidgetType, type WidgetType } from "@dashstream/contract"
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

/**
 * A stored point in one line of at most `max` characters: numeric widgets as their value with prefix and suffix
 * (`$1,284.5`), a label as its text, anything else as compact JSON, cut with an ellipsis.
 */
export const summarize = (type: string, point: unknown, max = 60): string => {
  let text: string
  const numeric = isNumericWidgetType(type) ? numericPoint(point) : undefined
  if (numeric !== undefined) text = formatValue(numeric.number, numeric.prefix, numeric.suffix)
  else if (type === "label" && typeof (point as { label?: unknown } | null)?.label === "string")
    text = (point as { label: string }).label
  else text = JSON.stringify(point) ?? String(point)
  return text.length > max ? `${text.slice(0, max - 1)}\u2026` : text
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
