/**
 * The PostgreSQL group commit without HTTP: `writers` concurrent writers, each pushing `points`
 * timestamped points to one sparkline per call (the bench/push `spark` load: two interleaved sequences of
 * 1,000-second blocks, so most blocks land below the stream's `last_ts`), for `seconds`. Prints calls/s, this
 * process's CPU per call and the PostgreSQL backends' CPU per call (from /proc: the backends of this run's own
 * database), and how the groups were planned.
 *
 * Usage: npx tsx --conditions=@dashstream/source bench/postgres-rows/groups.ts [--seconds 10] [--writers 50]
 *   [--points 1000] [--streams 1] [--behind 0]
 *
 * `--behind N` starts the second sequence N blocks behind the first (as a wrk thread that lags the other): its blocks
 * then all land below `last_ts`, between stored blocks of the first.
 */
import type { PointOp, StreamWrite, Widget } from "@dashstream/core"
import { micros } from "@dashstream/core"
import { migrate, parseUrl } from "@dashstream/storage-postgres"
import { Effect } from "effect"
import { readFileSync } from "node:fs"
import { parseArgs } from "node:util"
import pg from "pg"
import { GroupCommit } from "../../packages/storage-postgres/src/internal/groupCommit.js"
import { makePool } from "../../packages/storage-postgres/src/internal/pool.js"
import { withTestDatabase } from "../lib/postgres.js"

const { values: args } = parseArgs({
  options: {
    seconds: { type: "string", default: "10" },
    writers: { type: "string", default: "50" },
    points: { type: "string", default: "1000" },
    streams: { type: "string", default: "1" },
    behind: { type: "string", default: "0" }
  }
})
const [seconds, writers, points, streamCount, behind] = [
  args.seconds,
  args.writers,
  args.points,
  args.streams,
  args.behind
].map(Number)

/** CPU time (user + system) of process `pid` so far, microseconds (10 ms ticks). */
const cpuMicros = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    return (Number(fields[11]) + Number(fields[12])) * 10_000
  } catch {
    return 0
  }
}

await withTestDatabase(async (url) => {
  const config = await Effect.runPromise(parseUrl(url))
  await Effect.runPromise(migrate(config))
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query("INSERT INTO accounts (id, name, created_at) VALUES ('a', 'bench', 0)")
  const widgets: Array<Widget> = []
  for (let s = 0; s < streamCount; s++) {
    const row = await admin.query<{ id: string }>(
      "INSERT INTO streams (account_id, name, type, created_at) VALUES ('a', $1, 'sparkline', 0) RETURNING id",
      [`spark${s}`]
    )
    widgets.push({
      id: Number(row.rows[0]!.id),
      accountId: "a",
      streamName: `spark${s}`,
      type: "sparkline",
      createdAt: 0
    } as never)
  }
  const pool = makePool(config)
  const group = new GroupCommit(pool)
  const start = 1_700_000_000
  const counters = [0, 0]
  // Each call: one block of `points` seconds; writer w belongs to sequence w % 2, as wrk's two threads.
  const call = (w: number): ReadonlyArray<StreamWrite> => {
    const sequence = w % 2
    const base = start + ((counters[sequence]! += 1) * 2 + sequence - (sequence === 1 ? behind * 2 : 0)) * points
    const op: PointOp = {
      _tag: "Put",
      entries: Array.from({ length: points }, (_, k) => ({
        point: { number: k },
        ts: micros((base + k) * 1_000_000)
      }))
    }
    return [{ widget: widgets[w % widgets.length]!, op, path: "point" }]
  }
  let calls = 0
  let running = true
  const writer = async (w: number) => {
    while (running) {
      await Effect.runPromise(group.write(call(w), micros(Date.now() * 1000)))
      calls++
    }
  }
  const backends = async () =>
    (
      await admin.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
      )
    ).rows.map((r) => r.pid)
  const done = Array.from({ length: writers }, (_, w) => writer(w))
  await new Promise((r) => setTimeout(r, 2000))
  const pids = await backends()
  const [calls0, node0, pg0, t0] = [
    calls,
    process.cpuUsage(),
    pids.reduce((s, p) => s + cpuMicros(p), 0),
    performance.now()
  ]
  await new Promise((r) => setTimeout(r, seconds * 1000))
  const pids1 = await backends()
  const pg1 = pids1.reduce((s, p) => s + cpuMicros(p), 0)
  const node1 = process.cpuUsage(node0)
  const [n, t1] = [calls - calls0, performance.now()]
  running = false
  await Promise.all(done)
  await group.close()
  await pool.end()
  await admin.end()
  const perCall = (us: number) => (us / n).toFixed(0)
  console.log(
    `${(n / ((t1 - t0) / 1000)).toFixed(0)} calls/s of ${points} points to ${streamCount} stream(s); ` +
      `node CPU ${perCall(node1.user + node1.system)} µs/call; PostgreSQL backends ${perCall(pg1 - pg0)} µs/call ` +
      `(${pids.length} backends, ${pids1.filter((p) => !pids.includes(p)).length} new); ` +
      `groups ${group.groups}, guessed ${group.guessedGroups}, stale ${group.staleGroups}`
  )
})
