/**
 * `serve.ts` bundled as `dashstream` is (`packages/server/scripts/bundle.mjs`: esbuild, one ES module split where the
 * command imports lazily, the same modules left outside), so that a benchmark's server runs its hooks without tsx:
 * through tsx the server holds about 150 MiB more at rest (transpiled sources and their source maps; measured
 * 2026-12-06) and spends more CPU, which would blur memory and CPU figures. Built from the sources as they are.
 */
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

/**
 * Bundles `serve.ts` into `packages/server/.tmp/` (one level below the package, as `bundle/` is: the server reads
 * its version from `../package.json`) and resolves with the entry to run with node.
 */
export const bundleServe = async (root: string): Promise<string> => {
  const server = join(root, "packages/server")
  // esbuild is the server package's build dependency, not the root's: resolved from there.
  const { build } = createRequire(join(server, "package.json"))("esbuild") as {
    readonly build: (options: Record<string, unknown>) => Promise<unknown>
  }
  const outdir = join(server, ".tmp")
  const sqliteAdapter = dirname(
    createRequire(join(server, "package.json")).resolve("@dashstream/storage-sqlite/package.json")
  )
  await build({
    entryPoints: [
      { in: join(import.meta.dirname, "serve.ts"), out: "bench-live-serve" },
      { in: join(sqliteAdapter, "src/internal/pageReaderThread.js"), out: "pageReaderThread" }
    ],
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    outdir,
    conditions: ["@dashstream/source"],
    external: ["better-sqlite3", "@dashstream/dashboard-web", "@dashstream/console-web", "pg-native"],
    banner: {
      js: 'import { createRequire as __dashstreamRequire } from "node:module"; const require = __dashstreamRequire(import.meta.url);'
    },
    logLevel: "warning"
  })
  return join(outdir, "bench-live-serve.js")
}
