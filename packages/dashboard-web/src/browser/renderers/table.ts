import { el, wholeRows } from "../dom.js"
import { view, type TableView } from "../views/table.js"
import type { Renderer } from "./Renderer.js"

/** table: a header row and data rows, every cell as text. */
export const renderer: Renderer<TableView> = {
  view,
  mount: (body) => {
    const wrap = el("div", "ds-table-wrap")
    const table = el("table", "ds-table")
    const thead = el("thead")
    const tbody = el("tbody")
    table.append(thead, tbody)
    wrap.append(table)
    body.append(wrap)
    const rows = wholeRows(wrap, "tr")
    const row = (cells: ReadonlyArray<string>, tag: "th" | "td") => {
      const tr = el("tr")
      tr.append(...cells.map((c) => el(tag, undefined, c)))
      return tr
    }
    return {
      update: (v) => {
        thead.replaceChildren(row(v.header, "th"))
        tbody.replaceChildren(...v.rows.map((r) => row(r, "td")))
        rows.recheck()
      },
      dispose: rows.dispose
    }
  }
}
