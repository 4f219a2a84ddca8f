import { base } from "./options.js"
import { lineView } from "./series.js"

/**
 * Pure: the series as an axis-less ECharts line, and the latest value with prefix/suffix. With a `window` (docs/api.md
 * section 15.1) the line spans it, however few entries it holds.
 */
export const view = lineView(0.15, (series, data, axis) => ({
  ...base,
  grid: { left: 4, right: 4, top: 6, bottom: 6 },
  xAxis: { type: "time", show: false, ...axis },
  yAxis: { type: "value", show: false, scale: true },
  series: [{ ...series, showSymbol: data.length === 1, symbolSize: 8, smooth: 0.3 }]
}))
