import { el } from "../dom.js"
import { srcdoc, view } from "../views/html.js"
import type { Renderer } from "./Renderer.js"

/**
 * html: the pushed markup in an iframe with an EMPTY `sandbox` (no `allow-scripts`) and `srcdoc`, so `<script>`,
 * event handler attributes and `javascript:` URLs never run (docs/api.md section 11).
 */
export const renderer: Renderer<string> = {
  view,
  mount: (body, ctx) => {
    const frame = el("iframe", "ds-html")
    // An empty sandbox: no scripts, no forms, no popups, no top navigation, an opaque origin.
    frame.setAttribute("sandbox", "")
    frame.referrerPolicy = "no-referrer"
    frame.title = "html tile"
    body.append(frame)
    return {
      update: (html) => {
        frame.srcdoc = srcdoc(html, ctx.theme)
      },
      dispose: () => undefined
    }
  }
}
