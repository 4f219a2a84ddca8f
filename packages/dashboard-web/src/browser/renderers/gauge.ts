import { el, setChars, setStatus } from "../dom.js"
import { barGaugeView, type BarGaugeView } from "../views/gauge.js"
import type { Renderer } from "./Renderer.js"

/**
 * The bar gauge renderer, horizontal or vertical: the value (in its status colour), the bar (filled in it) over the
 * threshold bands (a strip along the track), and the scale's ends.
 */
export const barGauge = (orientation: "horizontal" | "vertical"): Renderer<BarGaugeView> => ({
  view: barGaugeView,
  mount: (body) => {
    const root = el("div", `ds-gauge ds-gauge-${orientation}`)
    const value = el("div", "ds-gauge-value")
    const track = el("div", "ds-gauge-track")
    const bands = el("div", "ds-gauge-bands")
    const fill = el("div", "ds-gauge-fill")
    const scale = el("div", "ds-gauge-scale")
    const min = el("span")
    const max = el("span")
    track.append(bands, fill)
    scale.append(min, max)
    root.append(value, track, scale)
    body.append(root)
    return {
      update: (v) => {
        value.textContent = v.value
        setChars(value, v.value)
        setStatus(root, v.status)
        bands.replaceChildren(
          ...v.bands.map((b) => {
            const band = el("div", "ds-gauge-band")
            band.dataset["color"] = b.color
            const [start, size] = [`${(b.from * 100).toFixed(2)}%`, `${((b.to - b.from) * 100).toFixed(2)}%`]
            if (orientation === "horizontal") Object.assign(band.style, { left: start, width: size })
            else Object.assign(band.style, { bottom: start, height: size })
            return band
          })
        )
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
