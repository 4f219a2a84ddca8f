import { micros } from "@dashstream/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import {
  concurrently,
  lastTsInFile,
  numbered,
  openWriter,
  otherConnection,
  put,
  rows,
  T0,
  tagOf,
  tempFiles,
  write
} from "./fixtures/writer.js"

// The write path's memory: each stream's last ts kept by the writer across groups. What it must never change is
// what the file holds. The entries stored in blocks: WritePath.blocks.test.ts.

describe("SQLite write path: last ts kept by the writer, entries in blocks", () => {
  const freshFile = tempFiles("write-path")

  it.effect("a call rolled back to its savepoint leaves no last ts behind", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openWriter(freshFile())
        const a = yield* widget("a", "sparkline")
        const table = yield* widget("t", "table")
        yield* group.write([write(table, { _tag: "TableRow", row: ["h1", "h2"] })], micros(T0))
        // The first write moves a's last ts far ahead; the second does not fit the table: the call fails whole.
        const failed = yield* Effect.either(
          group.write([put(a, [[1, T0 + 1_000_000_000]]), write(table, { _tag: "TableRow", row: ["x"] })], micros(T0))
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
          const { db, group, widget } = yield* openWriter(freshFile())
          const a = yield* widget("a", "sparkline")
          const span = (from: number, to: number, n: number) => numbered(to - from + 1, (k) => [n, T0 + from + k])
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

  it.effect("a last ts moved by another connection is seen by the next write", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const { db, group, widget } = yield* openWriter(filename)
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
        const { group, widget } = yield* openWriter(filename)
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
        const { accountStore, account, group, widget } = yield* openWriter(freshFile())
        const a = yield* widget("a", "number")
        yield* group.write([put(a, [[1, undefined]])], micros(T0))
        yield* accountStore.deleteWidget(account.id, a.streamName)
        const outcome = yield* Effect.either(group.write([put(a, [[2, undefined]])], micros(T0 + 1)))
        assert.strictEqual(tagOf(outcome), "StreamNotFound")
      })
    )
  )

  it.effect("1,037 entries of one call are stored in order; a later entry with the same ts replaces the earlier", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openWriter(freshFile())
        const s = yield* widget("s", "sparkline")
        const other = yield* widget("o", "number")
        // 1,037 = 4 x 256 + 4 x 4 - 3 x 1: every statement size, and a remainder.
        const many = numbered(1037, (k) => [k, T0 + k])
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
          const { db, group, widget } = yield* openWriter(freshFile())
          const streams = yield* Effect.all(Array.from({ length: 10 }, (_, k) => widget(`s${k}`, "number")))
          const calls = Array.from({ length: 300 }, (_, i) =>
            streams.filter((_, k) => (i + k) % 3 !== 0).map((w) => put(w, [[i, undefined]]))
          )
          const outcomes = yield* concurrently(group, calls)
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
