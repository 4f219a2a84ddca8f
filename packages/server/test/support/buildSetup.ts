import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { repositoryRoot } from "./bin.js"

/**
 * Vitest global setup of the server's tests: `tsc -b tsconfig.build.json` (incremental: about half a second when
 * nothing changed), then the command's bundle (`packages/server/scripts/bundle.mjs`, about a second), the dashboard
 * page's and the console page's browser bundles (about two and three seconds), so what spawned CLI and server
 * processes run and serve (see `bin.ts`) matches the source.
 * A compile error fails the run here, before any test. The four projects that spawn the CLI (server and the three
 * e2e projects) all list this setup; their setups run in the one vitest process, so the build runs once per run.
 */
export default function setup(): void {
  if (process.env[builtMark] === "1") return
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-b", "tsconfig.build.json"], { cwd: repositoryRoot, stdio: "inherit" })
  execFileSync(process.execPath, ["packages/server/scripts/bundle.mjs"], { cwd: repositoryRoot, stdio: "inherit" })
  // The dashboard (view) page's browser bundle, which the server serves from dashboard-web's `bundle/` (built by
  // `pnpm install`, so without this a change to the page's source would not reach the browser tests), and the console
  // page's (the console end-to-end test drives it), built from its source and the dashboard page's renderers as
  // they are now.
  execFileSync(process.execPath, ["packages/dashboard-web/scripts/build.mjs"], {
    cwd: repositoryRoot,
    stdio: "inherit"
  })
  execFileSync(process.execPath, ["packages/console-web/scripts/build.mjs"], { cwd: repositoryRoot, stdio: "inherit" })
  process.env[builtMark] = "1"
}

/** Set in vitest's own process once the build of this run is done. */
const builtMark = "DASHSTREAM_TEST_DIST_BUILT"
