import { mountChart } from "../charts.js"
import { el, setChars, setStatus } from "../dom.js"
import { view, type SparklineView } from "../views/sparkline.js"
import type { Renderer } from "./Renderer.js"

/** sparkline: the latest value (in its status colour) over an axis-less line. */
export const renderer: Renderer<SparklineView> = {
  view,
  mount: (body, ctx) => {
    const value = el("div", "ds-spark-value")
    body.append(value)
    const chart = mountChart(body, ctx)
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
