/**
 * Read benchmark (issue: ingest and read performance): `since=0` reads of a 100,000-entry sparkline stream.
 * Prints time to first and last byte, entries/s and the server's memory growth (its peak RSS during the reads minus
 * its RSS before them; the peak is the kernel's VmHWM, reset before the reads, and RSS sampled every 5 ms), for
 * Dashstream on SQLite and PostgreSQL (`--only` picks).
 *
 * Usage: pnpm bench:read [--entries 100000] [--runs 5] [--only sqlite,postgres] (default: both)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { type Dashstream, startDashstream } from "../lib/dashstream.js"
import { peakRssMiB, rssMiB } from "../lib/proc.js"

const { values } = parseArgs({
  options: {
    entries: { type: "string", default: "100000" },
    runs: { type: "string", default: "5" },
    only: { type: "string", default: "sqlite,postgres" }
  }
})
const entries = Number(values.entries)
const runs = Number(values.runs)
const only = new Set(values.only.split(","))
const root = join(import.meta.dirname, "..", "..")

const fill = async (ds: Dashstream): Promise<void> => {
  const start = 1_600_000_000
  const perPush = 10_000
  for (let done = 0; done < entries; done += perPush) {
    const n = Math.min(perPush, entries - done)
    const point = Array.from({ length: n }, (_, k) => ({ number: (done + k) % 977, timestamp: start + done + k }))
    const res = await fetch(`${ds.url}/customSend`, {
      method: "POST",
      body: JSON.stringify({ accessKey: ds.accessKey, streamName: "s0", point })
    })
    if (!res.ok) throw new Error(`fill answered ${res.status}: ${await res.text()}`)
  }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const bench = async (name: string, ds: Dashstream) => {
  await fill(ds)
  const url = `${ds.url}/api/v2/${ds.accessKey}/datastream/s0?since=0`
  // The fill's large pushes leave a high peak; reset the kernel's peak RSS (VmHWM) so that the peak after the
  // reads is the reads' own. Sampling RSS every 5 ms is the fallback where the reset is not allowed.
  let resetPeak = true
  try {
    writeFileSync(`/proc/${ds.pid}/clear_refs`, "5")
  } catch {
    resetPeak = false
  }
  const rssBefore = rssMiB(ds.pid)
  let sampledPeak = rssBefore
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, rssMiB(ds.pid))
  }, 5)
  const ttfb: Array<number> = []
  const ttlb: Array<number> = []
  for (let r = 0; r < runs; r++) {
    const t0 = performance.now()
    const res = await fetch(url)
    const reader = res.body!.getReader()
    let first = NaN
    let bytes = 0
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (Number.isNaN(first)) first = performance.now() - t0
      bytes += value.length
    }
    ttfb.push(first)
    ttlb.push(performance.now() - t0)
    if (r === 0) {
      const body = (await (await fetch(url)).json()) as { data: Array<unknown> }
      if (body.data.length !== entries) throw new Error(`expected ${entries} entries, got ${body.data.length}`)
      console.error(`${name}: ${bytes} bytes per response`)
    }
  }
  clearInterval(sampler)
  const growth = Math.max(sampledPeak, resetPeak ? peakRssMiB(ds.pid) : 0) - rssBefore
  const t = median(ttlb)
  console.log(
    `| ${name} | ${entries} | ${median(ttfb).toFixed(1)} | ${t.toFixed(1)} | ${((entries / t) * 1000).toFixed(0)} | ${growth.toFixed(1)} |`
  )
}

console.log(
  `machine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, node ${process.version}; median of ${runs} reads\n`
)
console.log("| target | entries | first byte ms | last byte ms | entries/s | server memory growth MiB |")
console.log("|---|---:|---:|---:|---:|---:|")
if (only.has("sqlite")) {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-read-"))
  const ds = await startDashstream(root, `sqlite:${join(dir, "read.db")}`, { widgetType: "sparkline", streams: 1 })
  await bench("Dashstream SQLite", ds)
  await ds.stop()
  rmSync(dir, { recursive: true, force: true })
}
if (only.has("postgres")) {
  const { withTestDatabase } = await import("../lib/postgres.js")
  await withTestDatabase(async (url) => {
    const ds = await startDashstream(root, url, { widgetType: "sparkline", streams: 1 })
    await bench("Dashstream PostgreSQL", ds)
    await ds.stop()
  })
}
