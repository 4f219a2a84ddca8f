import { el, wholeRows } from "../dom.js"
import { view } from "../views/list.js"
import type { Renderer } from "./Renderer.js"

/** list: one line of text per item, top first. */
export const renderer: Renderer<ReadonlyArray<string>> = {
  view,
  mount: (body) => {
    const list = el("ul", "ds-list")
    body.append(list)
    const rows = wholeRows(list, "li")
    return {
      update: (items) => {
        list.replaceChildren(...items.map((t) => el("li", undefined, t)))
        rows.recheck()
      },
      dispose: rows.dispose
    }
  }
}
