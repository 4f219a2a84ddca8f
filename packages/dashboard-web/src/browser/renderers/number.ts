import { el, setChars, setStatus } from "../dom.js"
import { view, type NumberView } from "../views/number.js"
import type { Renderer } from "./Renderer.js"

/** number: the latest value in large type (in its status colour) and the change since the previous value. */
export const renderer: Renderer<NumberView> = {
  view,
  mount: (body) => {
    const value = el("div", "ds-big-number")
    const change = el("div", "ds-change")
    body.append(value, change)
    return {
      update: (v) => {
        value.textContent = v.value
        setChars(value, v.value)
        setStatus(value, v.status)
        change.textContent = v.change?.text ?? ""
        change.dataset["direction"] = v.change?.direction ?? "none"
      },
      dispose: () => undefined
    }
  }
}
