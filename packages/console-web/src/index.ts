/**
 * `@dashstream/console-web`: the console page of docs/api.md section 14, Node side (no DOM types).
 *
 * {@link consolePage} is the page as the HTTP server serves it (`HandlerConfig.console` of `@dashstream/http`): the
 * server answers `GET /console` (only while the admin API is on) with its `html` and `headers` (which carry
 * {@link contentSecurityPolicy}), and every entry of its `assets` at its URL path (`/console/assets/...`) with
 * `Cache-Control: public, max-age=31536000, immutable`, as it serves the dashboard page's. The browser code
 * (`src/browser/`, Preact and gridstack, drawing tiles with the dashboard page's renderers) is bundled by
 * `scripts/build.mjs` into `bundle/` at install time.
 */
import { assets } from "./Assets.js"
import { pageHeaders, pageHtml } from "./Page.js"

export { BundleNotBuilt, type Asset } from "@dashstream/dashboard-web"
export { assets, bundleDir, manifest, type Manifest } from "./Assets.js"
export type { ConsoleConfig } from "./Config.js"
export { contentSecurityPolicy, pageHeaders, pageHtml } from "./Page.js"

/**
 * The console page for the HTTP server: `html` of `GET /console`, its `headers` (CSP, no-referrer, nosniff,
 * no-store), and its hashed `assets` by URL path. `html` and `assets` throw `BundleNotBuilt` when the bundle is
 * missing.
 */
export const consolePage: {
  readonly html: (root?: string) => string
  readonly headers: Readonly<Record<string, string>>
  readonly assets: typeof assets
} = { html: pageHtml, headers: pageHeaders, assets }
