import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

/** One built file as the server sends it. */
export interface Asset {
  readonly body: Buffer
  readonly contentType: string
}

/**
 * `bundle/manifest.json`, written by `scripts/build.mjs`. URL paths are absolute (`/console/assets/app.<hash>.js`);
 * `files` maps each URL path to its file under `bundle/` and its content type.
 */
export interface Manifest {
  readonly script: string
  readonly style: string
  readonly files: Readonly<Record<string, { readonly file: string; readonly contentType: string }>>
}

/**
 * The directory the console's browser bundle is built into (`bundle/` at the package root); this module runs from
 * `src/` or from the compiled `dist/`, both one level below the package root.
 */
export const bundleDir: string = fileURLToPath(new URL("../bundle/", import.meta.url))

/** Thrown when `bundle/` holds no build: the message says how to build it. */
export class BundleNotBuilt extends Error {
  override readonly name = "BundleNotBuilt"
  constructor(cause: unknown) {
    super(
      `The console page bundle is not built (${join(bundleDir, "manifest.json")} is missing or unreadable). ` +
        "It is built by `pnpm install`; to build it by hand run `pnpm --filter @dashstream/console-web build`.",
      { cause }
    )
  }
}

let manifestCache: Manifest | undefined
let assetsCache: ReadonlyMap<string, Asset> | undefined

/** Reads `bundle/manifest.json` once. Throws {@link BundleNotBuilt} when the bundle has not been built. */
export const manifest = (): Manifest => {
  if (manifestCache === undefined) {
    try {
      manifestCache = JSON.parse(readFileSync(join(bundleDir, "manifest.json"), "utf8")) as Manifest
    } catch (cause) {
      throw new BundleNotBuilt(cause)
    }
  }
  return manifestCache
}

/**
 * Every static file of the console page (its script and stylesheet), keyed by URL path
 * (`/console/assets/app.3f2a9c1b0d.js`): under the page's own path, apart from the dashboard page's `/assets/`.
 * Names carry a content hash, so they may be answered with `Cache-Control: public, max-age=31536000, immutable`.
 * Read from `bundle/` on the first call, then cached. Throws {@link BundleNotBuilt} when not built.
 */
export const assets = (): ReadonlyMap<string, Asset> => {
  if (assetsCache === undefined) {
    const map = new Map<string, Asset>()
    try {
      for (const [path, { file, contentType }] of Object.entries(manifest().files)) {
        map.set(path, { body: readFileSync(join(bundleDir, file)), contentType })
      }
    } catch (cause) {
      throw cause instanceof BundleNotBuilt ? cause : new BundleNotBuilt(cause)
    }
    assetsCache = map
  }
  return assetsCache
}
