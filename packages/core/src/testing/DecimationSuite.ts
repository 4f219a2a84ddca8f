import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, type Layer, Option } from "effect"
import { digestAccessKey, newAccessKey, newAccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import { type DecimationEntry, DecimationStore, type EntryChunk, type StreamPage } from "../DecimationStore.js"
import type { StoredPoint } from "../Point.js"
import { StreamName } from "../StreamName.js"
import { StreamStore } from "../StreamStore.js"
import { type Micros, micros } from "../Time.js"
import type { StreamId, Widget } from "../Widget.js"
import type { WidgetType } from "../WidgetType.js"
import { referenceRange } from "./storage/RangeReadSuite.js"

/**
 * The decimation storage contract suite: what every adapter of `DecimationStore` must do (docs/api.md section 9 and
 * the port docs), checked through `AccountStore` and `StreamStore` of the same storage. Each adapter's test file
 * calls {@link decimationSuite} with its layer, so the memory, SQLite and PostgreSQL adapters agree.
 */

type Stores = AccountStore | StreamStore | DecimationStore

/** A time well inside the valid range (2023-11-14T22:13:20Z), in microseconds. */
const T0 = 1_700_000_000_000_000

const at = (offset: number): Micros => micros(T0 + offset)

const newWidget = (type: WidgetType, name: string) =>
  Effect.gen(function* () {
    const store = yield* AccountStore
    const id = newAccountId()
    yield* store.createAccount({ id, name: "test", createdAt: T0 }, digestAccessKey(newAccessKey()))
    return yield* store.createWidget(id, StreamName.make(name), type, T0)
  })

/** Stores one entry per `[offset, point]` with client timestamps `T0 + offset`. */
const putAt = (widget: Widget, entries: ReadonlyArray<readonly [number, StoredPoint]>) =>
  Effect.flatMap(StreamStore, (s) =>
    s.write(
      [
        {
          widget,
          op: { _tag: "Put", entries: entries.map(([offset, point]) => ({ point, ts: at(offset) })) },
          path: "point"
        }
      ],
      at(0)
    )
  )

/** Stores a numeric entry at each offset, with the offset as its number. */
const numbersAt = (widget: Widget, offsets: ReadonlyArray<number>) =>
  putAt(
    widget,
    offsets.map((o) => [o, { number: o }] as const)
  )

const streams = (page: StreamPage) => Effect.flatMap(DecimationStore, (s) => s.streams(page))
const entries = (stream: StreamId, chunk: EntryChunk) =>
  Effect.flatMap(DecimationStore, (s) => s.entries(stream, chunk))
const offsetsOf = (chunk: ReadonlyArray<DecimationEntry>) => chunk.map((e) => e.ts - T0)
const allEntries = (stream: StreamId) =>
  entries(stream, { after: null, before: micros(Number.MAX_SAFE_INTEGER), limit: 1_000_000 })
const storedOffsets = (stream: StreamId) =>
  Effect.map(
    Effect.flatMap(StreamStore, (s) => s.read(stream, { since: micros(0), limit: null })),
    (read) => read.map((e) => e.ts - T0)
  )
const deleteEntries = (stream: StreamId, ids: ReadonlyArray<DecimationEntry["id"]>) =>
  Effect.flatMap(DecimationStore, (s) => s.deleteEntries(stream, ids))
const withPassLock = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(DecimationStore, (s) => s.withPassLock(effect))

/**
 * Registers the decimation storage contract suite under `describe("decimation storage contract: <name>")`.
 * `makeLayer` is called once per test and must give a fresh, empty, migrated store each time.
 */
export const decimationSuite = (name: string, makeLayer: () => Layer.Layer<Stores, unknown>): void => {
  describe(`decimation storage contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<unknown, unknown, Stores>, timeout?: number) =>
      it.effect(title, () => Effect.provide(body, makeLayer()), timeout)

    describe("streams", () => {
      test(
        "pages in ascending id with their widget types, only streams holding an entry older than the bound",
        Effect.gen(function* () {
          const old1 = yield* newWidget("sparkline", "old1")
          const empty = yield* newWidget("number", "empty")
          const recent = yield* newWidget("number", "recent")
          const old2 = yield* newWidget("xy-graph", "old2")
          const mixed = yield* newWidget("text-feed", "mixed")
          const edge = yield* newWidget("label", "edge")
          yield* numbersAt(old1, [10, 20])
          yield* numbersAt(recent, [100, 200])
          yield* putAt(old2, [[5, { x: 1, y: 2 }]])
          yield* putAt(mixed, [
            [50, { title: "a", msg: "b" }],
            [500, { title: "c", msg: "d" }]
          ])
          yield* putAt(edge, [[100, { label: "at the bound" }]])
          assert.strictEqual(new Set([old1.id, empty.id, recent.id, old2.id, mixed.id, edge.id]).size, 6)
          const olderThan = at(100)
          const expected = [old1, old2, mixed].sort((a, b) => a.id - b.id).map((w) => ({ id: w.id, type: w.type }))
          assert.deepStrictEqual(yield* streams({ after: null, olderThan, limit: 100 }), expected)
          const first = yield* streams({ after: null, olderThan, limit: 2 })
          assert.deepStrictEqual(first, expected.slice(0, 2))
          const second = yield* streams({ after: first[1]!.id, olderThan, limit: 2 })
          assert.deepStrictEqual(second, expected.slice(2))
          assert.deepStrictEqual(yield* streams({ after: second[0]!.id, olderThan, limit: 2 }), [])
          assert.deepStrictEqual(yield* streams({ after: null, olderThan: at(5), limit: 100 }), [])
        })
      )

      test(
        "a cleared or deleted stream is not listed",
        Effect.gen(function* () {
          const cleared = yield* newWidget("sparkline", "cleared")
          const deleted = yield* newWidget("sparkline", "deleted")
          yield* numbersAt(cleared, [1, 2])
          yield* numbersAt(deleted, [1, 2])
          yield* Effect.flatMap(StreamStore, (s) =>
            s.write([{ widget: cleared, op: { _tag: "Clear" }, path: "point" }], at(3))
          )
          yield* Effect.flatMap(AccountStore, (s) => s.deleteWidget(deleted.accountId, deleted.streamName))
          assert.deepStrictEqual(yield* streams({ after: null, olderThan: at(1000), limit: 10 }), [])
        })
      )
    })

    describe("entries", () => {
      const fixture = Effect.gen(function* () {
        const w = yield* newWidget("line-graph", "s")
        yield* numbersAt(w, [40, 10, 30, 20, 50, 60])
        return w
      })

      test(
        "ts strictly between the bounds, ascending, in chunks of at most limit",
        Effect.gen(function* () {
          const w = yield* fixture
          const before = at(60)
          assert.deepStrictEqual(
            offsetsOf(yield* entries(w.id, { after: null, before, limit: 100 })),
            [10, 20, 30, 40, 50]
          )
          assert.deepStrictEqual(offsetsOf(yield* entries(w.id, { after: at(10), before, limit: 2 })), [20, 30])
          assert.deepStrictEqual(offsetsOf(yield* entries(w.id, { after: at(30), before, limit: 2 })), [40, 50])
          assert.deepStrictEqual(offsetsOf(yield* entries(w.id, { after: at(50), before, limit: 2 })), [])
          assert.deepStrictEqual(
            offsetsOf(yield* entries(w.id, { after: at(15), before: at(41), limit: 9 })),
            [20, 30, 40]
          )
          assert.deepStrictEqual(offsetsOf(yield* entries(w.id, { after: null, before: at(10), limit: 9 })), [])
        })
      )

      test(
        "keyset paging visits every entry below the bound once, whatever the chunk size",
        Effect.gen(function* () {
          const w = yield* fixture
          for (const limit of [1, 2, 3, 5, 6]) {
            const seen: Array<number> = []
            let after: Micros | null = null
            for (;;) {
              const chunk: ReadonlyArray<DecimationEntry> = yield* entries(w.id, { after, before: at(55), limit })
              assert.isAtMost(chunk.length, limit)
              if (chunk.length === 0) break
              seen.push(...offsetsOf(chunk))
              after = chunk[chunk.length - 1]!.ts
            }
            assert.deepStrictEqual(seen, [10, 20, 30, 40, 50])
          }
        })
      )

      test(
        "ids are distinct; value is number for numeric widgets, y for xy-graph, null for the rest",
        Effect.gen(function* () {
          const n = yield* newWidget("number", "n")
          const xy = yield* newWidget("xy-graph", "xy")
          const feed = yield* newWidget("text-feed", "feed")
          yield* putAt(n, [
            [1, { number: -2.5 }],
            [2, { number: 7 }]
          ])
          yield* putAt(xy, [
            [1, { x: 100, y: 3 }],
            [2, { x: 200, y: -1 }]
          ])
          yield* putAt(feed, [[1, { title: "t", msg: "m" }]])
          const all = [...(yield* allEntries(n.id)), ...(yield* allEntries(xy.id)), ...(yield* allEntries(feed.id))]
          assert.deepStrictEqual(
            all.map((e) => [e.ts - T0, e.value]),
            [
              [1, -2.5],
              [2, 7],
              [1, 3],
              [2, -1],
              [1, null]
            ]
          )
          assert.strictEqual(new Set(all.map((e) => e.id)).size, all.length)
        })
      )

      test(
        "a deleted stream has no entries",
        Effect.gen(function* () {
          const w = yield* fixture
          yield* Effect.flatMap(AccountStore, (s) => s.deleteWidget(w.accountId, w.streamName))
          assert.deepStrictEqual(yield* allEntries(w.id), [])
        })
      )
    })

    describe("deleteEntries", () => {
      test(
        "deletes the listed entries of the stream and counts them; others, foreign and missing ids are skipped",
        Effect.gen(function* () {
          const w = yield* newWidget("sparkline", "w")
          const other = yield* newWidget("sparkline", "other")
          yield* numbersAt(w, [1, 2, 3, 4, 5])
          yield* numbersAt(other, [1, 2])
          const mine = yield* allEntries(w.id)
          const theirs = yield* allEntries(other.id)
          assert.strictEqual(yield* deleteEntries(w.id, [mine[1]!.id, mine[3]!.id]), 2)
          assert.deepStrictEqual(yield* storedOffsets(w.id), [1, 3, 5])
          assert.strictEqual(yield* deleteEntries(w.id, [mine[1]!.id, theirs[0]!.id]), 0)
          assert.deepStrictEqual(yield* storedOffsets(w.id), [1, 3, 5])
          assert.deepStrictEqual(yield* storedOffsets(other.id), [1, 2])
          assert.strictEqual(yield* deleteEntries(w.id, []), 0)
          assert.strictEqual(yield* deleteEntries(w.id, [mine[0]!.id, mine[0]!.id]), 1)
          assert.deepStrictEqual(offsetsOf(yield* allEntries(w.id)), [3, 5])
        })
      )

      test(
        "never deletes the stream's newest entry",
        Effect.gen(function* () {
          const w = yield* newWidget("number", "w")
          yield* numbersAt(w, [1, 2, 3])
          const all = yield* allEntries(w.id)
          assert.strictEqual(
            yield* deleteEntries(
              w.id,
              all.map((e) => e.id)
            ),
            2
          )
          assert.deepStrictEqual(yield* storedOffsets(w.id), [3])
          assert.strictEqual(yield* deleteEntries(w.id, [all[2]!.id]), 0)
          // A newer push makes the old newest entry deletable.
          yield* numbersAt(w, [4])
          assert.strictEqual(yield* deleteEntries(w.id, [all[2]!.id]), 1)
          assert.deepStrictEqual(yield* storedOffsets(w.id), [4])
        })
      )

      test(
        "a delete batch of a thousand ids",
        Effect.gen(function* () {
          const w = yield* newWidget("sparkline", "w")
          const offsets = Array.from({ length: 1500 }, (_, i) => i + 1)
          yield* numbersAt(w, offsets)
          const all = yield* allEntries(w.id)
          const doomed = all.filter((_, i) => i % 3 !== 2)
          assert.strictEqual(
            yield* deleteEntries(
              w.id,
              doomed.map((e) => e.id)
            ),
            1000
          )
          const gone = new Set(doomed.map((e) => e.ts - T0))
          assert.deepStrictEqual(
            yield* storedOffsets(w.id),
            offsets.filter((o) => !gone.has(o))
          )
        }),
        60_000
      )
    })

    describe("withPassLock", () => {
      test(
        "runs the effect and returns its value; failures pass through and release the lock",
        Effect.gen(function* () {
          assert.deepStrictEqual(Option.getOrNull(yield* withPassLock(Effect.succeed(42))), 42)
          const error = yield* Effect.flip(withPassLock(Effect.fail("boom" as const)))
          assert.strictEqual(error, "boom")
          assert.strictEqual(Option.getOrNull(yield* withPassLock(Effect.succeed("again"))), "again")
        })
      )

      test(
        "is exclusive: a second holder gets None without running; released after success, failure, interruption",
        Effect.gen(function* () {
          const entered = yield* Deferred.make<void>()
          const release = yield* Deferred.make<void>()
          const holder = yield* Effect.fork(
            withPassLock(Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(release)))
          )
          yield* Deferred.await(entered)
          let ran = false
          const contender = yield* withPassLock(Effect.sync(() => (ran = true)))
          assert.isTrue(Option.isNone(contender))
          assert.isFalse(ran)
          yield* Deferred.succeed(release, undefined)
          assert.isTrue(Option.isSome(yield* Fiber.join(holder)))

          // Interrupted while holding the lock: the lock is released.
          const entered2 = yield* Deferred.make<void>()
          const stuck = yield* Effect.fork(
            withPassLock(Effect.zipRight(Deferred.succeed(entered2, undefined), Effect.never))
          )
          yield* Deferred.await(entered2)
          assert.isTrue(Option.isNone(yield* withPassLock(Effect.void)))
          assert.isTrue(Exit.isInterrupted(yield* Fiber.interrupt(stuck)))
          assert.isTrue(Option.isSome(yield* withPassLock(Effect.void)))
        })
      )

      test(
        "nested inside its own holder returns None (not reentrant)",
        Effect.gen(function* () {
          const inner = yield* withPassLock(withPassLock(Effect.succeed(1)))
          assert.deepStrictEqual(Option.map(inner, Option.isNone).pipe(Option.getOrNull), true)
        })
      )
    })

    test(
      "blocks rewritten by deletes are summarised again: a range read with points answers the rule over what is left",
      Effect.gen(function* () {
        const w = yield* newWidget("sparkline", "s")
        yield* putAt(
          w,
          Array.from({ length: 640 }, (_, i) => [i * 10, { number: ((i * 7919) % 13) - 6 }] as const)
        )
        // The entries a pass would drop from the first half: most of each block's, the extremes among them.
        const doomed = (yield* allEntries(w.id)).filter((e, i) => i < 320 && i % 5 !== 0)
        assert.strictEqual(
          yield* deleteEntries(
            w.id,
            doomed.map((e) => e.id)
          ),
          doomed.length
        )
        const left = yield* Effect.flatMap(StreamStore, (s) => s.read(w.id, { since: micros(0), limit: null }))
        const all = left.map((e) => ({ ts: e.ts, point: JSON.parse(e.json) as unknown }))
        for (const points of [2, 5, 33]) {
          const got = yield* Effect.flatMap(StreamStore, (s) =>
            s.readRange(w.id, { from: null, since: null, to: null, points, mode: "extremes", limit: null })
          )
          assert.deepStrictEqual(
            got.map((e) => ({ ts: e.ts, point: JSON.parse(e.json) as unknown })),
            referenceRange(all, w.type, all[0]!.ts, all.at(-1)!.ts, points)
          )
        }
      })
    )
  })
}
