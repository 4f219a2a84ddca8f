import { readFileSync } from "node:fs"
import { join } from "node:path"

/** One built file as the server sends it. */
export interface Asset {
  readonly body: Buffer
  readonly contentType: string
}

/**
 * What every page's `bundle/manifest.json` holds (written by its `scripts/build.mjs`, see `scripts/buildPage.mjs`):
 * the absolute URL paths of the page's script and stylesheet, and `files`, which maps each URL path to its file under
 * `bundle/` and its content type. A page's manifest may carry more (the dashboard page's map outline URLs).
 */
export interface BundleManifest {
  readonly script: string
  readonly style: string
  readonly files: Readonly<Record<string, { readonly file: string; readonly contentType: string }>>
}

/** Thrown when a page's `bundle/` holds no build: the message names the page and says how to build it. */
export class BundleNotBuilt extends Error {
  override readonly name = "BundleNotBuilt"
  constructor(page: string, dir: string, packageName: string, cause: unknown) {
    super(
      `The ${page} bundle is not built (${join(dir, "manifest.json")} is missing or unreadable). ` +
        `It is built by \`pnpm install\`; to build it by hand run \`pnpm --filter ${packageName} build\`.`,
      { cause }
    )
  }
}

/** A page's built bundle as the Node side reads it: its manifest and its files, each read once, then cached. */
export interface Bundle<M extends BundleManifest> {
  /** Reads `manifest.json` once. Throws {@link BundleNotBuilt} when the bundle has not been built. */
  readonly manifest: () => M
  /**
   * Every file of `files`, keyed by URL path, read from the bundle directory on the first call, then cached. Names
   * carry a content hash, so the server may answer them with `Cache-Control: public, max-age=31536000, immutable`.
   * Throws {@link BundleNotBuilt} when the bundle has not been built.
   */
  readonly assets: () => ReadonlyMap<string, Asset>
}

/**
 * The loader of one page's built bundle (the dashboard page's and the console page's share it): `dir` is the absolute
 * path of its `bundle/` directory, `page` names the page in the {@link BundleNotBuilt} message (`"dashboard page"`)
 * and `packageName` is the workspace package that builds it (`@dashstream/dashboard-web`). Nothing is read until the
 * first call.
 */
export const bundleLoader = <M extends BundleManifest>(options: {
  readonly dir: string
  readonly page: string
  readonly packageName: string
}): Bundle<M> => {
  const { dir, page, packageName } = options
  const notBuilt = (cause: unknown) => new BundleNotBuilt(page, dir, packageName, cause)
  let manifestCache: M | undefined
  let assetsCache: ReadonlyMap<string, Asset> | undefined
  const manifest = (): M => {
    if (manifestCache === undefined) {
      try {
        manifestCache = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as M
      } catch (cause) {
        throw notBuilt(cause)
      }
    }
    return manifestCache
  }
  const assets = (): ReadonlyMap<string, Asset> => {
    if (assetsCache === undefined) {
      const map = new Map<string, Asset>()
      try {
        for (const [path, { file, contentType }] of Object.entries(manifest().files)) {
          map.set(path, { body: readFileSync(join(dir, file)), contentType })
        }
      } catch (cause) {
        throw cause instanceof BundleNotBuilt ? cause : notBuilt(cause)
      }
      assetsCache = map
    }
    return assetsCache
  }
  return { manifest, assets }
}
