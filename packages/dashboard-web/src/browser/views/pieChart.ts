import type { EChartsCoreOption } from "echarts/core"
import { formatValue } from "../format.js"
import { namedValues } from "./namedValues.js"
import { base } from "./options.js"
import { latestPoint } from "./latest.js"

/** Pure: the latest `{leaderboard: [...]}` (or `{chart: [...]}`) as an ECharts doughnut with labelled slices. */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): EChartsCoreOption | undefined => {
  const rows = namedValues(latestPoint(entries), ["leaderboard", "chart"])
  if (rows.length === 0) return undefined
  return {
    ...base,
    series: [
      {
        type: "pie",
        radius: ["30%", "54%"],
        center: ["50%", "52%"],
        labelLine: { length: 6, length2: 8 },
        avoidLabelOverlap: true,
        itemStyle: { borderColor: "rgba(0,0,0,0.25)", borderWidth: 1 },
        label: { fontSize: 14, lineHeight: 17, color: "inherit", edgeDistance: 4, minMargin: 2 },
        data: rows.map((r) => ({
          name: r.name,
          value: r.value,
          label: { formatter: () => `${r.name}\n${formatValue(r.value, r.prefix, r.suffix)}` },
          ...(r.color === undefined ? {} : { itemStyle: { color: r.color } })
        }))
      }
    ]
  }
}
