import type { EChartsCoreOption } from "echarts/core"
import { el, setChars, setStatus } from "../dom.js"
import type { LineView } from "../views/series.js"
import type { Mounted, Renderer, RenderContext } from "./Renderer.js"

/**
 * A line tile's renderer (sparkline, line graph): the latest value (class `valueClass`, in its status colour) above
 * the chart `chart` mounts in the tile's body.
 */
export const lineRenderer = (
  view: Renderer<LineView>["view"],
  valueClass: string,
  chart: (body: HTMLElement, ctx: RenderContext) => Mounted<EChartsCoreOption>
): Renderer<LineView> => ({
  view,
  mount: (body, ctx) => {
    const value = el("div", valueClass)
    body.append(value)
    const mounted = chart(body, ctx)
    return {
      update: (v) => {
        value.textContent = v.value
        setChars(value, v.value)
        setStatus(value, v.status)
        mounted.update(v.option)
      },
      dispose: mounted.dispose
    }
  }
})
