/**
 * Read benchmark (issue: ingest and read performance): `since=0` reads of a 100,000-entry sparkline stream.
 * Prints time to first and last byte, entries/s and the server's memory growth (its peak RSS during the reads minus
 * its RSS before them; the peak is the kernel's VmHWM, reset before the reads, and RSS sampled every 5 ms), for
 * Dashstream on SQLite and PostgreSQL (`--only` picks).
 *
 * Scenario `push-during-reads` (a large read must not freeze the server): fills a stream of
 * `--entries` (use 500000), then measures push latency with wrk (`--connections` connections pushing single numbers
 * for `--seconds`) twice: with no reader, then while `--readers` clients read the stream with `since=0` over and over.
 * Prints both p99s and their ratio (target: within 2x).
 *
 * Usage: pnpm bench:read [--entries 100000] [--runs 5] [--only sqlite,postgres] (default: both)
 *        pnpm bench:read --scenario push-during-reads --entries 500000 [--readers 8] [--seconds 10] [--connections 10]
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { Agent, get as httpGet } from "node:http"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { type Dashstream, startDashstream } from "../lib/dashstream.js"
import { peakRssMiB, rssMiB } from "../lib/proc.js"
import { type LoadResult, postLua, wrk } from "../lib/wrk.js"

const { values } = parseArgs({
  options: {
    entries: { type: "string", default: "100000" },
    runs: { type: "string", default: "5" },
    only: { type: "string", default: "sqlite,postgres" },
    scenario: { type: "string", default: "reads" },
    readers: { type: "string", default: "8" },
    seconds: { type: "string", default: "10" },
    connections: { type: "string", default: "10" }
  }
})
if (values.scenario !== "reads" && values.scenario !== "push-during-reads") {
  throw new Error(`unknown --scenario ${values.scenario} (reads, push-during-reads)`)
}
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

/**
 * Push p99 without readers, then while `readers` clients read the whole stream (`since=0`) in a loop, each reading
 * its body as fast as it arrives. The readers run in this process; wrk measures the pushes from its own.
 */
const pushDuringReads = async (name: string, ds: Dashstream) => {
  await fill(ds)
  const readers = Number(values.readers)
  const load = {
    url: ds.url,
    lua: postLua("/customSend", `'{"accessKey":"${ds.accessKey}","streamName":"hot","point":' .. i .. '}'`),
    connections: Number(values.connections),
    seconds: Number(values.seconds)
  }
  await wrk({ ...load, seconds: 2 })
  const quiet = await wrk(load)
  const url = `${ds.url}/api/v2/${ds.accessKey}/datastream/s0?since=0`
  let reading = true
  let reads = 0
  // node:http with the body discarded as it arrives: the readers read as fast as they can while costing the shared
  // cores as little as a client can (fetch's web streams took about a core for 8 readers, CPU the server then lacked).
  const agent = new Agent({ keepAlive: true })
  const readOnce = () =>
    new Promise<void>((resolve, reject) => {
      httpGet(url, { agent }, (res) => {
        if (res.statusCode !== 200) reject(new Error(`read answered ${res.statusCode}`))
        res.on("data", () => {})
        res.on("end", resolve)
        res.on("error", reject)
      }).on("error", reject)
    })
  const loops = Array.from({ length: readers }, async () => {
    while (reading) {
      await readOnce()
      reads++
    }
  })
  // Let every reader get past its first page before measuring.
  await new Promise((resolve) => setTimeout(resolve, 1000))
  let busy: LoadResult
  try {
    busy = await wrk(load)
  } finally {
    reading = false
  }
  await Promise.all(loops)
  agent.destroy()
  const row = (r: LoadResult) => `${r.p99.toFixed(1)} | ${r.reqPerSec.toFixed(0)}`
  console.log(
    `| ${name} | ${entries} | ${readers} | ${row(quiet)} | ${row(busy)} | ${(busy.p99 / quiet.p99).toFixed(2)} | ${reads} |` +
      (quiet.errors + busy.errors > 0 ? ` errors: ${quiet.errors} + ${busy.errors}` : "")
  )
}

const scenario = values.scenario === "reads" ? bench : pushDuringReads
if (values.scenario === "reads") {
  console.log(
    `machine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, node ${process.version}; median of ${runs} reads\n`
  )
  console.log("| target | entries | first byte ms | last byte ms | entries/s | server memory growth MiB |")
  console.log("|---|---:|---:|---:|---:|---:|")
} else {
  console.log(
    `machine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, node ${process.version}; wrk -c${values.connections} ` +
      `-d${values.seconds}s pushing single numbers, alone and while readers read the whole stream (since=0)\n`
  )
  console.log(
    "| target | entries | readers | push p99 ms, no readers | push/s, no readers | push p99 ms, with readers | " +
      "push/s, with readers | p99 ratio | reads completed |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
}
if (only.has("sqlite")) {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-read-"))
  const ds = await startDashstream(root, `sqlite:${join(dir, "read.db")}`, { widgetType: "sparkline", streams: 1 })
  await scenario("Dashstream SQLite", ds)
  await ds.stop()
  rmSync(dir, { recursive: true, force: true })
}
if (only.has("postgres")) {
  const { withTestDatabase } = await import("../lib/postgres.js")
  await withTestDatabase(async (url) => {
    const ds = await startDashstream(root, url, { widgetType: "sparkline", streams: 1 })
    await scenario("Dashstream PostgreSQL", ds)
    await ds.stop()
  })
}
