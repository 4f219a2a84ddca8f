import { assert, describe } from "@effect/vitest"
import { Effect, Option } from "effect"
import { AccountStore } from "../../AccountStore.js"
import { renderEntries, StreamStore } from "../../StreamStore.js"
import { type Micros, micros } from "../../Time.js"
import {
  at,
  clear,
  delta,
  newAccount,
  newWidget,
  put,
  putAt,
  read,
  type Read,
  readAll,
  readLatest,
  type SuiteTest,
  T0,
  write,
  writeAll
} from "./fixtures.js"

/**
 * The `StreamStore` part of the storage contract suite (docs/api.md sections 3, 4 and 6): write semantics (put, delta,
 * the add-one-item operations, clear, server `ts`, all-or-nothing calls, concurrency) and reads. Registered by
 * `storageSuite` inside its `describe`.
 */
export const streamStoreSuite = (test: SuiteTest): void => {
  describe("write", () => {
    test(
      "put: one point gets ts = now; an array gets strictly increasing server ts",
      Effect.gen(function* () {
        const w = yield* newWidget("line-graph")
        yield* write(w, put({ number: 1, prefix: "$" }), at(10))
        assert.deepStrictEqual(yield* readLatest(w), [{ ts: T0 + 10, point: { number: 1, prefix: "$" } }])
        yield* write(w, put({ number: 2 }, { number: 3 }, { number: 4 }), at(20))
        assert.deepStrictEqual(yield* readAll(w), [
          { ts: T0 + 10, point: { number: 1, prefix: "$" } },
          { ts: T0 + 20, point: { number: 2 } },
          { ts: T0 + 21, point: { number: 3 } },
          { ts: T0 + 22, point: { number: 4 } }
        ])
      })
    )

    test(
      "put: client timestamps are used as ts; the stored JSON is the point",
      Effect.gen(function* () {
        const w = yield* newWidget("sparkline")
        yield* write(w, putAt([at(-3), { number: 1 }], [at(-2), { number: 2.5 }]), at(0))
        const events = yield* newWidget("text-feed")
        const item = { title: "t", msg: 'm \u00e9 "q"', imgUrl: "https://example.com/a.png" }
        yield* write(events, put(item), at(0))
        assert.deepStrictEqual(yield* readAll(w), [
          { ts: T0 - 3, point: { number: 1 } },
          { ts: T0 - 2, point: { number: 2.5 } }
        ])
        const raw = yield* Effect.flatMap(StreamStore, (s) => s.read(events.id, { since: null, limit: null }))
        assert.deepStrictEqual(raw, [{ ts: at(0), json: JSON.stringify(item) }])
      })
    )

    test(
      "delta: from an empty stream starts at 0; accumulates; prefix/suffix carry over unless given",
      Effect.gen(function* () {
        const w = yield* newWidget("number")
        yield* write(w, delta(5), at(1))
        assert.deepStrictEqual(yield* readLatest(w), [{ ts: T0 + 1, point: { number: 5 } }])
        yield* write(w, put({ number: 10, prefix: "$" }), at(2))
        yield* write(w, delta(2), at(3))
        assert.deepStrictEqual(yield* readLatest(w), [{ ts: T0 + 3, point: { number: 12, prefix: "$" } }])
        yield* write(w, delta(-1.5, { suffix: "k" }), at(4))
        assert.deepStrictEqual(yield* readLatest(w), [
          { ts: T0 + 4, point: { number: 10.5, prefix: "$", suffix: "k" } }
        ])
        yield* write(w, delta(0, { prefix: "\u20ac" }), at(5))
        assert.deepStrictEqual(yield* readLatest(w), [
          { ts: T0 + 5, point: { number: 10.5, prefix: "\u20ac", suffix: "k" } }
        ])
        yield* write(w, delta(1, { ts: at(100) }), at(6))
        assert.deepStrictEqual(yield* readLatest(w), [
          { ts: T0 + 100, point: { number: 11.5, prefix: "\u20ac", suffix: "k" } }
        ])
        assert.strictEqual((yield* readAll(w)).length, 6)
      })
    )

    test(
      "delta builds on the entry with the highest ts, not the last one written",
      Effect.gen(function* () {
        const w = yield* newWidget("number")
        yield* write(w, put({ number: 100 }), at(100))
        yield* write(w, putAt([at(10), { number: 1 }]), at(101))
        yield* write(w, delta(1), at(102))
        assert.deepStrictEqual(yield* readLatest(w), [{ ts: T0 + 102, point: { number: 101 } }])
      })
    )

    test(
      "leaderboardItem: replaces an item of the same name, adds a new one, orders by value (stable)",
      Effect.gen(function* () {
        const w = yield* newWidget("leaderboard")
        yield* write(w, { _tag: "LeaderboardItem", item: { name: "a", value: 1 } }, at(1))
        assert.deepStrictEqual(yield* readLatest(w), [
          { ts: T0 + 1, point: { leaderboard: [{ name: "a", value: 1 }] } }
        ])
        yield* write(w, { _tag: "LeaderboardItem", item: { name: "b", value: 5 } }, at(2))
        yield* write(w, { _tag: "LeaderboardItem", item: { name: "a", value: 9, suffix: "pts" } }, at(3))
        yield* write(w, { _tag: "LeaderboardItem", item: { name: "c", value: 5 } }, at(4))
        assert.deepStrictEqual(yield* readLatest(w), [
          {
            ts: T0 + 4,
            point: {
              leaderboard: [
                { name: "a", value: 9, suffix: "pts" },
                { name: "b", value: 5 },
                { name: "c", value: 5 }
              ]
            }
          }
        ])
        yield* write(
          w,
          put({
            leaderboard: [
              { name: "x", value: 3 },
              { name: "y", value: 1 }
            ]
          }),
          at(5)
        )
        yield* write(w, { _tag: "LeaderboardItem", item: { name: "z", value: 2 } }, at(6))
        assert.deepStrictEqual((yield* readLatest(w))[0]!.point, {
          leaderboard: [
            { name: "x", value: 3 },
            { name: "z", value: 2 },
            { name: "y", value: 1 }
          ]
        })
        assert.strictEqual((yield* readAll(w)).length, 6)
      })
    )

    test(
      "listItem goes to the top of the latest list",
      Effect.gen(function* () {
        const w = yield* newWidget("list")
        yield* write(w, { _tag: "ListItem", listItem: "one" }, at(1))
        assert.deepStrictEqual((yield* readLatest(w))[0]!.point, { list: [{ listItem: "one" }] })
        yield* write(w, { _tag: "ListItem", listItem: "two" }, at(2))
        assert.deepStrictEqual(yield* readLatest(w), [
          { ts: T0 + 2, point: { list: [{ listItem: "two" }, { listItem: "one" }] } }
        ])
      })
    )

    test(
      "tableRow goes under the header; a row of the wrong width is InvalidPoint and changes nothing",
      Effect.gen(function* () {
        const w = yield* newWidget("table")
        yield* write(w, { _tag: "TableRow", row: ["h1", "h2"] }, at(1))
        assert.deepStrictEqual((yield* readLatest(w))[0]!.point, { table: [["h1", "h2"]] })
        yield* write(w, { _tag: "TableRow", row: ["a", "b"] }, at(2))
        yield* write(w, { _tag: "TableRow", row: ["c", "d"] }, at(3))
        assert.deepStrictEqual((yield* readLatest(w))[0]!.point, {
          table: [
            ["h1", "h2"],
            ["c", "d"],
            ["a", "b"]
          ]
        })
        const before = yield* readAll(w)
        const error = yield* Effect.flip(write(w, { _tag: "TableRow", row: ["x"] }, at(50)))
        assert.strictEqual(error._tag, "InvalidPoint")
        assert.strictEqual(error._tag === "InvalidPoint" ? error.path : undefined, "point.tableRow")
        assert.deepStrictEqual(yield* readAll(w), before)
        // The failed write did not advance the stream's highest ts either.
        yield* write(w, put({ table: [["new"]] }), at(3))
        assert.strictEqual((yield* readLatest(w))[0]!.ts, T0 + 4)
      })
    )

    test(
      "clear empties the stream; the next delta starts from 0; ts keeps increasing past the cleared entries",
      Effect.gen(function* () {
        const w = yield* newWidget("sparkline")
        yield* write(w, put({ number: 5 }, { number: 7 }), at(100))
        yield* write(w, clear, at(200))
        assert.deepStrictEqual(yield* readAll(w), [])
        assert.deepStrictEqual(yield* readLatest(w), [])
        yield* write(w, delta(3), at(0))
        // The clear took ts T0 + 200 (a server ts of its own, the id of its live event), so the delta comes after it.
        assert.deepStrictEqual(yield* readAll(w), [{ ts: T0 + 201, point: { number: 3 } }])
        const empty = yield* newWidget("sparkline")
        yield* write(empty, clear, at(0))
        assert.deepStrictEqual(yield* readAll(empty), [])
      })
    )

    test(
      "a client-timestamped put with an existing ts replaces that entry",
      Effect.gen(function* () {
        const w = yield* newWidget("line-graph")
        yield* write(w, putAt([at(5), { number: 1 }]), at(0))
        yield* write(w, putAt([at(5), { number: 2 }]), at(0))
        yield* write(w, put({ number: 3 }), at(10))
        yield* write(w, putAt([at(7), { number: 4 }], [at(10), { number: 5 }]), at(20))
        assert.deepStrictEqual(yield* readAll(w), [
          { ts: T0 + 5, point: { number: 2 } },
          { ts: T0 + 7, point: { number: 4 } },
          { ts: T0 + 10, point: { number: 5 } }
        ])
      })
    )

    test(
      "server ts is strictly increasing when now stays equal or goes back, also past client timestamps",
      Effect.gen(function* () {
        const w = yield* newWidget("number")
        yield* write(w, put({ number: 1 }), at(100))
        yield* write(w, put({ number: 2 }), at(100))
        yield* write(w, put({ number: 3 }), at(50))
        yield* write(w, putAt([at(500), { number: 4 }]), at(60))
        yield* write(w, put({ number: 5 }), at(70))
        yield* write(w, put({ number: 6 }), at(1000))
        assert.deepStrictEqual(
          (yield* readAll(w)).map((e) => e.ts - T0),
          [100, 101, 102, 500, 501, 1000]
        )
      })
    )

    test(
      "a batch whose third write fails stores nothing of the first two",
      Effect.gen(function* () {
        const { account } = yield* newAccount()
        const a = yield* newWidget("number", "a", account.id)
        const b = yield* newWidget("number", "b", account.id)
        const c = yield* newWidget("table", "c", account.id)
        yield* write(c, put({ table: [["h1", "h2"]] }), at(0))
        const error = yield* Effect.flip(
          writeAll(
            [
              { widget: a, op: put({ number: 1 }), path: "streams[0].point" },
              { widget: b, op: delta(2), path: "streams[1].point" },
              { widget: c, op: { _tag: "TableRow", row: ["only one"] }, path: "streams[2].point" }
            ],
            at(1)
          )
        )
        assert.strictEqual(error._tag, "InvalidPoint")
        assert.strictEqual(error._tag === "InvalidPoint" ? error.path : undefined, "streams[2].point.tableRow")
        assert.deepStrictEqual(yield* readAll(a), [])
        assert.deepStrictEqual(yield* readAll(b), [])
        assert.deepStrictEqual(yield* readAll(c), [{ ts: T0, point: { table: [["h1", "h2"]] } }])
        // A later successful batch assigns ts as if the failed one never happened.
        yield* write(b, delta(2), at(1))
        assert.deepStrictEqual(yield* readAll(b), [{ ts: T0 + 1, point: { number: 2 } }])
      })
    )

    test(
      "a batch writing one stream twice sees its own first write",
      Effect.gen(function* () {
        const { account } = yield* newAccount()
        const w = yield* newWidget("number", "n", account.id)
        const other = yield* newWidget("list", "l", account.id)
        yield* writeAll(
          [
            { widget: w, op: delta(2), path: "streams[0].point" },
            { widget: other, op: { _tag: "ListItem", listItem: "x" }, path: "streams[1].point" },
            { widget: w, op: delta(3), path: "streams[2].point" },
            { widget: other, op: { _tag: "ListItem", listItem: "y" }, path: "streams[3].point" }
          ],
          at(0)
        )
        assert.deepStrictEqual(yield* readAll(w), [
          { ts: T0, point: { number: 2 } },
          { ts: T0 + 1, point: { number: 5 } }
        ])
        assert.deepStrictEqual((yield* readLatest(other))[0]!.point, { list: [{ listItem: "y" }, { listItem: "x" }] })
      })
    )

    test(
      "200 concurrent +1 deltas on one stream end at exactly 200 with distinct ts",
      Effect.gen(function* () {
        const w = yield* newWidget("number")
        yield* Effect.all(
          Array.from({ length: 200 }, (_, i) => write(w, delta(1), at(i % 3))),
          { concurrency: "unbounded", discard: true }
        )
        const all = yield* readAll(w)
        assert.strictEqual(all.length, 200)
        assert.strictEqual(new Set(all.map((e) => e.ts)).size, 200)
        assert.deepStrictEqual(all[all.length - 1]!.point, { number: 200 })
        assert.deepStrictEqual(
          all.map((e) => (e.point as { number: number }).number),
          Array.from({ length: 200 }, (_, i) => i + 1)
        )
      }),
      60_000
    )
  })

  describe("read", () => {
    const fixture = Effect.gen(function* () {
      const w = yield* newWidget("sparkline")
      for (const offset of [300, 100, 200, 400]) yield* write(w, putAt([at(offset), { number: offset }]), at(0))
      return w
    })
    const tsOf = (entries: ReadonlyArray<Read>) => entries.map((e) => e.ts - T0)

    test(
      "since null: the entry with the highest ts only; [] for an empty stream; limit is ignored",
      Effect.gen(function* () {
        const empty = yield* newWidget("number")
        assert.deepStrictEqual(yield* readLatest(empty), [])
        const w = yield* fixture
        assert.deepStrictEqual(yield* readLatest(w), [{ ts: T0 + 400, point: { number: 400 } }])
        assert.deepStrictEqual(tsOf(yield* read(w.id, { since: null, limit: 3 })), [400])
      })
    )

    test(
      "since 0: every entry in ascending ts",
      Effect.gen(function* () {
        const w = yield* fixture
        assert.deepStrictEqual(tsOf(yield* readAll(w)), [100, 200, 300, 400])
      })
    )

    test(
      "since T: entries with ts strictly greater than T",
      Effect.gen(function* () {
        const w = yield* fixture
        assert.deepStrictEqual(tsOf(yield* read(w.id, { since: at(200), limit: null })), [300, 400])
        assert.deepStrictEqual(tsOf(yield* read(w.id, { since: at(199), limit: null })), [200, 300, 400])
        assert.deepStrictEqual(tsOf(yield* read(w.id, { since: at(400), limit: null })), [])
      })
    )

    test(
      "limit: the oldest N matching entries",
      Effect.gen(function* () {
        const w = yield* fixture
        assert.deepStrictEqual(tsOf(yield* read(w.id, { since: micros(0), limit: 2 })), [100, 200])
        assert.deepStrictEqual(tsOf(yield* read(w.id, { since: at(100), limit: 2 })), [200, 300])
        assert.deepStrictEqual(tsOf(yield* read(w.id, { since: at(300), limit: 5 })), [400])
        assert.deepStrictEqual(tsOf(yield* read(w.id, { since: micros(0), limit: 1 })), [100])
      })
    )

    test(
      "readPage renders what read returns, ts exact to the microsecond, with the page's count and last ts",
      Effect.gen(function* () {
        const w = yield* newWidget("sparkline")
        // Whole seconds, one microsecond, trailing zeros, leading zeros of the fraction, the largest accepted time.
        const stamps = [
          1_000_000, 1_000_001, 1_500_000, 1_700_000_000_000_000, 1_700_000_000_000_010, 1_700_000_000_100_000,
          1_700_000_000_999_999, 4_294_967_295_000_000, 4_294_967_295_999_999
        ].map(micros)
        yield* write(w, putAt(...stamps.map((ts, i) => [ts, { number: i, label: `n\u00e9 "${i}"` }] as const)))
        const page = (since: Micros, limit: number) =>
          Effect.flatMap(StreamStore, (store) => store.readPage(w.id, since, limit))
        const entries = yield* Effect.flatMap(StreamStore, (store) =>
          store.read(w.id, { since: micros(0), limit: null })
        )
        const all = yield* page(micros(0), 100)
        assert.deepStrictEqual(all, { text: renderEntries(entries), count: stamps.length, lastTs: stamps.at(-1)! })
        assert.include(all.text, '{"ts":1700000000.00001,"point":')
        assert.include(all.text, '{"ts":4294967295,"point":')
        const middle = yield* page(stamps[2]!, 3)
        assert.deepStrictEqual(middle, { text: renderEntries(entries.slice(3, 6)), count: 3, lastTs: stamps[5]! })
        assert.deepStrictEqual(yield* page(stamps.at(-1)!, 10), { text: "", count: 0, lastTs: null })
      })
    )

    test(
      "readLive: entries as read returns them, with the ts of the last clear; None once the widget is deleted",
      Effect.gen(function* () {
        const w = yield* newWidget("sparkline")
        const live = (since: Micros | null, limit = 1) =>
          Effect.flatMap(StreamStore, (store) =>
            store.readLive(w.id, since === null ? { _tag: "Recent", count: limit } : { _tag: "After", since, limit })
          )
        const read = (since: Micros | null, limit: number | null = null) =>
          Effect.flatMap(StreamStore, (store) => store.read(w.id, { since, limit }))
        assert.deepStrictEqual(yield* live(null), Option.some({ lastClear: null, entries: [] }))
        assert.deepStrictEqual(yield* live(micros(-1), 10), Option.some({ lastClear: null, entries: [] }))
        yield* write(w, put({ number: 1 }, { number: 2 }, { number: 3 }), at(0))
        assert.deepStrictEqual(yield* live(null), Option.some({ lastClear: null, entries: yield* read(null) }))
        const all = yield* read(micros(-1))
        assert.deepStrictEqual(yield* live(null, 2), Option.some({ lastClear: null, entries: all.slice(1) }))
        assert.deepStrictEqual(yield* live(null, 10), Option.some({ lastClear: null, entries: all }))
        // With a limit: the oldest `limit` of the `count` most recent (a snapshot's first page).
        const recentPage = (count: number, limit: number) =>
          Effect.flatMap(StreamStore, (store) => store.readLive(w.id, { _tag: "Recent", count, limit }))
        assert.deepStrictEqual(yield* recentPage(2, 1), Option.some({ lastClear: null, entries: all.slice(1, 2) }))
        assert.deepStrictEqual(yield* recentPage(3, 2), Option.some({ lastClear: null, entries: all.slice(0, 2) }))
        assert.deepStrictEqual(yield* recentPage(10, 2), Option.some({ lastClear: null, entries: all.slice(0, 2) }))
        assert.deepStrictEqual(yield* recentPage(2, 5), Option.some({ lastClear: null, entries: all.slice(1) }))
        assert.deepStrictEqual(
          yield* live(micros(T0), 1),
          Option.some({ lastClear: null, entries: yield* read(micros(T0), 1) })
        )
        // The clear takes the next server ts: above every entry's ts (T0 .. T0 + 2) and at the receive time.
        yield* write(w, clear, at(100))
        assert.deepStrictEqual(yield* live(micros(-1), 10), Option.some({ lastClear: micros(T0 + 100), entries: [] }))
        yield* write(w, delta(1), at(100))
        yield* write(w, clear, at(100))
        const after = yield* live(micros(-1), 10)
        assert.deepStrictEqual(after, Option.some({ lastClear: micros(T0 + 102), entries: [] }))
        yield* write(w, delta(5), at(300))
        assert.deepStrictEqual(
          yield* live(null),
          Option.some({ lastClear: micros(T0 + 102), entries: [{ ts: micros(T0 + 300), json: '{"number":5}' }] })
        )
        yield* Effect.flatMap(AccountStore, (store) => store.deleteWidget(w.accountId, w.streamName))
        assert.deepStrictEqual(yield* live(null), Option.none())
        assert.deepStrictEqual(yield* live(micros(-1), 10), Option.none())
      })
    )

    test(
      "ping succeeds",
      Effect.flatMap(StreamStore, (s) => s.ping)
    )
  })
}
