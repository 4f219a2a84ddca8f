import { assert, describe, layer } from "@effect/vitest"
import { Effect, FastCheck as fc, type Layer } from "effect"
import { pointBuckets } from "../../RangeRead.js"
import type { StoredPoint } from "../../Point.js"
import { type RangeQuery, StreamStore } from "../../StreamStore.js"
import { micros } from "../../Time.js"
import type { Widget } from "../../Widget.js"
import { decimationMode, type WidgetType } from "../../WidgetType.js"
import {
  at,
  newWidget,
  put,
  putAt,
  read,
  type Read,
  readAll,
  type Stores,
  type SuiteTest,
  T0,
  write
} from "./fixtures.js"

/**
 * The range-read part of the storage contract suite (`StreamStore.readRange`; README, "Range reads"): windows with
 * and without bounds, paging with `since` and `to`, empty windows and streams, `points` on every kind of widget
 * (numeric by `number`, xy-graph by `y`, the others their last entry), ties; and properties against a brute-force
 * reference over a `since=0` read. Registered by `storageSuite` inside its `describe`.
 */

/** A range query: no bounds, no points, no limit, unless given. */
const range = (w: Widget, q: Partial<RangeQuery>): RangeQuery => ({
  from: null,
  since: null,
  to: null,
  points: null,
  limit: null,
  mode: decimationMode(w.type),
  ...q
})

export const readRange = (w: Widget, q: Partial<RangeQuery>) =>
  Effect.map(
    Effect.flatMap(StreamStore, (s) => s.readRange(w.id, range(w, q))),
    (entries): ReadonlyArray<Read> => entries.map((e) => ({ ts: e.ts, point: JSON.parse(e.json) as unknown }))
  )

const tsOf = (entries: ReadonlyArray<Read>) => entries.map((e) => e.ts - T0)

/** Numbers at client timestamps `T0 + offset` microseconds, one push. */
export const numbers = (w: Widget, ...rows: ReadonlyArray<readonly [number, number]>) =>
  write(w, putAt(...rows.map(([offset, n]) => [at(offset), { number: n }] as const)), at(1_000_000))

/**
 * The reference selection, brute force from the README's words: entry `t` falls in bucket
 * `min(N - 1, floor((t - L) * N / (U - L)))` (one bucket when `U = L`); a numeric bucket keeps its first, last,
 * lowest and highest by `number` (earliest on ties), an xy-graph's the same by `y`, any other its last.
 */
export const referenceRange = (
  all: ReadonlyArray<Read>,
  type: WidgetType,
  lower: number,
  upper: number,
  points: number
): Array<Read> => {
  const valueOf = (e: Read): number | null => {
    const p = e.point as { number?: number; y?: number }
    return decimationMode(type) === "last" ? null : typeof p.number === "number" ? p.number : (p.y ?? null)
  }
  const window = all.filter((e) => e.ts >= lower && e.ts <= upper)
  const buckets = new Map<number, Array<Read>>()
  for (const e of window) {
    const k =
      upper === lower
        ? 0
        : Math.min(points - 1, Number((BigInt(e.ts - lower) * BigInt(points)) / BigInt(upper - lower)))
    buckets.set(k, [...(buckets.get(k) ?? []), e])
  }
  const kept = new Set<Read>()
  for (const bucket of buckets.values()) {
    kept.add(bucket[bucket.length - 1]!)
    if (decimationMode(type) === "last") continue
    kept.add(bucket[0]!)
    const valued = bucket.filter((e) => valueOf(e) !== null)
    if (valued.length === 0) continue
    kept.add(valued.reduce((a, b) => (valueOf(b)! < valueOf(a)! ? b : a)))
    kept.add(valued.reduce((a, b) => (valueOf(b)! > valueOf(a)! ? b : a)))
  }
  return window.filter((e) => kept.has(e))
}

export const rangeReadSuite = (test: SuiteTest): void => {
  describe("range read", () => {
    test(
      "without points: from and to inclusive, since exclusive, either bound optional, limit the oldest",
      Effect.gen(function* () {
        const w = yield* newWidget("line-graph")
        yield* numbers(w, [10, 1], [20, 2], [30, 3], [40, 4], [50, 5])
        assert.deepStrictEqual(tsOf(yield* readRange(w, {})), [10, 20, 30, 40, 50])
        assert.deepStrictEqual(tsOf(yield* readRange(w, { from: at(20), to: at(40) })), [20, 30, 40])
        assert.deepStrictEqual(tsOf(yield* readRange(w, { since: at(20), to: at(40) })), [30, 40])
        assert.deepStrictEqual(tsOf(yield* readRange(w, { from: at(21), to: at(39) })), [30])
        assert.deepStrictEqual(tsOf(yield* readRange(w, { from: at(30) })), [30, 40, 50])
        assert.deepStrictEqual(tsOf(yield* readRange(w, { to: at(30) })), [10, 20, 30])
        assert.deepStrictEqual(tsOf(yield* readRange(w, { from: at(10), limit: 2 })), [10, 20])
        assert.deepStrictEqual(tsOf(yield* readRange(w, { from: at(30), to: at(30) })), [30])
        assert.deepStrictEqual(yield* readRange(w, {}), yield* readAll(w))
      })
    )

    test(
      "paging with since and to: each page's last ts as the next since reads the window once, in order",
      Effect.gen(function* () {
        const w = yield* newWidget("sparkline")
        yield* numbers(w, ...Array.from({ length: 100 }, (_, i) => [i * 3, i] as const))
        const pages: Array<Array<number>> = []
        let since = at(29)
        for (;;) {
          const page = tsOf(yield* readRange(w, { since, to: at(250), limit: 7 }))
          if (page.length === 0) break
          pages.push(page)
          since = at(page[page.length - 1]!)
        }
        assert.deepStrictEqual(
          pages.flat(),
          Array.from({ length: 74 }, (_, i) => 30 + i * 3)
        )
        assert.isTrue(pages.slice(0, -1).every((page) => page.length === 7))
      })
    )

    test(
      "large points (a few a stored block) read and page the same",
      Effect.gen(function* () {
        const w = yield* newWidget("text-feed")
        const msg = "x".repeat(7_000)
        yield* write(w, put(...Array.from({ length: 40 }, (_, i) => ({ title: `t${i}`, msg }))), at(0))
        const all = yield* readAll(w)
        assert.deepStrictEqual(yield* readRange(w, { from: at(3), limit: 9 }), all.slice(3, 12))
        assert.deepStrictEqual(yield* readRange(w, { since: at(3), to: at(30), limit: 100 }), all.slice(4, 31))
        assert.deepStrictEqual(tsOf(yield* readRange(w, { from: at(1), points: 3 })), [13, 26, 39])
      })
    )

    test(
      "an empty stream, a window before the oldest or after the newest entry, and U < L all read []",
      Effect.gen(function* () {
        const empty = yield* newWidget("number", "empty")
        assert.deepStrictEqual(yield* readRange(empty, {}), [])
        assert.deepStrictEqual(yield* readRange(empty, { points: 10 }), [])
        assert.deepStrictEqual(yield* readRange(empty, { from: at(0), to: at(10), points: 10 }), [])
        const w = yield* newWidget("number", "full", empty.accountId)
        yield* numbers(w, [10, 1], [20, 2])
        for (const q of [
          { to: at(9) },
          { to: at(9), points: 5 },
          { from: at(21) },
          { from: at(21), points: 5 },
          { since: at(20), points: 5 },
          { from: at(11), to: at(19), points: 5 }
        ]) {
          assert.deepStrictEqual(yield* readRange(w, q), [], JSON.stringify(q))
        }
        // A cleared stream reads as empty.
        yield* write(w, { _tag: "Clear" }, at(2_000_000))
        assert.deepStrictEqual(yield* readRange(w, { points: 5 }), [])
      })
    )

    test(
      "points on a numeric stream: per bucket the first, last, lowest and highest (earliest on ties), ascending",
      Effect.gen(function* () {
        const w = yield* newWidget("line-graph")
        // Window [0, 100] in 2 buckets: [0, 50) and [50, 100] (the last bucket holds U).
        yield* numbers(
          w,
          [0, 5],
          [10, 9],
          [20, 1],
          [30, 9],
          [40, 1],
          [45, 5],
          [50, 3],
          [60, 3],
          [70, 3],
          [100, 4],
          [101, 99]
        )
        const got = yield* readRange(w, { from: at(0), to: at(100), points: 2 })
        assert.deepStrictEqual(
          got.map((e) => [e.ts - T0, (e.point as { number: number }).number]),
          [
            [0, 5],
            [10, 9],
            [20, 1],
            [45, 5],
            [50, 3],
            [100, 4]
          ]
        )
      })
    )

    test(
      "points without bounds: L and U are the oldest and newest ts; with one bound, the other from the data",
      Effect.gen(function* () {
        const w = yield* newWidget("sparkline")
        // Oldest 10, newest 50: 4 buckets of 10 µs, [10, 20), [20, 30), [30, 40), [40, 50].
        yield* numbers(w, [10, 1], [12, 0], [15, 2], [19, 1], [20, 7], [29, 7], [35, 1], [41, 1], [50, 1])
        assert.deepStrictEqual(tsOf(yield* readRange(w, { points: 4 })), [10, 12, 15, 19, 20, 29, 35, 41, 50])
        // With from 0 the buckets are [0, 12.5), [12.5, 25), [25, 37.5), [37.5, 50]: in whole µs, edges 13, 25, 38.
        assert.deepStrictEqual(
          tsOf(yield* readRange(w, { from: at(0), points: 4 })),
          [10, 12, 15, 19, 20, 29, 35, 41, 50]
        )
        assert.deepStrictEqual(tsOf(yield* readRange(w, { from: at(0), points: 2 })), [10, 12, 20, 29, 35, 50])
        // to 30: U = 30, L = the oldest, 10; buckets [10, 20), [20, 30].
        assert.deepStrictEqual(tsOf(yield* readRange(w, { to: at(30), points: 2 })), [10, 12, 15, 19, 20, 29])
        // U = L: one bucket of one entry.
        assert.deepStrictEqual(tsOf(yield* readRange(w, { from: at(20), to: at(20), points: 3 })), [20])
      })
    )

    test(
      "points on an xy-graph keep by y; on other widget types the last entry of each bucket",
      Effect.gen(function* () {
        const xy = yield* newWidget("xy-graph", "xy")
        // An array push takes server ts now, now + 1, ...: ts 0 to 5.
        const points: Array<StoredPoint> = [
          { x: 1, y: 5 },
          { x: 2, y: 2 },
          { x: 3, y: 2 },
          { x: 4, y: 8 },
          { x: 5, y: 8 },
          { x: 6, y: 3 }
        ]
        yield* write(xy, put(...points), at(0))
        const kept = yield* readRange(xy, { points: 2 })
        // Buckets [0, 2.5) and [2.5, 5]: ts 0, 1, 2 and ts 3, 4, 5.
        assert.deepStrictEqual(tsOf(kept), [0, 1, 2, 3, 5])
        assert.deepStrictEqual(kept[1]!.point, { x: 2, y: 2 })
        const feed = yield* newWidget("text-feed", "feed", xy.accountId)
        yield* write(feed, put(...Array.from({ length: 6 }, (_, i) => ({ title: `t${i}`, msg: "m" }))), at(0))
        assert.deepStrictEqual(tsOf(yield* readRange(feed, { points: 2 })), [2, 5])
        assert.deepStrictEqual(tsOf(yield* readRange(feed, { points: 6 })), [0, 1, 2, 3, 4, 5])
        const board = yield* newWidget("leaderboard", "board", xy.accountId)
        yield* write(board, put({ leaderboard: [{ name: "a", value: 1 }] }), at(0))
        yield* write(board, put({ leaderboard: [{ name: "a", value: 2 }] }), at(1))
        yield* write(board, put({ leaderboard: [{ name: "a", value: 3 }] }), at(7))
        assert.deepStrictEqual(tsOf(yield* readRange(board, { from: at(0), to: at(8), points: 2 })), [1, 7])
      })
    )

    test(
      "ties: among equal values the earliest is the lowest or highest",
      Effect.gen(function* () {
        const w = yield* newWidget("number")
        yield* numbers(w, [0, 4], [1, 4], [2, 2], [3, 2], [4, 6], [5, 6], [6, 4])
        assert.deepStrictEqual(tsOf(yield* readRange(w, { points: 2 })), [0, 2, 3, 4, 6])
      })
    )
  })
}

// Random numeric streams: few distinct values (ties are common), timestamps in a small range so windows cut them.
const streamArb = fc
  .uniqueArray(fc.integer({ min: 0, max: 400 }), { minLength: 0, maxLength: 60 })
  .chain((offsets) =>
    fc.tuple(
      fc.constant([...offsets].sort((a, b) => a - b)),
      fc.array(fc.integer({ min: -3, max: 3 }), { minLength: offsets.length, maxLength: offsets.length })
    )
  )
const boundArb = fc.option(fc.integer({ min: -10, max: 410 }), { nil: null })
const windowArb = fc.record({
  lower: fc.oneof(
    fc.constant({ kind: "none" as const }),
    fc.record({ kind: fc.constantFrom("from" as const, "since" as const), at: fc.integer({ min: -10, max: 410 }) })
  ),
  to: boundArb,
  points: fc.oneof(fc.integer({ min: 2, max: 12 }), fc.constant(10_000))
})

/**
 * The property part of the range-read suite, on one store shared by the runs (see `modelSuite`): a range read equals
 * the brute-force reference over a `since=0` read, and drawn one column a bucket, its per-column lowest and highest
 * values equal the full data's.
 */
export const rangeReadProperties = (makeLayer: () => Layer.Layer<Stores, unknown>): void => {
  layer(makeLayer())("range read properties", (it) => {
    it.effect.prop(
      "a range read with points equals the brute-force selection over a since=0 read; its columns' extremes are the data's",
      [streamArb, windowArb, fc.constantFrom<WidgetType>("line-graph", "number", "sparkline")],
      ([[offsets, values], window, type]) =>
        Effect.gen(function* () {
          const w = yield* newWidget(type, "stream")
          if (offsets.length > 0) yield* numbers(w, ...offsets.map((o, i) => [o, values[i]!] as const))
          const all = yield* read(w.id, { since: micros(0), limit: null })
          const lowerTs = window.lower.kind === "none" ? null : at(window.lower.at)
          const query: Partial<RangeQuery> = {
            from: window.lower.kind === "from" ? lowerTs : null,
            since: window.lower.kind === "since" ? lowerTs : null,
            to: window.to === null ? null : at(window.to),
            points: window.points
          }
          const got = yield* readRange(w, query)
          const inWindow = all.filter(
            (e) =>
              (window.lower.kind !== "from" || e.ts >= lowerTs!) &&
              (window.lower.kind !== "since" || e.ts > lowerTs!) &&
              (window.to === null || e.ts <= at(window.to))
          )
          if (inWindow.length === 0) return assert.deepStrictEqual(got, [])
          const lower = lowerTs ?? inWindow[0]!.ts
          const upper = window.to === null ? all[all.length - 1]!.ts : at(window.to)
          if (upper < lower) return assert.deepStrictEqual(got, [])
          assert.deepStrictEqual(got, referenceRange(inWindow, type, lower, upper, window.points))
          // Drawn one pixel column a bucket, the answer's lowest and highest per column are the full data's.
          const { bucketOf } = pointBuckets(lower, upper, window.points)
          const columns = (entries: ReadonlyArray<Read>) => {
            const out = new Map<number, [number, number]>()
            for (const e of entries) {
              const k = upper === lower ? 0 : bucketOf(e.ts)
              const n = (e.point as { number: number }).number
              const [lo, hi] = out.get(k) ?? [n, n]
              out.set(k, [Math.min(lo, n), Math.max(hi, n)])
            }
            return [...out.entries()].sort((a, b) => a[0] - b[0])
          }
          assert.deepStrictEqual(columns(got), columns(inWindow))
        }),
      { fastCheck: { numRuns: 60 } }
    )
  })
}
