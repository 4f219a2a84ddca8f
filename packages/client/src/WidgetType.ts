import type { WidgetType } from "@dashstream/contract"

/** The widget types and which of them take the clear command (docs/api.md sections 2 and 4), from `@dashstream/contract`. */
export { clearCommandTypes, type WidgetType, widgetTypes } from "@dashstream/contract"

/**
 * Stream names mapped to their widget types, e.g. `{ revenue: "number", visits: "sparkline" }`. Given to
 * `new Dashstream({ widgets })`, it types every stream's points and lets `clear` pick the right request.
 */
export type Widgets = Readonly<Record<string, WidgetType>>
