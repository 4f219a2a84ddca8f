import { type BundleManifest, bundleLoader } from "@dashstream/dashboard-web"
import { fileURLToPath } from "node:url"

/**
 * `bundle/manifest.json`, written by `scripts/build.mjs`. URL paths are absolute (`/console/assets/app.<hash>.js`);
 * `files` maps each URL path to its file under `bundle/` and its content type.
 */
export type Manifest = BundleManifest

/**
 * The directory the console's browser bundle is built into (`bundle/` at the package root); this module runs from
 * `src/` or from the compiled `dist/`, both one level below the package root.
 */
export const bundleDir: string = fileURLToPath(new URL("../bundle/", import.meta.url))

const bundle = bundleLoader<Manifest>({ dir: bundleDir, page: "console page", packageName: "@dashstream/console-web" })

/** Reads `bundle/manifest.json` once. Throws `BundleNotBuilt` when the bundle has not been built. */
export const manifest: () => Manifest = bundle.manifest

/**
 * Every static file of the console page (its script and stylesheet), keyed by URL path
 * (`/console/assets/app.3f2a9c1b0d.js`): under the page's own path, apart from the dashboard page's `/assets/`.
 * Names carry a content hash, so they may be answered with `Cache-Control: public, max-age=31536000, immutable`.
 * Read from `bundle/` on the first call, then cached. Throws `BundleNotBuilt` when not built.
 */
export const assets: typeof bundle.assets = bundle.assets
