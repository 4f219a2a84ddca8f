import { Schema } from "effect"

/**
 * The 20 widget type identifiers (contract section 2), kebab-case as used by the admin API and CLI.
 */
export const widgetTypes = [
  "number",
  "horizontal-bar",
  "vertical-bar",
  "dial",
  "sparkline",
  "line-graph",
  "usa-map",
  "world-map",
  "text-feed",
  "leaderboard",
  "pie-chart",
  "bar-chart",
  "list",
  "image",
  "label",
  "table",
  "gallery",
  "html",
  "xy-graph",
  "multi-bar-graph"
] as const

/** A widget type identifier; decoding rejects anything not in {@link widgetTypes}. */
export const WidgetType = Schema.Literal(...widgetTypes)
export type WidgetType = typeof WidgetType.Type

/** True when `s` is one of the 20 widget type identifiers. */
export const isWidgetType = Schema.is(WidgetType)

/**
 * How a widget type stores data (contract section 3, column "Kind"):
 * - `numeric`: one number per entry; supports `delta` and a client `timestamp`.
 * - `series`: numeric, plus arrays of timestamped numbers (sparkline, line-graph).
 * - `events`: each push appends one entry per event (maps, text feed, gallery, xy-graph).
 * - `state`: each push stores the whole new state (leaderboards, lists, tables, ...).
 */
export type WidgetKind = "numeric" | "series" | "events" | "state"

const kinds: Record<WidgetType, WidgetKind> = {
  number: "numeric",
  "horizontal-bar": "numeric",
  "vertical-bar": "numeric",
  dial: "numeric",
  sparkline: "series",
  "line-graph": "series",
  "usa-map": "events",
  "world-map": "events",
  "text-feed": "events",
  gallery: "events",
  "xy-graph": "events",
  leaderboard: "state",
  "pie-chart": "state",
  "bar-chart": "state",
  list: "state",
  image: "state",
  label: "state",
  table: "state",
  html: "state",
  "multi-bar-graph": "state"
}

/** The storage kind of a widget type (contract section 3). */
export const widgetKind = (type: WidgetType): WidgetKind => kinds[type]

const clearCommandTypes: ReadonlySet<WidgetType> = new Set<WidgetType>([
  "sparkline",
  "line-graph",
  "usa-map",
  "world-map",
  "text-feed",
  "xy-graph"
])

/**
 * True for the widget types that accept `{"command": "clear"}` (spec section 4.3, contract section 4).
 * Every other type is cleared by pushing an empty point instead.
 */
export const supportsClearCommand = (type: WidgetType): boolean => clearCommandTypes.has(type)

/**
 * How decimation chooses what to keep in a bucket (contract section 9): `extremes` keeps the first, last,
 * lowest and highest entry by the entry's numeric value (`number`, or `y` for xy-graph); `last` keeps the last.
 */
export const decimationMode = (type: WidgetType): "extremes" | "last" => {
  const kind = kinds[type]
  return kind === "numeric" || kind === "series" || type === "xy-graph" ? "extremes" : "last"
}
