import { fileURLToPath } from "node:url"
import { type BundleManifest, bundleLoader } from "./Bundle.js"

/**
 * `bundle/manifest.json`, written by `scripts/build.mjs`. URL paths are absolute (`/assets/app.<hash>.js`); `files`
 * maps each URL path to its file under `bundle/` and its content type; `maps` the URL paths of the map outlines;
 * `favicon` those of the page's icon.
 */
export interface Manifest extends BundleManifest {
  readonly maps: { readonly world: string; readonly usa: string }
  /** URL paths of the page's icon: SVG (linked from the page head) and ICO (also answered at `/favicon.ico`). */
  readonly favicon: { readonly svg: string; readonly ico: string }
}

/**
 * The directory the browser bundle is built into (`bundle/` at the package root). This module runs from `src/` (tests,
 * `tsx`) or from the compiled `dist/`; both sit one level below the package root, so one relative path serves both,
 * in the repository and in an installed package (where `bundle/` ships prebuilt, see `files` in package.json).
 */
export const bundleDir: string = fileURLToPath(new URL("../bundle/", import.meta.url))

const bundle = bundleLoader<Manifest>({
  dir: bundleDir,
  page: "dashboard page",
  packageName: "@dashstream/dashboard-web"
})

/** Reads `bundle/manifest.json` once. Throws `BundleNotBuilt` when the bundle has not been built. */
export const manifest: () => Manifest = bundle.manifest

/**
 * Every static file of the dashboard page, keyed by URL path (`/assets/app.3f2a9c1b.js`, the stylesheet, the
 * world and USA map outlines as TopoJSON). Names carry a content hash, so the server may answer them with
 * `Cache-Control: public, max-age=31536000, immutable`. Read from `bundle/` on the first call, then cached.
 * Throws `BundleNotBuilt` when the bundle has not been built.
 */
export const assets: typeof bundle.assets = bundle.assets
