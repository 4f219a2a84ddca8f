/**
 * Scale benchmark: push and latest-read latency with 1,000,000 streams and 20,000,000 entries in the
 * database, against a near-empty one, on SQLite and PostgreSQL. Target: p99 within 1.5x of the near-empty database.
 *
 * For each backend: bulk-loads the large database (set-up, not the measurement: see `load.ts`; cached between runs in
 * `--cache-dir` for SQLite and as a database named `dashstream_scale_<sizes>` on the PostgreSQL server, reused when
 * complete), builds the baseline (`--base-streams` streams with `--base-entries` entries, rebuilt every run), starts
 * `dashstream serve` on each (decimation off) and measures with wrk, alternating baseline and large in each of
 * `--rounds` rounds:
 *
 * - push, random streams: single-number pushes, each to a stream drawn at random among all the database's streams
 *   (its account's key, its name);
 * - push, one hot stream: the same, all to the first stream;
 * - latest read, random streams: `GET /api/v2/<key>/datastream/<name>` (no since) of random streams;
 * - latest read, 1,000 streams: the same over the first 1,000 streams only (the baseline's own), in both databases:
 *   what the database's size costs when the server's caches hold what is read.
 *
 * Prints, per scenario, the median over the rounds of p99 (and p50, req/s and the server's CPU time per request) for
 * both databases and the ratio large ÷ baseline (target ≤ 1.5), the ratio of the lowest p99 of each side (a round
 * disturbed by another job on the shared machine only ever raises its p99), the load time, and the load average
 * during the measurements.
 *
 * Usage: pnpm bench:scale [--streams 1000000] [--entries 20000000] [--per-account 1000] [--only sqlite,postgres]
 *          [--seconds 10] [--warmup 3] [--rounds 5] [--connections 10] [--base-streams 1000] [--base-entries 1000]
 *          [--cache-dir <tmp>/dashstream-scale] [--fresh] [--pg-url postgres://postgres@127.0.0.1:5432/postgres]
 *          [--load-only] [--scenarios push,latest]
 *
 * `--scenarios` runs the scenarios whose names start with one of the given prefixes; `--load-only` builds (or finds)
 * the large databases and measures nothing; `--fresh` rebuilds them.
 */
import { cpus, loadavg, tmpdir } from "node:os"
import { mkdtempSync, rmSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { findTestServer } from "@dashstream/storage-postgres/testing"
import { type Dashstream, startDashstream } from "../lib/dashstream.js"
import { ensureDebianPackages, treeCpuMicros } from "../lib/proc.js"
import { type LoadResult, wrk } from "../lib/wrk.js"
import { accessKey, accountCount, describeLayout, type Layout } from "./layout.js"
import { dropPostgresDatabase, type Loaded, postgresDatabase, sqliteDatabase } from "./load.js"

const { values } = parseArgs({
  options: {
    streams: { type: "string", default: "1000000" },
    entries: { type: "string", default: "20000000" },
    "per-account": { type: "string", default: "1000" },
    only: { type: "string", default: "sqlite,postgres" },
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "3" },
    rounds: { type: "string", default: "5" },
    connections: { type: "string", default: "10" },
    "base-streams": { type: "string", default: "1000" },
    "base-entries": { type: "string", default: "1000" },
    "cache-dir": { type: "string", default: join(tmpdir(), "dashstream-scale") },
    fresh: { type: "boolean", default: false },
    "pg-url": { type: "string" },
    "load-only": { type: "boolean", default: false },
    scenarios: { type: "string" }
  }
})
const perAccount = Number(values["per-account"])
const large: Layout = { streams: Number(values.streams), entries: Number(values.entries), perAccount }
const base: Layout = { streams: Number(values["base-streams"]), entries: Number(values["base-entries"]), perAccount }
for (const l of [large, base]) {
  if (!(Number.isSafeInteger(l.streams) && l.streams > 0 && Number.isSafeInteger(l.entries) && l.entries >= 0)) {
    throw new Error(`sizes must be whole numbers, streams > 0: ${JSON.stringify(l)}`)
  }
}
const seconds = Number(values.seconds)
const warmup = Number(values.warmup)
const rounds = Number(values.rounds)
const connections = Number(values.connections)
const only = new Set(values.only.split(","))
const root = join(import.meta.dirname, "..", "..")

/** One wrk scenario: a Lua `request()` over a layout. */
interface Scenario {
  readonly name: string
  readonly lua: (l: Layout) => string
}

// Each wrk thread draws its own random sequence: `setup` numbers the threads, `init` seeds each thread's generator.
const randomStream = (l: Layout, among = l.streams) => `
local threads = 0
setup = function(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
init = function(args)
  math.randomseed(os.time() * 1000 + tid * 7919)
end
local function pick()
  local r = math.random(0, ${Math.min(among, l.streams) - 1})
  return math.floor(r / ${l.perAccount}), r % ${l.perAccount}
end`

const latestRead = (l: Layout, among: number) => `${randomStream(l, among)}
request = function()
  local a, s = pick()
  return wrk.format("GET", "/api/v2/ds_scale_" .. a .. "/datastream/s" .. s)
end`

const allScenarios: ReadonlyArray<Scenario> = [
  {
    name: "push, random streams",
    lua: (l) => `${randomStream(l)}
local i = 0
request = function()
  i = i + 1
  local a, s = pick()
  return wrk.format("POST", "/customSend", {["Content-Type"] = "application/json"},
    '{"accessKey":"ds_scale_' .. a .. '","streamName":"s' .. s .. '","point":' .. i .. '}')
end`
  },
  {
    name: "push, one hot stream",
    lua: () => `
local i = 0
request = function()
  i = i + 1
  return wrk.format("POST", "/customSend", {["Content-Type"] = "application/json"},
    '{"accessKey":"${accessKey(0)}","streamName":"s0","point":' .. i .. '}')
end`
  },
  {
    name: "latest read, random streams",
    lua: (l) => latestRead(l, l.streams)
  },
  {
    // The baseline's own streams in both databases: what the size of the database costs when the process's caches
    // (keys and widgets for 1 s, SQLite's page cache) hold what is read.
    name: "latest read, 1,000 streams",
    lua: (l) => latestRead(l, 1000)
  }
]

const scenarios = allScenarios.filter(
  (s) => values.scenarios === undefined || values.scenarios.split(",").some((name) => s.name.startsWith(name))
)

interface Measured {
  readonly result: LoadResult
  readonly load1: number
  /** The server's CPU time (user + system, all threads) during the round, per request answered, in µs. */
  readonly cpuPerRequest: number
}

interface Row {
  readonly backend: string
  readonly scenario: string
  readonly base: ReadonlyArray<Measured>
  readonly large: ReadonlyArray<Measured>
}
const rows: Array<Row> = []
const loads: Array<{ backend: string; loaded: Loaded }> = []

/** Checks that a server of `layout` answers a push and a latest read of its last stream as the load left it. */
const check = async (ds: Dashstream, l: Layout): Promise<void> => {
  const r = l.streams - 1
  const key = accessKey(Math.floor(r / l.perAccount))
  const name = `s${r % l.perAccount}`
  const read = await fetch(`${ds.url}/api/v2/${key}/datastream/${name}`)
  const body = await read.text()
  if (read.status !== 200) throw new Error(`the check read answered ${read.status}: ${body}`)
  const push = await fetch(`${ds.url}/customSend`, {
    method: "POST",
    body: JSON.stringify({ accessKey: key, streamName: name, point: 1 })
  })
  if (push.status !== 200) throw new Error(`the check push answered ${push.status}: ${await push.text()}`)
}

const measureBackend = async (backend: string, dbs: { base: string; large: string }): Promise<void> => {
  const options = { setup: false, extraArgs: ["--decimate-at", "off"] }
  const servers = {
    base: await startDashstream(root, dbs.base, options),
    large: await startDashstream(root, dbs.large, options)
  }
  try {
    await check(servers.base, base)
    await check(servers.large, large)
    for (const scenario of scenarios) {
      const measured: Record<"base" | "large", Array<Measured>> = { base: [], large: [] }
      for (let round = 0; round < rounds; round++) {
        // Alternate which database goes first, so a drift in the machine's load hits both alike.
        const order: Array<"base" | "large"> = round % 2 === 0 ? ["base", "large"] : ["large", "base"]
        for (const which of order) {
          const load = {
            url: servers[which].url,
            lua: scenario.lua(which === "base" ? base : large),
            connections
          }
          if (round < 2 && warmup > 0) await wrk({ ...load, seconds: warmup })
          const load1 = loadavg()[0]!
          const cpu0 = treeCpuMicros(servers[which].pid)
          const result = await wrk({ ...load, seconds })
          const cpuPerRequest = (treeCpuMicros(servers[which].pid) - cpu0) / Math.max(1, result.requests)
          measured[which].push({ result, load1, cpuPerRequest })
          console.error(
            `${backend.padEnd(10)} ${scenario.name.padEnd(28)} ${which.padEnd(5)} round ${round + 1}: ` +
              `${result.reqPerSec.toFixed(0).padStart(6)} req/s  p50 ${result.p50.toFixed(2)} ms  ` +
              `p99 ${result.p99.toFixed(2)} ms  cpu ${cpuPerRequest.toFixed(0)} µs/req  errors ${result.errors}  ` +
              `load ${load1.toFixed(2)}`
          )
        }
      }
      rows.push({ backend, scenario: scenario.name, base: measured.base, large: measured.large })
    }
  } finally {
    await servers.base.stop()
    await servers.large.stop()
  }
}

const timed = async <A>(what: string, f: () => Promise<A>): Promise<A> => {
  console.error(`${what} ...`)
  const started = performance.now()
  const a = await f()
  console.error(`${what}: ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return a
}

if (!values["load-only"]) ensureDebianPackages([{ command: "wrk", pkg: "wrk" }])

if (only.has("sqlite")) {
  const loaded = await timed(`SQLite, ${describeLayout(large)}`, () =>
    sqliteDatabase(values["cache-dir"], large, values.fresh)
  )
  loads.push({ backend: "SQLite", loaded })
  if (!values["load-only"]) {
    const dir = mkdtempSync(join(tmpdir(), "dashstream-scale-base-"))
    try {
      const baseline = await sqliteDatabase(dir, base, true)
      await measureBackend("SQLite", { base: baseline.db, large: loaded.db })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
}

if (only.has("postgres")) {
  const server = await findTestServer(values["pg-url"] === undefined ? {} : { serverUrl: values["pg-url"] })
  if (server === undefined) throw new Error("no PostgreSQL server")
  try {
    const loaded = await timed(`PostgreSQL, ${describeLayout(large)}`, () =>
      postgresDatabase(server.url, large, values.fresh)
    )
    loads.push({ backend: "PostgreSQL", loaded })
    if (!values["load-only"]) {
      const baseline = await postgresDatabase(server.url, base, true)
      try {
        await measureBackend("PostgreSQL", { base: baseline.db, large: loaded.db })
      } finally {
        await dropPostgresDatabase(server.url, base)
      }
    }
  } finally {
    await server.stop()
  }
}

// ---- report ----
const median = (xs: ReadonlyArray<number>) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}
const fmt = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(2))

console.log(
  `\nmachine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, node ${process.version}; wrk -t2 -c${connections} ` +
    `-d${seconds}s, ${rounds} rounds alternating the databases, medians over the rounds\n`
)
console.log(
  `large: ${describeLayout(large)} in ${accountCount(large).toLocaleString("en-US")} accounts; baseline: ${describeLayout(base)}\n`
)
console.log("| backend | load of the large database | seconds |")
console.log("|---|---|---:|")
for (const { backend, loaded } of loads) {
  console.log(
    `| ${backend} | ${loaded.cached ? "cached (time of the load that built it)" : "built in this run"} | ${loaded.loadSeconds.toFixed(0)} |`
  )
}
if (rows.length > 0) {
  console.log(
    "\n| backend | scenario | baseline p99 ms | large p99 ms | p99 ratio (≤ 1.5) | p99 ratio, best rounds | " +
      "baseline p50 ms | large p50 ms | p50 ratio | baseline req/s | large req/s | " +
      "baseline server CPU µs/req | large server CPU µs/req | errors | load average (1 min) |"
  )
  console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
  for (const r of rows) {
    const m = (xs: ReadonlyArray<Measured>, f: (x: LoadResult) => number) => median(xs.map((x) => f(x.result)))
    const ratio = m(r.large, (x) => x.p99) / m(r.base, (x) => x.p99)
    // The lowest p99 of each side: a round another job on the machine disturbed only ever raises its p99.
    const lowest = (xs: ReadonlyArray<Measured>) => Math.min(...xs.map((x) => x.result.p99))
    const best = lowest(r.large) / lowest(r.base)
    const errors = [...r.base, ...r.large].reduce((n, x) => n + x.result.errors, 0)
    const loadRange = [...r.base, ...r.large].map((x) => x.load1)
    console.log(
      `| ${r.backend} | ${r.scenario} | ${fmt(m(r.base, (x) => x.p99))} | ${fmt(m(r.large, (x) => x.p99))} | ` +
        `${ratio.toFixed(2)}${ratio <= 1.5 ? "" : " (not met)"} | ${best.toFixed(2)} | ${fmt(m(r.base, (x) => x.p50))} | ` +
        `${fmt(m(r.large, (x) => x.p50))} | ${(m(r.large, (x) => x.p50) / m(r.base, (x) => x.p50)).toFixed(2)} | ` +
        `${m(r.base, (x) => x.reqPerSec).toFixed(0)} | ` +
        `${m(r.large, (x) => x.reqPerSec).toFixed(0)} | ` +
        `${median(r.base.map((x) => x.cpuPerRequest)).toFixed(0)} | ` +
        `${median(r.large.map((x) => x.cpuPerRequest)).toFixed(0)} | ${errors} | ` +
        `${Math.min(...loadRange).toFixed(1)}-${Math.max(...loadRange).toFixed(1)} |`
    )
  }
}
