import { widgetTypes } from "@dashstream/contract"
import { Schema } from "effect"

/**
 * The widget types as a Schema, built on `@dashstream/contract`, whose widget-type table holds every property of a
 * type (storage kind, clearing, decimation, scale, line protocol, collection keys) once for core, the client and the
 * dashboard page.
 */
export {
  decimationMode,
  lineProtocolWidgetTypes,
  supportsClearCommand,
  widgetKind,
  type WidgetKind,
  widgetTypes
} from "@dashstream/contract"

/** A widget type identifier; decoding rejects anything not in {@link widgetTypes}. */
export const WidgetType = Schema.Literal(...widgetTypes)
export type WidgetType = typeof WidgetType.Type

/** True when `s` is one of the 20 widget type identifiers. */
export const isWidgetType = Schema.is(WidgetType)
