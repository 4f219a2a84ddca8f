import { execFileSync } from "node:child_process"
import { createRequire } from "node:module"
import { repositoryRoot } from "./bin.js"

/**
 * Vitest global setup of the server's tests: `tsc -b tsconfig.build.json` (incremental: about half a second when
 * nothing changed), so the `dist/` that spawned CLI and server processes run (see `bin.ts`) matches the source.
 * A compile error fails the run here, before any test.
 */
export default function setup(): void {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "-b", "tsconfig.build.json"], { cwd: repositoryRoot, stdio: "inherit" })
}
