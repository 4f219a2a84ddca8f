import type { EChartsCoreOption } from "echarts/core"
import { namedValues } from "./namedValues.js"
import { base, grid, palette } from "./options.js"
import { latestPoint } from "./latest.js"

/** Pure: the latest `{chart: [{name, value, color?}]}` as ECharts bars, each in its colour (else the palette's). */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): EChartsCoreOption | undefined => {
  const rows = namedValues(latestPoint(entries), ["chart", "leaderboard"])
  if (rows.length === 0) return undefined
  return {
    ...base,
    grid,
    xAxis: { type: "category", data: rows.map((r) => r.name) },
    yAxis: { type: "value", splitNumber: 4 },
    series: [
      {
        type: "bar",
        barMaxWidth: 64,
        itemStyle: { borderRadius: [4, 4, 0, 0] },
        data: rows.map((r, i) => ({ value: r.value, itemStyle: { color: r.color ?? palette[i % palette.length] } }))
      }
    ]
  }
}
