import { formatValue, niceRange, numericPoint } from "../format.js"

/** A bar gauge: the latest value on an automatic scale from 0 (or below) to a "nice" bound above it. */
export interface BarGaugeView {
  readonly value: string
  /** Filled share of the bar, 0 to 1. */
  readonly fraction: number
  readonly min: string
  readonly max: string
}

/** Pure: the latest numeric point as a bar gauge (horizontal-bar and vertical-bar, contract section 11). */
export const barGaugeView = (entries: ReadonlyArray<{ readonly point: unknown }>): BarGaugeView | undefined => {
  const last = entries.length === 0 ? undefined : numericPoint(entries[entries.length - 1]!.point)
  if (last === undefined) return undefined
  const { min, max } = niceRange([last.number])
  return {
    value: formatValue(last.number, last.prefix, last.suffix),
    fraction: Math.min(1, Math.max(0, (last.number - min) / (max - min))),
    min: formatValue(min, last.prefix, last.suffix),
    max: formatValue(max, last.prefix, last.suffix)
  }
}
