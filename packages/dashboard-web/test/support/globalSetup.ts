import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { aptInstall } from "../../../../test/aptInstall.js"

/** Path of Debian's Chromium, the only browser the tests use (never a downloaded one). */
export const chromiumPath = "/usr/bin/chromium"

/**
 * Vitest global setup of this package: builds the page bundle, and makes sure Debian's `chromium` and `fonts-liberation` are installed, so that
 * a fresh CI machine (running as root) runs the browser tests instead of skipping them. When the browser is missing
 * and cannot be installed, the run fails loudly here.
 */
export default function setup(): void {
  // The tests read bundle/: build it from the current source so they never test a stale bundle.
  execFileSync(process.execPath, [fileURLToPath(new URL("../../scripts/build.mjs", import.meta.url))], {
    stdio: "inherit"
  })
  ensureChromium()
}

/**
 * Installs Debian's `chromium` and `fonts-liberation` with apt-get when missing (the global setup of every project
 * with browser tests calls it); throws when they cannot be installed. Never downloads a browser of its own.
 */
export const ensureChromium = (): void => {
  process.env["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
  if (existsSync(chromiumPath) && existsSync("/usr/share/fonts/truetype/liberation")) return
  aptInstall(
    ["chromium", "fonts-liberation"],
    `The dashboard browser tests need ${chromiumPath} (Debian's chromium) and fonts-liberation`
  )
  if (!existsSync(chromiumPath)) throw new Error(`apt-get installed chromium but ${chromiumPath} is still missing`)
}
