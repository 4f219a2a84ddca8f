import { type WidgetType, widgetKind } from "@dashstream/contract"

/**
 * The 20 widget type identifiers (docs/api.md section 2), from `@dashstream/contract`: it imports nothing, so the browser
 * bundle does not pull in effect.
 */
export { type WidgetType, widgetTypes } from "@dashstream/contract"

/**
 * How many entries a tile holds in the browser:
 * - `state` types (leaderboards, lists, tables, ...) show only their latest entry (docs/api.md section 3, kind "state");
 * - `numeric` gauges show the latest value and the change since the previous one, so they keep two;
 * - `series` and `events` types keep the most recent {@link maxHeldEntries}, like the section-11 snapshot.
 */
export const heldEntries = (type: WidgetType): number => {
  switch (widgetKind(type)) {
    case "state":
      return 1
    case "numeric":
      return 2
    case "series":
    case "events":
      return maxHeldEntries
  }
}

/** The most entries a series or events tile holds (the section-11 snapshot sends at most 1,000). */
export const maxHeldEntries = 1000
