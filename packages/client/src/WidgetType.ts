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

/**
 * The widget types cleared by `{"command": "clear"}` (contract section 4). Every other type rejects the command with
 * 400 `unsupported_command` and is cleared by pushing an empty point instead (`null`).
 */
export const clearCommandTypes: ReadonlyArray<WidgetType> = [
  "sparkline",
  "line-graph",
  "usa-map",
  "world-map",
  "text-feed",
  "xy-graph"
]

/**
 * Stream names mapped to their widget types, e.g. `{ revenue: "number", visits: "sparkline" }`. Given to
 * `new Dashstream({ widgets })`, it types every stream's points and lets `clear` pick the right request.
 */
export type Widgets = Readonly<Record<string, WidgetType>>
