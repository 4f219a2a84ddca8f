import type { EChartsCoreOption } from "echarts/core"
import { base, grid, palette } from "./options.js"
import { seriesData } from "./series.js"

/** Pure: the series as an ECharts line over a time axis (`ts` seconds to milliseconds). */
export const view = (
  entries: ReadonlyArray<{ readonly ts: number; readonly point: unknown }>
): EChartsCoreOption | undefined => {
  const { data } = seriesData(entries)
  if (data.length === 0) return undefined
  return {
    ...base,
    grid,
    xAxis: { type: "time", splitNumber: 4 },
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
