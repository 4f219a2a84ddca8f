/**
 * Range read benchmark (README, "Range reads"): the same 30 days of 10-second points (259,200 entries) loaded into
 * InfluxDB 1.6 and into Dashstream on SQLite and on PostgreSQL, then the 30-day and 24-hour windows at 1,000 points
 * queried by `--connections` clients (wrk, default 4; 2 threads, 1 for one client) for `--seconds` each: Dashstream's
 * `GET /api/v2/<key>/datastream/s0?from=&to=&points=1000` against InfluxQL's
 * `SELECT first(v), last(v), min(v), max(v) FROM m WHERE time >= .. AND time < .. GROUP BY time(<window / 1000>)`.
 * Prints queries/s, p50 and p99 of each, Dashstream's ratio to InfluxDB's queries/s of the same round and the
 * Dashstream server's CPU per query (its process tree, while measured), with the bare node:http ceiling (a JSON POST
 * answered 200) at the same concurrency.
 *
 * Before measuring, every window's answers are compared: the windows are aligned so that both bucketings coincide
 * (`from` a multiple of the bucket width `w`, `to = from + 1000 w - 1 µs`: Dashstream's bucket k is then exactly
 * InfluxDB's epoch-aligned `[from + k w, from + (k + 1) w)`), and for each of InfluxDB's buckets the first, last,
 * lowest and highest `v` must equal those of Dashstream's kept entries in the same span (and no Dashstream entry
 * may lie in a bucket InfluxDB has none in). A mismatch fails the run.
 *
 * PostgreSQL's tables are analyzed after the load (`ANALYZE`), as autovacuum does on a default server.
 *
 * Also a 1-year window at 1,000 points of a decimated stream (`year`: a year of 1-minute points, thinned by
 * `dashstream decimate` with the default tiers as of the year's end), Dashstream only.
 *
 * Usage: pnpm bench:range [--seconds 5] [--warmup 2] [--connections 4] [--rounds 1]
 *   [--only ceiling,influx,sqlite,postgres] [--no-year]
 * `--rounds N` measures every target in turn N times (InfluxDB, SQLite, PostgreSQL per window) and prints the median
 * of each figure and ratio over the rounds.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { parseArgs } from "node:util"
import { commandBundle, type Dashstream, serverNodeFlags, startDashstream } from "../lib/dashstream.js"
import { ensureDebianPackages, freePort, startProcess, stopProcess, treeCpuMicros } from "../lib/proc.js"
import { getLua, type LoadResult, postLua, wrk } from "../lib/wrk.js"
import { type Influx, startInflux } from "../push/influx.js"

const { values } = parseArgs({
  options: {
    seconds: { type: "string", default: "5" },
    warmup: { type: "string", default: "2" },
    connections: { type: "string", default: "4" },
    rounds: { type: "string", default: "1" },
    only: { type: "string", default: "ceiling,influx,sqlite,postgres" },
    "no-year": { type: "boolean", default: false }
  }
})
const seconds = Number(values.seconds)
const warmup = Number(values.warmup)
const connections = Number(values.connections)
// wrk needs a connection a thread at least.
const threads = Math.min(2, connections)
const rounds = Number(values.rounds)
const only = new Set(values.only.split(","))
const root = join(import.meta.dirname, "..", "..")
const run = promisify(execFile)

/** Points per window, the `points` of every query. */
const points = 1000
/** Seconds between two points of the 30-day stream. */
const step = 10
const day = 86_400
/**
 * The first point's time (UNIX seconds): a multiple of both windows' bucket widths (2,592 s and 86.4 s) and of the
 * step, so that InfluxDB's epoch-aligned buckets start at `from`.
 */
const start = Math.floor(1_700_000_000 / 259_200) * 259_200
const count = (30 * day) / step

/** The value of the `k`-th point: a bounded random walk on a 0.1 grid, with repeated values (ties). */
const valueAt = (() => {
  const values = new Float64Array(count)
  let x = 500
  let seed = 42
  for (let k = 0; k < count; k++) {
    seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
    x = Math.min(1000, Math.max(0, x + ((seed % 21) - 10)))
    values[k] = x / 10
  }
  return (k: number) => values[k]!
})()

/** A window: `from` (UNIX seconds) and its bucket width in microseconds (`w`; the window is `points * w` long). */
interface Window {
  readonly name: string
  readonly from: number
  readonly widthMicros: number
}
const windows: ReadonlyArray<Window> = [
  { name: "30 days", from: start, widthMicros: ((30 * day) / points) * 1e6 },
  { name: "24 hours", from: start + 29 * day, widthMicros: (day / points) * 1e6 }
]

/** `to` of a window: `from + points * w - 1 µs`, as decimal seconds (exact: six decimals). */
const toOf = (w: Window): string => {
  const micros = w.from * 1e6 + points * w.widthMicros - 1
  return `${Math.floor(micros / 1e6)}.${String(micros % 1e6).padStart(6, "0")}`
}

const dashstreamPath = (ds: Dashstream, stream: string, from: number, to: string): string =>
  `/api/v2/${ds.accessKey}/datastream/${stream}?from=${from}&to=${to}&points=${points}`

const influxPath = (w: Window): string => {
  const fromNs = `${w.from}000000000`
  const toNs = `${w.from * 1e6 + points * w.widthMicros}000`
  const q =
    `SELECT first(v), last(v), min(v), max(v) FROM m WHERE time >= ${fromNs} AND time < ${toNs} ` +
    `GROUP BY time(${w.widthMicros / 1000}ms) fill(none)`
  return `/query?db=bench&epoch=ms&q=${encodeURIComponent(q)}`
}

const batch = 10_000

const loadInflux = async (influx: Influx): Promise<void> => {
  for (let done = 0; done < count; done += batch) {
    const lines: Array<string> = []
    for (let k = done; k < Math.min(count, done + batch); k++) lines.push(`m v=${valueAt(k)} ${start + k * step}`)
    const res = await fetch(`${influx.url}/write?db=bench&precision=s`, { method: "POST", body: lines.join("\n") })
    if (res.status !== 204) throw new Error(`influx /write answered ${res.status}: ${await res.text()}`)
  }
}

const push = async (ds: Dashstream, stream: string, point: Array<{ number: number; timestamp: number }>) => {
  const res = await fetch(`${ds.url}/customSend`, {
    method: "POST",
    body: JSON.stringify({ accessKey: ds.accessKey, streamName: stream, point })
  })
  if (!res.ok) throw new Error(`customSend answered ${res.status}: ${await res.text()}`)
}

const loadDashstream = async (ds: Dashstream): Promise<void> => {
  for (let done = 0; done < count; done += batch) {
    const point = []
    for (let k = done; k < Math.min(count, done + batch); k++) {
      point.push({ number: valueAt(k), timestamp: start + k * step })
    }
    await push(ds, "s0", point)
  }
}

/** The year of the decimated stream: 1-minute points ending where the 30-day data ends. */
const yearEnd = start + 30 * day
const yearStart = yearEnd - 365 * day

/** Pushes a year of 1-minute points to `year`, then runs `dashstream decimate` on `db` as of the year's end. */
const loadYear = async (ds: Dashstream, db: string): Promise<string> => {
  const n = (365 * day) / 60
  for (let done = 0; done < n; done += batch) {
    const point = []
    for (let k = done; k < Math.min(n, done + batch); k++) {
      point.push({ number: valueAt(k % count), timestamp: yearStart + k * 60 })
    }
    await push(ds, "year", point)
  }
  const { stdout } = await run(process.execPath, [
    ...serverNodeFlags,
    commandBundle(root),
    "decimate",
    "--db",
    db,
    "--now",
    new Date(yearEnd * 1000).toISOString()
  ])
  return stdout.trim()
}

interface Bucket {
  readonly t: number
  readonly first: number
  readonly last: number
  readonly min: number
  readonly max: number
}

const influxBuckets = async (influx: Influx, w: Window): Promise<Array<Bucket>> => {
  const res = await fetch(`${influx.url}${influxPath(w)}`)
  const body = (await res.json()) as {
    results: Array<{ series?: Array<{ values: Array<[number, number, number, number, number]> }> }>
  }
  const rows = body.results[0]?.series?.[0]?.values ?? []
  return rows.map(([t, first, last, min, max]) => ({ t: t * 1000, first, last, min, max }))
}

/** Dashstream's kept entries of a window grouped by InfluxDB's buckets (`t` in microseconds, as `Bucket.t`). */
const dashstreamBuckets = async (ds: Dashstream, w: Window): Promise<{ buckets: Array<Bucket>; entries: number }> => {
  const res = await fetch(`${ds.url}${dashstreamPath(ds, "s0", w.from, toOf(w))}`)
  if (!res.ok) throw new Error(`range read answered ${res.status}: ${await res.text()}`)
  const body = (await res.json()) as { data: Array<{ ts: number; point: { number: number } }> }
  const groups = new Map<number, Array<{ ts: number; v: number }>>()
  for (const e of body.data) {
    const micros = Math.round(e.ts * 1e6)
    const t = w.from * 1e6 + Math.floor((micros - w.from * 1e6) / w.widthMicros) * w.widthMicros
    const g = groups.get(t) ?? []
    g.push({ ts: micros, v: e.point.number })
    groups.set(t, g)
  }
  const buckets = [...groups.entries()].map(([t, g]) => ({
    t,
    first: g[0]!.v,
    last: g[g.length - 1]!.v,
    min: Math.min(...g.map((e) => e.v)),
    max: Math.max(...g.map((e) => e.v))
  }))
  return { buckets, entries: body.data.length }
}

/** Fails unless every bucket's first, last, lowest and highest value agree (see the header). */
const compare = async (influx: Influx, ds: Dashstream, name: string, w: Window): Promise<string> => {
  const expected = await influxBuckets(influx, w)
  const { buckets, entries } = await dashstreamBuckets(ds, w)
  if (expected.length !== buckets.length) {
    throw new Error(`${name} ${w.name}: InfluxDB has ${expected.length} buckets, Dashstream ${buckets.length}`)
  }
  for (let i = 0; i < expected.length; i++) {
    const a = expected[i]!
    const b = buckets[i]!
    if (a.t !== b.t || a.first !== b.first || a.last !== b.last || a.min !== b.min || a.max !== b.max) {
      throw new Error(`${name} ${w.name}: bucket ${i} differs: InfluxDB ${JSON.stringify(a)}, ${JSON.stringify(b)}`)
    }
  }
  return `${name} ${w.name}: ${expected.length} buckets equal (first, last, min, max), ${entries} entries kept`
}

interface Row {
  readonly target: string
  readonly window: string
  readonly round: number
  readonly result: LoadResult
  /** The server's CPU (its process tree) per query answered, in milliseconds; undefined when not measured. */
  readonly cpuMs: number | undefined
}
const rows: Array<Row> = []

/** Loads `url` with wrk; with `pid`, also the CPU that process tree spent per query while measured. */
const measure = async (
  target: string,
  window: string,
  round: number,
  url: string,
  lua: string,
  pid?: number
): Promise<void> => {
  if (warmup > 0) await wrk({ url, lua, seconds: warmup, connections, threads })
  const cpu0 = pid === undefined ? 0 : treeCpuMicros(pid)
  const result = await wrk({ url, lua, seconds, connections, threads })
  const cpuMs = pid === undefined ? undefined : (treeCpuMicros(pid) - cpu0) / 1000 / Math.max(1, result.requests)
  rows.push({ target, window, round, result, cpuMs })
  console.error(
    `round ${round + 1}  ${target.padEnd(22)} ${window.padEnd(22)} ${result.reqPerSec.toFixed(0).padStart(7)} q/s  ` +
      `p50 ${result.p50.toFixed(1)} ms  p99 ${result.p99.toFixed(1)} ms  errors ${result.errors}` +
      (cpuMs === undefined ? "" : `  server CPU ${cpuMs.toFixed(1)} ms/query`)
  )
  if (result.errors > 0) throw new Error(`${target} ${window}: ${result.errors} errors`)
}

ensureDebianPackages([
  { command: "wrk", pkg: "wrk" },
  { command: "influxd", pkg: "influxdb" }
])

const loadBefore = loadavg()[0]!
const cleanups: Array<() => Promise<void>> = []
try {
  const influx = only.has("influx") ? await startInflux() : undefined
  if (influx !== undefined) {
    cleanups.push(influx.stop)
    await loadInflux(influx)
  }
  const targets: Array<{ name: string; ds: Dashstream; db: string }> = []
  if (only.has("sqlite")) {
    const dir = mkdtempSync(join(tmpdir(), "dashstream-bench-range-"))
    const db = `sqlite:${join(dir, "range.db")}`
    const ds = await startDashstream(root, db, { widgetType: "sparkline", streams: 1, widgets: yearWidget() })
    cleanups.push(async () => {
      await ds.stop()
      rmSync(dir, { recursive: true, force: true })
    })
    targets.push({ name: "Dashstream SQLite", ds, db })
  }
  if (only.has("postgres")) {
    const { openTestDatabase } = await import("@dashstream/storage-postgres/testing")
    const pg = await openTestDatabase()
    if (pg === undefined) throw new Error("no PostgreSQL server found or started")
    cleanups.push(() => pg.close())
    const ds = await startDashstream(root, pg.url, { widgetType: "sparkline", streams: 1, widgets: yearWidget() })
    cleanups.push(() => ds.stop())
    targets.push({ name: "Dashstream PostgreSQL", ds, db: pg.url })
  }
  for (const t of targets) {
    // The year first: the pass thins every stream, and the 30 days are compared entry for entry.
    if (!values["no-year"]) console.error(`${t.name}: year stream decimated: ${await loadYear(t.ds, t.db)}`)
    const t0 = performance.now()
    await loadDashstream(t.ds)
    console.error(`${t.name}: ${count} entries loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s`)
    // PostgreSQL's autovacuum (on by default, off on some test servers) analyzes a table this size within a minute
    // of its load; without statistics the planner reads every block of the stream, then sorts, for each page.
    if (t.db.startsWith("postgres")) await run("psql", [t.db, "-qc", "ANALYZE"])
    if (influx !== undefined) for (const w of windows) console.error(await compare(influx, t.ds, t.name, w))
  }

  const ceiling = only.has("ceiling") ? await startCeiling() : undefined
  if (ceiling !== undefined) cleanups.push(ceiling.stop)
  for (let round = 0; round < rounds; round++) {
    if (ceiling !== undefined) {
      await measure("node:http ceiling", "JSON POST", round, ceiling.url, postLua("/", "'{}'"))
    }
    for (const w of windows) {
      const label = `${w.name}, ${points} points`
      if (influx !== undefined) await measure("InfluxDB 1.6", label, round, influx.url, getLua(`"${influxPath(w)}"`))
      for (const t of targets) {
        const path = dashstreamPath(t.ds, "s0", w.from, toOf(w))
        await measure(t.name, label, round, t.ds.url, getLua(`"${path}"`), t.ds.pid)
      }
    }
    if (!values["no-year"]) {
      for (const t of targets) {
        const path = dashstreamPath(t.ds, "year", yearStart, `${yearEnd}`)
        await measure(t.name, `1 year decimated, ${points}`, round, t.ds.url, getLua(`"${path}"`), t.ds.pid)
      }
    }
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup()
}

function yearWidget() {
  return values["no-year"] ? [] : [{ streamName: "year", type: "sparkline" }]
}

async function startCeiling(): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort()
  const url = `http://127.0.0.1:${port}`
  const child = await startProcess(
    process.execPath,
    [join(import.meta.dirname, "..", "push", "ceiling.mjs"), String(port)],
    async () => (await fetch(url, { method: "POST", body: "{}" })).ok
  )
  return { url, stop: () => stopProcess(child) }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

console.log(
  `\nmachine: ${cpus().length} x ${cpus()[0]?.model ?? "?"}, node ${process.version}; load average ` +
    `${loadBefore.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after; wrk -t${threads} -c${connections} -d${seconds}s; ` +
    `median of ${rounds} round(s)\n`
)
console.log("| target | window | queries/s | p50 ms | p99 ms | ÷ InfluxDB queries/s | server CPU ms/query |")
console.log("|---|---|---:|---:|---:|---:|---:|")
const keys = [...new Set(rows.map((r) => `${r.target}\u0000${r.window}`))]
for (const key of keys) {
  const [target, window] = key.split("\u0000") as [string, string]
  const mine = rows.filter((r) => r.target === target && r.window === window)
  const ratios = mine.flatMap((r) => {
    const peer = rows.find((p) => p.target === "InfluxDB 1.6" && p.window === window && p.round === r.round)
    return peer === undefined || target === "InfluxDB 1.6" ? [] : [r.result.reqPerSec / peer.result.reqPerSec]
  })
  console.log(
    `| ${target} | ${window} | ${median(mine.map((r) => r.result.reqPerSec)).toFixed(0)} | ` +
      `${median(mine.map((r) => r.result.p50)).toFixed(1)} | ${median(mine.map((r) => r.result.p99)).toFixed(1)} | ` +
      `${ratios.length === 0 ? "-" : `${median(ratios).toFixed(2)}x`} | ` +
      `${mine[0]!.cpuMs === undefined ? "-" : median(mine.map((r) => r.cpuMs!)).toFixed(1)} |`
  )
}
