import type { ChildProcess } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, startProcess, stopProcess } from "../lib/proc.js"

/** A peer database server running for a benchmark, with its data in a temp directory that `stop` removes. */
export interface Peer {
  readonly url: string
  readonly process: ChildProcess
  readonly stop: () => Promise<void>
}

/** The {@link Peer} of a started `child` serving `url`, its data in `dir`. */
export const peer = (url: string, child: ChildProcess, dir: string): Peer => ({
  url,
  process: child,
  stop: async () => {
    await stopProcess(child)
    rmSync(dir, { recursive: true, force: true })
  }
})

/** A running InfluxDB 1.6 with its data in a temp directory, and a database `bench`. */
export type Influx = Peer

/**
 * Starts `influxd` (Debian package `influxdb`) on loopback with data, meta and WAL in a temp directory. The WAL is
 * fsynced before each write is answered (`wal-fsync-delay = "0s"`, the default), so it is a durable peer.
 */
export const startInflux = async (): Promise<Influx> => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-influx-"))
  for (const d of ["meta", "data", "wal"]) mkdirSync(join(dir, d))
  const port = await freePort()
  const rpc = await freePort()
  const config = join(dir, "influxdb.conf")
  writeFileSync(
    config,
    `reporting-disabled = true
bind-address = "127.0.0.1:${rpc}"
[meta]
  dir = "${dir}/meta"
[data]
  dir = "${dir}/data"
  wal-dir = "${dir}/wal"
  wal-fsync-delay = "0s"
  query-log-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:${port}"
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
[logging]
  level = "error"
`
  )
  const url = `http://127.0.0.1:${port}`
  const child = await startProcess(
    "influxd",
    ["-config", config],
    async () => (await fetch(`${url}/ping`)).status === 204
  )
  const created = await fetch(`${url}/query`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: "q=CREATE DATABASE bench"
  })
  if (!created.ok) throw new Error(`influx: CREATE DATABASE answered ${created.status}`)
  return peer(url, child, dir)
}
