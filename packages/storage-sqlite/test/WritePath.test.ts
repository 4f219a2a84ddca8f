import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import Database from "better-sqlite3"
import {
  type Account,
  digestAccessKey,
  micros,
  newAccessKey,
  newAccountId,
  type PointOp,
  StreamName,
  type StreamWrite,
  type Widget,
  type WidgetType
} from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { acquire } from "../src/internal/database.js"
import { GroupCommit } from "../src/internal/groupCommit.js"
import { prepareBlockReads } from "../src/internal/blockReads.js"
import { prepareWriteStatements } from "../src/internal/writePath.js"
import { runMigrations } from "../src/Migrations.js"
import * as SqliteAccountStore from "../src/SqliteAccountStore.js"
import { entryRows } from "./fixtures/entryRows.js"

// The write path's memory and batching: each stream's last ts kept by the writer across groups, and the
// entries of a call stored with multi-row upserts. What they must never change is what the file holds.

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-write-path-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => Path.join(dir, `write-path-${++files}.db`)

const T0 = 1_700_000_000_000_000

const open = (filename: string) =>
  Effect.gen(function* () {
    const { db, kysely } = yield* acquire({ filename })
    yield* runMigrations(kysely)
    const accountStore = SqliteAccountStore.make(db, kysely)
    const group = yield* Effect.acquireRelease(
      Effect.sync(() => new GroupCommit(db, prepareWriteStatements(db))),
      (g) => Effect.sync(() => g.close())
    )
    const account: Account = { id: newAccountId(), name: "a", createdAt: T0 }
    yield* accountStore.createAccount(account, digestAccessKey(newAccessKey()))
    const widget = (name: string, type: WidgetType) =>
      accountStore.createWidget(account.id, StreamName.make(name), type, T0)
    return { db, accountStore, account, group, widget }
  })

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
const op = (widget: Widget, o: PointOp): StreamWrite => ({ widget, op: o, path: "point" })

const rows = (db: Database.Database, widget: Widget) =>
  entryRows(db, widget.id).map(({ ts, value, point }) => ({ ts, value, point }))
const lastTsInFile = (db: Database.Database, widget: Widget) =>
  db.prepare("SELECT last_ts FROM streams WHERE id = ?").pluck().get(widget.id) as number | null

// A second connection to the file, as another process (or `dashstream decimate`) would open it.
const otherConnection = <A>(filename: string, f: (db: Database.Database) => A): A => {
  const db = new Database(filename)
  try {
    db.pragma("foreign_keys = ON")
    db.pragma("busy_timeout = 5000")
    return f(db)
  } finally {
    db.close()
  }
}

const tagOf = (e: Either.Either<void, { readonly _tag: string }>) => (Either.isLeft(e) ? e.left._tag : "ok")

describe("SQLite write path: last ts kept by the writer, entries in blocks", () => {
  it.effect("a call rolled back to its savepoint leaves no last ts behind", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* open(freshFile())
        const a = yield* widget("a", "sparkline")
        const table = yield* widget("t", "table")
        yield* group.write([op(table, { _tag: "TableRow", row: ["h1", "h2"] })], micros(T0))
        // The first write moves a's last ts far ahead; the second does not fit the table: the call fails whole.
        const failed = yield* Effect.either(
          group.write([put(a, [[1, T0 + 1_000_000_000]]), op(table, { _tag: "TableRow", row: ["x"] })], micros(T0))
        )
        assert.strictEqual(tagOf(failed), "InvalidPoint")
        yield* group.write([put(a, [[2, undefined]])], micros(T0 + 1))
        assert.deepStrictEqual(
          rows(db, a).map((r) => r.ts),
          [T0 + 1]
        )
        assert.strictEqual(lastTsInFile(db, a), T0 + 1)
      })
    )
  )

  it.effect(
    "calls of one group writing one stream out of order and over each other store what they would one by one",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { db, group, widget } = yield* open(freshFile())
          const a = yield* widget("a", "sparkline")
          const span = (from: number, to: number, n: number) =>
            Array.from({ length: to - from + 1 }, (_, k) => [n, T0 + from + k] as const)
          yield* group.write([put(a, span(10, 14, 0))], micros(T0))
          // One group (the entries of its calls are stored once, before COMMIT): an append above the tail, one
          // overlapping the stored entries and the first call and going past it, a back-fill before everything, a
          // replacement, one out of order in itself.
          const calls: ReadonlyArray<ReadonlyArray<readonly [number, number]>> = [
            span(20, 25, 1),
            span(12, 27, 2),
            span(1, 3, 3),
            [[4, T0 + 24]],
            [...span(40, 41, 5), ...span(30, 31, 5)]
          ]
          const groupsBefore = group.groups
          yield* Effect.all(
            calls.map((entries) => group.write([put(a, entries)], micros(T0))),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(group.groups - groupsBefore, 1)
          const model = new Map<number, number>(span(10, 14, 0).map(([n, ts]) => [ts, n]))
          for (const entries of calls) for (const [n, ts] of entries) model.set(ts, n)
          assert.deepStrictEqual(
            rows(db, a).map((r) => [r.ts, (JSON.parse(r.point) as { number: number }).number]),
            [...model].sort((x, y) => x[0] - y[0])
          )
          assert.strictEqual(lastTsInFile(db, a), T0 + 41)
        })
      )
  )

  it.effect("a late batch that splits the tail block and reaches past it appends the rest to the new tail", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* open(freshFile())
        const a = yield* widget("a", "sparkline")
        const every = (from: number, to: number, step: number, n: number) =>
          Array.from({ length: Math.floor((to - from) / step) + 1 }, (_, k) => [n, T0 + from + k * step] as const)
        yield* group.write([put(a, every(10, 200, 10, 0))], micros(T0))
        // In one group: an append to the tail block (then 23 entries), then a batch filling it past twice the block
        // size (it splits, the tail block starting elsewhere) and going past its end.
        const calls = [every(210, 230, 10, 1), every(1, 250, 3, 2)]
        yield* Effect.all(
          calls.map((entries) => group.write([put(a, entries)], micros(T0))),
          { concurrency: "unbounded" }
        )
        const model = new Map<number, number>(every(10, 200, 10, 0).map(([n, ts]) => [ts, n]))
        for (const entries of calls) for (const [n, ts] of entries) model.set(ts, n)
        assert.deepStrictEqual(
          rows(db, a).map((r) => [r.ts, (JSON.parse(r.point) as { number: number }).number]),
          [...model].sort((x, y) => x[0] - y[0])
        )
      })
    )
  )

  it.effect(
    "late ascending batches merged into stored blocks on their bytes (replacing, splitting, in gaps, before the first) store what a model holds",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { db, group, widget } = yield* open(freshFile())
          const a = yield* widget("a", "sparkline")
          const feed = yield* widget("f", "text-feed")
          // A fixed pseudo-random sequence (so a failure repeats): each call an ascending batch of a random range and
          // step, most of them below the stream's last ts (merged into the blocks holding them), some in groups of
          // several calls. Text points of varied length make blocks close by bytes too.
          let seed = 26
          const random = (n: number) => {
            seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff
            return seed % n
          }
          const numbers = new Map<number, number>()
          const texts = new Map<number, string>()
          const batch = (n: number): Array<number> => {
            const from = random(4000)
            const step = 1 + random(40)
            return Array.from({ length: 1 + random(n) }, (_, k) => from + k * step)
          }
          for (let round = 0; round < 60; round++) {
            const calls = Array.from({ length: 1 + random(3) }, () => {
              const ts = batch(150)
              const text = batch(12)
              const n = random(1000)
              const msg = "m".repeat(random(3) === 0 ? 5_000 + random(4_000) : random(30))
              return [
                put(
                  a,
                  ts.map((t) => [n + t, T0 + t] as const)
                ),
                {
                  widget: feed,
                  op: {
                    _tag: "Put",
                    entries: text.map((t) => ({ point: { title: `${n}`, msg }, ts: micros(T0 + t) }))
                  },
                  path: "point"
                } satisfies StreamWrite
              ] as const
            })
            yield* Effect.all(
              calls.map((writes) => group.write(writes, micros(T0))),
              { concurrency: "unbounded" }
            )
            for (const [numberWrite, textWrite] of calls) {
              if (numberWrite.op._tag !== "Put" || textWrite.op._tag !== "Put") throw new Error("not a Put")
              for (const e of numberWrite.op.entries) numbers.set(e.ts!, (e.point as { number: number }).number)
              for (const e of textWrite.op.entries) texts.set(e.ts!, JSON.stringify(e.point))
            }
          }
          // entryRows checks every block: disjoint ascending ranges, columns matching the data.
          assert.deepStrictEqual(
            rows(db, a).map((r) => [r.ts, r.value, JSON.parse(r.point).number]),
            [...numbers].sort((x, y) => x[0] - y[0]).map(([ts, n]) => [ts, n, n])
          )
          assert.deepStrictEqual(
            rows(db, feed).map((r) => [r.ts, r.value, r.point]),
            [...texts].sort((x, y) => x[0] - y[0]).map(([ts, json]) => [ts, null, json])
          )
          const blocks = db
            .prepare("SELECT n, length(data) FROM entry_blocks ORDER BY stream_id, first_ts")
            .raw()
            .all() as Array<[number, number]>
          for (const [n, bytes] of blocks) {
            assert.isAtMost(n, 64)
            if (n > 1) assert.isAtMost(bytes, 32 * 1024)
          }
        })
      )
  )

  it.effect(
    "a call of 32 entries or more to a stream begins blocks of its own: another client's late batch between two such calls is inserted in the gap, the stored blocks untouched; single points fill the tail block",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { db, group, widget } = yield* open(freshFile())
          const blocksOf = (w: Widget) =>
            db
              .prepare("SELECT first_ts, last_ts, n, hex(data) FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts")
              .raw()
              .all(w.id) as Array<[number, number, number, string]>
          // 100 entries 10 µs apart from `from` (a line protocol body's points of one series, a second of them).
          const second = (from: number, n: number) =>
            Array.from({ length: 100 }, (_, k) => [n + k, T0 + from + 10 * k] as const)
          // The blocks of one such call: 32, 32, 32 and 4 entries, as [first ts - T0, last ts - T0, n].
          const callBlocks = (s: number) => [
            [s, s + 310, 32],
            [s + 320, s + 630, 32],
            [s + 640, s + 950, 32],
            [s + 960, s + 990, 4]
          ]
          for (const together of [false, true]) {
            const a = yield* widget(`a${together}`, "sparkline")
            // Two clients a "second" (1,000 µs) apart: calls at 0 and 2,000, then the late one at 1,000, in one group
            // with them or in a group of its own.
            const early = [put(a, second(0, 0)), put(a, second(2000, 200))]
            if (together) {
              yield* Effect.all(
                [...early, put(a, second(1000, 100))].map((w) => group.write([w], micros(T0))),
                {
                  concurrency: "unbounded"
                }
              )
            } else {
              yield* Effect.all(
                early.map((w) => group.write([w], micros(T0))),
                { concurrency: "unbounded" }
              )
            }
            const before = blocksOf(a)
            // Each call's 100 entries: blocks of 32, 32, 32 and 4, none spanning two calls.
            assert.deepStrictEqual(
              before.map(([first, last, n]) => [first - T0, last - T0, n]),
              (together ? [0, 1000, 2000] : [0, 2000]).flatMap(callBlocks)
            )
            if (!together) {
              yield* group.write([put(a, second(1000, 100))], micros(T0))
              const after = blocksOf(a)
              // The late call's blocks are new rows between the others, which are byte for byte as they were.
              assert.deepStrictEqual(
                after.filter(([first]) => first - T0 < 1000 || first - T0 >= 2000),
                before
              )
              assert.deepStrictEqual(
                after
                  .filter(([first]) => first - T0 >= 1000 && first - T0 < 2000)
                  .map(([f, l, n]) => [f - T0, l - T0, n]),
                callBlocks(1000)
              )
            }
            assert.deepStrictEqual(
              rows(db, a).map((r) => [r.ts - T0, JSON.parse(r.point).number]),
              [0, 1000, 2000].flatMap((s) => Array.from({ length: 100 }, (_, k) => [s + 10 * k, s / 10 + k]))
            )
          }
          // Single points, one call each: the tail block fills to 32 entries, then the next begins.
          const b = yield* widget("b", "sparkline")
          for (let k = 0; k < 40; k++) yield* group.write([put(b, [[k, T0 + k]])], micros(T0))
          // A call of 34 entries after them begins blocks of its own (32 and 2 entries); the next single point
          // continues the second.
          yield* group.write(
            [
              put(
                b,
                Array.from({ length: 34 }, (_, k) => [k, T0 + 100 + k] as const)
              )
            ],
            micros(T0)
          )
          yield* group.write([put(b, [[0, T0 + 200]])], micros(T0))
          assert.deepStrictEqual(
            blocksOf(b).map(([first, last, n]) => [first - T0, last - T0, n]),
            [
              [0, 31, 32],
              [32, 39, 8],
              [100, 131, 32],
              [132, 200, 3]
            ]
          )
        })
      )
  )

  it.effect("a last ts moved by another connection is seen by the next write", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const { db, group, widget } = yield* open(filename)
        const a = yield* widget("a", "number")
        yield* group.write([put(a, [[1, undefined]])], micros(T0))
        otherConnection(filename, (other) =>
          other.prepare("UPDATE streams SET last_ts = ? WHERE id = ?").run(T0 + 5_000_000, a.id)
        )
        yield* group.write([put(a, [[2, undefined]])], micros(T0 + 1))
        assert.deepStrictEqual(
          rows(db, a).map((r) => r.ts),
          [T0, T0 + 5_000_001]
        )
        assert.strictEqual(lastTsInFile(db, a), T0 + 5_000_001)
      })
    )
  )

  it.effect("a stream deleted by another connection is found gone (StreamNotFound), not written", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const { group, widget } = yield* open(filename)
        const a = yield* widget("a", "number")
        yield* group.write([put(a, [[1, undefined]])], micros(T0))
        otherConnection(filename, (other) => other.prepare("DELETE FROM streams WHERE id = ?").run(a.id))
        const outcome = yield* Effect.either(group.write([put(a, [[2, undefined]])], micros(T0 + 1)))
        assert.strictEqual(tagOf(outcome), "StreamNotFound")
      })
    )
  )

  it.effect("a widget deleted on the writer's own connection is found gone (StreamNotFound)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { accountStore, account, group, widget } = yield* open(freshFile())
        const a = yield* widget("a", "number")
        yield* group.write([put(a, [[1, undefined]])], micros(T0))
        yield* accountStore.deleteWidget(account.id, a.streamName)
        const outcome = yield* Effect.either(group.write([put(a, [[2, undefined]])], micros(T0 + 1)))
        assert.strictEqual(tagOf(outcome), "StreamNotFound")
      })
    )
  )

  it.effect(
    "back-fills and replacements merge into the blocks holding their ts; a block past 64 entries splits; a late batch in a gap is new blocks",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { db, group, widget } = yield* open(freshFile())
          const s = yield* widget("s", "sparkline")
          // 100 entries at even offsets (blocks of 32, 32, 32, 4), then calls in other orders: the odd offsets in
          // between (descending, so not an append), a replacement of every tenth, and one before the first entry.
          yield* group.write(
            [
              put(
                s,
                Array.from({ length: 100 }, (_, k) => [k, T0 + 2 * k] as const)
              )
            ],
            micros(T0)
          )
          yield* group.write(
            [
              put(
                s,
                Array.from({ length: 100 }, (_, k) => [1000 + 99 - k, T0 + 2 * (99 - k) + 1] as const)
              )
            ],
            micros(T0)
          )
          yield* group.write(
            [
              put(
                s,
                Array.from({ length: 20 }, (_, k) => [-k - 1, T0 + 20 * k] as const)
              ),
              put(s, [[-100, T0 - 1]])
            ],
            micros(T0)
          )
          const expected = new Map<number, number>()
          for (let k = 0; k < 100; k++) expected.set(T0 + 2 * k, k).set(T0 + 2 * k + 1, 1000 + k)
          for (let k = 0; k < 20; k++) expected.set(T0 + 20 * k, -k - 1)
          expected.set(T0 - 1, -100)
          // entryRows checks every block: disjoint ascending ranges, columns matching the data.
          assert.deepStrictEqual(
            rows(db, s).map((r) => [r.ts, JSON.parse(r.point).number]),
            [...expected].sort((a, b) => a[0] - b[0])
          )
          const sizes = db.prepare("SELECT n FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts").pluck().all(s.id)
          assert.isAbove(sizes.length, 4, "the merged blocks were split")
          for (const n of sizes) assert.isAtMost(n as number, 64)

          // Two full blocks, two more far ahead, then a late batch in the gap between them: new blocks, none rewritten.
          const g = yield* widget("g", "sparkline")
          const batch = (from: number, count: number) =>
            put(
              g,
              Array.from({ length: count }, (_, k) => [from + k, T0 + from + k] as const)
            )
          yield* group.write([batch(0, 64)], micros(T0))
          yield* group.write([batch(1000, 64)], micros(T0))
          yield* group.write([batch(500, 40)], micros(T0))
          assert.deepStrictEqual(
            rows(db, g).map((r) => r.ts - T0),
            [...Array.from({ length: 64 }, (_, k) => k), ...Array.from({ length: 40 }, (_, k) => 500 + k)].concat(
              Array.from({ length: 64 }, (_, k) => 1000 + k)
            )
          )
          assert.deepStrictEqual(
            db
              .prepare("SELECT first_ts - ?, n FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts")
              .raw()
              .all(T0, g.id),
            [
              [0, 32],
              [32, 32],
              [500, 32],
              [532, 8],
              [1000, 32],
              [1032, 32]
            ]
          )
        })
      )
  )

  it.effect(
    "a block closes at 16 KiB of data as well as at 32 entries: 6 KB points make blocks of 2, a larger point a block alone, a replacement leaves at most 32 KiB",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { db, group, widget } = yield* open(freshFile())
          const f = yield* widget("f", "text-feed")
          const msg = "m".repeat(6_000)
          const feed = (entries: ReadonlyArray<readonly [string, number]>): StreamWrite => ({
            widget: f,
            op: {
              _tag: "Put",
              entries: entries.map(([title, ts]) => ({
                point: { title, msg: title === "big" ? msg.repeat(4) : msg },
                ts: micros(ts)
              }))
            },
            path: "point"
          })
          // Five single appends (each onto the tail block), a batch of 5, a 24 KB point, then two small ones.
          for (let k = 0; k < 5; k++) yield* group.write([feed([[`a${k}`, T0 + k]])], micros(T0))
          yield* group.write([feed(Array.from({ length: 5 }, (_, k) => [`b${k}`, T0 + 10 + k] as const))], micros(T0))
          yield* group.write([feed([["big", T0 + 20]])], micros(T0))
          yield* group.write(
            [
              feed([
                ["c0", T0 + 21],
                ["c1", T0 + 22]
              ])
            ],
            micros(T0)
          )
          const blocks = () =>
            db
              .prepare("SELECT first_ts - ?, n, length(data) FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts")
              .raw()
              .all(T0, f.id) as Array<[number, number, number]>
          assert.deepStrictEqual(
            blocks().map(([first, n]) => [first, n]),
            [
              [0, 2],
              [2, 2],
              [4, 2],
              [11, 2],
              [13, 2],
              [20, 1],
              [21, 2]
            ]
          )
          for (const [, n, bytes] of blocks()) if (n > 1) assert.isAtMost(bytes, 16 * 1024)
          // A replacement mid-history rewrites its block alone; the entries read back in order with the new point.
          yield* group.write([feed([["a2-replaced", T0 + 2]])], micros(T0))
          assert.deepStrictEqual(
            rows(db, f).map((r) => [r.ts - T0, JSON.parse(r.point).title]),
            [
              [0, "a0"],
              [1, "a1"],
              [2, "a2-replaced"],
              [3, "a3"],
              [4, "a4"],
              [10, "b0"],
              [11, "b1"],
              [12, "b2"],
              [13, "b3"],
              [14, "b4"],
              [20, "big"],
              [21, "c0"],
              [22, "c1"]
            ]
          )
          for (const [, , bytes] of blocks()) assert.isAtMost(bytes, 32 * 1024)
        })
      )
  )

  it.effect(
    "the most recent entries read only the blocks they need: every count and page of them agrees with the stored entries",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { db, group, widget } = yield* open(freshFile())
          const s = yield* widget("s", "sparkline")
          // 70 entries in blocks of 32, 32, 6, then 5 more appended one at a time (the tail block grows to 11).
          yield* group.write(
            [
              put(
                s,
                Array.from({ length: 70 }, (_, k) => [k, T0 + k] as const)
              )
            ],
            micros(T0)
          )
          for (let k = 70; k < 75; k++) yield* group.write([put(s, [[k, T0 + k]])], micros(T0))
          const all = rows(db, s).map((r) => r.ts)
          assert.strictEqual(all.length, 75)
          const reads = prepareBlockReads(db)
          for (const count of [1, 2, 11, 12, 43, 44, 75, 76, 1000]) {
            for (const limit of [-1, 1, 8, 11, 32, 33, 100]) {
              const expected = all.slice(Math.max(0, all.length - count))
              assert.deepStrictEqual(
                reads.recent(s.id, count, limit).map((e) => e.ts),
                limit < 0 ? expected : expected.slice(0, limit),
                `count ${count}, limit ${limit}`
              )
            }
          }
          const empty = yield* widget("e", "sparkline")
          assert.deepStrictEqual(reads.recent(empty.id, 10, 8), [])
        })
      )
  )

  it.effect("1,037 entries of one call are stored in order; a later entry with the same ts replaces the earlier", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* open(freshFile())
        const s = yield* widget("s", "sparkline")
        const other = yield* widget("o", "number")
        // 1,037 = 4 x 256 + 4 x 4 - 3 x 1: every statement size, and a remainder.
        const many = Array.from({ length: 1037 }, (_, k) => [k, T0 + k] as const)
        yield* group.write(
          [put(s, many), put(other, [[7, undefined]]), put(s, [[-5, T0 + 5]]), put(s, [[9999, undefined]])],
          micros(T0 + 10_000)
        )
        const stored = rows(db, s)
        assert.strictEqual(stored.length, 1038)
        assert.deepStrictEqual(
          stored.slice(0, 7).map((r) => [r.ts, r.value, JSON.parse(r.point).number]),
          [0, 1, 2, 3, 4, -5, 6].map((n, k) => [T0 + k, n, n])
        )
        assert.deepStrictEqual(
          stored.slice(-2).map((r) => [r.ts, r.value]),
          [
            [T0 + 1036, 1036],
            [T0 + 10_000, 9999]
          ]
        )
        assert.strictEqual(lastTsInFile(db, s), T0 + 10_000)
        assert.deepStrictEqual(
          rows(db, other).map((r) => r.ts),
          [T0 + 10_000]
        )
      })
    )
  )

  it.effect(
    "concurrent calls over shared streams: every entry stored, last_ts in the file is each stream's highest",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { db, group, widget } = yield* open(freshFile())
          const streams = yield* Effect.all(Array.from({ length: 10 }, (_, k) => widget(`s${k}`, "number")))
          const calls = Array.from({ length: 300 }, (_, i) =>
            streams.filter((_, k) => (i + k) % 3 !== 0).map((w) => put(w, [[i, undefined]]))
          )
          const outcomes = yield* Effect.all(
            calls.map((writes) => Effect.either(group.write(writes, micros(T0)))),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(new Set(outcomes.map(tagOf)), new Set(["ok"]))
          for (const [k, w] of streams.entries()) {
            const stored = rows(db, w)
            assert.strictEqual(stored.length, calls.filter((_, i) => (i + k) % 3 !== 0).length)
            assert.strictEqual(new Set(stored.map((r) => r.ts)).size, stored.length)
            assert.strictEqual(lastTsInFile(db, w), stored[stored.length - 1]!.ts)
          }
        })
      )
  )
})
