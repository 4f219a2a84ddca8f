/**
 * CPU per range read in one process, without HTTP: the 30 days of 10-second points of `run.ts` (259,200 entries)
 * written to a SQLite file (or, with `--postgres <url>`, a fresh schema of that PostgreSQL database) through the
 * `StreamStore` port, then the 30-day and 24-hour windows read at 1,000 points
 * `--reads` times each, one after another. Prints milliseconds per read (wall and process CPU, which on an idle
 * store are the same work) and the entries kept. Less sensitive to a loaded machine than `run.ts`'s queries/s.
 *
 * Usage: pnpm bench:range-store [--reads 50] [--postgres postgres://postgres@127.0.0.1:5432/postgres]
 */
import { mkdtempSync, rmSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { parseArgs } from "node:util"
import {
  AccountStore,
  digestAccessKey,
  micros,
  newAccessKey,
  newAccountId,
  type RangeQuery,
  StreamName,
  StreamStore
} from "@dashstream/core"
import * as SqliteStore from "@dashstream/storage-sqlite"
import { freshSchemaLayer } from "@dashstream/storage-postgres/testing"
import { Effect, Layer } from "effect"

const { values } = parseArgs({
  options: { reads: { type: "string", default: "50" }, postgres: { type: "string" } }
})
const reads = Number(values.reads)
const step = 10
const day = 86_400
const start = Math.floor(1_700_000_000 / 259_200) * 259_200
const count = (30 * day) / step

const program = Effect.gen(function* () {
  const accounts = yield* AccountStore
  const streams = yield* StreamStore
  const account = { id: newAccountId(), name: "bench", createdAt: micros(start * 1e6) }
  yield* accounts.createAccount(account, digestAccessKey(newAccessKey()))
  const widget = yield* accounts.createWidget(account.id, StreamName.make("s0"), "number", micros(start * 1e6))
  let x = 500
  let seed = 42
  const batch = 1000
  for (let k = 0; k < count; k += batch) {
    const entries = []
    for (let j = k; j < Math.min(count, k + batch); j++) {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      x = Math.min(1000, Math.max(0, x + ((seed % 21) - 10)))
      entries.push({ point: { number: x / 10 }, ts: micros((start + j * step) * 1e6) })
    }
    yield* streams.write([{ widget, op: { _tag: "Put", entries }, path: "points" }], micros(Date.now() * 1000))
  }
  const windows: ReadonlyArray<[string, number]> = [
    ["30 days", 30 * day],
    ["24 hours", day]
  ]
  for (const [name, span] of windows) {
    const from = start * 1e6
    const query: RangeQuery = {
      from: micros(from),
      since: null,
      to: micros(from + span * 1e6 - 1),
      points: 1000,
      mode: "extremes",
      limit: null
    }
    let kept = 0
    for (let i = 0; i < 3; i++) kept = (yield* streams.readRange(widget.id, query)).length
    const cpu = process.cpuUsage()
    const t = performance.now()
    for (let i = 0; i < reads; i++) yield* streams.readRange(widget.id, query)
    const wall = (performance.now() - t) / reads
    const used = process.cpuUsage(cpu)
    const cpuMs = (used.user + used.system) / 1000 / reads
    console.log(`${name}, 1000 points: ${wall.toFixed(2)} ms wall, ${cpuMs.toFixed(2)} ms CPU a read, ${kept} kept`)
  }
})

const dir = mkdtempSync(join(tmpdir(), "dashstream-range-store-"))
const layer =
  values.postgres === undefined
    ? Layer.orDie(SqliteStore.layer({ filename: join(dir, "range.db") }))
    : Layer.orDie(freshSchemaLayer(values.postgres))
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")}`
)
await Effect.runPromise(Effect.provide(program, layer as never) as Effect.Effect<void>).finally(() =>
  rmSync(dir, { recursive: true, force: true })
)
