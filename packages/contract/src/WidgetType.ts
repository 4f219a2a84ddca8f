/**
 * The 20 widget type identifiers (kebab-case, as the admin API and the CLI spell them; README, "One push per widget
 * type"). A stream has exactly one, declared when its widget is created. Every property of a type is a column of
 * {@link widgetTypeTable}; the lists below are derived from it.
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

/** A widget type identifier (one of {@link widgetTypes}). */
export type WidgetType = (typeof widgetTypes)[number]

const known: ReadonlySet<string> = new Set(widgetTypes)

/** True when `value` is one of the 20 widget type identifiers. */
export const isWidgetType = (value: unknown): value is WidgetType => typeof value === "string" && known.has(value)

/**
 * How a widget type stores data (README, "One push per widget type", column "Stored"):
 * - `numeric`: one number per entry; supports `delta` and a client `timestamp`.
 * - `series`: numeric, plus arrays of timestamped numbers (sparkline, line-graph).
 * - `events`: each push appends one entry per event (maps, text feed, gallery, xy-graph).
 * - `state`: each push stores the whole new state (leaderboards, lists, tables, ...).
 */
export type WidgetKind = "numeric" | "series" | "events" | "state"

/**
 * What the server knows of one widget type, one row of {@link widgetTypeTable}. Each property is read through the
 * helpers and lists of this module, never restated elsewhere.
 */
export interface WidgetTypeTraits {
  /** How the type stores data (see {@link WidgetKind}); `numeric` and `series` types hold one number per entry. */
  readonly kind: WidgetKind
  /**
   * How a stream of the type is emptied (README, "One push per widget type", "Clearing"): `command` by
   * `{"command": "clear"}` (an empty point is then rejected, 400 `invalid_point`), `empty-point` by pushing `null`,
   * `""`, `{}`, `[]` or an empty collection (the command is then rejected, 400 `unsupported_command`).
   */
  readonly clearedBy: "command" | "empty-point"
  /**
   * What decimation keeps in a bucket (README, "Decimation"): `extremes` the first, last, lowest and highest entry by
   * the entry's numeric value (`number`, or `y` for xy-graph); `last` the last entry.
   */
  readonly decimation: "extremes" | "last"
  /** The tile draws a scale, so it may carry the `min` and `max` tile options (bars and dials). */
  readonly scale: boolean
  /**
   * The tile shows a stretch of time (a line over time, or a number's change across it), so it may carry the `range`
   * tile option and follows the view page's time picker (README, "Looking back").
   */
  readonly timeRange: boolean
  /**
   * What an InfluxDB line protocol field writes to a stream of the type (README, "InfluxDB line protocol"): `number`
   * a numeric field value as `{number}`, `text` a string field value (a label, or a text-feed item), `undefined` the
   * type cannot be written that way.
   */
  readonly lineProtocol: "number" | "text" | undefined
  /** The point keys holding the type's whole collection, whose empty array (`{"list": []}`) clears the stream. */
  readonly collections: ReadonlyArray<string>
}

const numeric = {
  kind: "numeric",
  clearedBy: "empty-point",
  decimation: "extremes",
  scale: false,
  timeRange: false,
  lineProtocol: "number",
  collections: []
} as const satisfies WidgetTypeTraits
const series = { ...numeric, kind: "series", clearedBy: "command", timeRange: true } as const satisfies WidgetTypeTraits
const events = {
  kind: "events",
  clearedBy: "command",
  decimation: "last",
  scale: false,
  timeRange: false,
  lineProtocol: undefined,
  collections: []
} as const satisfies WidgetTypeTraits
const state = { ...events, kind: "state", clearedBy: "empty-point" } as const satisfies WidgetTypeTraits

/**
 * The widget-type table: every property of every type, written once. A new type is a new row here (and in
 * {@link widgetTypes}); the compiler then points at each `Record<WidgetType, ...>` and exhaustive `switch` it touches.
 */
export const widgetTypeTable: { readonly [T in WidgetType]: WidgetTypeTraits } = {
  number: { ...numeric, timeRange: true },
  "horizontal-bar": { ...numeric, scale: true },
  "vertical-bar": { ...numeric, scale: true },
  dial: { ...numeric, scale: true },
  sparkline: series,
  "line-graph": series,
  "usa-map": events,
  "world-map": events,
  "text-feed": { ...events, lineProtocol: "text" },
  gallery: { ...events, clearedBy: "empty-point" },
  "xy-graph": { ...events, decimation: "extremes" },
  leaderboard: { ...state, collections: ["leaderboard"] },
  "pie-chart": { ...state, collections: ["leaderboard", "chart"] },
  "bar-chart": { ...state, collections: ["chart", "leaderboard"] },
  list: { ...state, collections: ["list"] },
  image: state,
  label: { ...state, lineProtocol: "text" },
  table: { ...state, collections: ["table"] },
  html: state,
  "multi-bar-graph": { ...state, collections: ["matrix"] }
}

/** The widget types, in {@link widgetTypes} order, whose row satisfies `test`. */
const typesWhere = (test: (traits: WidgetTypeTraits) => boolean): ReadonlyArray<WidgetType> =>
  widgetTypes.filter((type) => test(widgetTypeTable[type]))

// The kind column alone, one lookup away: the ingest path reads it once per field value.
const kinds = Object.fromEntries(widgetTypes.map((type) => [type, widgetTypeTable[type].kind])) as Readonly<
  Record<WidgetType, WidgetKind>
>

/** The storage kind of a widget type (see {@link WidgetKind}). */
export const widgetKind = (type: WidgetType): WidgetKind => kinds[type]

/** The most entries a series or events tile's snapshot holds, and a page's tile of that kind (docs/api.md section 11). */
export const MAX_SNAPSHOT_ENTRIES = 1000

/**
 * The snapshot rule (docs/api.md section 11): how many of a stream's most recent entries a snapshot sends for a tile
 * of this kind, and the page's tile holds.
 * - `state` tiles (leaderboards, lists, tables, ...): 1, the latest entry: it is the whole state.
 * - `series` and `events` tiles (sparkline, line graph, maps, feeds, gallery, xy): the most recent
 *   {@link MAX_SNAPSHOT_ENTRIES}, to draw the history.
 * - `numeric` tiles (number, bars, dial): 2, the latest and the one before it: the page shows the change since the
 *   previous value.
 */
export const snapshotEntries = (kind: WidgetKind): number =>
  kind === "state" ? 1 : kind === "numeric" ? 2 : MAX_SNAPSHOT_ENTRIES

/** What decimation keeps of a stream of `type` (see {@link WidgetTypeTraits.decimation}). */
export const decimationMode = (type: WidgetType): "extremes" | "last" => widgetTypeTable[type].decimation

/**
 * The widget types whose entries are numbers (kinds `numeric` and `series`): number, the bars, dial, sparkline and
 * line-graph. Their tiles may carry `thresholds`, and their points take `delta` and a client `timestamp`.
 */
export const numericWidgetTypes: ReadonlyArray<WidgetType> = typesWhere(
  ({ kind }) => kind === "numeric" || kind === "series"
)

const numerics: ReadonlySet<string> = new Set(numericWidgetTypes)

/** True when `type` is one of the {@link numericWidgetTypes} (any string is accepted; unknown ones are not). */
export const isNumericWidgetType = (type: string): boolean => numerics.has(type)

/** The widget types whose tiles draw a scale and so may carry `min` and `max` (see {@link WidgetTypeTraits.scale}). */
export const scaleWidgetTypes: ReadonlyArray<WidgetType> = typesWhere(({ scale }) => scale)

/**
 * The widget types whose tiles show a stretch of time (number, sparkline, line-graph): they may carry the `range` tile
 * option and follow the view page's time picker (see {@link WidgetTypeTraits.timeRange}).
 */
export const timeRangeWidgetTypes: ReadonlyArray<WidgetType> = typesWhere(({ timeRange }) => timeRange)

/** The widget types an InfluxDB line protocol field can write to (see {@link WidgetTypeTraits.lineProtocol}). */
export const lineProtocolWidgetTypes: ReadonlyArray<WidgetType> = typesWhere(
  ({ lineProtocol }) => lineProtocol !== undefined
)

/**
 * The widget types cleared by `{"command": "clear"}`. Every other type rejects the command with 400
 * `unsupported_command` and is cleared by pushing an empty point instead (`null`; see
 * {@link WidgetTypeTraits.clearedBy}).
 */
export const clearCommandTypes: ReadonlyArray<WidgetType> = typesWhere(({ clearedBy }) => clearedBy === "command")

/** True for the widget types that accept `{"command": "clear"}` (see {@link clearCommandTypes}). */
export const supportsClearCommand = (type: WidgetType): boolean => widgetTypeTable[type].clearedBy === "command"

/**
 * Every collection key of any widget type (`leaderboard`, `chart`, `list`, `table`, `matrix`), each once: a point
 * whose only key is one of them, holding `[]`, clears its stream (see {@link WidgetTypeTraits.collections}).
 */
export const collectionKeys: ReadonlyArray<string> = [
  ...new Set(widgetTypes.flatMap((type) => widgetTypeTable[type].collections))
]
