import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"

/** Vitest global setup of this package: the tests read bundle/, so it is built from the current source first. */
export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL("../../scripts/build.mjs", import.meta.url))], {
    stdio: "inherit"
  })
}
