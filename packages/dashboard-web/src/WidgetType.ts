/**
 * The 20 widget type identifiers (contract section 2), kebab-case. Kept here rather than imported from
 * `@dashstream/core` so the browser bundle does not pull in effect; a test checks both lists are equal.
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

/** One of the 20 widget type identifiers. */
export type WidgetType = (typeof widgetTypes)[number]

/**
 * How many entries a tile holds in the browser:
 * - `state` types (leaderboards, lists, tables, ...) show only their latest entry (contract section 3, kind "state");
 * - `numeric` gauges show the latest value and the change since the previous one, so they keep two;
 * - `series` and `events` types keep the most recent {@link maxHeldEntries}, like the section-11 snapshot.
 */
export const heldEntries = (type: WidgetType): number => {
  switch (type) {
    case "number":
    case "horizontal-bar":
    case "vertical-bar":
    case "dial":
      return 2
    case "sparkline":
    case "line-graph":
    case "usa-map":
    case "world-map":
    case "text-feed":
    case "gallery":
    case "xy-graph":
      return maxHeldEntries
    default:
      return 1
  }
}

/** The most entries a series or events tile holds (the section-11 snapshot sends at most 1,000). */
export const maxHeldEntries = 1000
