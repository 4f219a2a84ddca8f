import { mountChart } from "../charts.js"
import { el } from "../dom.js"
import { view, type SparklineView } from "../views/sparkline.js"
import type { Renderer } from "./Renderer.js"

/** sparkline: the latest value over an axis-less line. */
export const renderer: Renderer<SparklineView> = {
  view,
  mount: (body, ctx) => {
    const value = el("div", "ds-spark-value")
    body.append(value)
    const chart = mountChart(body, ctx)
    return {
      update: (v) => {
        value.textContent = v.value
        chart.update(v.option)
      },
      dispose: chart.dispose
    }
  }
}
