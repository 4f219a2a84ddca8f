import { el, wholeRows } from "../dom.js"
import { view, type LeaderRow } from "../views/leaderboard.js"
import type { Renderer } from "./Renderer.js"

/** leaderboard: ranked rows. */
export const renderer: Renderer<ReadonlyArray<LeaderRow>> = {
  view,
  mount: (body) => {
    const list = el("ol", "ds-leaderboard")
    body.append(list)
    const whole = wholeRows(list, "li")
    return {
      update: (rows) => {
        list.replaceChildren(
          ...rows.map((r) => {
            const li = el("li")
            li.append(
              el("span", "ds-rank", String(r.rank)),
              el("span", "ds-name", r.name),
              el("span", "ds-value", r.value)
            )
            return li
          })
        )
        whole.recheck()
      },
      dispose: whole.dispose
    }
  }
}
