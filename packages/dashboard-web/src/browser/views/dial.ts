import type { EChartsCoreOption } from "echarts/core"
import { formatValue, niceRange, numericPoint } from "../format.js"
import { base, palette } from "./options.js"

/** Pure: the latest numeric point as an ECharts gauge (a dial) on an automatic "nice" scale. */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): EChartsCoreOption | undefined => {
  const last = entries.length === 0 ? undefined : numericPoint(entries[entries.length - 1]!.point)
  if (last === undefined) return undefined
  const { min, max } = niceRange([last.number])
  const text = formatValue(last.number, last.prefix, last.suffix)
  return {
    ...base,
    series: [
      {
        type: "gauge",
        min,
        max,
        radius: "92%",
        center: ["50%", "58%"],
        startAngle: 210,
        endAngle: -30,
        progress: { show: true, width: 14, itemStyle: { color: palette[0] } },
        axisLine: { lineStyle: { width: 14 } },
        axisTick: { show: false },
        splitLine: { length: 8, distance: 4, lineStyle: { width: 2 } },
        axisLabel: { distance: 20, fontSize: 13 },
        pointer: { width: 5, length: "55%", itemStyle: { color: palette[0] } },
        anchor: { show: true, size: 12, itemStyle: { color: palette[0] } },
        detail: {
          valueAnimation: false,
          fontSize: 34,
          fontWeight: 700,
          offsetCenter: [0, "62%"],
          formatter: () => text
        },
        data: [{ value: last.number }]
      }
    ]
  }
}
