import type { EChartsCoreOption } from "echarts/core"
import { record, toNumber, toText } from "../format.js"
import { base, grid, palette } from "./options.js"
import { latestPoint } from "./latest.js"

/**
 * Pure: the latest `{matrix: [[corner, series...], [category, n, n...], ...]}` (docs/api.md section 3) as grouped
 * ECharts bars: one bar series per header column, one group per later row, with a legend.
 */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): EChartsCoreOption | undefined => {
  const matrix = record(latestPoint(entries))?.["matrix"]
  if (!Array.isArray(matrix) || matrix.length < 2 || !Array.isArray(matrix[0])) return undefined
  const names = (matrix[0] as ReadonlyArray<unknown>).slice(1).map((n) => toText(n) ?? "")
  const rows = matrix.slice(1).filter(Array.isArray) as ReadonlyArray<ReadonlyArray<unknown>>
  if (names.length === 0 || rows.length === 0) return undefined
  return {
    ...base,
    legend: { top: 0, itemWidth: 12, itemHeight: 12, itemGap: 16 },
    grid: { ...grid, top: 34 },
    xAxis: { type: "category", data: rows.map((r) => toText(r[0]) ?? "") },
    yAxis: { type: "value", splitNumber: 4 },
    series: names.map((name, i) => ({
      type: "bar",
      name,
      barMaxWidth: 40,
      itemStyle: { color: palette[i % palette.length], borderRadius: [3, 3, 0, 0] },
      data: rows.map((r) => toNumber(r[i + 1]) ?? 0)
    }))
  }
}
