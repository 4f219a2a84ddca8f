/**
 * The `serve --workers N` study (`pnpm bench:workers`): measures, on loopback, today's `dashstream serve`
 * (one process) against the two prototypes of `bench/workers/proto.ts` with N workers, and the bare node:http
 * ceiling with N processes, under the same wrk load as `bench:push` (2 threads, 50 connections, `--seconds` after a
 * `--warmup`): single-point pushes to 100 streams, and `{"delta":1}` to one hot stream. Every configuration runs on a
 * fresh SQLite file, `--rounds` times, the order reversed every other round so that a drift in the machine's load
 * does not favour one side. Prints, per run: req/s, p50/p99, errors (non-2xx and socket errors), the server's CPU
 * time per request (all its processes), the mean group size, for design (a) the `BEGIN IMMEDIATE`s that slept in
 * SQLite's busy handler (count, total and longest), and the 1-minute load average before and after; then the mean
 * of the rounds per configuration with its ratio to `dashstream serve`.
 *
 * Usage: pnpm bench:workers [--rounds 2] [--seconds 10] [--warmup 3] [--workers 1,2] [--only serve,ceiling,a,b]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { startDashstream } from "../lib/dashstream.js"
import { ensureDebianPackages, freePort, startProcess, stopProcess } from "../lib/proc.js"
import { type LoadResult, postLua, wrk } from "../lib/wrk.js"

const { values } = parseArgs({
  options: {
    rounds: { type: "string", default: "2" },
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    workers: { type: "string", default: "1,2" },
    only: { type: "string", default: "serve,ceiling,a,b" }
  }
})
const rounds = Number(values.rounds)
const seconds = Number(values.seconds)
const warmup = Number(values.warmup)
const workerCounts = values.workers.split(",").map(Number)
const only = new Set(values.only.split(","))
const root = join(import.meta.dirname, "..", "..")
const proto = join(import.meta.dirname, "proto.ts")

/** Counters of the prototypes (see `Stats` in proto.ts); all zero for `dashstream serve`. */
interface Stats {
  readonly begins: number
  readonly busyWaits: number
  readonly busyMs: number
  readonly busyMaxMs: number
  readonly beginFailures: number
  readonly groups: number
  readonly calls: number
  readonly ipcMessages: number
  readonly ipcCalls: number
}

interface Config {
  readonly label: string
  readonly design: "serve" | "ceiling" | "a" | "b"
  readonly workers: number
}

interface Server {
  readonly url: string
  readonly accessKey: string
  readonly pids: ReadonlyArray<number>
  readonly stats: () => Promise<Stats | undefined>
  readonly reset: () => Promise<void>
  readonly stop: () => Promise<void>
}

interface Row {
  readonly round: number
  readonly config: Config
  readonly scenario: string
  readonly result: LoadResult
  readonly cpuMicrosPerRequest: number
  readonly stats: Stats | undefined
  readonly load: readonly [number, number]
}

const labels: Record<Config["design"], string> = {
  serve: "dashstream serve today (one process)",
  ceiling: "node:http ceiling (parse, 200)",
  a: "(a) every worker writes the file",
  b: "(b) workers + one writer (primary)"
}

const configs: Array<Config> = []
if (only.has("serve")) configs.push({ label: labels.serve, design: "serve", workers: 1 })
for (const design of ["ceiling", "a", "b"] as const) {
  if (!only.has(design)) continue
  for (const n of workerCounts) configs.push({ label: labels[design], design, workers: n })
}

// CPU time (user + system) of the processes, in microseconds (clock ticks of 10 ms).
const ticksPerSecond = 100
const cpuMicros = (pids: ReadonlyArray<number>): number => {
  let ticks = 0
  for (const pid of pids) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      ticks += Number(fields[11]) + Number(fields[12])
    } catch {
      // gone
    }
  }
  return (ticks / ticksPerSecond) * 1e6
}

const startServer = async (config: Config, dir: string): Promise<Server> => {
  const db = join(dir, "bench.db")
  if (config.design === "serve") {
    const ds = await startDashstream(root, `sqlite:${db}`)
    return {
      url: ds.url,
      accessKey: ds.accessKey,
      pids: [ds.pid],
      stats: async () => undefined,
      reset: async () => {},
      stop: ds.stop
    }
  }
  const port = await freePort()
  const control = `http://127.0.0.1:${await freePort()}`
  const child = await startProcess(
    process.execPath,
    [
      // The workspace packages from source, as the other benchmarks run them (not a possibly stale dist/).
      "--conditions=@dashstream/source",
      "--import",
      "tsx",
      proto,
      "--design",
      config.design,
      "--workers",
      String(config.workers),
      "--db",
      db,
      "--port",
      String(port),
      "--control",
      control.slice(control.lastIndexOf(":") + 1)
    ],
    async () => (await fetch(`${control}/info`)).ok,
    { timeoutMs: 120_000 }
  )
  const info = (await (await fetch(`${control}/info`)).json()) as { accessKey: string; pids: Array<number> }
  return {
    url: `http://127.0.0.1:${port}`,
    accessKey: info.accessKey,
    pids: info.pids,
    stats: async () => (await (await fetch(`${control}/stats`)).json()) as Stats,
    reset: async () => {
      await fetch(`${control}/reset`)
    },
    stop: () => stopProcess(child)
  }
}

const rows: Array<Row> = []

const measure = async (round: number, config: Config, server: Server, scenario: string, lua: string) => {
  if (warmup > 0) await wrk({ url: server.url, lua, seconds: warmup })
  await server.reset()
  const load0 = loadavg()[0]!
  const cpu0 = cpuMicros(server.pids)
  const result = await wrk({ url: server.url, lua, seconds })
  const cpu1 = cpuMicros(server.pids)
  const stats = await server.stats()
  const row: Row = {
    round,
    config,
    scenario,
    result,
    cpuMicrosPerRequest: (cpu1 - cpu0) / Math.max(1, result.requests),
    stats,
    load: [load0, loadavg()[0]!]
  }
  rows.push(row)
  console.error(
    `round ${round} ${config.label} N=${config.workers} ${scenario}: ${result.reqPerSec.toFixed(0)} req/s, p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, errors ${result.errors}${stats && stats.begins > 0 ? `, busy waits ${stats.busyWaits} (${stats.busyMs.toFixed(0)} ms)` : ""}, load ${load0.toFixed(2)}`
  )
}

ensureDebianPackages([{ command: "wrk", pkg: "wrk" }])
const loadAtStart = loadavg()
const startedAt = new Date()

for (let round = 1; round <= rounds; round++) {
  const order = round % 2 === 1 ? configs : [...configs].reverse()
  for (const config of order) {
    const dir = mkdtempSync(join(tmpdir(), "dashstream-workers-"))
    const server = await startServer(config, dir)
    try {
      const key = server.accessKey
      await measure(
        round,
        config,
        server,
        "single point, 100 streams",
        postLua("/customSend", `'{"accessKey":"${key}","streamName":"s' .. (i % 100) .. '","point":' .. i .. '}'`)
      )
      await measure(
        round,
        config,
        server,
        "delta, one hot stream",
        postLua("/customSend", `'{"accessKey":"${key}","streamName":"hot","point":{"delta":1}}'`)
      )
    } finally {
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

// ---- report ----
const f = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "-")
const busyText = (s: Stats | undefined) =>
  s === undefined || s.begins === 0
    ? "-"
    : `${s.busyWaits} of ${s.begins} (${f(s.busyMs)} ms, max ${f(s.busyMaxMs, 1)} ms)${s.beginFailures > 0 ? `, ${s.beginFailures} failed` : ""}`
const groupText = (s: Stats | undefined) => (s === undefined || s.groups === 0 ? "-" : f(s.calls / s.groups, 1))

console.log(
  `\nmachine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, node ${process.version}; ${startedAt.toISOString()}; ` +
    `wrk -t2 -c50 -d${seconds}s after a ${warmup}s warm-up, on 127.0.0.1; load average at start ${loadAtStart.map((l) => l.toFixed(2)).join(" / ")}, at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(" / ")}\n`
)
console.log(
  "| round | server | N | scenario | req/s | p50 ms | p99 ms | errors | server CPU µs/req | calls per group | BEGINs that slept (time, longest) | load 1 min before → after |"
)
console.log("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---|---|")
for (const r of rows) {
  console.log(
    `| ${r.round} | ${r.config.label} | ${r.config.workers} | ${r.scenario} | ${f(r.result.reqPerSec)} | ${f(r.result.p50, 2)} | ${f(r.result.p99, 2)} | ${r.result.errors} | ${f(r.cpuMicrosPerRequest)} | ${groupText(r.stats)} | ${busyText(r.stats)} | ${f(r.load[0], 1)} → ${f(r.load[1], 1)} |`
  )
}

const mean = (xs: ReadonlyArray<number>) => xs.reduce((a, b) => a + b, 0) / xs.length
console.log(`\nmean of ${rounds} rounds; ratio = req/s ÷ dashstream serve's mean in the same scenario\n`)
console.log("| server | N | scenario | req/s | ratio | p50 ms | p99 ms | errors | busy waits per run |")
console.log("|---|---:|---|---:|---:|---:|---:|---:|---:|")
const scenarios = [...new Set(rows.map((r) => r.scenario))]
for (const scenario of scenarios) {
  const base = rows.filter((r) => r.scenario === scenario && r.config.design === "serve")
  const baseRate = base.length > 0 ? mean(base.map((r) => r.result.reqPerSec)) : NaN
  for (const config of configs) {
    const rs = rows.filter((r) => r.scenario === scenario && r.config === config)
    if (rs.length === 0) continue
    const rate = mean(rs.map((r) => r.result.reqPerSec))
    const waits = config.design === "a" ? f(mean(rs.map((r) => r.stats?.busyWaits ?? 0))) : "-"
    console.log(
      `| ${config.label} | ${config.workers} | ${scenario} | ${f(rate)} | ${f(rate / baseRate, 2)} | ${f(mean(rs.map((r) => r.result.p50)), 2)} | ${f(mean(rs.map((r) => r.result.p99)), 2)} | ${rs.reduce((a, r) => a + r.result.errors, 0)} | ${waits} |`
    )
  }
}
