/**
 * Apache ECharts, imported per chart from `echarts/core` with the SVG renderer (modular imports keep the bundle
 * small), and the page's two chart themes.
 */
import { BarChart, GaugeChart, LineChart, PieChart, ScatterChart } from "echarts/charts"
import { GeoComponent, GridComponent, LegendComponent } from "echarts/components"
import * as echarts from "echarts/core"
import type { EChartsCoreOption } from "echarts/core"
import { SVGRenderer } from "echarts/renderers"
import type { Mounted, RenderContext } from "./renderers/Renderer.js"
import { el } from "./dom.js"
import { dragZoom } from "./dragZoom.js"
import { chartFontSize, palette } from "./views/options.js"

echarts.use([
  BarChart,
  GaugeChart,
  LineChart,
  PieChart,
  ScatterChart,
  GeoComponent,
  GridComponent,
  LegendComponent,
  SVGRenderer
])

const theme = (text: string, muted: string, line: string, land: string, border: string) => ({
  color: palette,
  backgroundColor: "transparent",
  textStyle: { color: text, fontFamily: "inherit" },
  legend: { textStyle: { color: muted, fontSize: 15 } },
  categoryAxis: {
    axisLine: { lineStyle: { color: line } },
    axisTick: { show: false },
    axisLabel: { color: muted, fontSize: 14 },
    splitLine: { show: false }
  },
  valueAxis: {
    axisLine: { show: false },
    axisLabel: { color: muted, fontSize: 14 },
    splitLine: { lineStyle: { color: line } }
  },
  timeAxis: {
    axisLine: { lineStyle: { color: line } },
    axisLabel: { color: muted, fontSize: 14 },
    splitLine: { show: false }
  },
  geo: { itemStyle: { areaColor: land, borderColor: border, borderWidth: 0.6 } },
  gauge: { axisLabel: { color: muted }, title: { color: muted }, detail: { color: text } }
})

echarts.registerTheme("ds-dark", theme("#e8edf5", "#93a0b4", "#2a3446", "#273246", "#3b4a63"))
echarts.registerTheme("ds-light", theme("#172033", "#5b6678", "#dde3ec", "#dfe6ef", "#b9c4d3"))

/**
 * Mounts one ECharts instance (SVG) filling `body`; it follows the body's size. With `zoomable` (a chart over time)
 * and a page that zooms (`ctx.zoom`), a drag across it zooms the page's time tiles (`dragZoom.ts`).
 */
export const mountChart = (
  body: HTMLElement,
  ctx: RenderContext,
  before?: () => Promise<void>,
  fit?: (option: EChartsCoreOption, width: number, height: number) => EChartsCoreOption,
  zoomable = false
): Mounted<EChartsCoreOption> => {
  const host = el("div", "ds-chart")
  body.append(host)
  const chart = echarts.init(host, ctx.theme === "light" ? "ds-light" : "ds-dark", { renderer: "svg" })
  // ECharts measures text (to fit axes, legends and labels) with a canvas font built from `fontFamily`; "inherit"
  // means nothing to a canvas, so the page's own font is named.
  const fontFamily = getComputedStyle(host).fontFamily
  let ready = before === undefined
  let pending: EChartsCoreOption | undefined
  let current: EChartsCoreOption | undefined
  const draw = (option: EChartsCoreOption) => {
    current = option
    // Text ECharts gives no size of its own (a time axis' labels) inherits the size the chart's other text has.
    host.style.fontSize = `${chartFontSize(chart.getWidth(), chart.getHeight())}px`
    const fitted = fit === undefined ? option : fit(option, chart.getWidth(), chart.getHeight())
    chart.setOption({ ...fitted, textStyle: { ...(fitted["textStyle"] as object), fontFamily } }, { notMerge: true })
  }
  const resize = new ResizeObserver(() => {
    chart.resize()
    if (fit !== undefined && current !== undefined) draw(current)
  })
  resize.observe(host)
  const unzoom = zoomable && ctx.zoom !== undefined ? dragZoom(chart, host, ctx.zoom) : undefined
  if (before !== undefined) {
    before().then(
      () => {
        ready = true
        if (pending !== undefined && !chart.isDisposed()) draw(pending)
      },
      (error: unknown) => {
        console.warn("dashstream: could not load the map outline", error)
        host.classList.add("ds-chart-failed")
      }
    )
  }
  return {
    update: (option) => {
      if (ready) draw(option)
      else pending = option
    },
    dispose: () => {
      unzoom?.()
      resize.disconnect()
      chart.dispose()
      host.remove()
    }
  }
}

/** Registers a GeoJSON map under `name` once; later calls share the first registration. */
export const registerMapOnce = (() => {
  const loaded = new Map<string, Promise<void>>()
  return (name: string, load: () => Promise<unknown>): Promise<void> => {
    let p = loaded.get(name)
    if (p === undefined) {
      p = load().then((geoJson) => echarts.registerMap(name, geoJson as Parameters<typeof echarts.registerMap>[1]))
      p.catch(() => loaded.delete(name))
      loaded.set(name, p)
    }
    return p
  }
})()
