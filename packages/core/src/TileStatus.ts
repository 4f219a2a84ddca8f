/**
 * Tile options (docs/api.md section 15) as plain data, and the one pure rule the page draws with them: the status colour
 * of a value. This module imports only `@dashstream/contract` (which imports nothing), so the dashboard page's browser
 * bundle uses it as it is (`@dashstream/core/tileStatus`) without pulling effect in; the schema that validates options
 * a client gives is `TileOptions` in `Dashboard.ts`, built from the lists here.
 */
import { numericWidgetTypes, scaleWidgetTypes, timeRangeWidgetTypes } from "@dashstream/contract"

/** The five status colours of a threshold (docs/api.md section 15). */
export const thresholdColors = ["green", "amber", "red", "blue", "grey"] as const

/** A threshold's colour name. */
export type ThresholdColor = (typeof thresholdColors)[number]

/**
 * One threshold: `{"above": n, "color"}` is met by a value greater than `n`, `{"below": n, "color"}` by a value less
 * than `n` (exactly one of `above`/`below`).
 */
export interface Threshold {
  readonly above?: number | undefined
  readonly below?: number | undefined
  readonly color: ThresholdColor
}

/**
 * A tile's `options` (docs/api.md section 15), as stored once validated: `thresholds` (status colours of the value),
 * `min`/`max` (the scale of bars and dials, `min < max`), `staleAfter` (whole seconds, 10 to 31,536,000), `range`
 * (the stretch of time a number, sparkline or line-graph tile shows: whole seconds, 60 to 31,536,000).
 */
export interface TileOptionsData {
  readonly thresholds?: ReadonlyArray<Threshold> | undefined
  readonly min?: number | undefined
  readonly max?: number | undefined
  readonly staleAfter?: number | undefined
  readonly range?: number | undefined
}

/** The widget types whose tiles may carry `thresholds`: their value is a number (the contract's numeric types). */
export const thresholdTypes: ReadonlyArray<string> = numericWidgetTypes

/** The widget types whose tiles may carry `min` and `max`: they draw a scale (the contract's scale types). */
export const scaleTypes: ReadonlyArray<string> = scaleWidgetTypes

/** The least and greatest `staleAfter`, in seconds (10 seconds to 365 days). */
export const STALE_AFTER_MIN = 10
export const STALE_AFTER_MAX = 31_536_000

/** The widget types whose tiles may carry `range`: they show a stretch of time (the contract's time-range types). */
export const rangeTypes: ReadonlyArray<string> = timeRangeWidgetTypes

/** The least and greatest `range`, in seconds (one minute to 365 days; docs/api.md section 15.1). */
export const RANGE_MIN = 60
export const RANGE_MAX = 31_536_000

/** True when `value` meets `threshold`: greater than its `above`, or less than its `below` (strictly). */
export const meets = (value: number, threshold: Threshold): boolean =>
  threshold.above !== undefined ? value > threshold.above : threshold.below !== undefined && value < threshold.below

/**
 * The status colour of `value` (docs/api.md section 15): the colour of the LAST threshold in the list that it meets,
 * `undefined` (the default colour) when it meets none or there are none. Pure.
 */
export const thresholdColor = (
  value: number,
  thresholds: ReadonlyArray<Threshold> | undefined
): ThresholdColor | undefined => {
  if (thresholds === undefined) return undefined
  for (let i = thresholds.length - 1; i >= 0; i--) if (meets(value, thresholds[i]!)) return thresholds[i]!.color
  return undefined
}

/**
 * The bands a bar or dial draws for its thresholds on the scale `[min, max]`: each stretch of the scale in the
 * colour a value there would take (stretches meeting no threshold are left out), ascending, clipped to the scale.
 * Band edges are the thresholds' numbers; a value exactly on an edge takes the colour {@link thresholdColor} gives it.
 */
export const thresholdBands = (
  thresholds: ReadonlyArray<Threshold> | undefined,
  min: number,
  max: number
): ReadonlyArray<{ readonly from: number; readonly to: number; readonly color: ThresholdColor }> => {
  if (thresholds === undefined || thresholds.length === 0 || !(min < max)) return []
  const edges = [
    ...new Set([min, max, ...thresholds.map((t) => t.above ?? t.below ?? min).filter((n) => n > min && n < max)])
  ].sort((a, b) => a - b)
  const bands: Array<{ from: number; to: number; color: ThresholdColor }> = []
  for (let i = 1; i < edges.length; i++) {
    const from = edges[i - 1]!
    const to = edges[i]!
    const color = thresholdColor((from + to) / 2, thresholds)
    if (color === undefined) continue
    const last = bands[bands.length - 1]
    if (last !== undefined && last.color === color && last.to === from) last.to = to
    else bands.push({ from, to, color })
  }
  return bands
}
