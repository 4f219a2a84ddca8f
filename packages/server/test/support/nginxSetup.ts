import { existsSync } from "node:fs"
import { aptInstall } from "../../../../test/aptInstall.js"

/** Debian's nginx (package `nginx`), which the reverse proxy tests run as a child process. */
export const nginxPath = "/usr/sbin/nginx"

/**
 * Vitest global setup of the server's tests: the reverse proxy suites (docs/api.md section 16) put a real nginx, run with
 * the README's server block, in front of `dashstream serve`. Installed here with apt-get when missing (as Chromium and
 * the InfluxDB clients are), so that a fresh machine running as root runs them instead of skipping them; when it cannot
 * be installed, the run fails loudly here.
 */
export default function setup(): void {
  if (existsSync(nginxPath)) return
  aptInstall(["nginx"], "The reverse proxy tests need Debian's nginx")
  if (!existsSync(nginxPath)) throw new Error(`apt-get installed nginx but ${nginxPath} is missing`)
}
