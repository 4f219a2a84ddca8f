import { el } from "../dom.js"
import { barGaugeView, type BarGaugeView } from "../views/gauge.js"
import type { Renderer } from "./Renderer.js"

/** The bar gauge renderer, horizontal or vertical. */
export const barGauge = (orientation: "horizontal" | "vertical"): Renderer<BarGaugeView> => ({
  view: barGaugeView,
  mount: (body) => {
    const root = el("div", `ds-gauge ds-gauge-${orientation}`)
    const value = el("div", "ds-gauge-value")
    const track = el("div", "ds-gauge-track")
    const fill = el("div", "ds-gauge-fill")
    const scale = el("div", "ds-gauge-scale")
    const min = el("span")
    const max = el("span")
    track.append(fill)
    scale.append(min, max)
    root.append(value, track, scale)
    body.append(root)
    return {
      update: (v) => {
        value.textContent = v.value
        min.textContent = v.min
        max.textContent = v.max
        const pct = `${(v.fraction * 100).toFixed(2)}%`
        if (orientation === "horizontal") fill.style.width = pct
        else fill.style.height = pct
        fill.dataset["fraction"] = v.fraction.toFixed(4)
      },
      dispose: () => undefined
    }
  }
})
