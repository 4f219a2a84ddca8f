import { existsSync } from "node:fs"
import { aptInstall } from "../../../../test/aptInstall.js"

/** Debian's Prometheus Alertmanager (package `prometheus-alertmanager`), which the alert delivery suite runs. */
export const alertmanagerPath = "/usr/bin/prometheus-alertmanager"

/**
 * Vitest global setup of the end-to-end suites: the alert delivery suite (docs/api.md section 18) sends to a real
 * Alertmanager. Installed here with apt-get when missing (as nginx is), so that a fresh machine running as root runs
 * the suite instead of skipping it; when it cannot be installed, the run fails loudly here.
 */
export default function setup(): void {
  if (existsSync(alertmanagerPath)) return
  aptInstall(["prometheus-alertmanager"], "The alert delivery tests need Debian's prometheus-alertmanager")
  if (!existsSync(alertmanagerPath)) throw new Error(`apt-get installed it but ${alertmanagerPath} is missing`)
}
