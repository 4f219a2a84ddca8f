/**
 * Decimation benchmark (issue: daily decimation). For each backend, in a child process of its own (so peak memory
 * is the backend's alone): builds `--entries` entries (default 10 million) over `--streams` numeric streams (default
 * 1,000), evenly spread over the year before now, through the storage adapter (one `write` of up to 10,000
 * timestamped points per call); measures single-point pushes through `StreamStore.write` at `--rate` per second
 * with no pass running; then runs one decimation pass with the default tiers while the same pushes go on. Prints
 * entries examined per second, entries removed, the pass's peak RSS, and the p50/p99 latency of the pushes with and
 * without the pass.
 *
 * Push latency is measured from each push's scheduled time (one every 1/rate s), not from when the event loop got
 * round to sending it, so time the loop spent blocked (better-sqlite3 is synchronous) counts.
 *
 * `maxRSS` (`process.resourceUsage().maxRSS`) is the process's peak since it started, building included; the RSS
 * sampled every 50 ms during the pass shows what the pass itself adds.
 *
 * Usage: pnpm bench:decimation [--entries 10000000] [--streams 1000] [--rate 200] [--idle-seconds 5]
 *                              [--chunk-size 5000] [--delete-batch 1000] [--only sqlite,postgres]
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import {
  AccountStore,
  type DecimationStore,
  digestAccessKey,
  micros,
  newAccessKey,
  newAccountId,
  StreamName,
  StreamStore,
  type Widget
} from "@dashstream/core"
import { defaultPassSizes, defaultPolicy, runPass } from "@dashstream/decimation"
import * as Postgres from "@dashstream/storage-postgres"
import * as Sqlite from "@dashstream/storage-sqlite"
import { Effect, Either, Layer, Logger, LogLevel, ManagedRuntime } from "effect"
import { withTestDatabase } from "../lib/postgres.js"

const { values } = parseArgs({
  options: {
    entries: { type: "string", default: "10000000" },
    streams: { type: "string", default: "1000" },
    rate: { type: "string", default: "200" },
    "idle-seconds": { type: "string", default: "5" },
    only: { type: "string", default: "sqlite,postgres" },
    "chunk-size": { type: "string", default: String(defaultPassSizes.chunkSize) },
    "delete-batch": { type: "string", default: String(defaultPassSizes.deleteBatchSize) },
    backend: { type: "string" }
  }
})
const totalEntries = Number(values.entries)
const streamCount = Number(values.streams)
const rate = Number(values.rate)
const idleSeconds = Number(values["idle-seconds"])
const chunkSize = Number(values["chunk-size"])
const deleteBatchSize = Number(values["delete-batch"])

type Stores = AccountStore | StreamStore | DecimationStore

/** What one backend's child process reports. */
interface Result {
  readonly backend: string
  readonly entries: number
  readonly buildSeconds: number
  readonly streamsVisited: number
  readonly entriesExamined: number
  readonly entriesRemoved: number
  readonly passSeconds: number
  readonly examinedPerSecond: number
  readonly peakRssMiB: number
  readonly rssBeforePassMiB: number
  readonly maxRssMiB: number
  readonly idle: Latency
  readonly duringPass: Latency
}

interface Latency {
  readonly count: number
  readonly p50: number
  readonly p99: number
  readonly max: number
}

const DAY_US = 86_400_000_000
const CALL_ENTRIES = 10_000
const MiB = 1024 * 1024

const quantile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!

const summarize = (latencies: ReadonlyArray<number>): Latency => {
  const sorted = [...latencies].sort((a, b) => a - b)
  return {
    count: sorted.length,
    p50: quantile(sorted, 0.5),
    p99: quantile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? NaN
  }
}

const quiet = Logger.minimumLogLevel(LogLevel.Warning)

/** Creates the streams and fills each with `perStream` timestamped numbers over the year before `now` (µs). */
const build = (runtime: ManagedRuntime.ManagedRuntime<Stores, unknown>, now: number, concurrency: number) =>
  runtime.runPromise(
    Effect.gen(function* () {
      const accounts = yield* AccountStore
      const streams = yield* StreamStore
      const id = newAccountId()
      yield* accounts.createAccount({ id, name: "bench", createdAt: now }, digestAccessKey(newAccessKey()))
      const perStream = Math.max(1, Math.floor(totalEntries / streamCount))
      const step = Math.max(1, Math.floor((365 * DAY_US) / perStream))
      const widgets: Array<Widget> = []
      for (let s = 0; s < streamCount; s++) {
        const type = s % 2 === 0 ? "sparkline" : "number"
        widgets.push(yield* accounts.createWidget(id, StreamName.make(`s${s}`), type, now))
      }
      let written = 0
      let lastReport = Date.now()
      yield* Effect.forEach(
        widgets,
        (widget, s) =>
          Effect.gen(function* () {
            let value = 1000
            for (let from = 0; from < perStream; from += CALL_ENTRIES) {
              const count = Math.min(CALL_ENTRIES, perStream - from)
              const entries = Array.from({ length: count }, (_, k) => {
                value += Math.round((Math.random() - 0.5) * 20)
                // Staggered per stream so streams do not share bucket edges exactly.
                return { point: { number: value }, ts: micros(now - 365 * DAY_US + (from + k) * step + s * 1_000) }
              })
              yield* streams.write([{ widget, op: { _tag: "Put", entries }, path: "point" }], micros(now))
              written += count
            }
            if (Date.now() - lastReport > 10_000) {
              lastReport = Date.now()
              console.error(`  built ${written.toLocaleString("en")} entries`)
            }
          }),
        { concurrency, discard: true }
      )
      return { widgets, written }
    }).pipe(Effect.provide(quiet))
  )

/**
 * Pushes one point to a random stream every 1/rate s until `stop()`; returns each push's latency in ms, from its
 * scheduled time to its acknowledgement.
 */
const pushLoad = (runtime: ManagedRuntime.ManagedRuntime<Stores, unknown>, widgets: ReadonlyArray<Widget>) => {
  const latencies: Array<number> = []
  const pending = new Set<Promise<void>>()
  const interval = 1000 / rate
  const start = performance.now()
  let issued = 0
  let failures = 0
  const push = (scheduled: number) => {
    const widget = widgets[Math.floor(Math.random() * widgets.length)]!
    const write = Effect.flatMap(StreamStore, (s) =>
      s.write(
        [{ widget, op: { _tag: "Put", entries: [{ point: { number: issued } }] }, path: "point" }],
        micros(Date.now() * 1000)
      )
    )
    const done = runtime.runPromise(write).then(
      () => void latencies.push(performance.now() - scheduled),
      () => void failures++
    )
    pending.add(done)
    void done.finally(() => pending.delete(done))
  }
  const tick = () => {
    const now = performance.now()
    while (start + issued * interval <= now) push(start + issued++ * interval)
  }
  const timer = setInterval(tick, Math.max(1, Math.floor(interval)))
  return {
    stop: async (): Promise<{ latencies: Array<number>; failures: number }> => {
      // Issue the pushes that fell due while the event loop was blocked, so their delay counts.
      tick()
      clearInterval(timer)
      await Promise.all([...pending])
      return { latencies, failures }
    }
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Builds with `buildLayer`, then measures pushes and the pass on `passLayer` (the same database, reopened). */
const measure = async (
  backend: string,
  buildLayer: Layer.Layer<Stores, unknown>,
  passLayer: Layer.Layer<Stores, unknown>,
  concurrency: number
): Promise<Result> => {
  const now = Date.now() * 1000
  console.error(
    `${backend}: building ${totalEntries.toLocaleString("en")} entries in ${streamCount} streams over one year`
  )
  const buildStart = performance.now()
  const builder = ManagedRuntime.make(Layer.merge(buildLayer, quiet))
  const { widgets, written } = await build(builder, now, concurrency)
  await builder.dispose()
  const buildSeconds = (performance.now() - buildStart) / 1000
  console.error(`${backend}: built ${written.toLocaleString("en")} entries in ${buildSeconds.toFixed(1)} s`)

  const runtime = ManagedRuntime.make(Layer.merge(passLayer, quiet))
  // Warm-up (connections, prepared statements, JIT), not measured.
  const warmup = pushLoad(runtime, widgets)
  await sleep(1000)
  await warmup.stop()
  console.error(`${backend}: ${idleSeconds} s of pushes at ${rate}/s with no pass running`)
  const idleLoad = pushLoad(runtime, widgets)
  await sleep(idleSeconds * 1000)
  const idle = await idleLoad.stop()

  const rssBeforePass = process.memoryUsage.rss()
  let peakRss = rssBeforePass
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss())
  }, 50)
  console.error(`${backend}: decimation pass (default tiers) with pushes at ${rate}/s`)
  const passLoad = pushLoad(runtime, widgets)
  const pass = await runtime.runPromise(runPass({ policy: defaultPolicy, now, chunkSize, deleteBatchSize }))
  const during = await passLoad.stop()
  clearInterval(sampler)
  peakRss = Math.max(peakRss, process.memoryUsage.rss())
  await runtime.dispose()
  if (idle.failures + during.failures > 0) {
    console.error(`${backend}: ${idle.failures + during.failures} pushes failed`)
  }
  return {
    backend,
    entries: written,
    buildSeconds,
    streamsVisited: pass.streamsVisited,
    entriesExamined: pass.entriesExamined,
    entriesRemoved: pass.entriesRemoved,
    passSeconds: pass.durationMs / 1000,
    examinedPerSecond: pass.entriesExamined / (pass.durationMs / 1000),
    peakRssMiB: peakRss / MiB,
    rssBeforePassMiB: rssBeforePass / MiB,
    // KiB; the process's peak since it started, building included.
    maxRssMiB: process.resourceUsage().maxRSS / 1024,
    idle: summarize(idle.latencies),
    duringPass: summarize(during.latencies)
  }
}

const runBackend = async (backend: string): Promise<Result> => {
  if (backend === "sqlite") {
    const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-decimation-"))
    const filename = join(dir, "dashstream.db")
    try {
      // Built without a sync per commit (faster; the data is throwaway), decimated as in production (FULL).
      return await measure("sqlite", Sqlite.layer({ filename, synchronous: "normal" }), Sqlite.layer({ filename }), 1)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  if (backend === "postgres") {
    let result: Result | undefined
    await withTestDatabase(async (url) => {
      const config = Either.getOrThrow(Postgres.parseUrl(url))
      await Effect.runPromise(Postgres.migrate(config))
      result = await measure("postgres", Postgres.layer(config), Postgres.layer(config), 4)
    })
    return result!
  }
  throw new Error(`unknown backend ${backend}; use sqlite or postgres`)
}

// NaN (no sample) comes back from the child's JSON as null.
const ms = (n: number | null) => (n === null || Number.isNaN(n) ? "-" : n < 10 ? n.toFixed(2) : n.toFixed(1))

const print = (results: ReadonlyArray<Result>) => {
  const header = [
    "backend",
    "entries",
    "build s",
    "examined",
    "examined/s",
    "removed",
    "pass s",
    "RSS MiB during pass",
    "maxRSS MiB",
    "push p50/p99 ms idle",
    "push p50/p99 ms during pass"
  ]
  const rows = results.map((r) => [
    r.backend,
    r.entries.toLocaleString("en"),
    r.buildSeconds.toFixed(1),
    r.entriesExamined.toLocaleString("en"),
    Math.round(r.examinedPerSecond).toLocaleString("en"),
    r.entriesRemoved.toLocaleString("en"),
    r.passSeconds.toFixed(1),
    `${r.peakRssMiB.toFixed(0)} peak (${r.rssBeforePassMiB.toFixed(0)} before)`,
    r.maxRssMiB.toFixed(0),
    `${ms(r.idle.p50)} / ${ms(r.idle.p99)} (n=${r.idle.count})`,
    `${ms(r.duringPass.p50)} / ${ms(r.duringPass.p99)} (n=${r.duringPass.count}, max ${ms(r.duringPass.max)})`
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  for (const row of [header, ...rows]) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join("  "))
}

if (values.backend !== undefined) {
  const result = await runBackend(values.backend)
  console.log(`RESULT ${JSON.stringify(result)}`)
} else {
  const results: Array<Result> = []
  for (const backend of values.only.split(",")) {
    const args = (["entries", "streams", "rate", "idle-seconds", "chunk-size", "delete-batch"] as const).flatMap(
      (name) => [`--${name}`, values[name]]
    )
    const child = spawn(
      process.execPath,
      ["--conditions=@dashstream/source", "--import", "tsx", import.meta.filename, ...args, "--backend", backend],
      {
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    let stdout = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    const line = stdout.split("\n").find((l) => l.startsWith("RESULT "))
    if (code !== 0 || line === undefined) {
      console.error(`${backend}: the benchmark failed (exit code ${code})`)
      continue
    }
    results.push(JSON.parse(line.slice("RESULT ".length)) as Result)
  }
  console.log(
    `\nDecimation pass, default tiers, ${streamCount} numeric streams over one year, pushes at ${rate}/s ` +
      `(latency from each push's scheduled time); reads of ${chunkSize} entries, deletes of ${deleteBatchSize}\n`
  )
  print(results)
}
