import { el, fitFontSize } from "../dom.js"
import { view } from "../views/label.js"
import type { Renderer } from "./Renderer.js"

/** label: the latest text, as large as the tile holds it (12 to 64 px, wrapping). */
export const renderer: Renderer<string> = {
  view,
  mount: (body) => {
    const label = el("div", "ds-label")
    body.append(label)
    const fit = () => fitFontSize(label, 11, 64)
    const observer = new ResizeObserver(fit)
    observer.observe(body)
    return {
      update: (text) => {
        label.textContent = text
        fit()
      },
      dispose: () => observer.disconnect()
    }
  }
}
