import { type ThresholdColor, type TileOptionsData, thresholdColor } from "@dashstream/core/tileStatus"
import type { EChartsCoreOption } from "echarts/core"
import { formatValue, numericPoint, type NumericPoint } from "../format.js"
import type { Bounds } from "../timeWindow.js"
import { palette } from "./options.js"

/** Pure: `[milliseconds, number]` pairs of a numeric series (contract `ts` is seconds), skipping non-numeric points. */
export const seriesData = (
  entries: ReadonlyArray<{ readonly ts: number; readonly point: unknown }>
): { readonly data: ReadonlyArray<readonly [number, number]>; readonly last: NumericPoint | undefined } => {
  const data: Array<readonly [number, number]> = []
  let last: NumericPoint | undefined
  for (const e of entries) {
    const p = numericPoint(e.point)
    if (p === undefined) continue
    data.push([Math.round(e.ts * 1000), p.number])
    last = p
  }
  return { data, last }
}

/** Pure: a time axis' `min` and `max` (milliseconds) spanning `window`; nothing without one (ECharts fits the data). */
export const timeAxisBounds = (window: Bounds | undefined): { readonly min?: number; readonly max?: number } =>
  window === undefined ? {} : { min: Math.round(window.from * 1000), max: Math.round(window.to * 1000) }

/** A line tile (sparkline, line graph): the latest value over a line of the series. */
export interface LineView {
  /** The latest value with its prefix and suffix (docs/api.md section 15: the value a chart shows). */
  readonly value: string
  /** The latest value's status colour (docs/api.md section 15), when a threshold is met. */
  readonly status?: ThresholdColor
  readonly option: EChartsCoreOption
}

/**
 * The view of a line tile, pure: for a numeric series (`entries`), its latest value and status colour, and the ECharts
 * option `chart` makes of the line series (`[milliseconds, number]` pairs in the first palette colour, its area filled
 * at `areaOpacity`), the pairs, and the time axis' bounds (spanning `window`, docs/api.md section 15.1, however few
 * entries it holds). `undefined` without a numeric entry.
 */
export const lineView =
  (
    areaOpacity: number,
    chart: (
      series: Record<string, unknown>,
      data: ReadonlyArray<readonly [number, number]>,
      axis: ReturnType<typeof timeAxisBounds>
    ) => EChartsCoreOption
  ) =>
  (
    entries: ReadonlyArray<{ readonly ts: number; readonly point: unknown }>,
    options: TileOptionsData = {},
    window?: Bounds
  ): LineView | undefined => {
    const { data, last } = seriesData(entries)
    if (last === undefined) return undefined
    const status = thresholdColor(last.number, options.thresholds)
    const series = {
      type: "line",
      data,
      lineStyle: { width: 3, color: palette[0] },
      itemStyle: { color: palette[0] },
      areaStyle: { color: palette[0], opacity: areaOpacity }
    }
    return {
      value: formatValue(last.number, last.prefix, last.suffix),
      ...(status === undefined ? {} : { status }),
      option: chart(series, data, timeAxisBounds(window))
    }
  }
