import { el } from "../dom.js"
import { view } from "../views/list.js"
import type { Renderer } from "./Renderer.js"

/** list: one line of text per item, top first. */
export const renderer: Renderer<ReadonlyArray<string>> = {
  view,
  mount: (body) => {
    const list = el("ul", "ds-list")
    body.append(list)
    return {
      update: (items) => list.replaceChildren(...items.map((t) => el("li", undefined, t))),
      dispose: () => undefined
    }
  }
}
