import { image } from "../dom.js"
import { view } from "../views/image.js"
import type { Renderer } from "./Renderer.js"

/** image: the latest http(s) image, fitted into the tile. */
export const renderer: Renderer<string> = {
  view,
  mount: (body) => {
    let current: HTMLImageElement | undefined
    return {
      update: (url) => {
        if (current?.src === url) return
        current = image(url, "ds-image", "")
        body.replaceChildren(current)
      },
      dispose: () => undefined
    }
  }
}
