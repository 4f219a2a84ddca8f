import type { EChartsCoreOption } from "echarts/core"
import { type ThresholdColor, type TileOptionsData, thresholdColor } from "@dashstream/core/tileStatus"
import { formatValue } from "../format.js"
import { base, palette } from "./options.js"
import { seriesData, timeAxisBounds } from "./series.js"
import type { Bounds } from "../timeWindow.js"

/** The sparkline tile: the latest value in large type over a small line of the recent values. */
export interface SparklineView {
  readonly value: string
  /** The latest value's status colour (docs/api.md section 15), when a threshold is met. */
  readonly status?: ThresholdColor
  readonly option: EChartsCoreOption
}

/**
 * Pure: the series as an axis-less ECharts line, and the latest value with prefix/suffix. With a `window` (docs/api.md
 * section 15.1) the line spans it, however few entries it holds.
 */
export const view = (
  entries: ReadonlyArray<{ readonly ts: number; readonly point: unknown }>,
  options: TileOptionsData = {},
  window?: Bounds
): SparklineView | undefined => {
  const { data, last } = seriesData(entries)
  if (last === undefined) return undefined
  const status = thresholdColor(last.number, options.thresholds)
  return {
    value: formatValue(last.number, last.prefix, last.suffix),
    ...(status === undefined ? {} : { status }),
    option: {
      ...base,
      grid: { left: 4, right: 4, top: 6, bottom: 6 },
      xAxis: { type: "time", show: false, ...timeAxisBounds(window) },
      yAxis: { type: "value", show: false, scale: true },
      series: [
        {
          type: "line",
          data,
          showSymbol: data.length === 1,
          symbolSize: 8,
          smooth: 0.3,
          lineStyle: { width: 3, color: palette[0] },
          itemStyle: { color: palette[0] },
          areaStyle: { color: palette[0], opacity: 0.15 }
        }
      ]
    }
  }
}
