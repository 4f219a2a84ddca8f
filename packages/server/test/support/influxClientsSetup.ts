import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { aptInstall } from "../../../../test/aptInstall.js"

/** Debian's InfluxDB 1.x command-line client (package `influxdb-client`). */
export const influxCliPath = "/usr/bin/influx"

/** Debian's Python 3, whose `dist-packages` hold Debian's `python3-influxdb`. */
export const debianPython = "/usr/bin/python3"

/** Debian's InfluxDB 1.x server (package `influxdb`), which the line protocol suite compares Dashstream with. */
export const influxdPath = "/usr/bin/influxd"

/** True when Debian's python3 can import the `influxdb` module (package `python3-influxdb`). */
const hasPythonInfluxdb = (): boolean => {
  try {
    execFileSync(debianPython, ["-c", "import influxdb"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

/**
 * Vitest global setup of the end-to-end suites: the line protocol suite (docs/api.md section 13.1) drives real, unmodified
 * InfluxDB clients, among them Debian's `influx` command-line client (`influxdb-client`) and Debian's
 * `python3-influxdb`, and it compares bodies with Debian's InfluxDB 1.6 server (`influxdb`). They are installed here
 * with apt-get when missing, so that a fresh machine (running as root) runs those tests instead of skipping them; when
 * they cannot be installed, the run fails loudly here.
 */
export default function setup(): void {
  if (existsSync(influxCliPath) && existsSync(influxdPath) && existsSync(debianPython) && hasPythonInfluxdb()) return
  aptInstall(
    ["influxdb-client", "influxdb", "python3-influxdb"],
    "The line protocol end-to-end tests need Debian's influxdb-client, influxdb and python3-influxdb"
  )
  if (!existsSync(influxCliPath)) throw new Error(`apt-get installed influxdb-client but ${influxCliPath} is missing`)
  if (!existsSync(influxdPath)) throw new Error(`apt-get installed influxdb but ${influxdPath} is missing`)
  if (!hasPythonInfluxdb()) throw new Error(`apt-get installed python3-influxdb but ${debianPython} cannot import it`)
}
