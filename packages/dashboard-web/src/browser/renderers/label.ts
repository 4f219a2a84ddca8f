import { el } from "../dom.js"
import { view } from "../views/label.js"
import type { Renderer } from "./Renderer.js"

/** label: the latest text, large. */
export const renderer: Renderer<string> = {
  view,
  mount: (body) => {
    const label = el("div", "ds-label")
    body.append(label)
    return { update: (text) => void (label.textContent = text), dispose: () => undefined }
  }
}
