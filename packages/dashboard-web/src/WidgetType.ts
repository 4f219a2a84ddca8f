import { MAX_SNAPSHOT_ENTRIES, snapshotEntries, type WidgetType, widgetKind } from "@dashstream/contract"

/**
 * The 20 widget type identifiers (docs/api.md section 2), from `@dashstream/contract`: it imports nothing, so the browser
 * bundle does not pull in effect.
 */
export { type WidgetType, widgetTypes } from "@dashstream/contract"

/**
 * How many entries a tile holds in the browser: as many as the section-11 snapshot sends for its type's kind
 * (`snapshotEntries` of `@dashstream/contract`): 1 for `state` types, 2 for `numeric` gauges (the latest value and the
 * change since the previous one), the most recent {@link maxHeldEntries} for `series` and `events` types.
 */
export const heldEntries = (type: WidgetType): number => snapshotEntries(widgetKind(type))

/** The most entries a series or events tile holds (the section-11 snapshot sends at most 1,000). */
export const maxHeldEntries = MAX_SNAPSHOT_ENTRIES
