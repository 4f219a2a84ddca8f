import type { ECharts, ElementEvent } from "echarts/core"
import { el } from "./dom.js"
import type { ZoomTarget } from "./renderers/Renderer.js"

/** The least drag, in CSS pixels, that zooms (a shorter one is a click). */
const leastDrag = 8

/**
 * Drag-to-zoom across a chart with a time x axis (docs/api.md section 11.6): a press inside the chart's grid, a drag
 * sideways (a band shows the span) and the release zoom `target` to the span, converted from pixels to the axis'
 * time by ECharts (`convertFromPixel`). Listens to the chart's own pointer events (its zrender layer), so it needs no
 * further ECharts component. Returns a function that detaches it.
 */
export const dragZoom = (chart: ECharts, host: HTMLElement, target: ZoomTarget): (() => void) => {
  const zr = chart.getZr()
  const band = el("div", "ds-zoom-band")
  band.hidden = true
  host.append(band)
  let start: number | undefined
  const stop = () => {
    start = undefined
    band.hidden = true
  }
  const down = (e: ElementEvent) => {
    if (!target.active() || !chart.containPixel({ gridIndex: 0 }, [e.offsetX, e.offsetY])) return
    start = e.offsetX
    band.style.left = `${start}px`
    band.style.width = "0px"
    band.hidden = false
  }
  const move = (e: ElementEvent) => {
    if (start === undefined) return
    band.style.left = `${Math.min(start, e.offsetX)}px`
    band.style.width = `${Math.abs(e.offsetX - start)}px`
  }
  const up = (e: ElementEvent) => {
    if (start === undefined) return
    const [left, right] = [Math.min(start, e.offsetX), Math.max(start, e.offsetX)]
    stop()
    if (right - left < leastDrag) return
    const from = chart.convertFromPixel({ xAxisIndex: 0 }, left)
    const to = chart.convertFromPixel({ xAxisIndex: 0 }, right)
    if (Number.isFinite(from) && Number.isFinite(to) && to > from && from >= 0) target.zoom(from / 1000, to / 1000)
  }
  zr.on("mousedown", down)
  zr.on("mousemove", move)
  zr.on("mouseup", up)
  zr.on("globalout", stop)
  return () => {
    zr.off("mousedown", down)
    zr.off("mousemove", move)
    zr.off("mouseup", up)
    zr.off("globalout", stop)
    band.remove()
  }
}
