import type { EChartsCoreOption } from "echarts/core"
import { base, fitAxes, grid } from "./options.js"
import { lineView } from "./series.js"

/**
 * Pure: the series as an ECharts line over a time axis (`ts` seconds to milliseconds), and its latest value. With a
 * `window` (docs/api.md section 15.1) the axis spans it, however few entries it holds.
 */
export const view = lineView(0.12, (series, data, axis) => ({
  ...base,
  grid,
  xAxis: { type: "time", splitNumber: 4, ...axis },
  yAxis: { type: "value", scale: true, splitNumber: 4 },
  series: [{ ...series, showSymbol: data.length <= 30, symbolSize: 7 }]
}))

/** Pure: the line graph's option with its axes sized for `width` x `height` pixels (see `fitAxes`). */
export const fitLineGraph = (option: EChartsCoreOption, width: number, height: number): EChartsCoreOption =>
  fitAxes(option, width, height)
