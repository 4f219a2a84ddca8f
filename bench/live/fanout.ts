/**
 * The live benchmark's fan-out part (`pnpm bench:live --only fanout`): one server process at the limit of its core,
 * against a bare reference server (`reference.ts`: node:http, the same SSE framing serialised once, one
 * `socket.write` per event per subscriber) in the same run, fed the same pushes. Every scenario pushes for
 * `seconds` (10 s by default, at most 20) after a 1 s warm-up, on loopback, to a Dashstream server on SQLite
 * (`serve.ts` bundled as the command is, `bundle.ts`; one process). The subscribers are raw SSE connections in `clients` child processes (2 by default,
 * dealt round-robin), whose CPU is printed beside the server's so that a saturated client side shows.
 *
 * Scenarios:
 * - pushes alone: the throughput scenarios' pushes without subscribers, on both servers: the CPU the pushes take
 *   themselves (HTTP and, on Dashstream, the storage), deducted in the "fan-out only" figures.
 * - throughput: `--fanout-subscribers` (1,000) subscribers of one stream at `--fanout-rate` (50) pushes/s, on the
 *   reference and on Dashstream; and as many subscribers of a 10-tile dashboard (`/d/<token>/events`) at the same
 *   rate spread over its tiles. Figure: events delivered per second of the server's CPU time (user + system).
 * - 3,000 subscribers of one stream at 10 pushes/s: p99 (target <= 100 ms).
 * - 10,000 subscribers of one stream at 10 pushes/s, reference and Dashstream: p99 (target within 1.2x the
 *   reference's), nothing lost, every event once and in order, server VmRSS and VmHWM (target <= 512 MiB).
 * - 2,000 subscribers of a 10-tile dashboard at 20 pushes/s spread over the tiles: p99 (target <= 100 ms).
 *
 * Latency = arrival at a subscriber minus the push's send time, on the machine's monotonic clock (see `clients.ts`).
 */
import { join } from "node:path"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { adminPost, type Dashstream, raiseNofile, serverNodeFlags, startDashstream } from "../lib/dashstream.js"
import { freePort, peakRssMiB, rssMiB, startProcess, stopProcess } from "../lib/proc.js"
import { bundleServe } from "./bundle.js"
import {
  type Arrivals,
  type ClientPool,
  clientPool,
  cpuSeconds,
  nowUs,
  pushSteadily,
  runQueueWaitSeconds,
  sleep
} from "./harness.js"

/** What the fan-out part is asked for. */
export interface FanoutOptions {
  readonly root: string
  readonly nofile: number
  /** Measured seconds of pushes per scenario (<= 20). */
  readonly seconds: number
  /** Subscribers' processes. */
  readonly clients: number
  /** Subscribers of the throughput scenarios. */
  readonly subscribers: number
  /** Pushes per second of the throughput scenarios. */
  readonly rate: number
  /** Scale of the latency scenarios' subscriber counts (1: 3,000, 10,000 and 2,000; `--quick`: 0.1). */
  readonly scale: number
  /**
   * The scenarios to run (all by default): `stream`, `dashboard` (the throughput ones, each with the pushes alone),
   * `3000`, `10000`, `dashboard2000`.
   */
  readonly scenarios?: ReadonlySet<string> | undefined
  /** Where the Dashstream server writes a CPU profile (`--cpu-prof-dir`), when given. */
  readonly profileDir?: string | undefined
}

/** One measured scenario on one server. */
interface Row {
  readonly scenario: string
  readonly server: "reference" | "Dashstream"
  readonly subscribers: number
  readonly rate: number
  readonly pushes: number
  readonly pushErrors: number
  readonly arrivals: Arrivals
  /** Events delivered per second of the server's CPU time. */
  readonly perCore: number
  /** The server's CPU seconds per second of the run. */
  readonly cpuPerS: number
  /** CPU % (of one core) of the server and of the subscribers' processes over the run's wall time. */
  readonly cpu: number
  readonly clientCpu: number
  /** The server's run-queue wait, % of the wall time. */
  readonly wait: number
  readonly rssMiB: number
  readonly peakMiB: number
  readonly target: string
}

const tiles = 10

/** An account with widgets `t0`..`t9` and a dashboard showing them: its access key and view token. */
const makeDashboard = async (url: string): Promise<{ accessKey: string; viewToken: string }> => {
  const account = await adminPost(url, "/admin/accounts", { name: "fanout" })
  const names = Array.from({ length: tiles }, (_, k) => `t${k}`)
  for (const streamName of names) {
    await adminPost(url, `/admin/accounts/${account["id"]}/widgets`, { streamName, type: "number" })
  }
  const dashboard = await adminPost(url, `/admin/accounts/${account["id"]}/dashboards`, {
    name: "fan-out",
    tiles: names.map((streamName, k) => ({ streamName, x: (k % 4) * 3, y: Math.floor(k / 4) * 2, w: 3, h: 2 }))
  })
  return { accessKey: account["accessKey"]!, viewToken: dashboard["viewToken"]! }
}

const startReference = async (nofile: number): Promise<Dashstream> => {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const args = [...serverNodeFlags, "--import", "tsx", join(import.meta.dirname, "reference.ts"), String(port)]
  const child = await startProcess(
    "bash",
    ["-c", raiseNofile(nofile), process.execPath, ...args],
    async () => (await fetch(`${url}/healthz`)).ok,
    { env: { ...process.env }, timeoutMs: 30_000 }
  )
  return { url, pid: child.pid!, accessKey: "", stop: () => stopProcess(child) }
}

/** Runs the fan-out scenarios; returns the report (markdown lines). */
export const fanout = async (options: FanoutOptions): Promise<Array<string>> => {
  const { root, nofile, seconds, rate } = options
  if (seconds > 20) throw new Error("a fan-out scenario pushes for at most 20 s")
  const pool: ClientPool = await clientPool(options.clients, nofile)
  const rows: Array<Row> = []
  const reference = await startReference(nofile)
  const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-fanout-"))
  const ds = await startDashstream(root, `sqlite:${join(dir, "fanout.db")}`, {
    entry: await bundleServe(root),
    env: { BENCH_MAX_STREAMS_PER_KEY: "20000" },
    nodeArgs: options.profileDir === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", options.profileDir],
    nofile,
    streams: 1
  })
  try {
    const board = await makeDashboard(ds.url)
    const run = async (
      scenario: string,
      server: Dashstream,
      paths: ReadonlyArray<string>,
      pushRate: number,
      accessKey: string,
      streamOf: (i: number) => string,
      target: string
    ) => {
      if (paths.length > 0) await pool.open(server.url, paths, 100)
      await pushSteadily(server.url, accessKey, pushRate, 1, streamOf)
      await sleep(500)
      await pool.measure(nowUs())
      const cpu0 = cpuSeconds(server.pid)
      const clientCpu0 = pool.cpu()
      const wait0 = runQueueWaitSeconds(server.pid)
      const t0 = performance.now()
      const [pushes, pushErrors] = await pushSteadily(server.url, accessKey, pushRate, seconds, streamOf)
      const arrivals = await pool.results(pushes - pushErrors)
      // The server's work ends with the last event's arrival (at most the results' wait after the last push).
      const elapsedS = (performance.now() - t0) / 1000
      const cpuS = cpuSeconds(server.pid) - cpu0
      const row: Row = {
        scenario,
        server: server === reference ? "reference" : "Dashstream",
        subscribers: paths.length,
        rate: pushRate,
        pushes,
        pushErrors,
        arrivals,
        perCore: arrivals.n / cpuS,
        cpuPerS: cpuS / elapsedS,
        cpu: (cpuS / elapsedS) * 100,
        clientCpu: ((pool.cpu() - clientCpu0) / elapsedS) * 100,
        wait: ((runQueueWaitSeconds(server.pid) - wait0) / elapsedS) * 100,
        rssMiB: rssMiB(server.pid),
        peakMiB: peakRssMiB(server.pid),
        target
      }
      rows.push(row)
      await pool.close()
      const a = arrivals
      console.error(
        `fanout: ${scenario}, ${row.server}: ${paths.length} subscribers, ${pushes} pushes (${pushErrors} failed): ` +
          `${a.n} events, missing ${a.missing}, extra ${a.extra}, disorder ${a.disorder}, p50 ${a.p50.toFixed(1)} ` +
          `p99 ${a.p99.toFixed(1)} max ${a.max.toFixed(1)} ms, ${row.perCore.toFixed(0)} events/s per core, CPU ` +
          `server ${row.cpu.toFixed(0)}% subscribers ${row.clientCpu.toFixed(0)}%, wait ${row.wait.toFixed(0)}%, ` +
          `RSS ${row.rssMiB.toFixed(0)} MiB (peak ${row.peakMiB.toFixed(0)})`
      )
      await sleep(1000)
      return row
    }
    const streamPaths = (server: Dashstream, n: number) =>
      Array.from({ length: n }, () =>
        server === reference ? "/events/hot" : `/api/v2/${ds.accessKey}/datastream/hot/events`
      )
    const boardPaths = (n: number) => Array.from({ length: n }, () => `/d/${board.viewToken}/events`)
    const hot = () => "hot"
    const tile = (i: number) => `t${i % tiles}`
    const scaled = (n: number) => Math.max(10, Math.round(n * options.scale))

    const n = options.subscribers
    const wanted = (name: string) => options.scenarios === undefined || options.scenarios.has(name)
    const throughput = wanted("stream") || wanted("dashboard")
    // The pushes alone, so that their own cost (HTTP, storage) can be told apart from the fan-out's; the reference's
    // stream figure is what the others are compared with.
    if (throughput) {
      await run("pushes alone", reference, [], rate, "", hot, "")
      await run("pushes alone", ds, [], rate, ds.accessKey, hot, "")
      await run("throughput, stream", reference, streamPaths(reference, n), rate, "", hot, "")
    }
    if (wanted("stream"))
      await run("throughput, stream", ds, streamPaths(ds, n), rate, ds.accessKey, hot, ">= 0.95x reference")
    if (wanted("dashboard"))
      await run("throughput, dashboard", ds, boardPaths(n), rate, board.accessKey, tile, ">= 0.8x reference")
    if (wanted("3000"))
      await run("3,000 of one stream", ds, streamPaths(ds, scaled(3000)), 10, ds.accessKey, hot, "p99 <= 100 ms")
    if (wanted("10000")) {
      await run("10,000 of one stream", reference, streamPaths(reference, scaled(10_000)), 10, "", hot, "")
      await run(
        "10,000 of one stream",
        ds,
        streamPaths(ds, scaled(10_000)),
        10,
        ds.accessKey,
        hot,
        "p99 <= 1.2x reference, <= 512 MiB"
      )
    }
    if (wanted("dashboard2000"))
      await run("2,000 of a dashboard", ds, boardPaths(scaled(2000)), 20, board.accessKey, tile, "p99 <= 100 ms")
  } finally {
    pool.stop()
    await ds.stop()
    await reference.stop()
    rmSync(dir, { recursive: true, force: true })
  }
  return report(rows, options)
}

const report = (rows: ReadonlyArray<Row>, options: FanoutOptions): Array<string> => {
  const ref = (scenario: string) => rows.find((r) => r.server === "reference" && r.scenario === scenario)
  const refRate = ref("throughput, stream")?.perCore ?? NaN
  // Events per second of the CPU the fan-out took beyond the same pushes alone.
  const fanoutRate = (r: Row) => {
    const alone = rows.find((a) => a.server === r.server && a.scenario === "pushes alone")
    return alone === undefined ? NaN : r.perCore * (r.cpuPerS / (r.cpuPerS - alone.cpuPerS))
  }
  const refRow = ref("throughput, stream")
  const refFanout = refRow === undefined ? NaN : fanoutRate(refRow)
  const lines = [
    `Fan-out: ${options.clients} subscribers' processes; ${options.seconds} s of pushes per scenario after 1 s; ` +
      `events/s per core = events delivered ÷ the server's CPU seconds; "fan-out only" deducts the CPU of the same ` +
      `pushes without subscribers ("pushes alone"); ratios to the reference of this run.`,
    "",
    "| scenario | server | subscribers | pushes/s | events | missing | extra | disorder | events/s per core | ÷ reference | " +
      "fan-out only: events/s per core | ÷ reference | " +
      "p50 ms | p99 ms | p99 ÷ reference | CPU % server | CPU % subscribers | run-queue wait % | RSS MiB (peak) | target |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
  ]
  for (const r of rows) {
    const same = ref(r.scenario)
    const a = r.arrivals
    const throughput = r.scenario.startsWith("throughput")
    const rateRatio = r.server === "reference" || !throughput ? "" : (r.perCore / refRate).toFixed(2)
    const onlyRate = throughput ? fanoutRate(r).toFixed(0) : ""
    const onlyRatio = r.server === "reference" || !throughput ? "" : (fanoutRate(r) / refFanout).toFixed(2)
    const p99Ratio = same === undefined || r.server === "reference" ? "" : (a.p99 / same.arrivals.p99).toFixed(2)
    lines.push(
      `| ${r.scenario} | ${r.server} | ${r.subscribers} | ${r.rate} | ${a.n} | ${a.missing} | ${a.extra} | ` +
        `${a.disorder} | ${r.perCore.toFixed(0)} | ${rateRatio} | ${onlyRate} | ${onlyRatio} | ${a.p50.toFixed(1)} | ${a.p99.toFixed(1)} | ` +
        `${p99Ratio} | ${r.cpu.toFixed(0)} | ${r.clientCpu.toFixed(0)} | ${r.wait.toFixed(0)} | ` +
        `${r.rssMiB.toFixed(0)} (${r.peakMiB.toFixed(0)}) | ${r.target} |`
    )
  }
  return lines
}
