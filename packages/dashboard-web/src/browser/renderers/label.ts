import { el, fitFontSize } from "../dom.js"
import { view } from "../views/label.js"
import type { Renderer } from "./Renderer.js"

/**
 * label: the latest text, as large as the tile holds it (11 to 320 px, wrapping); a text too long for the tile even at
 * 11 px shows the lines that fit and ends with an ellipsis (`-webkit-line-clamp`).
 */
export const renderer: Renderer<string> = {
  view,
  mount: (body) => {
    const label = el("div", "ds-label")
    body.append(label)
    const fit = () => {
      label.classList.remove("ds-clamped")
      fitFontSize(label, 11, 320)
      if (label.scrollHeight > label.clientHeight + 1) {
        const lineHeight = parseFloat(getComputedStyle(label).lineHeight) || 13
        label.style.setProperty("--lines", String(Math.max(1, Math.floor(label.clientHeight / lineHeight))))
        label.classList.add("ds-clamped")
      }
    }
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
