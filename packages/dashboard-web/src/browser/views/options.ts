/** Pure pieces of ECharts options shared by the chart renderers (no DOM, no ECharts import). */
import type { EChartsCoreOption } from "echarts/core"
import { formatCompact } from "../format.js"

/** Series colours, in order (the contract's five named colours first). */
export const palette = ["#3d8bfd", "#2fbf71", "#f5c518", "#f2555a", "#a66cff", "#22c3c3", "#ff8a3d", "#e66bb8"]

/** Options every chart shares: no animation (a wall display updating many times a second), no tooltip. */
export const base = { animation: false, tooltip: { show: false } } as const

/** A chart grid whose axis labels stay inside the chart (what `containLabel` did before ECharts 6). */
export const grid = {
  left: 4,
  right: 14,
  top: 12,
  bottom: 4,
  outerBoundsMode: "same",
  outerBoundsContain: "axisLabel"
} as const

/**
 * The CSS colours of the five threshold colours (docs/api.md section 15), for ECharts options; the page's stylesheet
 * gives the same colours to `[data-status]` elements.
 */
export const statusColors = {
  green: "#2fbf71",
  amber: "#f5a524",
  red: "#f2555a",
  blue: "#3d8bfd",
  grey: "#8d9ab0"
} as const

type Axis = Record<string, any>
const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, n))

/**
 * Pure: the font size in pixels of a chart's labels for a chart of `width` x `height` pixels: 12 on a small tile,
 * growing with the chart up to 28 (a whole 1920x1080 wall screen), so a wall screen's charts read from across a room.
 */
export const chartFontSize = (width: number, height: number): number =>
  Math.round(clamp(Math.min(width / 32, height / 16), 12, 28))

/**
 * Pure: a cartesian chart's option (line graph, bar charts, xy graph) with its axes sized for a chart of `width` x
 * `height` pixels, so that no label overlaps another or is cut: as many ticks as the size holds (about one
 * per 110 px across, one per 45 px up, at 14 px text; farther apart as the text grows with the chart, see
 * `chartFontSize`), compact numbers (`1.2K`), category names cut with an ellipsis to their
 * slot, no labels at all on an axis too short for them, the legend only when there is room; ECharts' `hideOverlap`
 * drops any label that would still touch another.
 */
export const fitAxes = (option: EChartsCoreOption, width: number, height: number): EChartsCoreOption => {
  const o = option as { xAxis?: Axis; yAxis?: Axis; legend?: Axis; grid?: Axis }
  const fontSize = chartFontSize(width, height)
  const spread = Math.max(1, fontSize / 14)
  const fit = (axis: Axis | undefined, across: boolean): Axis | undefined => {
    if (axis === undefined) return undefined
    const length = across ? width : height
    const show = across ? height >= 56 && width >= 90 : width >= 100 && height >= 56
    const label: Axis = { ...axis["axisLabel"], show, fontSize, hideOverlap: true }
    // The labels across sit below the lowest label up the side (centred on the axis, half a line below it), so a
    // label at the axis' very start does not run into it.
    if (across) label["margin"] = Math.round(fontSize * 0.6) + 6
    if (axis["type"] === "value") label["formatter"] = (n: number) => formatCompact(n)
    if (axis["type"] === "category") {
      const n = Math.max(1, (axis["data"] as ReadonlyArray<unknown> | undefined)?.length ?? 1)
      // Across, each category has its slot of the width; up the side, names take at most a third of the width.
      label["width"] = across ? Math.max(16, length / n - 8) : Math.max(24, width / 3)
      label["overflow"] = "truncate"
      label["ellipsis"] = "\u2026"
    }
    return {
      ...axis,
      ...(axis["type"] === "category"
        ? {}
        : { splitNumber: clamp(Math.floor(length / ((across ? 110 : 45) * spread)), 1, 5) }),
      axisLabel: label
    }
  }
  const xAxis = fit(o.xAxis, true)
  const yAxis = fit(o.yAxis, false)
  const legendShown = o.legend !== undefined && height >= 120 && width >= 160
  return {
    ...option,
    ...(xAxis === undefined ? {} : { xAxis }),
    ...(yAxis === undefined ? {} : { yAxis }),
    ...(o.legend === undefined
      ? {}
      : {
          legend: {
            ...o.legend,
            show: legendShown,
            textStyle: {
              fontSize: fontSize - 1,
              width: Math.max(40, width / 4),
              overflow: "truncate",
              ellipsis: "\u2026"
            }
          },
          grid: { ...o.grid, top: legendShown ? Math.round(fontSize * 2.4) : 12 }
        })
  }
}

/**
 * Pure: a pie option sized for `width` x `height` pixels. Every pie says what its slices are: on a chart of at least
 * 220 x 150 px each slice carries its name and value (names cut to a width the chart holds; the pie's
 * `avoidLabelOverlap` keeps them apart); on a smaller one a legend beside the pie names as many slices as its
 * height holds, largest first, and on a tile too small even for that (under 160 x 56 px) the slices stand alone.
 * Text grows with the chart (`chartFontSize`).
 */
export const fitPie = (option: EChartsCoreOption, width: number, height: number): EChartsCoreOption => {
  const o = option as { series?: Array<Axis> }
  const series = o.series?.[0]
  if (series === undefined) return option
  const fontSize = chartFontSize(width, height)
  const labels = Math.min(width, height) >= 150 && width >= 220
  const legendFont = 12
  const itemHeight = legendFont + 6
  const rows = Math.floor((height - 4) / itemHeight)
  const legend = !labels && width >= 160 && rows >= 2
  const slices = (series["data"] as ReadonlyArray<{ readonly name: string; readonly value: number }>) ?? []
  const named = [...slices].sort((a, b) => b.value - a.value).slice(0, Math.max(0, rows))
  const side = Math.min(height, width * 0.45)
  // A label is two lines centred on the end of its line: a first segment at least a label's half-height plus a margin
  // long keeps the label of a slice at the top or bottom off the ring, and the ring is drawn small enough for the
  // lines and labels (at most `labelWidth` wide) to fit beside and above it.
  const lineLength = Math.round(fontSize * 1.2 + 4)
  const lineLength2 = Math.round(fontSize * 0.6)
  const labelWidth = Math.max(40, width * 0.2)
  const outer = Math.max(
    16,
    Math.min(
      0.27 * Math.min(width, height),
      width / 2 - lineLength - lineLength2 - labelWidth - 4,
      height / 2 - lineLength - Math.round(fontSize * 1.2) - 4
    )
  )
  return {
    ...option,
    ...(legend
      ? {
          legend: {
            show: true,
            orient: "vertical",
            right: 0,
            top: "middle",
            itemWidth: 10,
            itemHeight: 10,
            itemGap: 6,
            padding: 0,
            data: named.map((s) => s.name),
            textStyle: {
              fontSize: legendFont,
              width: Math.max(24, width - side - 30),
              overflow: "truncate",
              ellipsis: "\u2026"
            }
          }
        }
      : { legend: { show: false } }),
    series: [
      {
        ...series,
        radius: labels
          ? [Math.round((outer * 30) / 54), Math.round(outer)]
          : legend
            ? [Math.round(side * 0.19), Math.round(side * 0.45)]
            : ["38%", "80%"],
        center: legend ? [Math.round(side / 2), "50%"] : series["center"],
        label: {
          ...series["label"],
          show: labels,
          fontSize,
          lineHeight: Math.round(fontSize * 1.2),
          width: labelWidth,
          overflow: "truncate",
          ellipsis: "\u2026"
        },
        labelLine: { ...series["labelLine"], show: labels, length: lineLength, length2: lineLength2 }
      }
    ]
  }
}
