/**
 * Dashstream's wire contract as plain data and types, importing nothing (so the client and the dashboard page's
 * browser bundle stay free of effect): the widget types and their storage kinds (contract sections 2 and 3), which of
 * them take the clear command (section 4), and the point shapes a push sends and a read returns (section 3). Core's
 * Schemas, the client and the dashboard page are built on it; each rule is written here once.
 */
export {
  clearCommandTypes,
  isWidgetType,
  supportsClearCommand,
  widgetKind,
  type WidgetKind,
  type WidgetType,
  widgetTypes
} from "./WidgetType.js"
// Every point shape (push and stored, per widget type), as types only.
export type * from "./Point.js"
