/**
 * `@dashstream/console-web`: the console page of contract section 14, Node side (no DOM types).
 *
 * The server answers `GET /console` (only while the admin API is on) with {@link pageHtml} and the headers
 * {@link pageHeaders} (which carry {@link contentSecurityPolicy}), and serves every entry of {@link assets} at its URL
 * path with `Cache-Control: public, max-age=31536000, immutable`, as it serves the dashboard page's. The browser code
 * (`src/browser/`, Preact and gridstack, drawing tiles with the dashboard page's renderers) is bundled by
 * `scripts/build.mjs` into `bundle/` at install time.
 */
export { assets, BundleNotBuilt, bundleDir, manifest, type Asset, type Manifest } from "./Assets.js"
export type { ConsoleConfig } from "./Config.js"
export { contentSecurityPolicy, pageHeaders, pageHtml } from "./Page.js"
