/**
 * Push and read benchmark. Starts, one after another on loopback: a bare node:http server (the ceiling of one Node
 * process), InfluxDB 1.6 (the durable peer), VictoriaMetrics (the fastest peer on line protocol, which answers before
 * its data is durable; line protocol loads only), Dashstream on SQLite and Dashstream on PostgreSQL; drives each with
 * wrk (2 threads, 50 connections) and prints req/s, points/s, p50/p99 latency, errors, the server's peak RSS and CPU
 * per request, with every Dashstream figure as a ratio of the ceiling and of InfluxDB measured in the same run.
 *
 * Usage: pnpm bench:push [--seconds 10] [--warmup 3] [--only ceiling,influx,victoria,sqlite,postgres]
 *   [--scenarios single,spark]
 *   [--workers 1,2] [--rounds 3] [--base packages/server/.tmp/<build>] [--streams 100]
 *
 * `--scenarios` runs only some of the scenarios (default: all): single, delta, multi, spark, latest, lp, lp100,
 * telegraf; InfluxDB runs only the loads the chosen ones compare with. `lp`, `lp100` and `telegraf` (docs/api.md
 * section 13.1, see `lineProtocol.ts`) send the same line protocol bodies to the ceiling, InfluxDB's and
 * VictoriaMetrics' `/write?db=bench` and Dashstream's `/write?db=x&p=<key>`; `telegraf`'s summary gives the server's
 * CPU per skipped field value. The ceiling is sent every chosen scenario's requests, and the summary table prints
 * beside each scenario's ratio the same rounds' ceiling on those requests (its req/s and CPU per request) and
 * Dashstream's CPU per request above the ceiling's: the part of a request's cost that is Dashstream's own, which a
 * slower or busier machine does not hide (its ceiling falls too).
 * VictoriaMetrics is installed from Debian's package when missing; where that cannot be had, the report says so.
 * `--workers` runs each Dashstream target once per worker count given (`serve --workers N`; default 1); the peak RSS
 * of a server with workers is the sum of its processes'. The load average is printed before and after.
 * `--rounds N` (default 1) measures every target N times in turn (ceiling, InfluxDB, SQLite, PostgreSQL, then again),
 * each Dashstream figure compared with InfluxDB's of the same round, and prints each ratio's median over the rounds:
 * on a shared machine whose neighbours come and go, a run's targets minutes apart see different machines, and the
 * median of alternating rounds is what the push targets are judged by.
 * `--base <dir>` runs each Dashstream target a second time in every round, on the bundle in `dir` (another build's
 * `packages/server/bundle`, copied to a folder inside the repository such as `packages/server/.tmp/`, so its packages
 * resolve), named `(base)`: two builds compared in the same run.
 * `--streams N` (default 100) spreads `single` and `latest` over the widgets `s0`..`s<N-1>`: a push to each of 1,000
 * streams finds what is remembered per stream (widgets, `last_ts`) ten times less often fresh than one to each of 100.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { ensureDebianPackages, freePort, peakRssMiB, startProcess, stopProcess, treeCpuMicros } from "../lib/proc.js"
import { getLua, type LoadResult, postLua, wrk } from "../lib/wrk.js"
import { type Peer, startInflux } from "./influx.js"
import { startVictoria, victoriaAvailable, victoriaDroppedRows } from "./victoria.js"
import {
  declaredStreams,
  fieldsPerLine,
  lineBody,
  lineCount,
  type LineLoad,
  linesLua,
  skippedPerBody
} from "./lineProtocol.js"
import { type Dashstream, startDashstream } from "../lib/dashstream.js"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    only: { type: "string", default: "ceiling,influx,victoria,sqlite,postgres" },
    scenarios: { type: "string", default: "single,delta,multi,spark,latest,lp,lp100,telegraf" },
    workers: { type: "string", default: "1" },
    rounds: { type: "string", default: "1" },
    base: { type: "string" },
    streams: { type: "string", default: "100" }
  }
})
const workerCounts = values.workers.split(",").map(Number)
const rounds = Number(values.rounds)
if (!Number.isInteger(rounds) || rounds < 1)
  throw new Error(`--rounds must be a whole number >= 1, not ${values.rounds}`)
// The round being measured (0-based): every target's scenarios run once per round, in turn (see the usage above).
let round = 0
const loadBefore = loadavg()[0]!
const seconds = Number(values.seconds)
const warmup = Number(values.warmup)
const only = new Set(values.only.split(","))
const scenarios = new Set(values.scenarios.split(","))
const root = join(import.meta.dirname, "..", "..")
// How many streams `single` and `latest` spread over (`s0`.. of every Dashstream server).
const streams = Number(values.streams)
if (!Number.isInteger(streams) || streams < 1)
  throw new Error(`--streams must be a whole number >= 1, not ${values.streams}`)

interface Row {
  readonly target: string
  readonly scenario: string
  readonly pointsPerRequest: number
  readonly result: LoadResult
  readonly rssMiB: number
  /** The server's CPU time (user + system, all its processes) per request of the measured run, microseconds. */
  readonly cpuMicros: number
  /** The round it was measured in (0-based, see `--rounds`). */
  readonly round: number
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
  const cpu0 = treeCpuMicros(pid)
  const result = await wrk({ url, lua, seconds })
  const cpuMicros = (treeCpuMicros(pid) - cpu0) / Math.max(1, result.requests)
  const row = { target, scenario, pointsPerRequest, result, rssMiB: treePeakRssMiB(pid), cpuMicros, round }
  rows.push(row)
  console.error(
    `${rounds > 1 ? `round ${round + 1}  ` : ""}${target.padEnd(20)} ${scenario.padEnd(26)} ${result.reqPerSec.toFixed(0).padStart(8)} req/s  p99 ${result.p99.toFixed(1)} ms  errors ${result.errors}  CPU ${cpuMicros.toFixed(0)} µs/req`
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

const ceilingRun = async (): Promise<void> => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = await startProcess(
    process.execPath,
    [join(import.meta.dirname, "ceiling.mjs"), String(port)],
    async () => (await fetch(url, { method: "POST", body: "{}" })).ok
  )
  // Every chosen load's requests (their paths ignored): JSON bodies parsed and answered 200, a read answered with a
  // small JSON, line protocol bodies read, decoded as text and answered 204: Node's own cost of such a request.
  for (const load of jsonLoads("k"))
    await measure("node:http ceiling", load.scenario, load.points, child.pid!, url, load.lua)
  for (const load of lineLoads) {
    await measure(
      "node:http ceiling",
      lineScenario[load],
      lineCount * fieldsPerLine[load],
      child.pid!,
      url,
      postLua("/write", "lines(i)", "text/plain", linesLua(load))
    )
  }
  await stopProcess(child)
}

// The line protocol scenarios: their names in the table, and the Lua of their bodies (the same for both servers).
const lineLoads: ReadonlyArray<LineLoad> = (["lp", "lp100", "telegraf"] as const).filter((l) => scenarios.has(l))
const lineScenario: Record<LineLoad, string> = {
  lp: "lp: 1,000 lines, 10 streams",
  lp100: "lp100: 1,000 lines, 100 streams",
  telegraf: "telegraf: 1,000 lines x 10 fields"
}

/** Posts one body of `load` before the run: the server must answer 204 (Dashstream: and skip what it should). */
const checkLineLoad = async (url: string, load: LineLoad, skipped?: number): Promise<void> => {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "text/plain" },
    body: lineBody(load, 999_999_999)
  })
  const said = res.headers.get("x-dashstream-skipped")
  if (res.status !== 204 || (skipped !== undefined && said !== String(skipped))) {
    throw new Error(`${load}: ${url} answered ${res.status}, skipped ${said}: ${await res.text()}`)
  }
}

const influxRun = async (): Promise<void> => {
  const influx = await startInflux()
  const pid = influx.process.pid!
  if (scenarios.has("single") || scenarios.has("delta")) {
    await measure(
      "InfluxDB 1.6",
      "single point",
      1,
      pid,
      influx.url,
      postLua("/write?db=bench", `'m,stream=s' .. (i % 100) .. ' value=' .. i`, "text/plain")
    )
  }
  if (scenarios.has("multi") || scenarios.has("spark")) {
    const batch = Array.from({ length: 1000 }, (_, k) => `m,stream=s${k} value=${k}`).join("\\n")
    await measure(
      "InfluxDB 1.6",
      "1,000-point batches",
      1000,
      pid,
      influx.url,
      postLua("/write?db=bench", `"${batch}"`, "text/plain")
    )
  }
  await peerLineLoads("InfluxDB 1.6", influx)
  await influx.stop()
}

/** A peer's runs of the line protocol loads, to its `/write?db=bench` (InfluxDB's and VictoriaMetrics'). */
const peerLineLoads = async (target: string, server: Peer): Promise<void> => {
  for (const load of lineLoads) {
    await checkLineLoad(`${server.url}/write?db=bench`, load)
    await measure(
      target,
      lineScenario[load],
      lineCount * fieldsPerLine[load],
      server.process.pid!,
      server.url,
      postLua("/write?db=bench", "lines(i)", "text/plain", linesLua(load))
    )
  }
}

/** VictoriaMetrics on the line protocol loads, when it can run here (see `victoriaAvailable`). */
const victoriaRun = async (): Promise<void> => {
  if (lineLoads.length === 0) return
  if (!victoriaAvailable()) {
    victoriaMissing = true
    return
  }
  const vm = await startVictoria()
  await peerLineLoads("VictoriaMetrics", vm)
  const dropped = await victoriaDroppedRows(vm.url)
  if (dropped > 0) throw new Error(`VictoriaMetrics dropped ${dropped} rows (outside its retention): figures void`)
  await vm.stop()
}
// Set when VictoriaMetrics could not be installed: the report says it was left out.
let victoriaMissing = false

/**
 * The JSON loads chosen by `--scenarios` (all but the line protocol ones), for the access key `key`: their names in
 * the tables, points per request and wrk Lua. Dashstream and the ceiling are sent the same requests.
 */
const jsonLoads = (
  key: string
): Array<{ readonly scenario: string; readonly points: number; readonly lua: string }> => {
  // Built in a loop: LuaJIT refuses one expression of 200 concatenations ("too many syntax levels").
  const multi = `local function multi(i)
  local parts = {}
  for k = 0, 99 do parts[#parts + 1] = '{"streamName":"s' .. k .. '","point":' .. i .. '}' end
  return '{"accessKey":"${key}","streams":[' .. table.concat(parts, ",") .. ']}'
end`
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
  const all = [
    {
      id: "single",
      scenario: "single point",
      points: 1,
      lua: postLua(
        "/customSend",
        `'{"accessKey":"${key}","streamName":"s' .. (i % ${streams}) .. '","point":' .. i .. '}'`
      )
    },
    {
      id: "delta",
      scenario: "delta, one hot stream",
      points: 1,
      lua: postLua("/customSend", `'{"accessKey":"${key}","streamName":"hot","point":{"delta":1}}'`)
    },
    {
      id: "multi",
      scenario: "100-stream push",
      points: 100,
      lua: postLua("/customSend", "multi(i)", "application/json", multi)
    },
    {
      id: "spark",
      scenario: "1,000 timestamped points",
      points: 1000,
      lua: postLua("/customSend", "spark(i)", "application/json", spark)
    },
    {
      id: "latest",
      scenario: "latest read, no since",
      points: 1,
      lua: getLua(`"/api/v2/${key}/datastream/s" .. (i % ${streams})`)
    }
  ]
  return all.filter((load) => scenarios.has(load.id))
}

const dashstreamScenarios = async (name: string, ds: Dashstream): Promise<void> => {
  const key = ds.accessKey
  const pid = ds.pid
  for (const load of jsonLoads(key)) await measure(name, load.scenario, load.points, pid, ds.url, load.lua)
  for (const load of lineLoads) {
    const path = `/write?db=x&p=${key}`
    await checkLineLoad(`${ds.url}${path}`, load, skippedPerBody(load))
    await measure(
      name,
      lineScenario[load],
      lineCount * fieldsPerLine[load],
      pid,
      ds.url,
      postLua(path, "lines(i)", "text/plain", linesLua(load))
    )
  }
}

/** The line protocol loads' streams, declared as sparklines (docs/api.md section 13.1: only declared streams are written). */
const widgets = declaredStreams.map((streamName) => ({ streamName, type: "sparkline" }))

const named = (name: string, workers: number) => (workers === 1 ? name : `${name}, ${workers} workers`)

/**
 * The builds each Dashstream target runs, in turn: this checkout's bundle, then with `--base <dir>` the bundle in
 * `dir` (another build's `packages/server/bundle`, copied inside the repository so that its packages resolve), named
 * `(base)`: an A/B of two builds in the same rounds. Every other round runs them in the other order, so that neither
 * always follows the peers (whose data, just deleted, the disk may still be writing back).
 */
const builds: ReadonlyArray<{ readonly suffix: string; readonly entry?: string }> = [
  { suffix: "" },
  ...(values.base === undefined ? [] : [{ suffix: " (base)", entry: join(values.base, "bin.js") }])
]

const dashstreamRun = async (workers: number): Promise<void> => {
  const inTurn = round % 2 === 0 ? builds : [...builds].reverse()
  for (const build of inTurn) {
    const options = {
      extraArgs: ["--workers", String(workers)],
      streams,
      widgets,
      ...(build.entry ? { entry: build.entry } : {})
    }
    if (only.has("sqlite")) {
      const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-"))
      const ds = await startDashstream(root, `sqlite:${join(dir, "bench.db")}`, options)
      await dashstreamScenarios(named(`Dashstream SQLite${build.suffix}`, workers), ds)
      await ds.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }

  if (only.has("postgres")) {
    const { withTestDatabase } = await import("../lib/postgres.js")
    for (const build of inTurn) {
      await withTestDatabase(async (url) => {
        const options = {
          extraArgs: ["--workers", String(workers)],
          streams,
          widgets,
          ...(build.entry ? { entry: build.entry } : {})
        }
        const ds = await startDashstream(root, url, options)
        await dashstreamScenarios(named(`Dashstream PostgreSQL${build.suffix}`, workers), ds)
        await ds.stop()
      })
    }
  }
}

for (round = 0; round < rounds; round++) {
  if (only.has("ceiling")) await ceilingRun()
  if (only.has("influx")) await influxRun()
  if (only.has("victoria")) await victoriaRun()
  for (const workers of workerCounts) await dashstreamRun(workers)
}

// ---- report ----
const find = (target: string, scenario: string, inRound: number) =>
  rows.find((r) => r.target === target && r.scenario === scenario && r.round === inRound)
const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}
const ratio = (a: number, b: number | undefined) => (b === undefined ? "-" : (a / b).toFixed(2))

console.log(
  `\nmachine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, node ${process.version}; wrk -t2 -c50 -d${seconds}s after a ${warmup}s warm-up; ` +
    `1-minute load average ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after\n`
)
const lineScenarios = new Set(Object.values(lineScenario))
/**
 * The InfluxDB row a Dashstream row is compared with, of the same round: the same bodies for line protocol, else the
 * nearest load.
 */
const influxRefOf = (r: Row): Row | undefined =>
  lineScenarios.has(r.scenario)
    ? find("InfluxDB 1.6", r.scenario, r.round)
    : r.scenario.startsWith("latest")
      ? undefined
      : find("InfluxDB 1.6", r.pointsPerRequest > 1 ? "1,000-point batches" : "single point", r.round)
const pointsPerSec = (r: Row) => r.result.reqPerSec * r.pointsPerRequest
const roundColumn = rounds > 1
console.log(
  (roundColumn ? "| round " : "") +
    "| target | scenario | req/s | points/s | p50 ms | p99 ms | errors | peak RSS MiB | server CPU µs/req | req/s ÷ ceiling | points/s ÷ InfluxDB |"
)
console.log(`${roundColumn ? "|---:" : ""}|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|`)
for (const r of rows) {
  const isDs = r.target.startsWith("Dashstream")
  const influxRef = isDs ? influxRefOf(r) : undefined
  const ceiling = find("node:http ceiling", r.scenario, r.round)
  console.log(
    `${roundColumn ? `| ${r.round + 1} ` : ""}| ${r.target} | ${r.scenario} | ${r.result.reqPerSec.toFixed(0)} | ${pointsPerSec(r).toFixed(0)} | ${r.result.p50.toFixed(2)} | ${r.result.p99.toFixed(2)} | ${r.result.errors} | ${r.rssMiB.toFixed(0)} | ${r.cpuMicros.toFixed(0)} | ${isDs ? ratio(r.result.reqPerSec, ceiling?.result.reqPerSec) : "-"} | ${influxRef ? ratio(pointsPerSec(r), pointsPerSec(influxRef)) : "-"} |`
  )
}
/**
 * The ratios of `target`'s `scenario` to InfluxDB's (points/s; to `peer`'s same scenario when given), one per round
 * that measured both, in round order.
 */
function ratiosOf(target: string, scenario: string, peer?: string): Array<number> {
  const out: Array<number> = []
  for (const r of rows) {
    if (r.target !== target || r.scenario !== scenario) continue
    const ref = peer === undefined ? influxRefOf(r) : find(peer, scenario, r.round)
    if (ref !== undefined) out.push(pointsPerSec(r) / pointsPerSec(ref))
  }
  return out
}
/** `, median of 3 rounds: 0.91, 1.02, 1.07` when there were several rounds, else nothing. */
const roundsNote = (xs: ReadonlyArray<number>): string =>
  xs.length > 1 ? `, median of ${xs.length} rounds: ${xs.map((x) => x.toFixed(2)).join(", ")}` : ""
/** `0.95 (0.91-1.07)`: the median of `xs`, with their range when there are several; `-` when there are none. */
const medianCell = (xs: ReadonlyArray<number>, digits: number): string =>
  xs.length === 0
    ? "-"
    : median(xs).toFixed(digits) +
      (xs.length > 1 ? ` (${Math.min(...xs).toFixed(digits)}-${Math.max(...xs).toFixed(digits)})` : "")
// Each Dashstream scenario's ratio beside the same rounds' node:http ceiling on the same requests (its req/s and CPU
// per request) and Dashstream's CPU per request above the ceiling's: the part of a request's cost that is
// Dashstream's own. A slower or busier machine lowers the ceiling too, which the ratios alone would not show.
console.log(
  `\nsummary${rounds > 1 ? `, medians of ${rounds} rounds (range)` : ""}, beside the node:http ceiling on the same requests\n` +
    "| target | scenario | points/s ÷ InfluxDB | ceiling req/s | ceiling CPU µs/req | CPU µs/req | µs/req above the ceiling | req/s ÷ ceiling |\n" +
    "|---|---|---:|---:|---:|---:|---:|---:|"
)
for (const first of rows.filter((r) => r.target.startsWith("Dashstream") && r.round === 0)) {
  const own = rows.filter((r) => r.target === first.target && r.scenario === first.scenario)
  const pairs = own.flatMap((r) => {
    const c = find("node:http ceiling", r.scenario, r.round)
    return c === undefined ? [] : [{ r, c }]
  })
  const cells = [
    medianCell(ratiosOf(first.target, first.scenario), 2),
    medianCell(
      pairs.map((p) => p.c.result.reqPerSec),
      0
    ),
    medianCell(
      pairs.map((p) => p.c.cpuMicros),
      0
    ),
    medianCell(
      own.map((r) => r.cpuMicros),
      0
    ),
    medianCell(
      pairs.map((p) => p.r.cpuMicros - p.c.cpuMicros),
      0
    ),
    medianCell(
      pairs.map((p) => p.r.result.reqPerSec / p.c.result.reqPerSec),
      2
    )
  ]
  console.log(`| ${first.target} | ${first.scenario} | ${cells.join(" | ")} |`)
}
if (lineLoads.length > 0) {
  // points/s of the line protocol rows counts field values sent, skipped ones included (InfluxDB stores them all).
  console.log(`
line protocol (points = field values sent; telegraf: ${skippedPerBody("telegraf")} of them skipped per request)`)
  if (victoriaMissing)
    console.log("- VictoriaMetrics: left out, Debian's package victoria-metrics could not be installed")
  for (const load of lineLoads.filter((l) => l !== "telegraf")) {
    const vm = ratiosOf("VictoriaMetrics", lineScenario[load])
    if (vm.length > 0) {
      console.log(
        `- VictoriaMetrics, ${load}: ${median(vm).toFixed(2)}x InfluxDB${roundsNote(vm)} (not durable when answered)`
      )
    }
  }
  const targets = [...new Set(rows.filter((r) => r.target.startsWith("Dashstream")).map((r) => r.target))]
  for (const target of targets) {
    for (const load of lineLoads.filter((l) => l !== "telegraf")) {
      const scenario = lineScenario[load]
      const xs = ratiosOf(target, scenario)
      if (xs.length === 0) continue
      // The targets: >= 1.5x InfluxDB on SQLite, >= 1.0x on PostgreSQL.
      const goal = target.includes("PostgreSQL") ? 1.0 : 1.5
      const x = median(xs)
      const vm = ratiosOf(target, scenario, "VictoriaMetrics")
      console.log(
        `- ${target}, ${load}: ${x.toFixed(2)}x InfluxDB${roundsNote(xs)} (target >= ${goal.toFixed(1)}x: ` +
          `${x >= goal ? "met" : "not met"})` +
          (vm.length > 0 ? `, ${median(vm).toFixed(2)}x VictoriaMetrics` : "")
      )
    }
    // Medians over the rounds; the CPU per skipped value beyond lp's compares the two loads of the same round.
    const telegrafRows = rows.filter((r) => r.target === target && r.scenario === lineScenario.telegraf)
    if (telegrafRows.length > 0) {
      const skipped = skippedPerBody("telegraf")
      const reqPerSec = median(telegrafRows.map((r) => r.result.reqPerSec))
      const cpu = median(telegrafRows.map((r) => r.cpuMicros))
      const extra = telegrafRows.flatMap((r) => {
        const lp = find(target, lineScenario.lp, r.round)
        return lp === undefined ? [] : [(r.cpuMicros - lp.cpuMicros) / skipped]
      })
      const marginal =
        extra.length > 0 ? `, ${median(extra).toFixed(2)} µs more than lp's one-field lines per skipped value` : ""
      const of = telegrafRows.length > 1 ? ` (medians of ${telegrafRows.length} rounds)` : ""
      console.log(
        `- ${target}, telegraf: ${reqPerSec.toFixed(0)} req/s, server CPU ${cpu.toFixed(0)} µs/req = ${(cpu / skipped).toFixed(2)} µs per skipped field value (all of it counted)${marginal}${of}`
      )
    }
  }
}
