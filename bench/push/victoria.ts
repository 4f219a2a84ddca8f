import { execFileSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort, hasCommand, startProcess } from "../lib/proc.js"
import { type Peer, peer } from "./influx.js"

/** A running VictoriaMetrics (single node) with its data in a temp directory. */
export type Victoria = Peer

/**
 * Whether VictoriaMetrics can run here: the `victoria-metrics` command, installed from Debian's package of that name
 * when missing (as the other peers are). `false`, with the reason printed, when the package cannot be had (it is not
 * in every Debian release): the benchmark then leaves it out and says so.
 */
export const victoriaAvailable = (): boolean => {
  if (hasCommand("victoria-metrics")) return true
  console.error("installing victoria-metrics from Debian's packages ...")
  try {
    execFileSync(
      "sh",
      ["-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq victoria-metrics"],
      { stdio: "inherit" }
    )
  } catch {
    console.error("VictoriaMetrics left out: Debian's package victoria-metrics could not be installed here")
    return false
  }
  return hasCommand("victoria-metrics")
}

/**
 * Starts `victoria-metrics` on loopback with its data in a temp directory, keeping 100 years (the line protocol loads'
 * timestamps lie in 2001-2014, which the default month of retention would drop unstored). It takes InfluxDB's
 * `/write` bodies as they are, but answers before they are durable: it buffers rows in memory and writes them to disk
 * about every second (so a crash loses that second), unlike InfluxDB and Dashstream, which answer once fsynced.
 */
export const startVictoria = async (): Promise<Victoria> => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-victoria-"))
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = await startProcess(
    "victoria-metrics",
    [`-storageDataPath=${dir}`, `-httpListenAddr=127.0.0.1:${port}`, "-retentionPeriod=100y", "-loggerLevel=ERROR"],
    async () => (await fetch(`${url}/health`)).ok
  )
  return peer(url, child, dir)
}

/**
 * The rows VictoriaMetrics dropped for being outside its retention, from its own metrics: 0 when every value sent was
 * kept (checked after its runs, so that a figure never counts values it threw away).
 */
export const victoriaDroppedRows = async (url: string): Promise<number> => {
  const text = await (await fetch(`${url}/metrics`)).text()
  let dropped = 0
  for (const m of text.matchAll(/^vm_rows_ignored_total(?:\{[^}]*\})? (\S+)/gm)) {
    dropped += Number(m[1])
  }
  return dropped
}
