import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import * as fc from "fast-check"
import { applyOp, decimationValue, type Mutation, needsLatest, pointJson, type StreamState } from "../src/Apply.js"
import { InvalidPoint } from "../src/Errors.js"
import type { LeaderboardItem, PointOp, StoredPoint } from "../src/Point.js"
import { type Micros, micros } from "../src/Time.js"
import type { WidgetType } from "../src/WidgetType.js"

const NOW = micros(1_732_000_000_000_000)
const empty: StreamState = { lastTs: null, latest: null }

const apply = (type: WidgetType, op: PointOp, state: StreamState = empty, now: Micros = NOW): Mutation => {
  const r = applyOp(type, op, state, now, "point")
  if (Either.isLeft(r)) return assert.fail(`expected success, got ${r.left.path}: ${r.left.message}`)
  return r.right
}

const points = (m: Mutation): Array<StoredPoint> => m.entries.map((e) => e.point)

/** The state an adapter would read after storing `m` on top of `state` (latest = entry with the highest ts). */
const after = (state: StreamState, m: Mutation): StreamState => {
  let latest = m.clear ? null : state.latest
  let best = -Infinity
  if (!m.clear && state.latest !== null && state.lastTs !== null) best = state.lastTs
  for (const e of m.entries) {
    if (e.ts >= best) {
      best = e.ts
      latest = e.point
    }
  }
  return { lastTs: m.lastTs, latest }
}

describe("applyOp: Put", () => {
  it("gives server ts = now on an empty stream, and one microsecond apart within one push", () => {
    const m = apply("xy-graph", { _tag: "Put", entries: [{ point: { x: 1, y: 2 } }, { point: { x: 3, y: 4 } }] })
    assert.deepStrictEqual(
      m.entries.map((e) => e.ts),
      [NOW, NOW + 1]
    )
    assert.strictEqual(m.lastTs, NOW + 1)
    assert.isFalse(m.clear)
  })

  it("goes one microsecond past lastTs when the clock has not moved or went back", () => {
    const same = apply("number", { _tag: "Put", entries: [{ point: { number: 1 } }] }, { lastTs: NOW, latest: null })
    assert.strictEqual(same.entries[0]!.ts, NOW + 1)
    const back = apply(
      "number",
      { _tag: "Put", entries: [{ point: { number: 1 } }] },
      { lastTs: micros(NOW + 500), latest: null }
    )
    assert.strictEqual(back.entries[0]!.ts, NOW + 501)
    assert.strictEqual(back.lastTs, NOW + 501)
  })

  it("keeps a client ts, and lastTs is the highest ts ever assigned", () => {
    const past = micros(1_000_000)
    const m = apply(
      "sparkline",
      { _tag: "Put", entries: [{ point: { number: 1 }, ts: past }] },
      { lastTs: NOW, latest: { number: 9 } }
    )
    assert.strictEqual(m.entries[0]!.ts, past)
    assert.strictEqual(m.lastTs, NOW)
    const future = micros(NOW + 10_000_000)
    const m2 = apply("sparkline", { _tag: "Put", entries: [{ point: { number: 1 }, ts: future }] })
    assert.strictEqual(m2.lastTs, future)
  })

  it("serialises the point and gives the decimation value", () => {
    const n = apply("dial", { _tag: "Put", entries: [{ point: { number: 7, prefix: "$" } }] }).entries[0]!
    assert.strictEqual(n.json, `{"number":7,"prefix":"$"}`)
    assert.strictEqual(n.value, 7)
    assert.strictEqual(apply("xy-graph", { _tag: "Put", entries: [{ point: { x: 1, y: 5 } }] }).entries[0]!.value, 5)
    assert.isNull(apply("label", { _tag: "Put", entries: [{ point: { label: "a" } }] }).entries[0]!.value)
  })

  it("an entry of a Put of several gives the same point, JSON and decimation value as one alone", () => {
    // A decoder's entry whose point is made when read (as a line protocol entry's is): read at most once per field.
    let reads = 0
    const counted = {
      get point(): StoredPoint {
        reads++
        return { number: 2.5 }
      },
      json: '{"number":2.5}'
    }
    const many = apply("sparkline", {
      _tag: "Put",
      entries: [{ point: { number: 7, prefix: "$" } }, counted, { point: { number: -1 }, json: "[given]" }]
    }).entries
    assert.strictEqual(reads, 0)
    assert.deepStrictEqual(
      many.map((e) => [e.ts, e.point, e.json, e.value]),
      [
        [NOW, { number: 7, prefix: "$" }, `{"number":7,"prefix":"$"}`, 7],
        [NOW + 1, { number: 2.5 }, '{"number":2.5}', 2.5],
        // A given JSON is taken as it is, not serialised again.
        [NOW + 2, { number: -1 }, "[given]", -1]
      ]
    )
    assert.strictEqual(reads, 2)
    const xy = apply("xy-graph", { _tag: "Put", entries: [{ point: { x: 1, y: 5 } }, { point: { x: 2, y: 6 } }] })
    assert.deepStrictEqual(
      xy.entries.map((e) => [e.json, e.value]),
      [
        ['{"x":1,"y":5}', 5],
        ['{"x":2,"y":6}', 6]
      ]
    )
    const labels = apply("label", { _tag: "Put", entries: [{ point: { label: "a" } }, { point: { label: "b" } }] })
    assert.deepStrictEqual(
      labels.entries.map((e) => e.value),
      [null, null]
    )
  })

  it("stores nothing for an empty Put but keeps lastTs", () => {
    const m = apply("usa-map", { _tag: "Put", entries: [] }, { lastTs: NOW, latest: null })
    assert.deepStrictEqual(m, { clear: false, clearedAt: null, entries: [], lastTs: NOW })
  })
})

describe("applyOp: Clear", () => {
  it("deletes everything and takes a ts of its own past lastTs, so ts never goes back", () => {
    assert.deepStrictEqual(apply("number", { _tag: "Clear" }, { lastTs: micros(NOW + 9), latest: { number: 3 } }), {
      clear: true,
      clearedAt: micros(NOW + 10),
      entries: [],
      lastTs: micros(NOW + 10)
    })
    assert.deepStrictEqual(apply("number", { _tag: "Clear" }), {
      clear: true,
      clearedAt: NOW,
      entries: [],
      lastTs: NOW
    })
  })

  it("the clear's ts lies between every ts it cleared and every server ts after it", () => {
    const cleared = apply("sparkline", { _tag: "Clear" }, { lastTs: micros(NOW + 5), latest: null })
    const next = apply("sparkline", { _tag: "Put", entries: [{ point: { number: 1 } }] }, after(empty, cleared))
    assert.isTrue(cleared.clearedAt! > NOW + 5)
    assert.isTrue(next.entries[0]!.ts > cleared.clearedAt!)
  })
})

describe("applyOp: Delta", () => {
  it("starts from 0 on an empty stream", () => {
    assert.deepStrictEqual(points(apply("number", { _tag: "Delta", delta: 5 })), [{ number: 5 }])
  })

  it("adds to the latest number, negative deltas subtract", () => {
    const state: StreamState = { lastTs: NOW, latest: { number: 10 } }
    assert.deepStrictEqual(points(apply("number", { _tag: "Delta", delta: -3 }, state)), [{ number: 7 }])
  })

  it("carries prefix and suffix over unless the push gives them", () => {
    const state: StreamState = { lastTs: NOW, latest: { number: 10, prefix: "$", suffix: "k" } }
    const carried = apply("number", { _tag: "Delta", delta: 1 }, state)
    assert.deepStrictEqual(points(carried), [{ number: 11, prefix: "$", suffix: "k" }])
    assert.strictEqual(carried.entries[0]!.json, `{"number":11,"prefix":"$","suffix":"k"}`)
    assert.deepStrictEqual(points(apply("number", { _tag: "Delta", delta: 1, suffix: "m" }, state)), [
      { number: 11, prefix: "$", suffix: "m" }
    ])
  })

  it("uses the client ts when given", () => {
    const t = micros(1_700_000_000_000_000)
    const m = apply("number", { _tag: "Delta", delta: 1, ts: t }, { lastTs: NOW, latest: { number: 1 } })
    assert.strictEqual(m.entries[0]!.ts, t)
    assert.strictEqual(m.lastTs, NOW)
  })

  it("starts from 0 again after a clear", () => {
    let state: StreamState = { lastTs: NOW, latest: { number: 100 } }
    state = after(state, apply("number", { _tag: "Clear" }, state))
    const m = apply("number", { _tag: "Delta", delta: 2 }, state)
    assert.deepStrictEqual(points(m), [{ number: 2 }])
    // The clear took NOW + 1 as its own ts.
    assert.strictEqual(m.entries[0]!.ts, NOW + 2)
  })

  it("refuses a delta whose result is not finite, with InvalidPoint at the delta", () => {
    for (const [latest, delta] of [
      [1e308, 1e308],
      [-1e308, -1e308],
      [Number.MAX_VALUE, Number.MAX_VALUE / 1e15]
    ] as const) {
      const r = applyOp("number", { _tag: "Delta", delta }, { lastTs: NOW, latest: { number: latest } }, NOW, "point")
      assert.isTrue(Either.isLeft(r), `${latest} + ${delta}`)
      if (Either.isLeft(r)) {
        assert.instanceOf(r.left, InvalidPoint)
        assert.strictEqual(r.left.path, "point.delta")
      }
    }
    // The largest finite sums are still stored.
    assert.deepStrictEqual(
      points(apply("number", { _tag: "Delta", delta: 1e308 }, { lastTs: NOW, latest: { number: 7e307 } })),
      [{ number: 1e308 + 7e307 }]
    )
  })

  it("property: any sequence of deltas applied in order ends at their sum", () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e12, max: 1e12, noNaN: true })), (deltas) => {
        let state = empty
        for (const delta of deltas) state = after(state, apply("number", { _tag: "Delta", delta }, state))
        const expected = deltas.reduce((sum, d) => sum + d, 0)
        if (deltas.length === 0) assert.isNull(state.latest)
        else assert.deepStrictEqual(state.latest, { number: expected })
      })
    )
  })

  it("property: with clears in between, the result is the sum of the deltas after the last clear", () => {
    const step = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.constant("clear" as const))
    fc.assert(
      fc.property(fc.array(step, { minLength: 1 }), (steps) => {
        let state = empty
        for (const s of steps) {
          const op: PointOp = s === "clear" ? { _tag: "Clear" } : { _tag: "Delta", delta: s }
          state = after(state, apply("number", op, state))
        }
        const tail = steps.slice(steps.lastIndexOf("clear") + 1) as Array<number>
        if (tail.length === 0) assert.isNull(state.latest)
        else assert.deepStrictEqual(state.latest, { number: tail.reduce((a, b) => a + b, 0) })
      })
    )
  })
})

describe("applyOp: LeaderboardItem", () => {
  const board = (...items: Array<LeaderboardItem>): StreamState => ({ lastTs: NOW, latest: { leaderboard: items } })

  it("starts a board on an empty stream", () => {
    assert.deepStrictEqual(points(apply("leaderboard", { _tag: "LeaderboardItem", item: { name: "a", value: 1 } })), [
      { leaderboard: [{ name: "a", value: 1 }] }
    ])
  })

  it("replaces the value and prefix/suffix of an existing name and re-sorts by value, highest first", () => {
    const state = board({ name: "a", value: 3, prefix: "$" }, { name: "b", value: 2 }, { name: "c", value: 1 })
    const m = apply("leaderboard", { _tag: "LeaderboardItem", item: { name: "c", value: 5, suffix: "pts" } }, state)
    assert.deepStrictEqual(points(m), [
      {
        leaderboard: [
          { name: "c", value: 5, suffix: "pts" },
          { name: "a", value: 3, prefix: "$" },
          { name: "b", value: 2 }
        ]
      }
    ])
  })

  it("adds a new name in value order, stable for equal values", () => {
    const state = board({ name: "a", value: 3 }, { name: "b", value: 2 }, { name: "c", value: 2 })
    const m = apply("leaderboard", { _tag: "LeaderboardItem", item: { name: "d", value: 2 } }, state)
    assert.deepStrictEqual(points(m), [
      {
        leaderboard: [
          { name: "a", value: 3 },
          { name: "b", value: 2 },
          { name: "c", value: 2 },
          { name: "d", value: 2 }
        ]
      }
    ])
  })

  it("property: the result holds each name once, sorted by value desc, stable for equal values", () => {
    const item = fc.record({ name: fc.constantFrom("a", "b", "c", "d", "e"), value: fc.integer({ min: 0, max: 3 }) })
    fc.assert(
      fc.property(fc.array(item, { maxLength: 30 }), (items) => {
        let state = empty
        for (const i of items) state = after(state, apply("leaderboard", { _tag: "LeaderboardItem", item: i }, state))
        if (items.length === 0) return
        const result = (state.latest as { leaderboard: Array<LeaderboardItem> }).leaderboard
        const names = new Set(items.map((i) => i.name))
        assert.strictEqual(result.length, names.size)
        for (const name of names) {
          const last = items.filter((i) => i.name === name).at(-1)!
          assert.deepStrictEqual(
            result.find((r) => r.name === name),
            last
          )
        }
        for (let k = 1; k < result.length; k++) assert.isTrue(result[k - 1]!.value >= result[k]!.value)
      })
    )
  })
})

describe("applyOp: ListItem", () => {
  it("puts the item at the top of the latest list", () => {
    const state: StreamState = { lastTs: NOW, latest: { list: [{ listItem: "b" }, { listItem: "c" }] } }
    assert.deepStrictEqual(points(apply("list", { _tag: "ListItem", listItem: "a" }, state)), [
      { list: [{ listItem: "a" }, { listItem: "b" }, { listItem: "c" }] }
    ])
  })

  it("starts a list on an empty stream", () => {
    assert.deepStrictEqual(points(apply("list", { _tag: "ListItem", listItem: "a" })), [{ list: [{ listItem: "a" }] }])
  })
})

describe("applyOp: TableRow", () => {
  const state: StreamState = {
    lastTs: NOW,
    latest: {
      table: [
        ["h1", "h2"],
        ["old", "1"]
      ]
    }
  }

  it("puts the row directly under the header row", () => {
    assert.deepStrictEqual(points(apply("table", { _tag: "TableRow", row: ["new", "2"] }, state)), [
      {
        table: [
          ["h1", "h2"],
          ["new", "2"],
          ["old", "1"]
        ]
      }
    ])
  })

  it("rejects a row whose width differs from the header", () => {
    const r = applyOp("table", { _tag: "TableRow", row: ["only"] }, state, NOW, "streams[2].point")
    assert.isTrue(Either.isLeft(r))
    if (Either.isLeft(r)) {
      assert.instanceOf(r.left, InvalidPoint)
      assert.strictEqual(r.left.path, "streams[2].point.tableRow")
    }
  })

  it("makes the row the first row of a new table", () => {
    assert.deepStrictEqual(points(apply("table", { _tag: "TableRow", row: ["h1", "h2"] })), [{ table: [["h1", "h2"]] }])
  })
})

describe("needsLatest and decimationValue", () => {
  it("needs the latest point only for delta and the add-one-item operations", () => {
    assert.isTrue(needsLatest({ _tag: "Delta", delta: 1 }))
    assert.isTrue(needsLatest({ _tag: "LeaderboardItem", item: { name: "a", value: 1 } }))
    assert.isTrue(needsLatest({ _tag: "ListItem", listItem: "a" }))
    assert.isTrue(needsLatest({ _tag: "TableRow", row: ["a"] }))
    assert.isFalse(needsLatest({ _tag: "Put", entries: [] }))
    assert.isFalse(needsLatest({ _tag: "Clear" }))
  })

  it("ranks numeric entries by number, xy-graph by y, others not at all", () => {
    assert.strictEqual(decimationValue("line-graph", { number: 4 }), 4)
    assert.strictEqual(decimationValue("vertical-bar", { number: -1 }), -1)
    assert.strictEqual(decimationValue("xy-graph", { x: 1, y: 9 }), 9)
    assert.isNull(decimationValue("usa-map", { latitude: 1, longitude: 2 }))
    assert.isNull(decimationValue("leaderboard", { leaderboard: [] }))
  })
})

describe("applyOp: server ts", () => {
  it("property: server-assigned ts strictly increase across pushes for any clock sequence", () => {
    const clock = fc.integer({ min: 0, max: 2_000 }).map((n) => micros(NOW + n))
    fc.assert(
      fc.property(fc.array(fc.tuple(clock, fc.integer({ min: 0, max: 3 })), { maxLength: 40 }), (pushes) => {
        let state = empty
        let previous = -1
        for (const [now, count] of pushes) {
          const op: PointOp = {
            _tag: "Put",
            entries: Array.from({ length: count }, (_, i) => ({ point: { x: i, y: i } }))
          }
          const m = apply("xy-graph", op, state, now)
          for (const e of m.entries) {
            assert.isTrue(e.ts > previous)
            assert.isTrue(e.ts >= now)
            previous = e.ts
          }
          state = after(state, m)
        }
      })
    )
  })
})

describe("pointJson", () => {
  it("property: writes what JSON.stringify writes, number-only points (its fast path) and every other shape", () => {
    const finite = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.constantFrom(-0, 0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, -Number.MAX_SAFE_INTEGER, 123456789.123456)
    )
    const point = fc.oneof(
      finite.map((number) => ({ number })),
      fc.record({ number: finite, prefix: fc.string() }, { requiredKeys: ["number"] }),
      fc.record({ number: finite, suffix: fc.string(), prefix: fc.string() }),
      fc.record({ x: finite, y: finite }),
      fc.record({ label: fc.string() }),
      fc.record({ leaderboard: fc.array(fc.record({ name: fc.string(), value: finite })) })
    )
    fc.assert(
      fc.property(point, (p) => {
        assert.strictEqual(pointJson(p as StoredPoint), JSON.stringify(p))
      }),
      { numRuns: 2000 }
    )
  })

  it("a number point with any other key goes through JSON.stringify", () => {
    const p = { number: 1, note: 'say "hi"' } as unknown as StoredPoint
    assert.strictEqual(pointJson(p), '{"number":1,"note":"say \\"hi\\""}')
    assert.strictEqual(pointJson({ number: -0 }), '{"number":0}')
    assert.strictEqual(pointJson({ number: 1e21 }), '{"number":1e+21}')
  })
})
