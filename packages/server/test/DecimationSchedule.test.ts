import {
  AccountStore,
  DecimationStore,
  digestAccessKey,
  micros,
  newAccessKey,
  newAccountId,
  StreamName,
  StreamStore,
  type Widget
} from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { defaultPolicy, type PassResult } from "@dashstream/decimation"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Logger, TestClock } from "effect"
import { Metrics } from "@dashstream/http"
import * as Decimation from "../src/Decimation.js"
import { parseExposition, valueOf } from "../../http/test/support/exposition.js"

const HOUR = 3_600_000
const DAY = 24 * HOUR
/** 2024-01-10T00:00:00Z in milliseconds. */
const MIDNIGHT = Date.UTC(2024, 0, 10)

describe("Decimation.nextRunAt", () => {
  it("is the next UTC time of day strictly after now", () => {
    const at = { hour: 3, minute: 0 }
    assert.strictEqual(Decimation.nextRunAt(MIDNIGHT, at), MIDNIGHT + 3 * HOUR)
    assert.strictEqual(Decimation.nextRunAt(MIDNIGHT + 3 * HOUR - 1, at), MIDNIGHT + 3 * HOUR)
    assert.strictEqual(Decimation.nextRunAt(MIDNIGHT + 3 * HOUR, at), MIDNIGHT + DAY + 3 * HOUR)
    assert.strictEqual(Decimation.nextRunAt(MIDNIGHT + 20 * HOUR, at), MIDNIGHT + DAY + 3 * HOUR)
    assert.strictEqual(Decimation.nextRunAt(MIDNIGHT, { hour: 0, minute: 0 }), MIDNIGHT + DAY)
    assert.strictEqual(Decimation.nextRunAt(MIDNIGHT + 1, { hour: 23, minute: 59 }), MIDNIGHT + DAY - 60_000)
  })

  it("is exact to the millisecond around the due time, and crosses months, leap days and years", () => {
    const at = { hour: 3, minute: 0 }
    assert.strictEqual(Decimation.nextRunAt(MIDNIGHT + 3 * HOUR - 500, at), MIDNIGHT + 3 * HOUR)
    assert.strictEqual(Decimation.nextRunAt(MIDNIGHT + 3 * HOUR + 1, at), MIDNIGHT + DAY + 3 * HOUR)
    const late = { hour: 23, minute: 30 }
    assert.strictEqual(Decimation.nextRunAt(Date.UTC(2024, 1, 28, 23, 45), late), Date.UTC(2024, 1, 29, 23, 30))
    assert.strictEqual(Decimation.nextRunAt(Date.UTC(2024, 1, 29, 23, 45), late), Date.UTC(2024, 2, 1, 23, 30))
    assert.strictEqual(Decimation.nextRunAt(Date.UTC(2024, 11, 31, 23, 45), late), Date.UTC(2025, 0, 1, 23, 30))
  })

  it("is in UTC whatever the machine's time zone", () => {
    const saved = process.env.TZ
    try {
      for (const zone of ["America/New_York", "Asia/Kolkata", "Pacific/Chatham"]) {
        process.env.TZ = zone
        assert.strictEqual(Decimation.nextRunAt(MIDNIGHT, { hour: 3, minute: 0 }), MIDNIGHT + 3 * HOUR, zone)
        // The night New York's clocks go forward (2024-03-10, 02:00 local is 07:00 UTC): UTC has no such gap.
        const spring = Date.UTC(2024, 2, 10)
        assert.strictEqual(Decimation.nextRunAt(spring, { hour: 7, minute: 0 }), spring + 7 * HOUR, zone)
      }
    } finally {
      if (saved === undefined) delete process.env.TZ
      else process.env.TZ = saved
    }
  })
})

/** A sparkline with 6 numbers in one hour 20 days before `MIDNIGHT`: a pass at any later time removes 2. */
const fixture = Effect.gen(function* () {
  const accounts = yield* AccountStore
  const id = newAccountId()
  yield* accounts.createAccount({ id, name: "a", createdAt: 0 }, digestAccessKey(newAccessKey()))
  const widget = yield* accounts.createWidget(id, StreamName.make("s"), "sparkline", 0)
  const base = (MIDNIGHT - 20 * DAY) * 1000
  yield* Effect.flatMap(StreamStore, (s) =>
    s.write(
      [
        {
          widget,
          op: {
            _tag: "Put",
            entries: [5, 1, 9, 3, 4, 6].map((number, i) => ({ point: { number }, ts: micros(base + i * 60_000_000) }))
          },
          path: "point"
        }
      ],
      micros(base)
    )
  )
  return widget
})

const count = (widget: Widget) =>
  Effect.map(
    Effect.flatMap(StreamStore, (s) => s.read(widget.id, { since: micros(0), limit: null })),
    (entries) => entries.length
  )

/**
 * The stream's entry count once it reaches `expected`, or the count after a second of real time. The pass yields to
 * the event loop between storage calls, so it may still be running when `TestClock.adjust` returns.
 */
const settledCount = (widget: Widget, expected: number) =>
  Effect.gen(function* () {
    for (let i = 0; i < 100; i++) {
      const n = yield* count(widget)
      if (n === expected) return n
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
    }
    return yield* count(widget)
  })

const collectLogs = (lines: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message }) => {
      lines.push(String(message))
    })
  )

/** Each log line as its message and annotations. */
const collectAnnotatedLogs = (lines: Array<{ message: string; annotations: Record<string, unknown> }>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message, annotations }) => {
      lines.push({ message: String(message), annotations: Object.fromEntries(annotations) })
    })
  )

describe("Decimation.daily", () => {
  it.effect("logs when the next pass is due, before each wait", () =>
    Effect.gen(function* () {
      yield* fixture
      const lines: Array<{ message: string; annotations: Record<string, unknown> }> = []
      yield* TestClock.setTime(MIDNIGHT + 5 * HOUR)
      const fiber = yield* Effect.fork(
        Decimation.daily({ hour: 4, minute: 30 }, defaultPolicy).pipe(Effect.provide(collectAnnotatedLogs(lines)))
      )
      yield* TestClock.adjust(DAY)
      for (let i = 0; i < 100 && lines.filter((l) => l.message.startsWith("next")).length < 2; i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      }
      assert.deepStrictEqual(
        lines.filter((line) => line.message === "next decimation pass scheduled").map((line) => line.annotations),
        [
          { at: "2024-01-11T04:30:00.000Z", daily: "04:30 UTC" },
          { at: "2024-01-12T04:30:00.000Z", daily: "04:30 UTC" }
        ]
      )
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect("runs the pass at the configured UTC time every day", () =>
    Effect.gen(function* () {
      const widget = yield* fixture
      yield* TestClock.setTime(MIDNIGHT + 2 * HOUR)
      const fiber = yield* Effect.fork(Decimation.daily({ hour: 3, minute: 0 }, defaultPolicy))
      yield* TestClock.adjust(HOUR - 1)
      assert.strictEqual(yield* count(widget), 6)
      yield* TestClock.adjust(1)
      assert.strictEqual(yield* settledCount(widget, 4), 4)
      yield* TestClock.adjust(DAY)
      assert.strictEqual(yield* settledCount(widget, 4), 4)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect("reports each completed pass to onPass, which serve records in its metrics", () =>
    Effect.gen(function* () {
      yield* fixture
      const metrics = new Metrics({ defaultMetrics: false })
      const results: Array<PassResult> = []
      yield* TestClock.setTime(MIDNIGHT + 2 * HOUR)
      const fiber = yield* Effect.fork(
        Decimation.daily({ hour: 3, minute: 0 }, defaultPolicy, (result) => {
          results.push(result)
          metrics.decimationPass(result)
        })
      )
      yield* TestClock.adjust(HOUR)
      for (let i = 0; i < 100 && results.length === 0; i++) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      }
      assert.deepStrictEqual(
        results.map((r) => [r.entriesExamined, r.entriesRemoved]),
        [[6, 2]]
      )
      const exposition = parseExposition(yield* Effect.promise(() => metrics.exposition()))
      assert.strictEqual(valueOf(exposition, "dashstream_decimation_passes_total"), 1)
      assert.strictEqual(valueOf(exposition, "dashstream_decimation_entries_examined_total"), 6)
      assert.strictEqual(valueOf(exposition, "dashstream_decimation_entries_removed_total"), 2)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect("skips the pass, and logs it, when another process holds the lock; keeps running after", () =>
    Effect.gen(function* () {
      const widget = yield* fixture
      const lines: Array<string> = []
      yield* TestClock.setTime(MIDNIGHT)
      const store = yield* DecimationStore
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(store.withPassLock(Deferred.await(release)))
      yield* Effect.yieldNow()
      const fiber = yield* Effect.fork(
        Decimation.daily({ hour: 1, minute: 30 }, defaultPolicy).pipe(Effect.provide(collectLogs(lines)))
      )
      yield* TestClock.adjust(2 * HOUR)
      assert.strictEqual(yield* count(widget), 6)
      assert.isTrue(lines.some((line) => line.startsWith("decimation pass skipped")))
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(holder)
      yield* TestClock.adjust(DAY)
      assert.strictEqual(yield* settledCount(widget, 4), 4)
      assert.isTrue(
        lines.some((line) => line === "decimation pass done: streams visited 1, entries examined 6, entries removed 2")
      )
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(MemoryStore.layer))
  )

  it.effect("a failing pass is logged and the next day's pass runs", () =>
    Effect.gen(function* () {
      const widget = yield* fixture
      const lines: Array<string> = []
      yield* TestClock.setTime(MIDNIGHT)
      const store = yield* DecimationStore
      let failures = 1
      const flaky: DecimationStore["Type"] = {
        ...store,
        streams: (page) => (failures-- > 0 ? Effect.die(new Error("disk on fire")) : store.streams(page))
      }
      const fiber = yield* Effect.fork(
        Decimation.daily({ hour: 3, minute: 0 }, defaultPolicy).pipe(
          Effect.provideService(DecimationStore, flaky),
          Effect.provide(collectLogs(lines))
        )
      )
      yield* TestClock.adjust(4 * HOUR)
      assert.strictEqual(yield* count(widget), 6)
      assert.isTrue(lines.some((line) => line.startsWith("decimation pass failed")))
      yield* TestClock.adjust(DAY)
      assert.strictEqual(yield* settledCount(widget, 4), 4)
      yield* Fiber.interrupt(fiber)
    }).pipe(Effect.provide(MemoryStore.layer))
  )
})
