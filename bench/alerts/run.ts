/**
 * Alert benchmark (docs/api.md section 18). Starts on loopback a bare node:http server (the ceiling of one Node
 * process, `bench/push/ceiling.mjs`) and two bundled `dashstream serve`, each on a fresh database of its own, with
 * widgets `s0`..`s999` (numbers), `q0`..`q99` (numbers that never get a rule) and `lat`; then, in one run:
 *
 * 1. on one of them ("ruled"), 10,000 rules stored through the storage while it runs (as the CLI stores them: 10 per
 *    stream of `s0`..`s999`, `above`/`below` thresholds the pushed values never cross, so every push is evaluated
 *    against 10 rules and none fires) and one rule `above 90` on `lat` notifying a webhook receiver in this process;
 *    the other ("plain") has none;
 * 2. single-point pushes (wrk, 2 threads, 50 connections, as `bench/push`) to `s0`..`s999` and to `q0`..`q99`: first
 *    each load on each server alone (the absolute figures, beside the ceiling), then `--rounds` rounds of each load on
 *    both servers side by side, at the same time, each with a wrk of its own: both of a pair share the machine's
 *    cores and its neighbours' noise alike, so ruled ÷ plain of a pair is what the rules cost in CPU per push, free of
 *    the drift between two loads run one after the other (on a shared machine one server alone moved from 11,000 to
 *    18,000 req/s between rounds a minute apart). On `s*` it is what 10 rules a stream cost a push, on `q*` what rules
 *    on other streams cost a push to a stream without rules;
 * 3. `--crossings` pushes to `lat` on the ruled server alternately crossing (95) and going back (10), one at a time:
 *    each makes a transition, and the time from the push's answer to the webhook's receipt of its notification is the
 *    crossing-to-delivery latency (p50, p99, max).
 *
 * Bounded: `--seconds` per push load (after `--warmup`), `--rounds`, `--crossings` transitions, loopback only. Prints
 * the load average before and after: figures on a shared machine move with its neighbours.
 *
 * Usage: pnpm bench:alerts [--seconds 6] [--warmup 2] [--rounds 6] [--crossings 200] [--backend sqlite|postgres]
 *   [--cpu-prof DIR] [--entry FILE]
 *
 * `--cpu-prof DIR` runs both servers under `node --cpu-prof` (so that the A/B bears the profiler alike) and writes their
 * profiles (the whole run, named by pid, printed at the start) into DIR. `--entry FILE` runs both servers from another
 * build of the command (a copy of an earlier `packages/server/bundle/bin.js`, kept beside `bundle/`), for an A/B of
 * two builds run back to back.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import {
  type AccountId,
  AccountStore,
  AlertStore,
  type Condition,
  initialEvaluation,
  micros,
  newAlertRuleId,
  newReceiverId,
  type ReceiverId,
  StreamName,
  StreamStore
} from "@dashstream/core"
import * as Postgres from "@dashstream/storage-postgres"
import * as Sqlite from "@dashstream/storage-sqlite"
import { Effect, Either, Layer } from "effect"
import { type Dashstream, startDashstream } from "../lib/dashstream.js"
import { ensureDebianPackages, freePort, startProcess, stopProcess, treeCpuMicros } from "../lib/proc.js"
import { type LoadResult, postLua, wrk } from "../lib/wrk.js"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "6" },
    warmup: { type: "string", default: "2" },
    rounds: { type: "string", default: "6" },
    crossings: { type: "string", default: "200" },
    backend: { type: "string", default: "sqlite" },
    "cpu-prof": { type: "string" },
    entry: { type: "string" }
  }
})
const seconds = Number(values.seconds)
const warmup = Number(values.warmup)
const crossings = Number(values.crossings)
const rounds = Number(values.rounds)
const root = join(import.meta.dirname, "..", "..")
const ruleStreams = 1000
const rulesPerStream = 10
const loadBefore = loadavg()[0]!

ensureDebianPackages([{ command: "wrk", pkg: "wrk" }])

interface Row {
  readonly target: string
  readonly load: string
  readonly result: LoadResult
  readonly cpuMicros: number
  /** The 1-minute load average when the load ended. */
  readonly loadavg: number
}
const rows: Array<Row> = []

const measure = async (target: string, load: string, pid: number, url: string, lua: string): Promise<Row> => {
  if (warmup > 0) await wrk({ url, lua, seconds: warmup })
  const cpu0 = treeCpuMicros(pid)
  const result = await wrk({ url, lua, seconds })
  const cpuMicros = (treeCpuMicros(pid) - cpu0) / Math.max(1, result.requests)
  const row = { target, load, result, cpuMicros, loadavg: loadavg()[0]! }
  rows.push(row)
  console.error(
    `${target.padEnd(28)} ${load.padEnd(24)} ${result.reqPerSec.toFixed(0).padStart(7)} req/s  p99 ${result.p99.toFixed(1)} ms  errors ${result.errors}  load ${row.loadavg.toFixed(1)}`
  )
  return row
}

/** A single-point push per request to `<prefix><i mod count>`, values 0 to 49 (never crossing a rule here). */
const pushLua = (key: string, prefix: string, count: number) =>
  postLua(
    "/customSend",
    `'{"accessKey":"${key}","streamName":"${prefix}' .. (i % ${count}) .. '","point":' .. (i % 50) .. '}'`
  )

// ---- the ceiling ----
const ceilingPort = await freePort()
const ceilingUrl = `http://127.0.0.1:${ceilingPort}`
const ceiling = await startProcess(
  process.execPath,
  [join(root, "bench/push/ceiling.mjs"), String(ceilingPort)],
  async () => (await fetch(ceilingUrl, { method: "POST", body: "{}" })).ok
)
await measure("node:http ceiling", "single point", ceiling.pid!, ceilingUrl, pushLua("k", "s", ruleStreams))
await stopProcess(ceiling)

// ---- the webhook receiver: when each notification arrived, by state ----
const arrivals: Array<{ readonly state: string; readonly at: number }> = []
let arrived: (() => void) | undefined
const receiver = createServer((req, res) => {
  const chunks: Array<Buffer> = []
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => {
    const at = performance.now()
    const state = (JSON.parse(Buffer.concat(chunks).toString()) as { state: string }).state
    arrivals.push({ state, at })
    res.end()
    arrived?.()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverAddress = receiver.address()
const hookUrl = `http://127.0.0.1:${typeof receiverAddress === "object" && receiverAddress !== null ? receiverAddress.port : 0}/hook`

/** The storage of `db` opened in this process (as the CLI opens it), for one effect. */
const onStorage = <A>(db: string, effect: Effect.Effect<A, unknown, AccountStore | AlertStore | StreamStore>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.provide(
        effect,
        Layer.orDie(
          db.startsWith("sqlite:")
            ? Sqlite.layer({ filename: db.slice("sqlite:".length) })
            : Postgres.layer(Either.getOrThrow(Postgres.parseUrl(db)))
        )
      )
    ) as Effect.Effect<A>
  )

/** Stores the 10,000 rules of `s0`..`s999` and the rule of `lat` with its webhook receiver; the time it took, ms. */
const storeRules = (db: string) =>
  onStorage(
    db,
    Effect.gen(function* () {
      const t0 = performance.now()
      const accounts = yield* AccountStore
      const alerts = yield* AlertStore
      const streams = yield* StreamStore
      const [account] = yield* accounts.listAccounts
      const accountId = account!.id as AccountId
      const widgets = new Map((yield* accounts.listWidgets(accountId)).map((w) => [w.streamName as string, w]))
      const receiverId = newReceiverId()
      const now = () => micros(Date.now() * 1000)
      yield* alerts.createReceiver(
        { id: receiverId, accountId, name: "bench", kind: "webhook", url: hookUrl, hasSecret: false, createdAt: now() },
        null
      )
      const rule = (streamName: string, name: string, condition: Condition, receiverIds: ReadonlyArray<ReceiverId>) =>
        Effect.gen(function* () {
          const widget = widgets.get(streamName)!
          // A new rule starts after the stream's newest entry (docs/api.md section 18.3).
          const [latest] = yield* streams.read(widget.id, { since: null, limit: null })
          const createdAt = now()
          yield* alerts.createRule({
            id: newAlertRuleId(),
            accountId,
            streamId: widget.id,
            name,
            streamName: StreamName.make(streamName),
            condition,
            for: 0,
            receiverIds,
            createdAt,
            silencedUntil: null,
            evaluation: initialEvaluation(createdAt, latest?.ts ?? null)
          })
        })
      for (let k = 0; k < ruleStreams; k++) {
        for (let j = 0; j < rulesPerStream; j++) {
          const condition: Condition = j % 2 === 0 ? { above: 1000 + j } : { below: -1000 - j }
          yield* rule(`s${k}`, `s${k} rule ${j}`, condition, [])
        }
      }
      yield* rule("lat", "lat above 90", { above: 90 }, [receiverId])
      return performance.now() - t0
    })
  )

/** Pushes `n` to `lat` and waits for the notification it causes; ms from the push's answer to its receipt. */
const crossing = async (ds: Dashstream, n: number): Promise<number> => {
  const seen = arrivals.length
  const delivered = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no notification within 10 s of pushing ${n}`)), 10_000)
    arrived = () => {
      if (arrivals.length > seen) {
        clearTimeout(timer)
        resolve()
      }
    }
  })
  const res = await fetch(`${ds.url}/customSend`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ accessKey: ds.accessKey, streamName: "lat", point: n })
  })
  const answered = performance.now()
  if (res.status !== 200) throw new Error(`push answered ${res.status}: ${await res.text()}`)
  await delivered
  return arrivals[seen]!.at - answered
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

const run = async (dbs: readonly [string, string], label: string) => {
  const widgets = [
    ...Array.from({ length: 100 }, (_, k) => ({ streamName: `q${k}`, type: "number" })),
    { streamName: "lat", type: "number" }
  ]
  const profileDir = values["cpu-prof"]
  const options = {
    streams: ruleStreams,
    widgets,
    ...(values.entry === undefined ? {} : { entry: values.entry }),
    ...(profileDir === undefined ? {} : { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] })
  }
  const plain = await startDashstream(root, dbs[0], options)
  const ruled = await startDashstream(root, dbs[1], options)
  if (profileDir !== undefined) console.error(`profiles: plain server pid ${plain.pid}, ruled server pid ${ruled.pid}`)
  const storedMs = await storeRules(dbs[1])
  console.error(
    `${ruleStreams * rulesPerStream + 1} rules stored through the storage in ${(storedMs / 1000).toFixed(1)} s`
  )
  // Every engine sees a change within a second; the first crossing also waits for the 1,000 streams' reloads.
  await new Promise((resolve) => setTimeout(resolve, 2_000))
  await crossing(ruled, 95)
  await crossing(ruled, 10)
  const servers = [
    { ds: plain, name: `Dashstream ${label}, 0 rules` },
    { ds: ruled, name: `Dashstream ${label}, 10,000 rules` }
  ] as const
  const loads = [
    ["s", 1000, "s0..s999 (rules on ruled)"],
    ["q", 100, "q0..q99 (never rules)"]
  ] as const
  // Alone: each server on its own, for the absolute figures.
  for (const [prefix, count, load] of loads) {
    for (const { ds, name } of servers) await measure(name, load, ds.pid, ds.url, pushLua(ds.accessKey, prefix, count))
  }
  // Side by side: both servers at once, each under a wrk of its own; the ratio of each pair.
  const pairs: Array<{ readonly load: string; readonly plain: Row; readonly ruled: Row }> = []
  for (let round = 0; round < rounds; round++) {
    for (const [prefix, count, load] of loads) {
      const [plainRow, ruledRow] = await Promise.all(
        servers.map(({ ds, name }) =>
          measure(`${name}, side by side`, load, ds.pid, ds.url, pushLua(ds.accessKey, prefix, count))
        )
      )
      pairs.push({ load, plain: plainRow!, ruled: ruledRow! })
    }
  }
  const latencies: Array<number> = []
  for (let i = 0; i < crossings; i++) latencies.push(await crossing(ruled, i % 2 === 0 ? 95 : 10))
  await plain.stop()
  await ruled.stop()
  return { pairs, latencies: latencies.sort((a, b) => a - b) }
}

const { pairs, latencies } =
  values.backend === "postgres"
    ? await (async () => {
        const { withTestDatabase } = await import("../lib/postgres.js")
        let out: Awaited<ReturnType<typeof run>> | undefined
        await withTestDatabase((a) =>
          withTestDatabase(async (b) => {
            out = await run([a, b], "PostgreSQL")
          })
        )
        return out!
      })()
    : await (async () => {
        const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-alerts-"))
        try {
          return await run([`sqlite:${join(dir, "plain.db")}`, `sqlite:${join(dir, "ruled.db")}`], "SQLite")
        } finally {
          rmSync(dir, { recursive: true, force: true })
        }
      })()
receiver.close()

// ---- report ----
console.log(
  `\nmachine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, node ${process.version}; wrk -t2 -c50 -d${seconds}s after a ${warmup}s warm-up; ` +
    `1-minute load average ${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after\n`
)
const ceilingRow = rows[0]!
console.log("| target | pushes to | req/s | p50 ms | p99 ms | errors | server CPU µs/req | req/s ÷ ceiling | load |")
console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for (const r of rows) {
  console.log(
    `| ${r.target} | ${r.load} | ${r.result.reqPerSec.toFixed(0)} | ${r.result.p50.toFixed(2)} | ${r.result.p99.toFixed(2)} | ${r.result.errors} | ${r.cpuMicros.toFixed(0)} | ${(r.result.reqPerSec / ceilingRow.result.reqPerSec).toFixed(2)} | ${r.loadavg.toFixed(1)} |`
  )
}
/** The median of ascending `sorted` (the mean of the middle two when their number is even). */
const median = (sorted: ReadonlyArray<number>) =>
  sorted.length % 2 === 1
    ? sorted[(sorted.length - 1) / 2]!
    : (sorted[sorted.length / 2 - 1]! + sorted[sorted.length / 2]!) / 2
const ratios = (load: string) => {
  const of = pairs.filter((pair) => pair.load === load)
  const each = of.map((pair) => pair.ruled.result.reqPerSec / pair.plain.result.reqPerSec).sort((a, b) => a - b)
  const sum = (rows: ReadonlyArray<Row>) => rows.reduce((total, row) => total + row.result.requests, 0)
  const pooled = sum(of.map((pair) => pair.ruled)) / sum(of.map((pair) => pair.plain))
  const cpu = (rows: ReadonlyArray<Row>) => rows.reduce((total, row) => total + row.cpuMicros, 0) / rows.length
  const cpuRatios = of.map((pair) => pair.ruled.cpuMicros / pair.plain.cpuMicros).sort((a, b) => a - b)
  return (
    `${each.map((r) => r.toFixed(2)).join(", ")} (median ${median(each).toFixed(2)}, ` +
    `pooled ${pooled.toFixed(2)}; server CPU ${cpu(of.map((pair) => pair.ruled)).toFixed(0)} ÷ ` +
    `${cpu(of.map((pair) => pair.plain)).toFixed(0)} µs/req, median of the pairs' ratios ${median(cpuRatios).toFixed(2)})`
  )
}
console.log(
  `\nsingle-point pushes with 10,000 rules ÷ with none, side by side, each round: to streams with 10 rules each ` +
    `${ratios(pairs[0]!.load)}; to streams without rules ${ratios(pairs[1]!.load)} (target >= 0.95)`
)
console.log(
  `crossing-to-delivery latency over ${latencies.length} transitions (push answered -> webhook received): ` +
    `p50 ${percentile(latencies, 50).toFixed(0)} ms, p99 ${percentile(latencies, 99).toFixed(0)} ms, ` +
    `max ${latencies.at(-1)!.toFixed(0)} ms (target p99 <= 1000)`
)
