import { mountChart } from "../charts.js"
import { el, setChars, setStatus } from "../dom.js"
import { fitLineGraph, type LineGraphView, view } from "../views/lineGraph.js"
import type { Renderer } from "./Renderer.js"

/**
 * line-graph: the latest value (in its status colour) above an ECharts line over time, sized to its tile; a drag
 * across it zooms the page's time tiles (docs/api.md section 11.6).
 */
export const renderer: Renderer<LineGraphView> = {
  view,
  mount: (body, ctx) => {
    const value = el("div", "ds-line-value")
    body.append(value)
    const chart = mountChart(body, ctx, undefined, fitLineGraph, true)
    return {
      update: (v) => {
        value.textContent = v.value
        setChars(value, v.value)
        setStatus(value, v.status)
        chart.update(v.option)
      },
      dispose: chart.dispose
    }
  }
}
