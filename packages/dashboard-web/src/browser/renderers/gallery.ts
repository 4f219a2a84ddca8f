import { el, image } from "../dom.js"
import { view, type GalleryView } from "../views/gallery.js"
import type { Renderer } from "./Renderer.js"

/** gallery: the latest picture with its caption. */
export const renderer: Renderer<GalleryView> = {
  view,
  mount: (body) => {
    const figure = el("figure", "ds-gallery")
    const frame = el("div", "ds-gallery-frame")
    const caption = el("figcaption")
    const title = el("span", "ds-gallery-title")
    const msg = el("span", "ds-gallery-msg")
    caption.append(title, msg)
    figure.append(frame, caption)
    body.append(figure)
    let src: string | undefined
    return {
      update: (v) => {
        if (v.imgUrl !== src) {
          src = v.imgUrl
          frame.replaceChildren(...(v.imgUrl === undefined ? [] : [image(v.imgUrl, "ds-gallery-img", v.title)]))
        }
        title.textContent = v.title
        msg.textContent = v.msg
      },
      dispose: () => undefined
    }
  }
}
