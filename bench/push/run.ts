/**
 * Push and read benchmark (issue: ingest and read performance). Starts, one after another on loopback: a bare
 * node:http JSON server (the ceiling of one Node process), InfluxDB 1.6 (the durable peer), Dashstream on SQLite
 * and Dashstream on PostgreSQL; drives each with wrk (2 threads, 50 connections) and prints req/s, points/s,
 * p50/p99 latency, errors and the server's peak RSS, with every Dashstream figure as a ratio of the ceiling and of
 * InfluxDB measured in the same run.
 *
 * Usage: pnpm bench:push [--seconds 10] [--warmup 3] [--only ceiling,influx,sqlite,postgres] [--scenarios single,spark]
 *   [--workers 1,2]
 *
 * `--scenarios` runs only some of Dashstream's scenarios (default: all): single, delta, multi, spark, latest.
 * `--workers` runs each Dashstream target once per worker count given (`serve --workers N`; default 1); the peak RSS
 * of a server with workers is the sum of its processes'. The load average is printed before and after.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { ensureDebianPackages, freePort, peakRssMiB, startProcess, stopProcess } from "../lib/proc.js"
import { getLua, type LoadResult, postLua, wrk } from "../lib/wrk.js"
import { startInflux } from "./influx.js"
import { type Dashstream, startDashstream } from "../lib/dashstream.js"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    only: { type: "string", default: "ceiling,influx,sqlite,postgres" },
    scenarios: { type: "string", default: "single,delta,multi,spark,latest" },
    workers: { type: "string", default: "1" }
  }
})
const workerCounts = values.workers.split(",").map(Number)
const loadBefore = loadavg()[0]!
const seconds = Number(values.seconds)
const warmup = Number(values.warmup)
const only = new Set(values.only.split(","))
const scenarios = new Set(values.scenarios.split(","))
const root = join(import.meta.dirname, "..", "..")

interface Row {
  readonly target: string
  readonly scenario: string
  readonly pointsPerRequest: number
  readonly result: LoadResult
  readonly rssMiB: number
}
const rows: Array<Row> = []

const measure = async (
  target: string,
  scenario: string,
  pointsPerRequest: number,
  pid: number,
  url: string,
  lua: string
): Promise<void> => {
  if (warmup > 0) await wrk({ url, lua, seconds: warmup })
  const result = await wrk({ url, lua, seconds })
  const row = { target, scenario, pointsPerRequest, result, rssMiB: treePeakRssMiB(pid) }
  rows.push(row)
  console.error(
    `${target.padEnd(20)} ${scenario.padEnd(26)} ${result.reqPerSec.toFixed(0).padStart(8)} req/s  p99 ${result.p99.toFixed(1)} ms  errors ${result.errors}`
  )
}

/** The peak RSS of `pid` and of its child processes (a `serve --workers` primary and its workers), in MiB. */
function treePeakRssMiB(pid: number): number {
  let children: Array<number> = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number)
  } catch {
    // no children file: just the process
  }
  return children.reduce((sum, child) => sum + peakRssMiB(child), peakRssMiB(pid))
}

ensureDebianPackages([
  { command: "wrk", pkg: "wrk" },
  { command: "influxd", pkg: "influxdb" }
])

if (only.has("ceiling")) {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = await startProcess(
    process.execPath,
    [join(import.meta.dirname, "ceiling.mjs"), String(port)],
    async () => (await fetch(url, { method: "POST", body: "{}" })).ok
  )
  await measure(
    "node:http ceiling",
    "single point",
    1,
    child.pid!,
    url,
    postLua("/", `'{"accessKey":"k","streamName":"s' .. (i % 100) .. '","point":' .. i .. '}'`)
  )
  await stopProcess(child)
}

if (only.has("influx")) {
  const influx = await startInflux()
  const pid = influx.process.pid!
  await measure(
    "InfluxDB 1.6",
    "single point",
    1,
    pid,
    influx.url,
    postLua("/write?db=bench", `'m,stream=s' .. (i % 100) .. ' value=' .. i`, "text/plain")
  )
  const batch = Array.from({ length: 1000 }, (_, k) => `m,stream=s${k} value=${k}`).join("\\n")
  await measure(
    "InfluxDB 1.6",
    "1,000-point batches",
    1000,
    pid,
    influx.url,
    postLua("/write?db=bench", `"${batch}"`, "text/plain")
  )
  await influx.stop()
}

const dashstreamScenarios = async (name: string, ds: Dashstream): Promise<void> => {
  const key = ds.accessKey
  const pid = ds.pid
  if (scenarios.has("single")) {
    await measure(
      name,
      "single point",
      1,
      pid,
      ds.url,
      postLua("/customSend", `'{"accessKey":"${key}","streamName":"s' .. (i % 100) .. '","point":' .. i .. '}'`)
    )
  }
  if (scenarios.has("delta")) {
    await measure(
      name,
      "delta, one hot stream",
      1,
      pid,
      ds.url,
      postLua("/customSend", `'{"accessKey":"${key}","streamName":"hot","point":{"delta":1}}'`)
    )
  }
  // Built in a loop: LuaJIT refuses one expression of 200 concatenations ("too many syntax levels").
  const multi = `local function multi(i)
  local parts = {}
  for k = 0, 99 do parts[#parts + 1] = '{"streamName":"s' .. k .. '","point":' .. i .. '}' end
  return '{"accessKey":"${key}","streams":[' .. table.concat(parts, ",") .. ']}'
end`
  if (scenarios.has("multi")) {
    await measure(
      name,
      "100-stream push",
      100,
      pid,
      ds.url,
      postLua("/customSend", "multi(i)", "application/json", multi)
    )
  }
  // 1,000 timestamped points to one sparkline per request. Each wrk thread numbers its requests from 1, so the
  // thread's id (set by `setup`) keeps the two threads' timestamps apart, and the start time (10^7 s apart per
  // second) those of the warm-up and the measured run: every point is a new entry, not a replacement.
  const spark = `local threads = 0
setup = function(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
local start = (os.time() % 400) * 10000000
local function spark(i)
  local parts = {}
  local base = start + (i * 2 + tid) * 1000
  for k = 0, 999 do parts[#parts + 1] = '{"number":' .. k .. ',"timestamp":' .. (base + k) .. '}' end
  return '{"accessKey":"${key}","streamName":"spark","point":[' .. table.concat(parts, ",") .. ']}'
end`
  if (scenarios.has("spark")) {
    await measure(
      name,
      "1,000 timestamped points",
      1000,
      pid,
      ds.url,
      postLua("/customSend", "spark(i)", "application/json", spark)
    )
  }
  if (scenarios.has("latest")) {
    await measure(name, "latest read, no since", 1, pid, ds.url, getLua(`"/api/v2/${key}/datastream/s" .. (i % 100)`))
  }
}

const named = (name: string, workers: number) => (workers === 1 ? name : `${name}, ${workers} workers`)

for (const workers of workerCounts) {
  if (only.has("sqlite")) {
    const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-"))
    const ds = await startDashstream(root, `sqlite:${join(dir, "bench.db")}`, {
      extraArgs: ["--workers", String(workers)]
    })
    await dashstreamScenarios(named("Dashstream SQLite", workers), ds)
    await ds.stop()
    rmSync(dir, { recursive: true, force: true })
  }

  if (only.has("postgres")) {
    const { withTestDatabase } = await import("../lib/postgres.js")
    await withTestDatabase(async (url) => {
      const ds = await startDashstream(root, url, { extraArgs: ["--workers", String(workers)] })
      await dashstreamScenarios(named("Dashstream PostgreSQL", workers), ds)
      await ds.stop()
    })
  }
}

// ---- report ----
const find = (target: string, scenario: string) => rows.find((r) => r.target === target && r.scenario === scenario)
const ceiling = find("node:http ceiling", "single point")
const influxSingle = find("InfluxDB 1.6", "single point")
const influxBatch = find("InfluxDB 1.6", "1,000-point batches")
const ratio = (a: number, b: number | undefined) => (b === undefined ? "-" : (a / b).toFixed(2))

console.log(
  `\nmachine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, node ${process.version}; wrk -t2 -c50 -d${seconds}s after a ${warmup}s warm-up; ` +
    `1-minute load average ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after\n`
)
console.log(
  "| target | scenario | req/s | points/s | p50 ms | p99 ms | errors | peak RSS MiB | req/s ÷ ceiling | points/s ÷ InfluxDB |"
)
console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for (const r of rows) {
  const points = r.result.reqPerSec * r.pointsPerRequest
  const isDs = r.target.startsWith("Dashstream")
  const influxRef = r.pointsPerRequest > 1 ? influxBatch : influxSingle
  console.log(
    `| ${r.target} | ${r.scenario} | ${r.result.reqPerSec.toFixed(0)} | ${points.toFixed(0)} | ${r.result.p50.toFixed(2)} | ${r.result.p99.toFixed(2)} | ${r.result.errors} | ${r.rssMiB.toFixed(0)} | ${isDs ? ratio(r.result.reqPerSec, ceiling?.result.reqPerSec) : "-"} | ${isDs && !r.scenario.startsWith("latest") && influxRef ? ratio(points, influxRef.result.reqPerSec * influxRef.pointsPerRequest) : "-"} |`
  )
}
