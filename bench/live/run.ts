/**
 * Live-updates benchmark (docs/api.md section 10). Three parts, each printed as a table:
 *
 * 1. Push-to-event latency at 1, 100 and 1,000 subscribers of one stream under a steady push rate (50 pushes/s for
 *    10 s after a 1 s warm-up): on SQLite (one process), and on PostgreSQL with two `dashstream serve` processes on
 *    one database, subscribers on A and pushes to B (plus, for comparison, pushes to A). Latency = arrival of the
 *    event at a subscriber minus the moment the push was sent, both on the machine's monotonic clock; p50/p99/max
 *    over every (push, subscriber) pair. Targets: p99 <= 100 ms on one process, <= 1 s across processes.
 * 2. 10,000 idle open event streams on one SQLite server (100 access keys × 100 streams, one connection each):
 *    the server's memory per connection (VmRSS after opening them minus before, each after a full garbage
 *    collection, divided by their number; target < 20 KiB; the JS heap's share beside it) and single-point push
 *    throughput to streams nobody follows, all open and none open, alternating twice (wrk, 2 threads, 50
 *    connections; target: within 10% of the throughput with none open).
 *
 * The subscribers live in a child process (`clients.ts`), so the parent's event loop only times and sends pushes.
 * The servers and that child run under `ulimit -n 65536` (or the hard limit when that is refused); the limits are
 * printed. Every server is `serve.ts`: the real `dashstream serve` with two benchmark hooks. 1,000 subscribers of one
 * stream exceed the contract's 100 open event streams per access key, so the latency servers raise that bound; the
 * idle-streams server keeps it (its streams are spread over 100 keys) and uses the other hook, a full garbage
 * collection before each memory reading.
 *
 * 3. Fan-out at the limit of one process, against a bare reference server in the same run (`fanout.ts`).
 *
 * Usage: pnpm bench:live [--quick] [--seconds 10] [--rate 50] [--subscribers 1,100,1000] [--idle 10000]
 *        [--wrk-seconds 10] [--warmup 3] [--only sqlite,postgres,idle,fanout] [--fanout-seconds 10]
 *        [--fanout-clients 2] [--fanout-subscribers 1000] [--fanout-rate 50] [--fanout-profile DIR]
 *        [--fanout-scenarios stream,dashboard,3000,10000,dashboard2000]
 * `--quick`: 3 s of pushes, 2,000 idle streams, wrk 3 s after 1 s, a tenth of the fan-out's subscribers (a smoke
 * run, not figures). `--fanout-profile`: the fan-out's Dashstream server writes a CPU profile (`--cpu-prof`) there.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { adminPost, type Dashstream, startDashstream } from "../lib/dashstream.js"
import { ensureDebianPackages } from "../lib/proc.js"
import { fanout } from "./fanout.js"
import { type LoadResult, postLua, wrk } from "../lib/wrk.js"
import {
  type Clients,
  cpuSeconds,
  nowUs,
  openFilesLimit,
  pushSteadily,
  rssKiB,
  runQueueWaitSeconds,
  sleep,
  startClients
} from "./harness.js"

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    seconds: { type: "string" },
    rate: { type: "string", default: "50" },
    subscribers: { type: "string", default: "1,100,1000" },
    idle: { type: "string" },
    "wrk-seconds": { type: "string" },
    warmup: { type: "string" },
    only: { type: "string", default: "sqlite,postgres,idle,fanout" },
    "fanout-seconds": { type: "string" },
    "fanout-clients": { type: "string", default: "2" },
    "fanout-subscribers": { type: "string" },
    "fanout-rate": { type: "string", default: "50" },
    "fanout-profile": { type: "string" },
    "fanout-scenarios": { type: "string" }
  }
})
const quick = values.quick
const seconds = Number(values.seconds ?? (quick ? "3" : "10"))
const rate = Number(values.rate)
const subscriberCounts = values.subscribers.split(",").map(Number)
const idle = Number(values.idle ?? (quick ? "2000" : "10000"))
const wrkSeconds = Number(values["wrk-seconds"] ?? (quick ? "3" : "10"))
const warmup = Number(values.warmup ?? (quick ? "1" : "3"))
const only = new Set(values.only.split(","))
const root = join(import.meta.dirname, "..", "..")
const nofile = 65536
const maxSubscribers = Math.max(...subscriberCounts)

// ---- part 1: push-to-event latency ----

interface LatencyRow {
  readonly setup: string
  readonly subscribers: number
  readonly pushes: number
  readonly pushErrors: number
  readonly n: number
  readonly missing: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly target: number
  readonly cpu: number
  readonly clientCpu: number
  /** The server's threads' time waiting on a run queue, % of the run's wall time. */
  readonly wait: number
}
const latencyRows: Array<LatencyRow> = []

const latency = async (
  clients: Clients,
  setup: string,
  subscribeTo: Dashstream,
  pushTo: Dashstream,
  key: string,
  target: number
): Promise<void> => {
  for (const n of subscriberCounts) {
    const path = `/api/v2/${key}/datastream/hot/events`
    const opened = await clients.ask<{ opened: number; statuses: Record<string, number> }>({
      cmd: "open",
      base: subscribeTo.url,
      paths: Array.from({ length: n }, () => path),
      concurrency: 50
    })
    if (opened.opened !== n) throw new Error(`${setup}: opened ${opened.opened} of ${n}: ${JSON.stringify(opened)}`)
    await pushSteadily(pushTo.url, key, rate, 1) // warm-up: every subscriber is live, the JIT is warm
    await sleep(500)
    await clients.ask({ cmd: "measure", from: nowUs() })
    const cpu0 = cpuSeconds(subscribeTo.pid)
    const clientCpu0 = cpuSeconds(clients.pid)
    const wait0 = runQueueWaitSeconds(subscribeTo.pid)
    const t0 = performance.now()
    const [pushes, pushErrors] = await pushSteadily(pushTo.url, key, rate, seconds)
    const elapsedS = (performance.now() - t0) / 1000
    const cpu = ((cpuSeconds(subscribeTo.pid) - cpu0) / elapsedS) * 100
    const clientCpu = ((cpuSeconds(clients.pid) - clientCpu0) / elapsedS) * 100
    const wait = ((runQueueWaitSeconds(subscribeTo.pid) - wait0) / elapsedS) * 100
    const r = await clients.ask<{ n: number; missing: number; p50: number; p99: number; max: number }>({
      cmd: "results",
      expected: pushes - pushErrors
    })
    await clients.ask({ cmd: "close" })
    const row = { setup, subscribers: n, pushes, pushErrors, ...r, target, cpu, clientCpu, wait }
    latencyRows.push(row)
    console.error(
      `${setup.padEnd(40)} ${String(n).padStart(5)} subscribers: p50 ${r.p50.toFixed(1)} p99 ${r.p99.toFixed(1)} ` +
        `max ${r.max.toFixed(1)} ms, n ${r.n}, missing ${r.missing}, push errors ${pushErrors}, CPU server ${cpu.toFixed(0)}% subscribers ${clientCpu.toFixed(0)}%, server waited for a CPU ${wait.toFixed(0)}%`
    )
    await sleep(1000)
  }
}

const latencyServer = (db: string, setup = true) =>
  startDashstream(root, db, {
    entry: join(import.meta.dirname, "serve.ts"),
    env: { BENCH_MAX_STREAMS_PER_KEY: String(Math.max(100, maxSubscribers)) },
    nofile,
    streams: 1,
    setup
  })

// ---- part 2: idle open event streams ----

interface IdleRow {
  readonly open: number
  readonly result: LoadResult
  /** The server's CPU time (user + system) per push during the run, microseconds. */
  readonly cpuUs: number
}
const idleRows: Array<IdleRow> = []
const idleNotes: Array<string> = []

interface Memory {
  /** VmRSS from /proc after a full garbage collection, KiB. */
  readonly rss: number
  /** V8's `heapUsed` plus `external` after it, KiB. */
  readonly heap: number
}

/** The server's memory after a full garbage collection (see `serve.ts`, `BENCH_MEMORY_FILE`). */
const memoryOf = async (pid: number, file: string): Promise<Memory> => {
  rmSync(file, { force: true })
  process.kill(pid, "SIGUSR2")
  const deadline = Date.now() + 10_000
  while (!existsSync(file)) {
    if (Date.now() > deadline) throw new Error("the server did not write its memory usage")
    await sleep(20)
  }
  // V8 gives pages back to the system in tasks after the collection: let it before reading VmRSS.
  await sleep(1000)
  const usage = JSON.parse(readFileSync(file, "utf8")) as { heapUsed: number; external: number; collected: boolean }
  if (!usage.collected) throw new Error("the server runs without --expose-gc")
  return { rss: rssKiB(pid), heap: (usage.heapUsed + usage.external) / 1024 }
}

const mib = (kib: number) => (kib / 1024).toFixed(1)

const idleStreams = async (clients: Clients): Promise<void> => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-live-"))
  const memoryFile = join(dir, "memory.json")
  // `serve.ts` without BENCH_MAX_STREAMS_PER_KEY keeps the contract's 100 per key; it adds the memory hook only.
  const ds = await startDashstream(root, `sqlite:${join(dir, "idle.db")}`, {
    entry: join(import.meta.dirname, "serve.ts"),
    nodeArgs: ["--expose-gc"],
    env: { BENCH_MEMORY_FILE: memoryFile },
    nofile
  })
  limits.idleServer = openFilesLimit(ds.pid)
  try {
    // The idle streams: `idle` of them, 100 per access key (the contract's bound per key), each its own stream.
    const perKey = 100
    const paths: Array<string> = []
    const t0 = performance.now()
    for (let a = 0; a < Math.ceil(idle / perKey); a++) {
      const account = await adminPost(ds.url, "/admin/accounts", { name: `idle${a}` })
      const names = Array.from({ length: Math.min(perKey, idle - a * perKey) }, (_, k) => `w${k}`)
      await Promise.all(
        names.map((streamName) =>
          adminPost(ds.url, `/admin/accounts/${account["id"]}/widgets`, { streamName, type: "number" })
        )
      )
      for (const name of names) paths.push(`/api/v2/${account["accessKey"]}/datastream/${name}/events`)
    }
    console.error(`idle: ${paths.length} widgets created in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    const openAll = async () => {
      const t1 = performance.now()
      const opened = await clients.ask<{ opened: number; statuses: Record<string, number> }>({
        cmd: "open",
        base: ds.url,
        paths,
        concurrency: 100
      })
      if (opened.opened !== paths.length) {
        throw new Error(`idle: opened ${opened.opened} of ${paths.length}: ${JSON.stringify(opened.statuses)}`)
      }
      return (performance.now() - t1) / 1000
    }
    const lua = postLua(
      "/customSend",
      `'{"accessKey":"${ds.accessKey}","streamName":"s' .. (i % 100) .. '","point":' .. i .. '}'`
    )
    const load = async (open: number) => {
      if (warmup > 0) await wrk({ url: ds.url, lua, seconds: warmup })
      const cpu0 = cpuSeconds(ds.pid)
      const result = await wrk({ url: ds.url, lua, seconds: wrkSeconds })
      const cpuUs = ((cpuSeconds(ds.pid) - cpu0) / result.requests) * 1e6
      idleRows.push({ open, result, cpuUs })
      console.error(
        `idle: ${String(open).padStart(5)} open: ${result.reqPerSec.toFixed(0)} req/s, p99 ${result.p99.toFixed(1)} ms, errors ${result.errors}, server CPU ${cpuUs.toFixed(0)} µs/push`
      )
    }
    const note = (text: string) => {
      idleNotes.push(text)
      console.error(`idle: ${text}`)
    }

    // Memory: after a full collection, before and after opening them, and after closing them again.
    await sleep(1000)
    const before = await memoryOf(ds.pid, memoryFile)
    const openS = await openAll()
    await sleep(2000)
    const after = await memoryOf(ds.pid, memoryFile)
    const perRss = (after.rss - before.rss) / paths.length
    const perHeap = (after.heap - before.heap) / paths.length
    note(
      `${paths.length} event streams opened in ${openS.toFixed(1)} s. Server memory after a full collection: VmRSS ` +
        `${mib(before.rss)} → ${mib(after.rss)} MiB, **${perRss.toFixed(1)} KiB per connection** (target < 20 KiB); ` +
        `JS heap + external ${mib(before.heap)} → ${mib(after.heap)} MiB, ${perHeap.toFixed(1)} KiB per connection`
    )
    // Throughput beside them, alternating with none open (the machine's noise shows in the two pairs).
    for (let round = 0; round < 2; round++) {
      if (round > 0) await openAll()
      await load(paths.length)
      const stats = await clients.ask<{ open: number; pings: number; ended: number }>({ cmd: "stats" })
      note(
        `round ${round + 1}, after the load beside them: ${stats.open} still open, ${stats.ended} ended by the server, ` +
          `${stats.pings} heartbeat pings received so far`
      )
      await clients.ask({ cmd: "close" })
      await sleep(2000)
      if (round === 0) {
        const closed = await memoryOf(ds.pid, memoryFile)
        note(
          `closed again: VmRSS ${mib(closed.rss)} MiB, JS heap + external ${mib(closed.heap)} MiB after a full collection`
        )
      }
      await load(0)
    }
  } finally {
    await ds.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}

// ---- run ----

ensureDebianPackages([{ command: "wrk", pkg: "wrk" }])
const loadAtStart = loadavg()
const clients = await startClients(nofile)
let fanoutLines: Array<string> = []
const limits = { bench: openFilesLimit("self"), clients: openFilesLimit(clients.pid), server: "?", idleServer: "?" }
try {
  if (only.has("sqlite")) {
    const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-live-"))
    const ds = await latencyServer(`sqlite:${join(dir, "live.db")}`)
    limits.server = openFilesLimit(ds.pid)
    try {
      await latency(clients, "SQLite, one process", ds, ds, ds.accessKey, 100)
    } finally {
      await ds.stop()
      rmSync(dir, { recursive: true, force: true })
    }
  }
  if (only.has("postgres")) {
    const { withTestDatabase } = await import("../lib/postgres.js")
    await withTestDatabase(async (url) => {
      const a = await latencyServer(url)
      const b = await latencyServer(url, false)
      limits.server = openFilesLimit(a.pid)
      try {
        await latency(clients, "PostgreSQL, across processes (A → B)", a, b, a.accessKey, 1000)
        await latency(clients, "PostgreSQL, one process", a, a, a.accessKey, 100)
      } finally {
        await b.stop()
        await a.stop()
      }
    })
  }
  if (only.has("idle")) await idleStreams(clients)
  if (only.has("fanout")) {
    fanoutLines = await fanout({
      root,
      nofile,
      seconds: Number(values["fanout-seconds"] ?? (quick ? "3" : "10")),
      clients: Number(values["fanout-clients"]),
      subscribers: Number(values["fanout-subscribers"] ?? (quick ? "100" : "1000")),
      rate: Number(values["fanout-rate"]),
      scale: quick ? 0.1 : 1,
      profileDir: values["fanout-profile"],
      scenarios: values["fanout-scenarios"] === undefined ? undefined : new Set(values["fanout-scenarios"].split(","))
    })
  }
} finally {
  clients.stop()
}

// ---- report ----

const ms = (x: number) => (Number.isNaN(x) ? "-" : x.toFixed(1))
console.log(
  `\nmachine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, node ${process.version}; shared with other work and ` +
    `noisy (1-minute load average ${loadAtStart[0]!.toFixed(1)} at the start, ${loadavg()[0]!.toFixed(1)} at the end): ` +
    `compare rows of one run. Open-files limit: bench ${limits.bench}, subscribers' process ${limits.clients}, ` +
    `latency servers ${limits.server}, idle-streams server ${limits.idleServer} (${nofile} asked). Subscribers: raw SSE over node:http in one child process; pushes: ${rate}/s for ` +
    `${seconds} s from the parent, one point each.\n`
)
if (latencyRows.length > 0) {
  console.log(
    "| setup | subscribers | pushes | events | missing | p50 ms | p99 ms | max ms | p99 target | CPU % server | CPU % subscribers | server run-queue wait % |"
  )
  console.log("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|")
  for (const r of latencyRows) {
    const verdict = r.p99 <= r.target ? "met" : "**missed**"
    console.log(
      `| ${r.setup} | ${r.subscribers} | ${r.pushes}${r.pushErrors > 0 ? ` (${r.pushErrors} failed)` : ""} | ${r.n} | ` +
        `${r.missing} | ${ms(r.p50)} | ${ms(r.p99)} | ${ms(r.max)} | <= ${r.target} ms: ${verdict} | ${r.cpu.toFixed(0)} | ${r.clientCpu.toFixed(0)} | ${r.wait.toFixed(0)} |`
    )
  }
  console.log("")
}
if (idleRows.length > 0) {
  const base = idleRows.filter((r) => r.open === 0)
  const baseline = base.reduce((s, r) => s + r.result.reqPerSec, 0) / base.length
  console.log(
    `wrk -t2 -c50 -d${wrkSeconds}s after ${warmup} s, single-point pushes to streams nobody follows; ` +
      `ratio to the mean of the runs with none open\n`
  )
  const cpuBase = base.reduce((s, r) => s + r.cpuUs, 0) / base.length
  console.log(
    "| open event streams | push req/s | p50 ms | p99 ms | errors | req/s ÷ none open | server CPU µs per push | CPU ÷ none open |"
  )
  console.log("|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of idleRows) {
    console.log(
      `| ${r.open} | ${r.result.reqPerSec.toFixed(0)} | ${r.result.p50.toFixed(2)} | ${r.result.p99.toFixed(2)} | ` +
        `${r.result.errors} | ${(r.result.reqPerSec / baseline).toFixed(2)} | ${r.cpuUs.toFixed(0)} | ` +
        `${(r.cpuUs / cpuBase).toFixed(2)} |`
    )
  }
  console.log("")
  for (const note of idleNotes) console.log(`- ${note}`)
}
if (fanoutLines.length > 0) console.log(["", ...fanoutLines].join("\n"))
