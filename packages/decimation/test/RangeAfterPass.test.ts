import {
  AccountStore,
  decimationMode,
  digestAccessKey,
  micros,
  newAccessKey,
  newAccountId,
  StreamName,
  StreamStore
} from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Logger, LogLevel, TestContext } from "effect"
import { defaultPolicy, runPass } from "../src/index.js"
import { DAY, HOUR, MINUTE } from "./support.js"

/** The pass time: 2024-01-10T00:00:00Z, in microseconds. */
const NOW = Date.UTC(2024, 0, 10) * 1000

// Entries over the 120 days before the pass (every tier of the default policy), values with ties.
const streamArb = fc
  .uniqueArray(fc.integer({ min: 1, max: 120 * DAY }), { minLength: 1, maxLength: 300, size: "max" })
  .chain((ages) =>
    fc.tuple(
      fc.constant([...ages].sort((a, b) => b - a).map((age) => NOW - age)),
      fc.array(fc.integer({ min: -5, max: 5 }), { minLength: ages.length, maxLength: ages.length })
    )
  )

const windowArb = fc.record({
  from: fc.option(fc.integer({ min: 0, max: 130 * DAY }), { nil: null }),
  span: fc.oneof(fc.constant(HOUR), fc.constant(7 * DAY), fc.integer({ min: MINUTE, max: 130 * DAY })),
  bounded: fc.boolean(),
  points: fc.integer({ min: 2, max: 300 })
})

describe("range reads after a decimation pass", () => {
  it.effect.prop(
    "a range read of decimated data returns stored entries only, unchanged, ascending",
    [streamArb, windowArb, fc.constantFrom("line-graph" as const, "xy-graph" as const, "text-feed" as const)],
    ([[ts, values], window, type]) =>
      Effect.gen(function* () {
        const accounts = yield* AccountStore
        const account = newAccountId()
        yield* accounts.createAccount({ id: account, name: "a", createdAt: NOW }, digestAccessKey(newAccessKey()))
        const widget = yield* accounts.createWidget(account, StreamName.make("s"), type, NOW)
        const store = yield* StreamStore
        const point = (v: number, i: number) =>
          type === "line-graph" ? { number: v } : type === "xy-graph" ? { x: i, y: v } : { title: `t${v}`, msg: "m" }
        // xy-graph and text-feed points take server ts: one write each, at its own `now`.
        if (type === "line-graph") {
          yield* store.write(
            [
              {
                widget,
                op: { _tag: "Put", entries: ts.map((t, i) => ({ point: point(values[i]!, i), ts: micros(t) })) },
                path: "point"
              }
            ],
            micros(NOW)
          )
        } else {
          for (let i = 0; i < ts.length; i++) {
            yield* store.write(
              [{ widget, op: { _tag: "Put", entries: [{ point: point(values[i]!, i) }] }, path: "point" }],
              micros(ts[i]!)
            )
          }
        }
        yield* runPass({ policy: defaultPolicy, now: NOW })
        const stored = yield* store.read(widget.id, { since: micros(0), limit: null })
        const from = window.from === null ? null : micros(NOW - window.from)
        const got = yield* store.readRange(widget.id, {
          from,
          since: null,
          to: window.bounded && from !== null ? micros(from + window.span) : null,
          points: window.points,
          mode: decimationMode(type),
          limit: null
        })
        const byTs = new Map(stored.map((e) => [e.ts, e.json]))
        for (const e of got) assert.strictEqual(byTs.get(e.ts), e.json)
        assert.isTrue(got.every((e, i) => i === 0 || e.ts > got[i - 1]!.ts))
        assert.isAtMost(got.length, (decimationMode(type) === "extremes" ? 4 : 1) * window.points)
      }).pipe(
        Effect.provide(
          Layer.mergeAll(MemoryStore.layer, TestContext.TestContext, Logger.minimumLogLevel(LogLevel.Warning))
        )
      ),
    { fastCheck: { numRuns: 60 } }
  )
})
