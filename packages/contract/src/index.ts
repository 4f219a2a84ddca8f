/**
 * Dashstream's wire contract as plain data and types, importing nothing (so the client and the dashboard page's
 * browser bundle stay free of effect): the widget-type table (each type's storage kind, how it is cleared, what
 * decimation keeps, whether it draws a scale or a stretch of time, what line protocol writes to it, its collection keys) with the lists
 * derived from it, and the point shapes a push sends and a read returns. Core's Schemas, the client and the dashboard
 * page are built on it; each rule is written here once.
 */
export {
  clearCommandTypes,
  collectionKeys,
  decimationMode,
  isNumericWidgetType,
  isWidgetType,
  lineProtocolWidgetTypes,
  MAX_SNAPSHOT_ENTRIES,
  numericWidgetTypes,
  scaleWidgetTypes,
  snapshotEntries,
  supportsClearCommand,
  timeRangeWidgetTypes,
  widgetKind,
  type WidgetKind,
  type WidgetType,
  widgetTypes,
  widgetTypeTable,
  type WidgetTypeTraits
} from "./WidgetType.js"
// Every point shape (push and stored, per widget type), as types only.
export type * from "./Point.js"
