/**
 * The SQLite group commit's CPU per call without HTTP: runs groups of `write` calls through
 * the adapter's `GroupCommit` on a fresh file (`synchronous=NORMAL`, so no fsync is measured) and prints the process's
 * CPU time (user + system) per call, for loads shaped like the push benchmark's:
 *
 * - `multi`: each call one number to each of 100 streams (server-assigned `ts`);
 * - `spark`: each call 1,000 timestamped numbers to one stream, call i of thread t covering seconds
 *   `1e6 + (2 * i + t) * 1000 + k`, k = 0..999 (as the push benchmark's `spark` sends them);
 * - `lp`: each call 100 timestamped numbers to each of 10 streams, call i of thread t covering second `2 * i + t`.
 *
 * Calls alternate between two threads, thread 1 `--lag` calls behind thread 0 (so its batches arrive late, as with
 * wrk's two threads).
 *
 * Usage: tsx --conditions=@dashstream/source bench/sqlite-groups/run.ts [--scenario multi|spark|lp] [--groups 300]
 *   [--calls 19] [--lag 10]
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import {
  digestAccessKey,
  micros,
  newAccessKey,
  newAccountId,
  type StreamWrite,
  StreamName,
  type Widget
} from "@dashstream/core"
import { Effect } from "effect"
import { acquire } from "../../packages/storage-sqlite/src/internal/database.js"
import { GroupCommit } from "../../packages/storage-sqlite/src/internal/groupCommit.js"
import { prepareWriteStatements } from "../../packages/storage-sqlite/src/internal/writePath.js"
import { runMigrations } from "../../packages/storage-sqlite/src/Migrations.js"
import * as SqliteAccountStore from "../../packages/storage-sqlite/src/SqliteAccountStore.js"

const { values } = parseArgs({
  options: {
    scenario: { type: "string", default: "multi" },
    groups: { type: "string", default: "300" },
    calls: { type: "string", default: "19" },
    lag: { type: "string", default: "10" }
  }
})
const groups = Number(values.groups)
const callsPerGroup = Number(values.calls)
const lag = Number(values.lag)
const T0 = 1_700_000_000_000_000
const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-groups-"))

const put = (widget: Widget, entries: ReadonlyArray<readonly [number, number | undefined]>): StreamWrite => ({
  widget,
  op: {
    _tag: "Put",
    entries: entries.map(([n, ts]) =>
      ts === undefined ? { point: { number: n } } : { point: { number: n }, ts: micros(ts) }
    )
  },
  path: "point"
})

await Effect.runPromise(
  Effect.scoped(
    Effect.gen(function* () {
      const { db, kysely } = yield* acquire({ filename: Path.join(dir, "groups.db") })
      yield* runMigrations({ db, kysely })
      db.pragma("synchronous = NORMAL")
      const accounts = SqliteAccountStore.make(db, kysely)
      const account = { id: newAccountId(), name: "bench", createdAt: T0 }
      yield* accounts.createAccount(account, digestAccessKey(newAccessKey()))
      const widgets: Array<Widget> = []
      for (let k = 0; k < 100; k++)
        widgets.push(yield* accounts.createWidget(account.id, StreamName.make(`s${k}`), "sparkline", T0))
      const group = new GroupCommit(db, prepareWriteStatements(db))
      const counters = [0, 0]
      const call = (n: number): ReadonlyArray<StreamWrite> => {
        const thread = n % 2
        const i = Math.max(0, counters[thread]!++ - thread * lag)
        if (values.scenario === "multi") return widgets.map((w) => put(w, [[n, undefined]]))
        if (values.scenario === "spark") {
          return [
            put(
              widgets[0]!,
              Array.from({ length: 1000 }, (_, k) => [k, (1e6 + (2 * i + thread) * 1000 + k) * 1e6] as const)
            )
          ]
        }
        const second = 2 * i + thread
        return widgets.slice(0, 10).map((w, s) =>
          put(
            w,
            Array.from({ length: 100 }, (_, k) => [k, (1e9 + second) * 1e6 + (k * 10 + s) * 1e3] as const)
          )
        )
      }
      const runGroup = (g: number) =>
        new Promise<void>((resolve, reject) => {
          let left = callsPerGroup
          for (let c = 0; c < callsPerGroup; c++) {
            group.writeDirect(call(g * callsPerGroup + c), micros(T0 + g), (error) => {
              if (error !== undefined) reject(new Error(String(error)))
              else if (--left === 0) resolve()
            })
          }
        })
      for (let g = 0; g < 20; g++) yield* Effect.promise(() => runGroup(g))
      const warmupGroups = group.groups
      const before = process.cpuUsage()
      for (let g = 20; g < 20 + groups; g++) yield* Effect.promise(() => runGroup(g))
      const used = process.cpuUsage(before)
      const calls = groups * callsPerGroup
      console.log(
        `${values.scenario}: ${calls} calls in ${group.groups - warmupGroups} groups, ${((used.user + used.system) / calls).toFixed(0)} µs of CPU per call`
      )
      group.close()
    })
  )
)
Fs.rmSync(dir, { recursive: true, force: true })
