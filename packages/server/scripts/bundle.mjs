// Bundles the `dashstream` command (dist/bin.js, compiled by `tsc -b`) into bundle/ with esbuild: the package's `bin`.
// Runs in the root `build` script, after tsc, at install time and in the tests' global setup.
//
// Why: node resolves and loads about a thousand ES module files of effect and @effect/* when the command starts from
// dist/; one bundle (split only where bin.ts and Cli.ts import lazily, so `help` stays tiny) starts in about half
// the time and CPU (bench/startup), and `serve --workers N` pays that start once per process.
//
// Left outside the bundle, resolved from the package's own dependencies at run time:
// - better-sqlite3: a native addon that finds its .node file relative to its own package;
// - @dashstream/dashboard-web and @dashstream/console-web: read their prebuilt browser bundles relative to their own
//   files;
// - pg-native: pg's optional native binding, never installed by us (pg falls back to JavaScript).
// Version.ts reads ../package.json relative to its module, which from bundle/ is still the package's package.json.
// The SQLite page reader's thread (storage-sqlite's internal/pageReaderThread.js) is a module that `new Worker` loads
// from beside the code that starts it: it is an entry point of its own, bundle/pageReaderThread.js, beside the chunks.
import { build } from "esbuild"
import { rmSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(dirname(fileURLToPath(import.meta.url)), "..")
const outdir = join(root, "bundle")
const started = performance.now()
const sqliteAdapter = dirname(createRequire(import.meta.url).resolve("@dashstream/storage-sqlite/package.json"))

rmSync(outdir, { recursive: true, force: true })
await build({
  entryPoints: [
    join(root, "dist/bin.js"),
    { in: join(sqliteAdapter, "dist/internal/pageReaderThread.js"), out: "pageReaderThread" }
  ],
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  outdir,
  external: ["better-sqlite3", "@dashstream/dashboard-web", "@dashstream/console-web", "pg-native"],
  // Some bundled CommonJS modules call require() for node built-ins; an ES module has no require of its own.
  banner: {
    js: 'import { createRequire as __dashstreamRequire } from "node:module"; const require = __dashstreamRequire(import.meta.url);'
  },
  logLevel: "warning"
})
console.log(`dashstream command bundled into ${outdir} in ${Math.round(performance.now() - started)} ms`)
