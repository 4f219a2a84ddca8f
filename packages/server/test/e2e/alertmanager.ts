/**
 * A real Prometheus Alertmanager (Debian's `prometheus-alertmanager`, installed by
 * `test/support/alertmanagerSetup.ts`) on a free loopback port, with a temporary configuration (one route to a
 * receiver that notifies nobody) and storage directory, clustering off.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "@dashstream/storage-postgres/testing"
import { alertmanagerPath } from "../support/alertmanagerSetup.js"

/** An alert as `GET /api/v2/alerts` lists it (the fields the tests read). */
export interface ListedAlert {
  readonly labels: Readonly<Record<string, string>>
  readonly annotations: Readonly<Record<string, string>>
  readonly startsAt: string
  readonly endsAt: string
  readonly status: { readonly state: string }
}

/** A running Alertmanager. */
export interface Alertmanager {
  /** `http://127.0.0.1:<port>`: what a Dashstream `alertmanager` receiver's URL is. */
  readonly url: string
  /** `GET /api/v2/alerts`: the alerts it holds that have not ended. */
  readonly alerts: () => Promise<ReadonlyArray<ListedAlert>>
  readonly output: () => string
  /** SIGTERM (SIGKILL after 5 s); removes its directory. */
  readonly stop: () => Promise<void>
}

const config = `route:
  receiver: nobody
  group_wait: 1s
receivers:
  - name: nobody
`

/** Starts an Alertmanager and resolves once `/-/ready` answers 200 (fails after 30 s). */
export const startAlertmanager = async (): Promise<Alertmanager> => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-alertmanager-"))
  writeFileSync(join(dir, "alertmanager.yml"), config)
  const port = await freePort()
  const child = spawn(
    alertmanagerPath,
    [
      `--config.file=${join(dir, "alertmanager.yml")}`,
      `--storage.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--cluster.listen-address="
    ],
    { stdio: ["ignore", "pipe", "pipe"] }
  )
  let output = ""
  child.stdout.on("data", (d: Buffer) => (output += d.toString()))
  child.stderr.on("data", (d: Buffer) => (output += d.toString()))
  const url = `http://127.0.0.1:${port}`
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000)
      await exited
      clearTimeout(timer)
    }
    rmSync(dir, { recursive: true, force: true })
  }
  const deadline = Date.now() + 30_000
  for (;;) {
    if (child.exitCode !== null) {
      await stop()
      throw new Error(`alertmanager exited at start:\n${output}`)
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.status === 200,
      () => false
    )
    if (ready) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`alertmanager not ready within 30 s:\n${output}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  return {
    url,
    alerts: async () => {
      const r = await fetch(`${url}/api/v2/alerts`)
      if (r.status !== 200) throw new Error(`GET /api/v2/alerts: ${r.status} ${await r.text()}`)
      return (await r.json()) as ReadonlyArray<ListedAlert>
    },
    output: () => output,
    stop
  }
}
