import { type ThresholdColor, type TileOptionsData, thresholdBands, thresholdColor } from "@dashstream/core/tileStatus"
import { formatValue, numericPoint, scaleRange } from "../format.js"

/** One threshold band of a bar gauge: the stretch `from`..`to` of the bar (fractions 0 to 1) in a status colour. */
export interface GaugeBand {
  readonly from: number
  readonly to: number
  readonly color: ThresholdColor
}

/**
 * A bar gauge: the latest value on the tile's scale (`min`/`max` options, docs/api.md section 15) or an automatic one
 * from 0 (or below) to a "nice" bound above it, its status colour and the threshold bands.
 */
export interface BarGaugeView {
  readonly value: string
  /** Filled share of the bar, 0 to 1. */
  readonly fraction: number
  readonly min: string
  readonly max: string
  readonly status?: ThresholdColor
  readonly bands: ReadonlyArray<GaugeBand>
}

/** Pure: the latest numeric point as a bar gauge (horizontal-bar and vertical-bar, docs/api.md sections 11 and 15). */
export const barGaugeView = (
  entries: ReadonlyArray<{ readonly point: unknown }>,
  options: TileOptionsData = {}
): BarGaugeView | undefined => {
  const last = entries.length === 0 ? undefined : numericPoint(entries[entries.length - 1]!.point)
  if (last === undefined) return undefined
  const { min, max } = scaleRange(last.number, options)
  const at = (n: number) => Math.min(1, Math.max(0, (n - min) / (max - min)))
  const status = thresholdColor(last.number, options.thresholds)
  return {
    value: formatValue(last.number, last.prefix, last.suffix),
    fraction: at(last.number),
    min: formatValue(min, last.prefix, last.suffix),
    max: formatValue(max, last.prefix, last.suffix),
    ...(status === undefined ? {} : { status }),
    bands: thresholdBands(options.thresholds, min, max).map((b) => ({ from: at(b.from), to: at(b.to), color: b.color }))
  }
}
