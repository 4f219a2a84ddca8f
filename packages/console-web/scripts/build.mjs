// Bundles the console page (src/browser/) into bundle/ with content-hashed names and writes bundle/manifest.json,
// which the Node side (src/Assets.ts, src/Page.ts) reads. Runs at install time (root package.json build script).
// The tiles of the layout editor are the dashboard page's own renderers (@dashstream/dashboard-web/browser, bundled
// from source here), so the script carries ECharts as the dashboard page's does. Prints each file's size and the gzip
// total against the console's budget (test/page.test.ts holds it to that).
import { build } from "esbuild"
import { createHash } from "node:crypto"
import { mkdirSync, rmSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "bundle")
const budgetKiB = 300
const started = performance.now()

const result = await build({
  entryPoints: [join(root, "src/browser/main.tsx"), join(root, "src/browser/console.css")],
  bundle: true,
  minify: true,
  format: "iife",
  target: ["chrome110", "firefox115", "safari16"],
  platform: "browser",
  legalComments: "none",
  jsx: "automatic",
  jsxImportSource: "preact",
  write: false,
  outdir: "out",
  logLevel: "warning",
  define: { "process.env.NODE_ENV": '"production"', __DEV__: "false" }
})

rmSync(dist, { recursive: true, force: true })
mkdirSync(join(dist, "assets"), { recursive: true })

const files = {}
const sizes = []
const emit = (ext, body, contentType) => {
  const hash = createHash("sha256").update(body).digest("hex").slice(0, 10)
  const file = `assets/app.${hash}.${ext}`
  writeFileSync(join(dist, file), body)
  // Served under the page's own path, apart from the dashboard page's /assets/.
  const url = `/console/${file}`
  files[url] = { file, contentType }
  sizes.push({ url, raw: body.length, gzip: gzipSync(body, { level: 9 }).length })
  return url
}
const out = (ext) => {
  const f = result.outputFiles.find((o) => o.path.endsWith(`.${ext}`))
  if (f === undefined) throw new Error(`esbuild wrote no .${ext} output`)
  return Buffer.from(f.contents)
}
const script = emit("js", out("js"), "text/javascript; charset=utf-8")
const style = emit("css", out("css"), "text/css; charset=utf-8")
writeFileSync(join(dist, "manifest.json"), JSON.stringify({ script, style, files }, null, 2) + "\n")

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`
for (const s of sizes) console.log(`  ${s.url.padEnd(48)} ${kib(s.raw).padStart(10)}  gzip ${kib(s.gzip).padStart(9)}`)
const total = sizes.reduce((n, s) => n + s.gzip, 0)
console.log(
  `console-web: built in ${Math.round(performance.now() - started)} ms; gzip total ${kib(total)} (script + style; ` +
    `the map outlines are the dashboard page's files); budget ${budgetKiB} KiB`
)
