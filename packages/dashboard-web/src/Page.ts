import { manifest } from "./Assets.js"
import type { BundleManifest } from "./Bundle.js"
import type { DashboardModel, PageConfig, RotationModel, RotationPageConfig, TileModel } from "./Model.js"

/**
 * The Content-Security-Policy header value of the dashboard page (docs/api.md section 11), framed by the sites
 * `frameAncestors` names.
 * - Scripts only from the page's own origin, never inline (the layout travels as a JSON data block).
 * - `connect-src 'self'`: the event stream and the map outlines.
 * - `img-src` allows any http/https origin and `data:` because pushed points name image URLs of any origin.
 * - `style-src 'unsafe-inline'`: the html tile's `srcdoc` frame inherits this policy and pushed markup commonly
 *   carries `style` attributes; inline style cannot run script. (ECharts itself only sets styles through the CSSOM.)
 * - The html tile's frame is `srcdoc` (no URL), so `frame-src` stays `'none'`; `object-src`, `base-uri` and
 *   `form-action` are closed.
 * - `frame-ancestors`: which sites may show the page in a frame, a CSP source list (`serve --frame-ancestors`);
 *   {@link defaultFrameAncestors} by default. The page is read-only, but a view URL opens a dashboard to whoever
 *   holds it: a site of its own embeds it only when the operator says so (wall displays, a wiki).
 */
export const contentSecurityPolicyFor = (frameAncestors: string): string =>
  [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' http: https: data:",
    "font-src 'self'",
    "connect-src 'self'",
    "frame-src 'none'",
    "child-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${frameAncestors}`
  ].join("; ")

/** The page's `frame-ancestors` unless configured: only pages of Dashstream's own origin may frame it. */
export const defaultFrameAncestors = "'self'"

/** The Content-Security-Policy of the dashboard page with {@link defaultFrameAncestors}. */
export const contentSecurityPolicy: string = contentSecurityPolicyFor(defaultFrameAncestors)

/**
 * Headers the server should send with the page besides `Content-Type: text/html; charset=utf-8`: the CSP (with
 * `frameAncestors`, a CSP source list the caller has checked), `Referrer-Policy: no-referrer` (the URL carries the
 * view token; pushed image URLs of other origins must not receive it), `X-Content-Type-Options: nosniff`, and
 * `Cache-Control: no-store` (the page names the current assets).
 */
export const pageHeadersFor = (frameAncestors: string): Readonly<Record<string, string>> => ({
  "Content-Security-Policy": contentSecurityPolicyFor(frameAncestors),
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "Cache-Control": "no-store"
})

/** {@link pageHeadersFor} with {@link defaultFrameAncestors}. */
export const pageHeaders: Readonly<Record<string, string>> = pageHeadersFor(defaultFrameAncestors)

/**
 * JSON for a `<script type="application/json">` block: `<`, `>` and `&` (and U+2028/U+2029) are written as
 * `\uXXXX` escapes, so no string inside (a dashboard or stream name, a title) can close the block or open a comment.
 */
export const jsonForScript = (value: unknown): string =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

/** Escapes text for an HTML text node or a double-quoted attribute. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

// A tile as the page's data block carries it: only the model's fields, none absent written as `undefined`.
const tileConfig = (t: TileModel): TileModel => ({
  streamName: t.streamName,
  ...(t.title === undefined ? {} : { title: t.title }),
  type: t.type,
  x: t.x,
  y: t.y,
  w: t.w,
  h: t.h,
  deleted: t.deleted,
  ...(t.options === undefined ? {} : { options: t.options })
})

/**
 * The HTML of `GET /d/<viewToken>` (docs/api.md section 11): a shell that loads ONE script and ONE stylesheet (hashed
 * names from `bundle/manifest.json`) and carries the layout, the event stream path and the map outline URLs as a JSON
 * data block (`#ds-dashboard`, never inline script). The page draws itself in the browser. Send it with
 * {@link pageHeaders}. Throws `BundleNotBuilt` when the bundle has not been built.
 */
export const pageHtml = (model: DashboardModel): string => {
  const m = manifest()
  const root = model.root ?? "/"
  const config: PageConfig = {
    name: model.name,
    theme: model.theme,
    eventsPath: model.eventsPath,
    tiles: model.tiles.map(tileConfig),
    maps: { world: underRoot(root, m.maps.world), usa: underRoot(root, m.maps.usa) }
  }
  return pageShell({
    root,
    theme: model.theme === "light" ? "light" : "dark",
    title: `${model.name} · Dashstream`,
    bundle: m,
    icon: m.favicon.svg,
    configId: "ds-dashboard",
    config,
    noscript: { className: "ds-noscript", text: "This dashboard needs JavaScript." }
  })
}

/**
 * The HTML of `GET /r/<viewToken>` (docs/api.md section 15): the same shell, script and stylesheet as the dashboard page
 * ({@link pageHtml}; send it with the same headers), carrying the rotation (its interval, its dashboards in order and
 * each one's tiles) and its one event stream's path as the `#ds-rotation` data block; the script then shows each
 * dashboard full-screen in turn. The title is the first dashboard's name (the rotation's when it has none). Throws
 * `BundleNotBuilt` when the bundle has not been built.
 */
export const rotationPageHtml = (model: RotationModel): string => {
  const m = manifest()
  const root = model.root ?? "/"
  const config: RotationPageConfig = {
    name: model.name,
    intervalSeconds: model.intervalSeconds,
    dashboardIds: model.dashboardIds,
    dashboards: model.dashboards.map((d) => ({ id: d.id, name: d.name, tiles: d.tiles.map(tileConfig) })),
    eventsPath: model.eventsPath,
    root,
    theme: model.theme,
    maps: { world: underRoot(root, m.maps.world), usa: underRoot(root, m.maps.usa) }
  }
  const first = model.dashboards.find((d) => d.id === model.dashboardIds[0])
  return pageShell({
    root,
    theme: model.theme === "light" ? "light" : "dark",
    title: first?.name ?? model.name,
    bundle: m,
    icon: m.favicon.svg,
    configId: "ds-rotation",
    config,
    noscript: { className: "ds-noscript", text: "This rotation needs JavaScript." }
  })
}

/**
 * A URL path of the bundle (`/assets/app.<hash>.js`) under `root`, the path from a page back to the served root
 * (`../` gives `../assets/app.<hash>.js`; `/` leaves it as it is). See `DashboardModel.root`.
 */
export const underRoot = (root: string, path: string): string => (root === "/" ? path : `${root}${path.slice(1)}`)

/**
 * The HTML document of a page, the dashboard page's and the console page's alike: the `<head>` (charset, viewport,
 * `no-referrer`, the `theme` as `data-theme` and `color-scheme`, the `title` as text, the `icon`), the bundle's ONE stylesheet and
 * ONE deferred script (the hashed URL paths of `bundle`), `config` as a JSON data block with id `configId` (never inline
 * script, see {@link jsonForScript}), and a `<noscript>` paragraph. Every text and attribute is escaped here. The
 * bundle's URLs are put under `root` (see {@link underRoot}; `/`, absolute, when absent).
 */
export const pageShell = (page: {
  readonly root?: string | undefined
  readonly theme: "light" | "dark"
  readonly title: string
  readonly bundle: Pick<BundleManifest, "script" | "style">
  /** URL path of the page's icon (SVG), linked from the head. */
  readonly icon?: string | undefined
  readonly configId: string
  readonly config: unknown
  readonly noscript: { readonly className: string; readonly text: string }
}): string => `<!doctype html>
<html lang="en" data-theme="${page.theme}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="${page.theme}">
<title>${escapeHtml(page.title)}</title>
${page.icon === undefined ? "" : `<link rel="icon" href="${escapeHtml(underRoot(page.root ?? "/", page.icon))}" type="image/svg+xml">\n`}<link rel="stylesheet" href="${escapeHtml(underRoot(page.root ?? "/", page.bundle.style))}">
<script type="application/json" id="${escapeHtml(page.configId)}">${jsonForScript(page.config)}</script>
<script src="${escapeHtml(underRoot(page.root ?? "/", page.bundle.script))}" defer></script>
</head>
<body>
<noscript><p class="${escapeHtml(page.noscript.className)}">${escapeHtml(page.noscript.text)}</p></noscript>
</body>
</html>
`
