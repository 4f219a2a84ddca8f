import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer, type Scope } from "effect"
import { digestAccessKey, newAccessKey, newAccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import { ChangeFeed, type StreamChange } from "../ChangeFeed.js"
import type { PointOp } from "../Point.js"
import { StreamName } from "../StreamName.js"
import { StreamStore } from "../StreamStore.js"
import { type Micros, micros } from "../Time.js"
import type { Widget } from "../Widget.js"
import type { WidgetType } from "../WidgetType.js"

type Stores = AccountStore | StreamStore | ChangeFeed

const T0 = 1_700_000_000_000_000

/** A change as text, for comparisons: `entry <ts> fresh|old <json>`, `clear <at>`, `Deleted`, `Gap`. */
const describeChange = (c: StreamChange): Array<string> =>
  c._tag === "Stored"
    ? c.entries.map((e) => `entry ${e.ts - T0} ${e.fresh ? "fresh" : "old"} ${e.json}`)
    : c._tag === "Cleared"
      ? [`clear ${c.at - T0}`]
      : [c._tag]

/**
 * The contract suite of the `ChangeFeed` port (docs/api.md section 10), run by every adapter's test file like
 * `storageSuite`: a subscriber of a stream receives what each acknowledged write stored (entries `fresh` when above
 * every `ts` the stream had, replaced ones again and not fresh), a clear with its own `ts`, and the widget's deletion;
 * nothing of other streams, nothing of a failed write, and nothing after it unsubscribes. Changes may arrive after the
 * write returns (another connection delivers them on PostgreSQL), so the suite waits for them, bounded.
 */
export const changeFeedSuite = (name: string, makeLayer: () => Layer.Layer<Stores, unknown>): void => {
  describe(`change feed contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<unknown, unknown, Stores | Scope.Scope>) =>
      it.live(title, () => Effect.scoped(Effect.provide(body, makeLayer())), 60_000)

    const setup = (widgets: ReadonlyArray<readonly [string, WidgetType]>) =>
      Effect.gen(function* () {
        const accounts = yield* AccountStore
        const accountId = newAccountId()
        yield* accounts.createAccount({ id: accountId, name: "feed", createdAt: T0 }, digestAccessKey(newAccessKey()))
        const made: Array<Widget> = []
        for (const [stream, type] of widgets)
          made.push(yield* accounts.createWidget(accountId, StreamName.make(stream), type, T0))
        return made
      })

    const write = (widget: Widget, op: PointOp, offset: number) =>
      Effect.flatMap(StreamStore, (store) => store.write([{ widget, op, path: "point" }], micros(T0 + offset)))

    /** Subscribes and returns what arrives, as text, and the unsubscribe function. */
    const listen = (widget: Widget) =>
      Effect.gen(function* () {
        const received: Array<string> = []
        const unsubscribe = yield* Effect.flatMap(ChangeFeed, (feed) =>
          feed.subscribe(widget.id, (change) => {
            // A Gap (a reconnecting notification connection) may come at any time; it is not what this suite checks.
            if (change._tag !== "Gap") received.push(...describeChange(change))
          })
        )
        yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
        return { received, unsubscribe }
      })

    const until = (what: string, received: Array<string>, count: number) =>
      Effect.gen(function* () {
        for (let i = 0; i < 1000 && received.length < count; i++) yield* Effect.sleep("10 millis")
        assert.isAtLeast(received.length, count, `${what}: got ${JSON.stringify(received)}`)
      })

    const put = (...points: ReadonlyArray<{ readonly number: number; readonly ts?: Micros }>): PointOp => ({
      _tag: "Put",
      entries: points.map(({ number, ts }) => (ts === undefined ? { point: { number } } : { point: { number }, ts }))
    })

    test(
      "a subscriber receives each acknowledged write's entries, fresh above every earlier ts, replaced ones not fresh",
      Effect.gen(function* () {
        const [w] = yield* setup([["s", "sparkline"]])
        const { received } = yield* listen(w!)
        yield* write(w!, put({ number: 1 }, { number: 2 }), 10)
        yield* until("two entries", received, 2)
        yield* write(w!, put({ number: 5, ts: micros(T0 + 10) }), 20)
        yield* until("the replacement", received, 3)
        assert.deepStrictEqual(received, [
          `entry 10 fresh {"number":1}`,
          `entry 11 fresh {"number":2}`,
          `entry 10 old {"number":5}`
        ])
      })
    )

    test(
      "a clear arrives with its own ts, above every ts it cleared; entries after it are fresh",
      Effect.gen(function* () {
        const [w] = yield* setup([["s", "sparkline"]])
        const { received } = yield* listen(w!)
        yield* write(w!, put({ number: 1 }), 10)
        // Waited for: on PostgreSQL the entries a notification names are read when it arrives, and an entry a later
        // clear already deleted is not published (the subscriber gets the clear).
        yield* until("the entry", received, 1)
        yield* write(w!, { _tag: "Clear" }, 10)
        yield* write(w!, put({ number: 2 }), 10)
        yield* until("entry, clear, entry", received, 3)
        assert.deepStrictEqual(received, [`entry 10 fresh {"number":1}`, `clear 11`, `entry 12 fresh {"number":2}`])
      })
    )

    test(
      "nothing of other streams or of a failed write; the widget's deletion ends it; nothing after unsubscribing",
      Effect.gen(function* () {
        const [a, b] = yield* setup([
          ["a", "table"],
          ["b", "number"]
        ])
        const { received, unsubscribe } = yield* listen(a!)
        yield* write(b!, put({ number: 1 }), 5)
        yield* write(a!, { _tag: "Put", entries: [{ point: { table: [["h1", "h2"]] } }] }, 10)
        // A row of the wrong width fails: nothing is stored, nothing is published.
        const failed = yield* Effect.either(write(a!, { _tag: "TableRow", row: ["only one"] }, 20))
        assert.strictEqual(failed._tag, "Left")
        yield* until("the table", received, 1)
        yield* Effect.flatMap(AccountStore, (store) => store.deleteWidget(a!.accountId, "a"))
        yield* until("the deletion", received, 2)
        assert.deepStrictEqual(received, [`entry 10 fresh {"table":[["h1","h2"]]}`, "Deleted"])
        unsubscribe()
        yield* write(b!, put({ number: 2 }), 30)
        yield* Effect.sleep("200 millis")
        assert.strictEqual(received.length, 2)
      })
    )
  })
}
