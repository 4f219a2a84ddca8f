// The build of a page's browser bundle, shared by the dashboard page's scripts/build.mjs and the console page's
// (packages/console-web/scripts/build.mjs): esbuild bundles the page's script and stylesheet, every file is written
// under bundle/assets/ with a content-hashed name, bundle/manifest.json names them for the Node side (src/Bundle.ts
// reads it), and each file's size and the gzip total are printed against the page's budget (each package's
// test/page.test.ts holds the page to it).
import { build } from "esbuild"
import { createHash } from "node:crypto"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gzipSync } from "node:zlib"

/** Formats a byte count as KiB with one decimal. */
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`

/**
 * Builds one page into `<root>/bundle/` (emptied first) and prints its sizes.
 *
 * @param {object} page
 * @param {string} page.name the package's short name, first on the summary line (`"dashboard-web"`)
 * @param {string} page.root the package root; `bundle/` is written there
 * @param {[string, string]} page.entryPoints the script and the stylesheet, absolute paths
 * @param {import("esbuild").BuildOptions} [page.esbuild] further esbuild options (JSX settings)
 * @param {string} page.urlPrefix what comes before `assets/...` in every URL path (`"/"`, `"/console/"`)
 * @param {number} page.urlWidth the width of the URL column of the size table
 * @param {number} page.budgetKiB the page's gzip budget, printed on the summary line
 * @param {(emit: (name: string, ext: string, body: Buffer, contentType: string) => string) => object} [page.extra]
 *   emits further files (`emit` writes one and returns its URL path) and returns further manifest fields
 * @param {(sizes: Array<{ url: string, raw: number, gzip: number }>, total: number) => string} page.describe
 *   the summary line's account of the gzip total, in parentheses after it
 * @returns {Promise<void>}
 */
export const buildPage = async (page) => {
  const started = performance.now()
  const dist = join(page.root, "bundle")

  const result = await build({
    entryPoints: page.entryPoints,
    bundle: true,
    minify: true,
    format: "iife",
    target: ["chrome110", "firefox115", "safari16"],
    platform: "browser",
    legalComments: "none",
    // Workspace packages from their sources (the dashboard page bundles @dashstream/core/tileStatus, which imports
    // only @dashstream/contract), so a page builds without the packages' dist/ having been compiled first.
    conditions: ["@dashstream/source"],
    ...page.esbuild,
    write: false,
    outdir: "out",
    logLevel: "warning",
    define: { "process.env.NODE_ENV": '"production"', __DEV__: "false" }
  })

  rmSync(dist, { recursive: true, force: true })
  mkdirSync(join(dist, "assets"), { recursive: true })

  const files = {}
  const sizes = []
  const emit = (name, ext, body, contentType) => {
    const hash = createHash("sha256").update(body).digest("hex").slice(0, 10)
    const file = `assets/${name}.${hash}.${ext}`
    writeFileSync(join(dist, file), body)
    const url = `${page.urlPrefix}${file}`
    files[url] = { file, contentType }
    sizes.push({ url, raw: body.length, gzip: gzipSync(body, { level: 9 }).length })
    return url
  }
  const out = (ext) => {
    const f = result.outputFiles.find((o) => o.path.endsWith(`.${ext}`))
    if (f === undefined) throw new Error(`esbuild wrote no .${ext} output`)
    return Buffer.from(f.contents)
  }
  const script = emit("app", "js", out("js"), "text/javascript; charset=utf-8")
  const style = emit("app", "css", out("css"), "text/css; charset=utf-8")
  const extra = page.extra === undefined ? {} : page.extra(emit)
  writeFileSync(join(dist, "manifest.json"), JSON.stringify({ script, style, ...extra, files }, null, 2) + "\n")

  for (const s of sizes) {
    console.log(`  ${s.url.padEnd(page.urlWidth)} ${kib(s.raw).padStart(10)}  gzip ${kib(s.gzip).padStart(9)}`)
  }
  const total = sizes.reduce((n, s) => n + s.gzip, 0)
  console.log(
    `${page.name}: built in ${Math.round(performance.now() - started)} ms; gzip total ${kib(total)} ` +
      `(${page.describe(sizes, total)}); budget ${page.budgetKiB} KiB`
  )
}

export { kib }
