// Bundles the dashboard page (src/browser/) into bundle/ with content-hashed names and writes bundle/manifest.json,
// which the Node side (src/Assets.ts, src/Page.ts) reads, with the world and USA map outlines beside the script and
// stylesheet. Runs at install time (root package.json build script). Prints each file's size and the gzip total
// (budget: <= 300 KiB for the whole page). The build itself is scripts/buildPage.mjs, shared with the console page.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { buildPage, kib } from "./buildPage.mjs"
import { faviconIco, faviconSvg } from "./favicon.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const require = createRequire(join(root, "package.json"))

await buildPage({
  name: "dashboard-web",
  root,
  entryPoints: [join(root, "src/browser/main.ts"), join(root, "src/browser/style.css")],
  urlPrefix: "/",
  urlWidth: 44,
  budgetKiB: 300,
  extra: (emit) => {
    const atlas = (pkg, file, name) =>
      emit(name, "json", readFileSync(require.resolve(`${pkg}/${file}`)), "application/json")
    return {
      maps: {
        world: atlas("world-atlas", "countries-110m.json", "countries-110m"),
        usa: atlas("us-atlas", "states-10m.json", "states-10m")
      },
      favicon: {
        svg: emit("favicon", "svg", Buffer.from(faviconSvg()), "image/svg+xml"),
        ico: emit("favicon", "ico", faviconIco(), "image/x-icon")
      }
    }
  },
  describe: (sizes, total) => {
    const code = sizes.filter((s) => /\.(js|css)$/.test(s.url)).reduce((n, s) => n + s.gzip, 0)
    const maps = sizes.filter((s) => s.url.endsWith(".json")).reduce((n, s) => n + s.gzip, 0)
    return `script + style ${kib(code)}, map outlines ${kib(maps)}, icons ${kib(total - code - maps)}`
  }
})
