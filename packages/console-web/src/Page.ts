import {
  contentSecurityPolicyFor,
  manifest as dashboardManifest,
  pageHeadersFor,
  pageShell,
  underRoot
} from "@dashstream/dashboard-web"
import { manifest } from "./Assets.js"
import type { ConsoleConfig } from "./Config.js"

/**
 * The Content-Security-Policy header value of the console page (docs/api.md section 14, with section 11's asset rules).
 * The dashboard page's policy (`contentSecurityPolicyFor` of `@dashstream/dashboard-web`, one list for both pages)
 * with `frame-ancestors 'none'`: the console changes things, so no other page may frame it (click-jacking).
 * Scripts only from the page's own origin, never inline (the configuration travels as a JSON data block);
 * `connect-src 'self'`: the admin API, sign-in and the map outlines; `img-src` allows http/https and `data:` because
 * the layout editor draws image tiles whose pushed points name image URLs of any origin; `style-src 'unsafe-inline'`
 * for the html tile's `srcdoc` frame (as on the dashboard page) and the grid's element styles.
 */
export const contentSecurityPolicy: string = contentSecurityPolicyFor("'none'")

/**
 * Headers the server sends with `GET /console` besides `Content-Type: text/html; charset=utf-8`: the CSP,
 * `Referrer-Policy: no-referrer` (docs/api.md section 14), `X-Content-Type-Options: nosniff`, `Cache-Control: no-store`.
 */
export const pageHeaders: Readonly<Record<string, string>> = pageHeadersFor("'none'")

/**
 * The HTML of `GET /console` (docs/api.md section 14): a shell that loads ONE script and ONE stylesheet (hashed names
 * from `bundle/manifest.json`) and carries {@link ConsoleConfig} as a JSON data block (`#ds-console`). The page signs
 * in and draws itself in the browser. It is the same for every request and holds no secret. Throws `BundleNotBuilt`
 * when this package's or the dashboard page's bundle has not been built.
 */
export const pageHtml = (root = "/"): string => {
  const m = manifest()
  const dashboard = dashboardManifest()
  const maps = dashboard.maps
  const config: ConsoleConfig = { maps: { world: underRoot(root, maps.world), usa: underRoot(root, maps.usa) } }
  return pageShell({
    root,
    theme: "dark",
    title: "Console · Dashstream",
    bundle: m,
    icon: dashboard.favicon.svg,
    configId: "ds-console",
    config,
    noscript: { className: "cw-noscript", text: "The console needs JavaScript." }
  })
}
