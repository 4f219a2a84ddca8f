import type { EChartsCoreOption } from "echarts/core"
import { record, toNumber } from "../format.js"
import { base, grid, palette } from "./options.js"

/** Pure: the tile's `{x, y}` points as an ECharts scatter on two value axes. */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): EChartsCoreOption | undefined => {
  const data = entries.flatMap((e) => {
    const r = record(e.point)
    const x = r && toNumber(r["x"])
    const y = r && toNumber(r["y"])
    return x === undefined || y === undefined ? [] : [[x, y] as const]
  })
  if (data.length === 0) return undefined
  return {
    ...base,
    grid,
    xAxis: { type: "value", scale: true, splitNumber: 4 },
    yAxis: { type: "value", scale: true, splitNumber: 4 },
    series: [{ type: "scatter", symbolSize: 12, itemStyle: { color: palette[4], opacity: 0.9 }, data }]
  }
}
