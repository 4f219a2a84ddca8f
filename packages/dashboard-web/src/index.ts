/**
 * `@dashstream/dashboard-web`: the dashboard page of docs/api.md section 11, Node side (no DOM types).
 *
 * The server answers `GET /d/<viewToken>` with {@link pageHtml} (and a rotation's `GET /r/<viewToken>` with
 * {@link rotationPageHtml}, docs/api.md section 15) and the headers {@link pageHeaders} (which carry
 * {@link contentSecurityPolicy}), and serves every entry of {@link assets} at its URL path with
 * `Cache-Control: public, max-age=31536000, immutable`. The browser code (`src/browser/`) is bundled by
 * `scripts/build.mjs` into `bundle/` at install time.
 */
export { assets, bundleDir, manifest, type Manifest } from "./Assets.js"
/** The loader of a built page bundle, shared with the console page (`@dashstream/console-web`). */
export { bundleLoader, BundleNotBuilt, type Asset, type Bundle, type BundleManifest } from "./Bundle.js"
export type {
  DashboardModel,
  Entry,
  PageConfig,
  RotationDashboardModel,
  RotationModel,
  RotationPageConfig,
  TileModel
} from "./Model.js"
export {
  contentSecurityPolicy,
  contentSecurityPolicyFor,
  defaultFrameAncestors,
  escapeHtml,
  jsonForScript,
  pageHeaders,
  pageHeadersFor,
  pageHtml,
  pageShell,
  rotationPageHtml,
  underRoot
} from "./Page.js"
export { heldEntries, maxHeldEntries, widgetTypes, type WidgetType } from "./WidgetType.js"
