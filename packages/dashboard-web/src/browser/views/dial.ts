import { type TileOptionsData, thresholdBands, thresholdColor } from "@dashstream/core/tileStatus"
import type { EChartsCoreOption } from "echarts/core"
import { formatCompact, formatValue, numericPoint, scaleRange } from "../format.js"
import { base, palette, statusColors } from "./options.js"

/** The dial's arc: from 210 degrees (lower left) to -30 degrees (lower right), 240 degrees in all. */
const START = 210
const END = -30

/** The track of the dial where no threshold band is drawn. */
const track = "rgba(141, 154, 176, 0.25)"

/**
 * Pure: the latest numeric point as an ECharts gauge (a dial) on the tile's scale (`min`/`max` options, docs/api.md
 * section 15) or an automatic "nice" one; the value text in its status colour; the threshold bands on the arc (then
 * the pointer, not a progress bar, marks the value). The option is sized for a large tile: {@link fitDial} sizes it
 * for the chart's pixels.
 */
export const view = (
  entries: ReadonlyArray<{ readonly point: unknown }>,
  options: TileOptionsData = {}
): EChartsCoreOption | undefined => {
  const last = entries.length === 0 ? undefined : numericPoint(entries[entries.length - 1]!.point)
  if (last === undefined) return undefined
  const { min, max } = scaleRange(last.number, options)
  const text = formatValue(last.number, last.prefix, last.suffix)
  const status = thresholdColor(last.number, options.thresholds)
  const bands = thresholdBands(options.thresholds, min, max)
  const at = (n: number) => (n - min) / (max - min)
  // ECharts paints the arc in stops: each [fraction, colour] colours the arc up to that fraction.
  const stops: Array<[number, string]> = []
  let done = 0
  for (const b of bands) {
    if (at(b.from) > done) stops.push([at(b.from), track])
    stops.push([at(b.to), statusColors[b.color]])
    done = at(b.to)
  }
  if (done < 1) stops.push([1, track])
  const accent = status === undefined ? palette[0] : statusColors[status]
  return {
    ...base,
    series: [
      {
        type: "gauge",
        min,
        max,
        radius: "92%",
        center: ["50%", "58%"],
        startAngle: START,
        endAngle: END,
        splitNumber: 5,
        progress: { show: bands.length === 0, width: 14, itemStyle: { color: palette[0] } },
        axisLine: { lineStyle: { width: 14, color: stops } },
        axisTick: { show: false },
        splitLine: { length: 8, distance: 4, lineStyle: { width: 2 } },
        axisLabel: { distance: 20, fontSize: 13, formatter: (n: number) => formatCompact(n) },
        pointer: { width: 5, length: "55%", itemStyle: { color: accent } },
        anchor: { show: true, size: 12, itemStyle: { color: accent } },
        title: { show: false },
        detail: {
          valueAnimation: false,
          fontSize: 34,
          fontWeight: 700,
          offsetCenter: [0, "75%"],
          ...(status === undefined ? {} : { color: statusColors[status] }),
          formatter: () => text
        },
        data: [{ value: last.number }]
      }
    ]
  }
}

/**
 * Pure: the dial option of {@link view} sized for a chart of `width` x `height` pixels, so that no label overlaps
 * another or leaves the chart: the arc and the value text below it fit the height; tick labels (compact
 * numbers) only when the arc is large enough for them, as many as its length holds (2, 4, 5 or 10 steps); the value
 * text shrinks to fit between the arc's ends.
 */
export const fitDial = (option: EChartsCoreOption, width: number, height: number): EChartsCoreOption => {
  const series = (option as { series?: Array<Record<string, any>> }).series?.[0]
  if (series === undefined || width <= 0 || height <= 0) return option
  const text: string = series["detail"].formatter()
  const min: number = series["min"]
  const max: number = series["max"]
  // The value text: as large as 34 px, at most a quarter of the height, narrow enough for the width.
  const fontSize = Math.max(9, Math.min(34, height * 0.24, (width - 8) / (0.62 * Math.max(1, text.length))))
  // Vertical budget: arc top at 4 px, value text centred 0.75 r below the centre, its bottom 2 px above the edge.
  const r = Math.max(4, Math.min((width - 8) / 2, (height - 6 - fontSize * 0.6) / 1.75))
  const cy = 4 + r
  const line = Math.max(3, Math.min(14, r * 0.16))
  const labelSize = r >= 110 ? 14 : 12
  const labelWidth = Math.max(formatCompact(min).length, formatCompact(max).length, 3) * labelSize * 0.62
  // The arc's length at the labels' radius over the width of a label (with room around it) says how many fit.
  const labelRadius = r - line - 16
  const room = (labelRadius * (START - END) * Math.PI) / 180 / (labelWidth + 14)
  const steps = [10, 5, 4, 2].find((n) => n <= room)
  const labels = r >= 56 && steps !== undefined
  return {
    ...option,
    series: [
      {
        ...series,
        radius: r,
        center: [width / 2, cy],
        splitNumber: labels ? steps : 5,
        progress: { ...series["progress"], width: line },
        axisLine: { lineStyle: { ...series["axisLine"].lineStyle, width: line } },
        splitLine: { ...series["splitLine"], show: r >= 40, length: Math.min(8, line * 0.6), distance: 2 },
        axisLabel: { ...series["axisLabel"], show: labels, fontSize: labelSize, distance: line + 6 },
        pointer: { ...series["pointer"], width: Math.max(2, Math.min(5, r * 0.06)), length: "55%" },
        anchor: { ...series["anchor"], size: Math.max(4, Math.min(12, r * 0.14)) },
        detail: { ...series["detail"], fontSize, offsetCenter: [0, r * 0.75] }
      }
    ]
  }
}
