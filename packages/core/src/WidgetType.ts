import { widgetKind, widgetTypes } from "@dashstream/contract"
import { Schema } from "effect"
import type { SelectionMode } from "./BucketSelection.js"

/**
 * The widget types (contract section 2) as a Schema, built on `@dashstream/contract`, where the list, the storage
 * kinds and the clear-command set are written once for core, the client and the dashboard page.
 */
export { supportsClearCommand, widgetKind, type WidgetKind, widgetTypes } from "@dashstream/contract"

/** A widget type identifier; decoding rejects anything not in {@link widgetTypes}. */
export const WidgetType = Schema.Literal(...widgetTypes)
export type WidgetType = typeof WidgetType.Type

/** True when `s` is one of the 20 widget type identifiers. */
export const isWidgetType = Schema.is(WidgetType)

/**
 * How decimation and range reads choose what to keep in a bucket (README, "Decimation"): `extremes` keeps the first, last,
 * lowest and highest entry by the entry's numeric value (`number`, or `y` for xy-graph); `last` keeps the last.
 */
export const decimationMode = (type: WidgetType): SelectionMode => {
  const kind = widgetKind(type)
  return kind === "numeric" || kind === "series" || type === "xy-graph" ? "extremes" : "last"
}
