// Bundles the console page (src/browser/) into bundle/ with content-hashed names and writes bundle/manifest.json,
// which the Node side (src/Assets.ts, src/Page.ts) reads. Runs at install time (root package.json build script).
// The tiles of the layout editor are the dashboard page's own renderers (@dashstream/dashboard-web/browser, bundled
// from source here), so the script carries ECharts as the dashboard page's does. Prints each file's size and the gzip
// total against the console's budget (test/page.test.ts holds it to that). The build itself is the dashboard page's
// scripts/buildPage.mjs (a workspace file: bundle/ ships prebuilt, so this script runs only in the repository).
//
// First it generates the page's API types, src/browser/generated/api.ts (not in git), with openapi-typescript from
// the OpenAPI document @dashstream/http builds (`@dashstream/http/openapi.json`, written after `tsc -b`), so the
// console type-checks against the API as the server declares it.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { buildPage } from "../../dashboard-web/scripts/buildPage.mjs"
import { apiTypes } from "./apiTypes.mjs"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")

const document = JSON.parse(readFileSync(fileURLToPath(import.meta.resolve("@dashstream/http/openapi.json")), "utf8"))
const generated = join(root, "src/browser/generated")
mkdirSync(generated, { recursive: true })
writeFileSync(join(generated, "api.ts"), await apiTypes(document))

await buildPage({
  name: "console-web",
  root,
  entryPoints: [join(root, "src/browser/main.tsx"), join(root, "src/browser/console.css")],
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  // Served under the page's own path, apart from the dashboard page's /assets/.
  urlPrefix: "/console/",
  urlWidth: 48,
  budgetKiB: 300,
  describe: () => "script + style; the map outlines are the dashboard page's files"
})
