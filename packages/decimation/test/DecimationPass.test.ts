import {
  AccountStore,
  DecimationStore,
  digestAccessKey,
  type EntryId,
  micros,
  newAccessKey,
  newAccountId,
  type StoredPoint,
  StreamName,
  StreamStore,
  type Widget,
  type WidgetType
} from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { type Context, Effect, Exit, Layer, Logger, LogLevel, Option, TestContext } from "effect"
import * as fc from "fast-check"
import {
  decimationHorizon,
  defaultPolicy,
  type Entry,
  type PassOptions,
  type PassResult,
  runLockedPass,
  runPass,
  type SelectionMode
} from "../src/index.js"
import { DAY, groupOf, HOUR, MINUTE, micros as microsArb, realEntriesArb, referenceKept } from "./support.js"

type Stores = AccountStore | StreamStore | DecimationStore

const SECOND = 1_000_000
/** The pass time of the examples: 2024-01-10T00:00:00Z, in microseconds. */
const NOW = Date.UTC(2024, 0, 10) * 1000

interface Stored {
  readonly ts: number
  readonly point: StoredPoint
}

const newWidget = (type: WidgetType, name = "stream") =>
  Effect.gen(function* () {
    const store = yield* AccountStore
    const id = newAccountId()
    yield* store.createAccount({ id, name: "test", createdAt: NOW }, digestAccessKey(newAccessKey()))
    return yield* store.createWidget(id, StreamName.make(name), type, NOW)
  })

/** Stores `[ts, point]` pairs with client timestamps, in one write. */
const putAt = (widget: Widget, entries: ReadonlyArray<readonly [number, StoredPoint]>) =>
  Effect.flatMap(StreamStore, (s) =>
    s.write(
      [
        {
          widget,
          op: { _tag: "Put", entries: entries.map(([ts, point]) => ({ point, ts: micros(ts) })) },
          path: "point"
        }
      ],
      micros(NOW)
    )
  )

/** Stores `[ts, number]` pairs as numeric points. */
const numbersAt = (widget: Widget, pairs: ReadonlyArray<readonly [number, number]>) =>
  putAt(
    widget,
    pairs.map(([ts, n]) => [ts, { number: n }] as const)
  )

const readAll = (widget: Widget) =>
  Effect.map(
    Effect.flatMap(StreamStore, (s) => s.read(widget.id, { since: micros(0), limit: null })),
    (entries): Array<Stored> => entries.map((e) => ({ ts: e.ts, point: JSON.parse(e.json) as StoredPoint }))
  )

const pass = (options: Partial<PassOptions> = {}) => runPass({ policy: defaultPolicy, now: NOW, ...options })

const numberOf = (e: Stored) => (e.point as { number: number }).number
/** An entry as one string: deep equality over tens of thousands of objects is slow. */
const text = (e: Stored) => `${e.ts} ${JSON.stringify(e.point)}`

/** A memory store plus the test clock, so the pass's zero-length yields do not wait for real timers. */
const run = <A, E>(body: Effect.Effect<A, E, Stores>): Promise<A> =>
  Effect.runPromise(Effect.provide(body, Layer.mergeAll(MemoryStore.layer, TestContext.TestContext, quiet)))

/** The pass's log lines are checked in one test; elsewhere they are noise. */
const quiet = Logger.minimumLogLevel(LogLevel.Warning)

const test = (title: string, body: Effect.Effect<unknown, unknown, Stores>, timeout?: number) =>
  it.effect(title, () => Effect.provide(body, Layer.merge(MemoryStore.layer, quiet)), timeout)

/** Replaces the `DecimationStore` for `body` with `wrap(store)`. */
const withWrappedStore = <A, E, R>(
  wrap: (store: Context.Tag.Service<DecimationStore>) => Context.Tag.Service<DecimationStore>,
  body: Effect.Effect<A, E, R>
) => Effect.flatMap(DecimationStore, (store) => Effect.provideService(body, DecimationStore, wrap(store)))

describe("runPass (docs/api.md section 9)", () => {
  test(
    "numeric tiers: first, last, lowest and highest per bucket; recent data kept whole",
    Effect.gen(function* () {
      const w = yield* newWidget("sparkline")
      const s = (offset: number) => offset * SECOND
      // Tier 1 (5-minute buckets), 3 days back; equal extremes later in the bucket are dropped.
      const t1 = NOW - 3 * DAY
      const tier1: Array<[number, number]> = [
        [10, 5],
        [20, 1],
        [30, 9],
        [40, 3],
        [50, 4],
        [60, 1],
        [70, 9],
        [80, 6],
        [400, 7]
      ]
      // Tier 2 (1-hour buckets), 20 days back.
      const t2 = NOW - 20 * DAY
      const tier2: Array<[number, number]> = [
        [100, 5],
        [1000, 2],
        [2000, 8],
        [3000, 4],
        [3500, 6]
      ]
      // Tier 3 (1-day buckets), 100 days back.
      const t3 = NOW - 100 * DAY
      const tier3: Array<[number, number]> = [
        [1000, 3],
        [40_000, 1],
        [50_000, 2],
        [80_000, 3]
      ]
      const recent = NOW - HOUR
      const recentPairs: Array<[number, number]> = [
        [0, 2],
        [10, 8],
        [20, 5],
        [30, 5]
      ]
      const shift = (base: number, pairs: ReadonlyArray<[number, number]>) =>
        pairs.map(([o, n]) => [base + s(o), n] as const)
      yield* numbersAt(w, [
        ...shift(t3, tier3),
        ...shift(t2, tier2),
        ...shift(t1, tier1),
        ...shift(recent, recentPairs)
      ])
      const result = yield* pass()
      const after = yield* readAll(w)
      assert.deepStrictEqual(
        after.map((e) => e.ts),
        [
          ...[1000, 40_000, 80_000].map((o) => t3 + s(o)),
          ...[100, 1000, 2000, 3500].map((o) => t2 + s(o)),
          ...[10, 20, 30, 80, 400].map((o) => t1 + s(o)),
          ...[0, 10, 20, 30].map((o) => recent + s(o))
        ]
      )
      assert.deepStrictEqual(after.map(numberOf), [3, 1, 3, 5, 2, 8, 6, 5, 1, 9, 6, 7, 2, 8, 5, 5])
      assert.deepStrictEqual(
        { ...result, durationMs: 0 },
        { streamsVisited: 1, entriesExamined: 18, entriesRemoved: 6, durationMs: 0 }
      )
    })
  )

  test(
    "xy-graph ranks by y; other types keep the last entry of each bucket",
    Effect.gen(function* () {
      const xy = yield* newWidget("xy-graph", "xy")
      const feed = yield* newWidget("text-feed", "feed")
      const base = NOW - 20 * DAY
      const ys = [5, 1, 9, 3, 1, 4]
      yield* putAt(
        xy,
        ys.map((y, i) => [base + i * MINUTE, { x: i, y }] as const)
      )
      yield* putAt(
        feed,
        [0, 1, 2, 3].map((i) => [base + i * MINUTE, { title: `t${i}`, msg: "m" }] as const)
      )
      yield* putAt(feed, [[base + 2 * HOUR, { title: "alone", msg: "m" }]])
      yield* pass()
      assert.deepStrictEqual(
        (yield* readAll(xy)).map((e) => (e.point as { x: number }).x),
        [0, 1, 2, 5]
      )
      assert.deepStrictEqual(
        (yield* readAll(feed)).map((e) => (e.point as { title: string }).title),
        ["t3", "alone"]
      )
    })
  )

  test(
    "200 days every 10 minutes: last 48 h untouched, at most 4 per bucket, global max and min and newest kept",
    Effect.gen(function* () {
      const w = yield* newWidget("sparkline")
      const start = NOW - 200 * DAY
      const step = 10 * MINUTE
      const pairs: Array<[number, number]> = []
      for (let ts = start, i = 0; ts < NOW; ts += step, i++) {
        pairs.push([ts + 7 * SECOND, Math.round(1000 * Math.sin(i / 50)) + (i % 7)])
      }
      // The global extremes sit in old, coarse buckets.
      pairs[1234]![1] = 1_000_000
      pairs[5678]![1] = -1_000_000
      yield* numbersAt(w, pairs)
      const before = yield* readAll(w)
      const result = yield* pass({ chunkSize: 777, deleteBatchSize: 2_000 })
      const after = yield* readAll(w)

      const recentFrom = NOW - 48 * HOUR
      assert.deepStrictEqual(
        after.filter((e) => e.ts >= recentFrom).map(text),
        before.filter((e) => e.ts >= recentFrom).map(text)
      )
      const perBucket = new Map<string, number>()
      for (const e of after) {
        const group = groupOf(defaultPolicy, NOW, e.ts)
        if (group === undefined) continue
        const key = `${group.tier}:${group.start}`
        perBucket.set(key, (perBucket.get(key) ?? 0) + 1)
      }
      assert.isAtMost(Math.max(...perBucket.values()), 4)
      const numbers = after.map(numberOf)
      assert.include(numbers, 1_000_000)
      assert.include(numbers, -1_000_000)
      assert.deepStrictEqual(after[after.length - 1], before[before.length - 1])
      assert.strictEqual(result.entriesRemoved, before.length - after.length)
      assert.strictEqual(
        result.entriesExamined,
        before.filter((e) => e.ts < decimationHorizon(defaultPolicy, NOW)).length
      )
      // Same as the reference model of the selection.
      const kept = referenceKept(
        before.map((e, id) => ({ id, ts: e.ts, value: numberOf(e) })),
        { policy: defaultPolicy, now: NOW, mode: "extremes" }
      )
      assert.deepStrictEqual(after.map(text), before.filter((_, i) => kept[i]).map(text))
      // A second pass at the same time removes nothing.
      const again = yield* pass()
      assert.strictEqual(again.entriesRemoved, 0)
      assert.deepStrictEqual((yield* readAll(w)).map(text), after.map(text))
    }),
    60_000
  )

  test(
    "visits only streams with entries older than the horizon; counts what it examined and removed",
    Effect.gen(function* () {
      const old = yield* newWidget("number", "old")
      const recent = yield* newWidget("number", "recent")
      yield* newWidget("number", "empty")
      const base = NOW - 30 * DAY
      yield* numbersAt(old, [
        [base, 1],
        [base + MINUTE, 2],
        [base + 2 * MINUTE, 3],
        [base + 3 * MINUTE, 2],
        [NOW - MINUTE, 5]
      ])
      yield* numbersAt(recent, [
        [NOW - 2 * MINUTE, 1],
        [NOW - MINUTE, 2]
      ])
      const result = yield* pass()
      assert.deepStrictEqual({ ...result, durationMs: 0 }, {
        streamsVisited: 1,
        entriesExamined: 4,
        entriesRemoved: 1,
        durationMs: 0
      } satisfies PassResult)
      assert.strictEqual((yield* readAll(recent)).length, 2)
    })
  )

  test(
    "deletes in batches of at most deleteBatchSize ids, each batch of one stream",
    Effect.gen(function* () {
      const a = yield* newWidget("sparkline", "a")
      const b = yield* newWidget("line-graph", "b")
      const base = NOW - 10 * DAY
      for (const w of [a, b]) {
        yield* numbersAt(
          w,
          Array.from({ length: 500 }, (_, i) => [base + i * SECOND, i % 10] as const)
        )
      }
      const batches: Array<{ stream: number; size: number }> = []
      const result = yield* withWrappedStore(
        (store) => ({
          ...store,
          deleteEntries: (stream, ids) => {
            batches.push({ stream, size: ids.length })
            return store.deleteEntries(stream, ids)
          }
        }),
        pass({ chunkSize: 64, deleteBatchSize: 50 })
      )
      assert.isAbove(batches.length, 4)
      assert.isTrue(batches.every((batch) => batch.size > 0 && batch.size <= 50))
      assert.strictEqual(
        batches.reduce((n, batch) => n + batch.size, 0),
        result.entriesRemoved
      )
      assert.deepStrictEqual([...new Set(batches.map((batch) => batch.stream))], [a.id, b.id])
    })
  )

  test(
    "yields to the event loop between streams even when they have nothing to delete",
    Effect.gen(function* () {
      // One old entry per stream: nothing to delete, one short chunk per stream.
      for (let i = 0; i < 5; i++) {
        yield* numbersAt(yield* newWidget("sparkline", `s${i}`), [[NOW - 10 * DAY, i]])
      }
      // Before each read, checks that an immediate queued at the previous read has run, i.e. that the pass
      // gave the event loop (pending pushes) a turn in between.
      let turned = true
      let readsWithoutTurn = 0
      const result = yield* withWrappedStore(
        (store) => ({
          ...store,
          entries: (stream, options) =>
            Effect.suspend(() => {
              if (!turned) readsWithoutTurn++
              turned = false
              setImmediate(() => (turned = true))
              return store.entries(stream, options)
            })
        }),
        pass()
      )
      assert.strictEqual(result.streamsVisited, 5)
      assert.strictEqual(result.entriesRemoved, 0)
      assert.strictEqual(readsWithoutTurn, 0)
    })
  )

  test(
    "an interrupted pass leaves valid data; the next pass ends where a single pass ends",
    Effect.gen(function* () {
      const w = yield* newWidget("number")
      const base = NOW - 120 * DAY
      yield* numbersAt(
        w,
        Array.from({ length: 3000 }, (_, i) => [base + i * 3 * MINUTE, (i * 37) % 101] as const)
      )
      const before = yield* readAll(w)
      let calls = 0
      const exit = yield* Effect.exit(
        withWrappedStore(
          (store) => ({
            ...store,
            deleteEntries: (stream, ids) => (calls++ < 3 ? store.deleteEntries(stream, ids) : Effect.interrupt)
          }),
          pass({ deleteBatchSize: 100 })
        )
      )
      assert.isTrue(Exit.isInterrupted(exit))
      const midway = yield* readAll(w)
      assert.strictEqual(midway.length, before.length - 300)
      const resumed = yield* pass({ deleteBatchSize: 100 })
      const after = yield* readAll(w)
      const kept = referenceKept(
        before.map((e, id) => ({ id, ts: e.ts, value: numberOf(e) })),
        { policy: defaultPolicy, now: NOW, mode: "extremes" }
      )
      assert.deepStrictEqual(
        after,
        before.filter((_, i) => kept[i])
      )
      assert.strictEqual(resumed.entriesRemoved, midway.length - after.length)
    })
  )

  test(
    "runLockedPass returns None while another pass holds the lock, Some otherwise",
    Effect.gen(function* () {
      const store = yield* DecimationStore
      const inner = yield* store.withPassLock(runLockedPass({ policy: defaultPolicy, now: NOW }))
      assert.isTrue(Option.isSome(inner) && Option.isNone(inner.value))
      const alone = yield* runLockedPass({ policy: defaultPolicy, now: NOW })
      assert.strictEqual(Option.getOrThrow(alone).streamsVisited, 0)
    })
  )

  test(
    "logs progress with its counters",
    Effect.gen(function* () {
      const w = yield* newWidget("sparkline")
      yield* numbersAt(w, [
        [NOW - 10 * DAY, 1],
        [NOW - 10 * DAY + SECOND, 2],
        [NOW - 10 * DAY + 2 * SECOND, 3]
      ])
      const lines: Array<{ message: unknown; annotations: Record<string, unknown> }> = []
      const collect = Logger.make(({ annotations, message }) => {
        lines.push({ message, annotations: Object.fromEntries(annotations) })
      })
      yield* pass({ progressInterval: 0 }).pipe(
        Effect.provide(Logger.replace(Logger.defaultLogger, collect)),
        Logger.withMinimumLogLevel(LogLevel.Info)
      )
      const messages = lines.map((line) => String(line.message))
      assert.deepStrictEqual(messages, [
        "decimation pass started",
        "decimation pass in progress",
        "decimation pass finished"
      ])
      assert.deepStrictEqual(lines[2]!.annotations, {
        streamsVisited: 1,
        entriesExamined: 3,
        entriesRemoved: 1,
        durationMs: 0
      })
    })
  )

  test(
    "a non-positive size is a defect",
    Effect.gen(function* () {
      const exit = yield* Effect.exit(pass({ chunkSize: 0 }))
      assert.isTrue(Exit.isFailure(exit) && Exit.causeOption(exit).pipe(Option.isSome))
    })
  )
})

const streamTypes: ReadonlyArray<WidgetType> = ["sparkline", "number", "xy-graph", "text-feed", "leaderboard"]
const modeOf = (type: WidgetType): SelectionMode =>
  type === "text-feed" || type === "leaderboard" ? "last" : "extremes"
const pointOf = (type: WidgetType, value: number): StoredPoint => {
  switch (type) {
    case "xy-graph":
      return { x: 0, y: value }
    case "text-feed":
      return { title: String(value), msg: "m" }
    case "leaderboard":
      return { leaderboard: [{ name: "a", value }] }
    default:
      return { number: value }
  }
}

const streamsArb = fc.array(
  fc.record({
    type: fc.constantFrom(...streamTypes),
    entries: realEntriesArb(80).map((entries) => entries.map((e) => ({ ...e, value: e.value ?? 0 })))
  }),
  { maxLength: 4 }
)

const sizesArb = fc.record({
  chunkSize: fc.integer({ min: 1, max: 40 }),
  deleteBatchSize: fc.integer({ min: 1, max: 30 }),
  streamPageSize: fc.integer({ min: 1, max: 3 })
})

/** Stores the generated streams; returns each widget with its entries. */
const storeStreams = (streams: ReadonlyArray<{ type: WidgetType; entries: ReadonlyArray<Entry<number>> }>) =>
  Effect.forEach(streams, ({ entries, type }, i) =>
    Effect.gen(function* () {
      const widget = yield* newWidget(type, `s${i}`)
      if (entries.length > 0) {
        yield* putAt(
          widget,
          entries.map((e) => [e.ts, pointOf(type, e.value!)] as const)
        )
      }
      return { widget, type, entries }
    })
  )

const nowArb = (streams: ReadonlyArray<{ entries: ReadonlyArray<Entry<number>> }>) => {
  const all = streams.flatMap((s) => s.entries.map((e) => e.ts))
  const low = all.length === 0 ? NOW : Math.min(...all)
  const high = all.length === 0 ? NOW : Math.max(...all)
  return microsArb(low, high + 150 * DAY)
}

describe("runPass properties", () => {
  it("keeps exactly what the selection keeps, per stream, whatever the chunk, batch and page sizes", async () => {
    await fc.assert(
      fc.asyncProperty(
        streamsArb.chain((streams) => fc.tuple(fc.constant(streams), nowArb(streams), sizesArb)),
        ([streams, now, sizes]) =>
          run(
            Effect.gen(function* () {
              const stored = yield* storeStreams(streams)
              const result = yield* runPass({ policy: defaultPolicy, now, ...sizes })
              let removed = 0
              for (const { entries, type, widget } of stored) {
                const kept = referenceKept(entries, { policy: defaultPolicy, now, mode: modeOf(type) })
                const after = yield* readAll(widget)
                assert.deepStrictEqual(
                  after.map((e) => e.ts),
                  entries.filter((_, i) => kept[i]).map((e) => e.ts)
                )
                removed += entries.length - after.length
              }
              assert.strictEqual(result.entriesRemoved, removed)
              const again = yield* runPass({ policy: defaultPolicy, now, ...sizes })
              assert.strictEqual(again.entriesRemoved, 0)
            })
          )
      ),
      { numRuns: 150 }
    )
  }, 120_000)

  it("a pass interrupted after any number of delete batches, then a full pass, equals one full pass", async () => {
    await fc.assert(
      fc.asyncProperty(
        streamsArb.chain((streams) =>
          fc.tuple(fc.constant(streams), nowArb(streams), sizesArb, fc.integer({ min: 0, max: 12 }))
        ),
        ([streams, now, sizes, k]) =>
          run(
            Effect.gen(function* () {
              const stored = yield* storeStreams(streams)
              let calls = 0
              const interruptedAfterK = (
                store: Context.Tag.Service<DecimationStore>
              ): Context.Tag.Service<DecimationStore> => ({
                ...store,
                deleteEntries: (stream, ids: ReadonlyArray<EntryId>) =>
                  calls++ < k ? store.deleteEntries(stream, ids) : Effect.interrupt
              })
              yield* Effect.exit(withWrappedStore(interruptedAfterK, runPass({ policy: defaultPolicy, now, ...sizes })))
              for (const { entries, type, widget } of stored) {
                const kept = referenceKept(entries, { policy: defaultPolicy, now, mode: modeOf(type) })
                const midway = new Set((yield* readAll(widget)).map((e) => e.ts))
                // Midway: a subset of the original that still holds everything the full pass keeps.
                entries.forEach((e, i) => {
                  if (kept[i]) assert.isTrue(midway.has(e.ts))
                })
                assert.isAtMost(midway.size, entries.length)
              }
              yield* runPass({ policy: defaultPolicy, now, ...sizes })
              for (const { entries, type, widget } of stored) {
                const kept = referenceKept(entries, { policy: defaultPolicy, now, mode: modeOf(type) })
                assert.deepStrictEqual(
                  (yield* readAll(widget)).map((e) => e.ts),
                  entries.filter((_, i) => kept[i]).map((e) => e.ts)
                )
              }
            })
          )
      ),
      { numRuns: 150 }
    )
  }, 120_000)
})
