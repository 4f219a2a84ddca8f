import { micros, type StreamWrite, type Widget } from "@dashstream/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { prepareBlockReads } from "../src/internal/blockReads.js"
import { numbered, openWriter, put, putEach, rows, T0, tempFiles } from "./fixtures/writer.js"

// The write path's batching: the entries of a call stored in blocks (multi-row upserts), merged into the blocks
// holding their ts, closed by count and by bytes. What it must never change is what the file holds.

describe("SQLite write path: last ts kept by the writer, entries in blocks", () => {
  const freshFile = tempFiles("write-path")

  it.effect("a late batch that splits the tail block and reaches past it appends the rest to the new tail", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openWriter(freshFile())
        const a = yield* widget("a", "sparkline")
        const every = (from: number, to: number, step: number, n: number) =>
          numbered(Math.floor((to - from) / step) + 1, (k) => [n, T0 + from + k * step])
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
          const { db, group, widget } = yield* openWriter(freshFile())
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
          const { db, group, widget } = yield* openWriter(freshFile())
          const blocksOf = (w: Widget) =>
            db
              .prepare("SELECT first_ts, last_ts, n, hex(data) FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts")
              .raw()
              .all(w.id) as Array<[number, number, number, string]>
          // 100 entries 10 µs apart from `from` (a line protocol body's points of one series, a second of them).
          const second = (from: number, n: number) => numbered(100, (k) => [n + k, T0 + from + 10 * k])
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
          yield* group.write([putEach(b, 34, (k) => [k, T0 + 100 + k])], micros(T0))
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

  it.effect(
    "back-fills and replacements merge into the blocks holding their ts; a block past 64 entries splits; a late batch in a gap is new blocks",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { db, group, widget } = yield* openWriter(freshFile())
          const s = yield* widget("s", "sparkline")
          // 100 entries at even offsets (blocks of 32, 32, 32, 4), then calls in other orders: the odd offsets in
          // between (descending, so not an append), a replacement of every tenth, and one before the first entry.
          yield* group.write([putEach(s, 100, (k) => [k, T0 + 2 * k])], micros(T0))
          yield* group.write([putEach(s, 100, (k) => [1000 + 99 - k, T0 + 2 * (99 - k) + 1])], micros(T0))
          yield* group.write([putEach(s, 20, (k) => [-k - 1, T0 + 20 * k]), put(s, [[-100, T0 - 1]])], micros(T0))
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
          const batch = (from: number, count: number) => putEach(g, count, (k) => [from + k, T0 + from + k])
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
          const { db, group, widget } = yield* openWriter(freshFile())
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
          const { db, group, widget } = yield* openWriter(freshFile())
          const s = yield* widget("s", "sparkline")
          // 70 entries in blocks of 32, 32, 6, then 5 more appended one at a time (the tail block grows to 11).
          yield* group.write([putEach(s, 70, (k) => [k, T0 + k])], micros(T0))
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
})
