/**
 * The 20 widget type identifiers of contract section 2 (kebab-case, as the admin API and the CLI spell them). A
 * stream has exactly one, declared when its widget is created.
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

/** A widget type identifier (contract section 2). */
export type WidgetType = (typeof widgetTypes)[number]

const known: ReadonlySet<string> = new Set(widgetTypes)

/** True when `value` is one of the 20 widget type identifiers. */
export const isWidgetType = (value: unknown): value is WidgetType => typeof value === "string" && known.has(value)

/**
 * How a widget type stores data (contract section 3, column "Kind"):
 * - `numeric`: one number per entry; supports `delta` and a client `timestamp`.
 * - `series`: numeric, plus arrays of timestamped numbers (sparkline, line-graph).
 * - `events`: each push appends one entry per event (maps, text feed, gallery, xy-graph).
 * - `state`: each push stores the whole new state (leaderboards, lists, tables, ...).
 */
export type WidgetKind = "numeric" | "series" | "events" | "state"

const kinds: Readonly<Record<WidgetType, WidgetKind>> = {
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

/**
 * The widget types cleared by `{"command": "clear"}` (spec section 4.3, contract section 4). Every other type rejects
 * the command with 400 `unsupported_command` and is cleared by pushing an empty point instead (`null`).
 */
export const clearCommandTypes: ReadonlyArray<WidgetType> = [
  "sparkline",
  "line-graph",
  "usa-map",
  "world-map",
  "text-feed",
  "xy-graph"
]

const clearable: ReadonlySet<WidgetType> = new Set(clearCommandTypes)

/** True for the widget types that accept `{"command": "clear"}` (see {@link clearCommandTypes}). */
export const supportsClearCommand = (type: WidgetType): boolean => clearable.has(type)
