import { type ThresholdColor, type TileOptionsData, thresholdColor } from "@dashstream/core/tileStatus"
import type { EChartsCoreOption } from "echarts/core"
import { formatValue } from "../format.js"
import { base, fitAxes, grid, palette } from "./options.js"
import { seriesData, timeAxisBounds } from "./series.js"
import type { Bounds } from "../timeWindow.js"

/** The line graph tile: the latest value (docs/api.md section 15: the value a chart shows) over the line. */
export interface LineGraphView {
  readonly value: string
  /** The latest value's status colour (docs/api.md section 15), when a threshold is met. */
  readonly status?: ThresholdColor
  readonly option: EChartsCoreOption
}

/**
 * Pure: the series as an ECharts line over a time axis (`ts` seconds to milliseconds), and its latest value. With a
 * `window` (docs/api.md section 15.1) the axis spans it, however few entries it holds.
 */
export const view = (
  entries: ReadonlyArray<{ readonly ts: number; readonly point: unknown }>,
  options: TileOptionsData = {},
  window?: Bounds
): LineGraphView | undefined => {
  const { data, last } = seriesData(entries)
  if (last === undefined) return undefined
  const status = thresholdColor(last.number, options.thresholds)
  return {
    value: formatValue(last.number, last.prefix, last.suffix),
    ...(status === undefined ? {} : { status }),
    option: {
      ...base,
      grid,
      xAxis: { type: "time", splitNumber: 4, ...timeAxisBounds(window) },
      yAxis: { type: "value", scale: true, splitNumber: 4 },
      series: [
        {
          type: "line",
          data,
          showSymbol: data.length <= 30,
          symbolSize: 7,
          lineStyle: { width: 3, color: palette[0] },
          itemStyle: { color: palette[0] },
          areaStyle: { color: palette[0], opacity: 0.12 }
        }
      ]
    }
  }
}

/** Pure: the line graph's option with its axes sized for `width` x `height` pixels (see `fitAxes`). */
export const fitLineGraph = (option: EChartsCoreOption, width: number, height: number): EChartsCoreOption =>
  fitAxes(option, width, height)
