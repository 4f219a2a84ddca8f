import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, FastCheck as fc, type Layer, Option, Stream } from "effect"
import { type Account, type AccountId, digestAccessKey, newAccessKey, newAccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import type { PointOp, StoredPoint } from "../Point.js"
import { StreamName } from "../StreamName.js"
import { type ReadQuery, renderEntries, StreamStore, type StreamWrite } from "../StreamStore.js"
import { type Micros, micros, sinceFromText } from "../Time.js"
import type { StreamId, Widget } from "../Widget.js"
import * as UseCases from "../UseCases.js"
import type { WidgetType } from "../WidgetType.js"

/**
 * The storage contract suite: what every adapter of `AccountStore` and `StreamStore` must do (contract sections
 * 3, 4, 6 and 7, and the port docs). Each adapter's test file calls {@link storageSuite} with its layer, so the
 * memory, SQLite and PostgreSQL adapters are held to the same behaviour.
 */

type Stores = AccountStore | StreamStore

/** A receive time well inside the valid range (2023-11-14T22:13:20Z), in microseconds. */
const T0 = 1_700_000_000_000_000

const at = (offset: number): Micros => micros(T0 + offset)

interface Read {
  readonly ts: number
  readonly point: unknown
}

const newAccount = (name = "test") =>
  Effect.gen(function* () {
    const store = yield* AccountStore
    const accessKey = newAccessKey()
    const account: Account = { id: newAccountId(), name, createdAt: T0 }
    yield* store.createAccount(account, digestAccessKey(accessKey))
    return { account, accessKey }
  })

const newWidget = (type: WidgetType, name = "stream", accountId?: AccountId) =>
  Effect.gen(function* () {
    const id = accountId ?? (yield* newAccount()).account.id
    return yield* Effect.flatMap(AccountStore, (s) => s.createWidget(id, StreamName.make(name), type, T0))
  })

const writeAll = (writes: ReadonlyArray<StreamWrite>, now: Micros) =>
  Effect.flatMap(StreamStore, (s) => s.write(writes, now))

const write = (widget: Widget, op: PointOp, now: Micros = at(0)) => writeAll([{ widget, op, path: "point" }], now)

const read = (stream: StreamId, query: ReadQuery) =>
  Effect.map(
    Effect.flatMap(StreamStore, (s) => s.read(stream, query)),
    (entries): ReadonlyArray<Read> => entries.map((e) => ({ ts: e.ts, point: JSON.parse(e.json) as unknown }))
  )

const readAll = (widget: Widget) => read(widget.id, { since: micros(0), limit: null })
const readLatest = (widget: Widget) => read(widget.id, { since: null, limit: null })

const put = (...points: ReadonlyArray<StoredPoint>): PointOp => ({
  _tag: "Put",
  entries: points.map((point) => ({ point }))
})
const putAt = (...entries: ReadonlyArray<readonly [Micros, StoredPoint]>): PointOp => ({
  _tag: "Put",
  entries: entries.map(([ts, point]) => ({ point, ts }))
})
const delta = (d: number, extra: { prefix?: string; suffix?: string; ts?: Micros } = {}): PointOp => ({
  _tag: "Delta",
  delta: d,
  ...extra
})
const clear: PointOp = { _tag: "Clear" }

// Options are compared through getOrNull: chai's deep equality sees Option.some(x) and Option.none() as equal.
const findAccount = (accessKey: string) =>
  Effect.map(
    Effect.flatMap(AccountStore, (s) => s.findAccountByKey(digestAccessKey(accessKey))),
    Option.getOrNull
  )

/**
 * A plain model of one numeric stream (contract section 3): entries by `ts`, the highest `ts` ever assigned,
 * server `ts` = `now` or one past the highest, delta on the latest entry, clear keeps the highest `ts`.
 */
class Model {
  lastTs: number | null = null
  readonly entries = new Map<number, number>()
  add(n: number, clientTs: number | undefined, now: number) {
    const ts = clientTs ?? (this.lastTs !== null && this.lastTs >= now ? this.lastTs + 1 : now)
    if (this.lastTs === null || ts > this.lastTs) this.lastTs = ts
    this.entries.set(ts, n)
  }
  sorted(): Array<Read> {
    return [...this.entries.keys()].sort((a, b) => a - b).map((ts) => ({ ts, point: { number: this.entries.get(ts) } }))
  }
  latest(): number {
    const all = this.sorted()
    return all.length === 0 ? 0 : (all[all.length - 1]!.point as { number: number }).number
  }
}

type ModelOp =
  | {
      readonly kind: "put"
      readonly numbers: ReadonlyArray<number>
      readonly ts: number | undefined
      readonly now: number
    }
  | { readonly kind: "delta"; readonly delta: number; readonly now: number }
  | { readonly kind: "clear"; readonly now: number }

// Small time ranges so that client timestamps collide with server ones and `now` often stalls or goes back.
const nowArb = fc.integer({ min: 1, max: 40 })
const modelOpArb: fc.Arbitrary<ModelOp> = fc.oneof(
  fc.record({
    kind: fc.constant("put" as const),
    numbers: fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1, maxLength: 3 }),
    ts: fc.option(fc.integer({ min: 1, max: 40 }), { nil: undefined }),
    now: nowArb
  }),
  fc.record({ kind: fc.constant("delta" as const), delta: fc.integer({ min: -50, max: 50 }), now: nowArb }),
  fc.record({ kind: fc.constant("clear" as const), now: nowArb })
)

const toPointOp = (op: ModelOp): PointOp => {
  switch (op.kind) {
    case "put":
      // Client timestamps inside one array push are strictly increasing (the decoder enforces it).
      return {
        _tag: "Put",
        entries: op.numbers.map((n, i) =>
          op.ts === undefined ? { point: { number: n } } : { point: { number: n }, ts: micros(op.ts + i) }
        )
      }
    case "delta":
      return delta(op.delta)
    case "clear":
      return clear
  }
}

const applyModel = (model: Model, op: ModelOp) => {
  switch (op.kind) {
    case "put":
      op.numbers.forEach((n, i) => model.add(n, op.ts === undefined ? undefined : op.ts + i, op.now))
      return
    case "delta":
      model.add(model.latest() + op.delta, undefined, op.now)
      return
    case "clear":
      // A clear takes a server ts of its own (contract section 10: the clear event's id), like a server-assigned entry.
      model.entries.clear()
      model.lastTs = model.lastTs !== null && model.lastTs >= op.now ? model.lastTs + 1 : op.now
      return
  }
}

/**
 * Registers the storage contract suite under `describe("storage contract: <name>")`. `makeLayer` is called once per
 * test (and once for the shared property-test store) and must give a fresh, empty, migrated store each time.
 */
export const storageSuite = (name: string, makeLayer: () => Layer.Layer<Stores, unknown>): void => {
  describe(`storage contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<unknown, unknown, Stores>, timeout?: number) =>
      it.effect(title, () => Effect.provide(body, makeLayer()), timeout)

    describe("accounts", () => {
      test(
        "create, get and count",
        Effect.gen(function* () {
          const store = yield* AccountStore
          assert.strictEqual(yield* store.countAccounts, 0)
          const { account: a } = yield* newAccount("alpha")
          const { account: b } = yield* newAccount("")
          assert.strictEqual(yield* store.countAccounts, 2)
          assert.deepStrictEqual(Option.getOrNull(yield* store.getAccount(a.id)), a)
          assert.deepStrictEqual(Option.getOrNull(yield* store.getAccount(b.id)), b)
          assert.strictEqual(Option.getOrNull(yield* store.getAccount(newAccountId())), null)
        })
      )

      test(
        "an access key is found by its digest; an unknown digest is not",
        Effect.gen(function* () {
          const { account, accessKey } = yield* newAccount()
          assert.strictEqual(yield* findAccount(accessKey), account.id)
          assert.strictEqual(yield* findAccount(newAccessKey()), null)
        })
      )

      test(
        "added keys work beside the old ones; revokeOthers stops every other key of the account only",
        Effect.gen(function* () {
          const store = yield* AccountStore
          const { account, accessKey: k1 } = yield* newAccount()
          const { account: other, accessKey: otherKey } = yield* newAccount()
          const k2 = newAccessKey()
          yield* store.addAccessKey(account.id, digestAccessKey(k2), T0 + 1, false)
          assert.strictEqual(yield* findAccount(k1), account.id)
          assert.strictEqual(yield* findAccount(k2), account.id)
          const k3 = newAccessKey()
          yield* store.addAccessKey(account.id, digestAccessKey(k3), T0 + 2, true)
          assert.strictEqual(yield* findAccount(k1), null)
          assert.strictEqual(yield* findAccount(k2), null)
          assert.strictEqual(yield* findAccount(k3), account.id)
          assert.strictEqual(yield* findAccount(otherKey), other.id)
        })
      )

      test(
        "adding a key to an unknown account fails with AccountNotFound",
        Effect.gen(function* () {
          const store = yield* AccountStore
          const error = yield* Effect.flip(
            store.addAccessKey(newAccountId(), digestAccessKey(newAccessKey()), T0, false)
          )
          assert.strictEqual(error._tag, "AccountNotFound")
        })
      )
    })

    describe("widgets", () => {
      test(
        "create returns the widget; list is ordered by stream name (code points)",
        Effect.gen(function* () {
          const store = yield* AccountStore
          const { account } = yield* newAccount()
          const created = yield* store.createWidget(account.id, StreamName.make("revenue"), "number", T0 + 7)
          assert.deepStrictEqual(
            { accountId: created.accountId, streamName: created.streamName, type: created.type },
            { accountId: account.id, streamName: StreamName.make("revenue"), type: "number" }
          )
          assert.strictEqual(created.createdAt, T0 + 7)
          for (const n of ["b", "ä", "a b", "B", "a"]) yield* newWidget("list", n, account.id)
          const listed = yield* store.listWidgets(account.id)
          assert.deepStrictEqual(
            listed.map((w) => w.streamName),
            ["B", "a", "a b", "b", "revenue", "ä"]
          )
          assert.deepStrictEqual(
            listed.find((w) => w.streamName === "revenue"),
            created
          )
        })
      )

      test(
        "a new account lists no widgets",
        Effect.gen(function* () {
          const { account } = yield* newAccount()
          assert.deepStrictEqual(yield* Effect.flatMap(AccountStore, (s) => s.listWidgets(account.id)), [])
        })
      )

      test(
        "the same name twice in one account is a Conflict; in two accounts it is allowed",
        Effect.gen(function* () {
          const store = yield* AccountStore
          const { account: a } = yield* newAccount()
          const { account: b } = yield* newAccount()
          const first = yield* newWidget("number", "revenue", a.id)
          const error = yield* Effect.flip(store.createWidget(a.id, StreamName.make("revenue"), "dial", T0))
          assert.strictEqual(error._tag, "Conflict")
          const inB = yield* newWidget("dial", "revenue", b.id)
          assert.notStrictEqual(inB.id, first.id)
          assert.deepStrictEqual(
            (yield* store.listWidgets(a.id)).map((w) => w.type),
            ["number"]
          )
        })
      )

      test(
        "findWidgets returns the account's widgets of those names only",
        Effect.gen(function* () {
          const store = yield* AccountStore
          const { account: a } = yield* newAccount()
          const { account: b } = yield* newAccount()
          const x = yield* newWidget("number", "x", a.id)
          const y = yield* newWidget("table", "y", a.id)
          yield* newWidget("number", "z", b.id)
          const found = yield* store.findWidgets(a.id, ["x", "y", "z", "missing"])
          assert.deepStrictEqual(
            [...found.entries()].sort(([k1], [k2]) => (k1 < k2 ? -1 : 1)),
            [
              ["x", x],
              ["y", y]
            ]
          )
          assert.strictEqual((yield* store.findWidgets(a.id, [])).size, 0)
          assert.strictEqual((yield* store.findWidgets(newAccountId(), ["x"])).size, 0)
        })
      )

      test(
        "delete removes the widget and its entries; the name can be declared again, empty, with a new id",
        Effect.gen(function* () {
          const store = yield* AccountStore
          const { account } = yield* newAccount()
          const old = yield* newWidget("number", "gone", account.id)
          const kept = yield* newWidget("number", "kept", account.id)
          yield* write(old, put({ number: 1 }, { number: 2 }))
          yield* write(kept, put({ number: 3 }))
          yield* store.deleteWidget(account.id, "gone")
          assert.deepStrictEqual(
            (yield* store.listWidgets(account.id)).map((w) => w.streamName),
            ["kept"]
          )
          assert.strictEqual((yield* store.findWidgets(account.id, ["gone"])).size, 0)
          assert.deepStrictEqual(yield* readAll(old), [])
          assert.deepStrictEqual(yield* readAll(kept), [{ ts: T0, point: { number: 3 } }])
          const again = yield* newWidget("number", "gone", account.id)
          assert.notStrictEqual(again.id, old.id)
          assert.deepStrictEqual(yield* readAll(again), [])
          yield* write(again, delta(4))
          assert.deepStrictEqual(yield* readAll(again), [{ ts: T0, point: { number: 4 } }])
        })
      )

      test(
        "delete: AccountNotFound for an unknown account, StreamNotFound for an unknown or another account's stream",
        Effect.gen(function* () {
          const store = yield* AccountStore
          const { account: a } = yield* newAccount()
          const { account: b } = yield* newAccount()
          yield* newWidget("number", "theirs", b.id)
          const e1 = yield* Effect.flip(store.deleteWidget(newAccountId(), "theirs"))
          assert.strictEqual(e1._tag, "AccountNotFound")
          const e2 = yield* Effect.flip(store.deleteWidget(a.id, "missing"))
          assert.strictEqual(e2._tag, "StreamNotFound")
          const e3 = yield* Effect.flip(store.deleteWidget(a.id, "theirs"))
          assert.strictEqual(e3._tag, "StreamNotFound")
          assert.strictEqual((yield* store.listWidgets(b.id)).length, 1)
        })
      )

      test(
        "create and list fail with AccountNotFound for an unknown account",
        Effect.gen(function* () {
          const store = yield* AccountStore
          const e1 = yield* Effect.flip(store.createWidget(newAccountId(), StreamName.make("s"), "number", T0))
          assert.strictEqual(e1._tag, "AccountNotFound")
          const e2 = yield* Effect.flip(store.listWidgets(newAccountId()))
          assert.strictEqual(e2._tag, "AccountNotFound")
        })
      )

      test(
        "a write to a deleted widget fails with StreamNotFound and stores nothing of its batch",
        Effect.gen(function* () {
          const store = yield* AccountStore
          const { account } = yield* newAccount()
          const live = yield* newWidget("number", "live", account.id)
          const old = yield* newWidget("number", "old", account.id)
          yield* store.deleteWidget(account.id, "old")
          yield* newWidget("number", "old", account.id)
          const error = yield* Effect.flip(
            writeAll(
              [
                { widget: live, op: put({ number: 1 }), path: "streams[0].point" },
                { widget: old, op: put({ number: 2 }), path: "streams[1].point" }
              ],
              at(0)
            )
          )
          assert.strictEqual(error._tag, "StreamNotFound")
          assert.strictEqual(error._tag === "StreamNotFound" ? error.path : undefined, "streams[1].streamName")
          assert.deepStrictEqual(yield* readAll(live), [])
        })
      )
    })

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

    layer(makeLayer())("model", (it) => {
      it.effect.prop(
        "random sequences of pushes read back as a simple model",
        [
          fc.array(modelOpArb, { maxLength: 25 }),
          fc.integer({ min: 0, max: 45 }),
          fc.option(fc.integer({ min: 1, max: 5 }), { nil: null })
        ],
        ([ops, since, limit]) =>
          Effect.gen(function* () {
            const w = yield* newWidget("sparkline")
            const model = new Model()
            for (const op of ops) {
              yield* write(w, toPointOp(op), micros(op.now))
              applyModel(model, op)
            }
            const all = model.sorted()
            assert.deepStrictEqual(yield* read(w.id, { since: micros(0), limit: null }), all)
            assert.deepStrictEqual(yield* read(w.id, { since: null, limit: null }), all.slice(-1))
            const after = all.filter((e) => e.ts > since)
            assert.deepStrictEqual(
              yield* read(w.id, { since: micros(since), limit }),
              limit === null ? after : after.slice(0, limit)
            )
          }),
        { fastCheck: { numRuns: 60 } }
      )

      it.effect.prop(
        "a paged read (UseCases.readPages) delivers exactly what one read delivers, in pages of at most the page size",
        [
          fc.array(modelOpArb, { maxLength: 25 }),
          fc.integer({ min: 1, max: 4 }),
          fc.option(fc.integer({ min: 0, max: 45 }), { nil: undefined }),
          fc.option(fc.integer({ min: 1, max: 9 }), { nil: undefined })
        ],
        ([ops, pageSize, sinceMicros, limit]) =>
          Effect.gen(function* () {
            const { account, accessKey } = yield* newAccount()
            const w = yield* newWidget("sparkline", "paged", account.id)
            for (const op of ops) yield* write(w, toPointOp(op), micros(op.now))
            const params = {
              since: sinceMicros === undefined ? undefined : String(sinceMicros / 1_000_000),
              limit: limit === undefined ? undefined : String(limit)
            }
            // One read of the store with the same query: `since` as the read parses it, `limit` as given.
            const store = yield* StreamStore
            const whole = yield* store.read(w.id, {
              since: params.since === undefined ? null : sinceFromText(params.since)!,
              limit: limit ?? null
            })
            const { first, rest } = yield* UseCases.readPages(accessKey, "paged", params, pageSize)
            const pages = [first, ...(rest === undefined ? [] : yield* Stream.runCollect(rest))]
            for (const page of pages.slice(1)) assert.isAbove(page.count, 0)
            for (const page of pages) assert.isAtMost(page.count, params.since === undefined ? 1 : pageSize)
            assert.strictEqual(
              pages
                .map((page) => page.text)
                .filter((text) => text !== "")
                .join(","),
              renderEntries(whole)
            )
            assert.strictEqual(
              pages.reduce((n, page) => n + page.count, 0),
              whole.length
            )
          }),
        { fastCheck: { numRuns: 60 } }
      )
    })
  })
}
