// Bundles the dashboard page (src/browser/) into bundle/ with content-hashed names and writes bundle/manifest.json,
// which the Node side (src/Assets.ts, src/Page.ts) reads. Runs at install time (root package.json postinstall).
// Prints each file's size and the gzip total (target: <= 300 KiB for the whole page).
import { build } from "esbuild"
import { createHash } from "node:crypto"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const dist = join(root, "bundle")
const require = createRequire(join(root, "package.json"))
const started = performance.now()

const result = await build({
  entryPoints: [join(root, "src/browser/main.ts"), join(root, "src/browser/style.css")],
  bundle: true,
  minify: true,
  format: "iife",
  target: ["chrome110", "firefox115", "safari16"],
  platform: "browser",
  legalComments: "none",
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
  const url = `/${file}`
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
const atlas = (pkg, file, name) =>
  emit(name, "json", readFileSync(require.resolve(`${pkg}/${file}`)), "application/json")
const maps = {
  world: atlas("world-atlas", "countries-110m.json", "countries-110m"),
  usa: atlas("us-atlas", "states-10m.json", "states-10m")
}
writeFileSync(join(dist, "manifest.json"), JSON.stringify({ script, style, maps, files }, null, 2) + "\n")

const kib = (n) => `${(n / 1024).toFixed(1)} KiB`
for (const s of sizes) console.log(`  ${s.url.padEnd(44)} ${kib(s.raw).padStart(10)}  gzip ${kib(s.gzip).padStart(9)}`)
const total = sizes.reduce((n, s) => n + s.gzip, 0)
const code = sizes.filter((s) => !s.url.endsWith(".json")).reduce((n, s) => n + s.gzip, 0)
console.log(
  `dashboard-web: built in ${Math.round(performance.now() - started)} ms; gzip total ${kib(total)} ` +
    `(script + style ${kib(code)}, map outlines ${kib(total - code)}); budget 300 KiB`
)
