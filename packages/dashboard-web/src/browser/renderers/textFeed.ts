import { el, image, wholeRows } from "../dom.js"
import { view, type FeedItem } from "../views/textFeed.js"
import type { Renderer } from "./Renderer.js"

/** text-feed: newest item first; every field as text. */
export const renderer: Renderer<ReadonlyArray<FeedItem>> = {
  view,
  mount: (body) => {
    const list = el("ul", "ds-feed")
    body.append(list)
    const rows = wholeRows(list, ".ds-feed-item")
    return {
      update: (items) => {
        list.replaceChildren(
          ...items.map((item) => {
            const li = el("li", "ds-feed-item")
            if (item.imgUrl !== undefined) li.append(image(item.imgUrl, "ds-feed-img", ""))
            const text = el("div", "ds-feed-text")
            const head = el("div", "ds-feed-head")
            head.append(el("span", "ds-feed-title", item.title))
            if (item.date !== undefined) head.append(el("span", "ds-feed-date", item.date))
            text.append(head, el("div", "ds-feed-msg", item.msg))
            li.append(text)
            return li
          })
        )
        rows.recheck()
      },
      dispose: rows.dispose
    }
  }
}
