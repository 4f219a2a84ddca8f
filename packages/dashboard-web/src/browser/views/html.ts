import { record, toText } from "../format.js"
import { latestPoint } from "./latest.js"

/** Pure: the latest `{html}` markup. */
export const view = (entries: ReadonlyArray<{ readonly point: unknown }>): string | undefined => {
  const html = toText(record(latestPoint(entries))?.["html"])
  return html === undefined || html === "" ? undefined : html
}

/**
 * Pure: the `srcdoc` of the html tile's frame: a policy that forbids every script (on top of the frame's
 * `sandbox` without `allow-scripts` and the page policy the frame inherits), base styles for the theme, then the
 * pushed markup as given.
 */
export const srcdoc = (html: string, theme: "dark" | "light"): string => {
  const [fg, link] = theme === "light" ? ["#172033", "#1d5fd1"] : ["#e8edf5", "#7fb0ff"]
  return (
    `<!doctype html><html><head><meta charset="utf-8"><meta name="color-scheme" content="${theme}">` +
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'none'; style-src 'unsafe-inline'; img-src http: https: data:">` +
    `<style>html,body{margin:0;background:transparent;color:${fg};font:clamp(11px,min(32vh,9vw),22px)/1.35 "Liberation Sans",Arial,Helvetica,sans-serif;}` +
    `body{padding:2px 4px;overflow:hidden}a{color:${link}}img{max-width:100%}</style></head><body>` +
    html +
    `</body></html>`
  )
}
