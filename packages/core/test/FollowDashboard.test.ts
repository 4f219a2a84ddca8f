import { assert, describe, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { digestAccessKey, newAccessKey, newAccountId } from "../src/Account.js"
import { ChangeFeed } from "../src/ChangeFeed.js"
import { type DashboardSink, followDashboard } from "../src/FollowDashboard.js"
import type { PointOp } from "../src/Point.js"
import { StreamName } from "../src/StreamName.js"
import { StreamStore } from "../src/StreamStore.js"
import { micros } from "../src/Time.js"
import type { Widget } from "../src/Widget.js"
import { MemoryStore } from "../src/testing/index.js"

const T0 = 1_700_000_000_000_000

/** A memory store with a spark (series), a board (state) and a feed widget; `hook` runs before every storage read. */
const setup = Effect.gen(function* () {
  const stores = yield* MemoryStore.make
  const accountId = newAccountId()
  yield* stores.accountStore.createAccount({ id: accountId, name: "t", createdAt: T0 }, digestAccessKey(newAccessKey()))
  const spark = yield* stores.accountStore.createWidget(accountId, StreamName.make("spark"), "sparkline", T0)
  const board = yield* stores.accountStore.createWidget(accountId, StreamName.make("board"), "label", T0)
  let hook: () => void = () => {}
  const store: StreamStore["Type"] = {
    ...stores.streamStore,
    readLive: (stream, query) => Effect.suspend(() => (hook(), stores.streamStore.readLive(stream, query)))
  }
  const runtime = yield* Effect.runtime<StreamStore | ChangeFeed>().pipe(
    Effect.provide(Context.make(StreamStore, store).pipe(Context.add(ChangeFeed, stores.changeFeed)))
  )
  let clock = T0
  const write = (widget: Widget, op: PointOp) =>
    Effect.runSync(stores.streamStore.write([{ widget, op, path: "point" }], micros((clock += 10))))
  return {
    stores,
    spark,
    board,
    runtime,
    write,
    setHook: (f: () => void) => {
      hook = f
    }
  }
})

const recorder = () => {
  const events: Array<string> = []
  const sink: DashboardSink = {
    snapshot: (d) => events.push(`snapshot ${d}`),
    entry: (d) => events.push(`entry ${d}`),
    clear: (d) => events.push(`clear ${d}`),
    deleted: (d) => events.push(`deleted ${d}`),
    failed: (e) => events.push(`failed ${e._tag}`)
  }
  return { events, sink }
}

const num = (n: number): PointOp => ({ _tag: "Put", entries: [{ point: { number: n } }] })
const label = (text: string): PointOp => ({ _tag: "Put", entries: [{ point: { label: text } }] })

describe("followDashboard (contract section 11)", () => {
  it.effect("a snapshot of the most recent entries per tile, then entry and clear events with the stream name", () =>
    Effect.gen(function* () {
      const s = yield* setup
      for (const n of [1, 2, 3, 4]) s.write(s.spark, num(n))
      s.write(s.board, label("a"))
      s.write(s.board, label("b"))
      const { events, sink } = recorder()
      const follower = yield* followDashboard(
        [
          { streamName: "spark", stream: s.spark.id, recent: 3 },
          { streamName: "board", stream: s.board.id, recent: 1 },
          { streamName: "gone", stream: null, recent: 1 }
        ],
        s.runtime,
        sink
      )
      assert.strictEqual(events.length, 1)
      assert.deepStrictEqual(JSON.parse(events[0]!.slice("snapshot ".length)), {
        tiles: {
          spark: [
            { ts: (T0 + 20) / 1e6, point: { number: 2 } },
            { ts: (T0 + 30) / 1e6, point: { number: 3 } },
            { ts: (T0 + 40) / 1e6, point: { number: 4 } }
          ],
          board: [{ ts: (T0 + 60) / 1e6, point: { label: "b" } }]
        }
      })
      s.write(s.spark, num(5))
      s.write(s.board, { _tag: "Clear" })
      assert.deepStrictEqual(events.slice(1), [
        `entry {"streamName":"spark","ts":${(T0 + 70) / 1e6},"point":{"number":5}}`,
        `clear {"streamName":"board"}`
      ])
      follower.close()
      s.write(s.spark, num(6))
      assert.strictEqual(events.length, 3)
    })
  )

  it.effect("writes made while the snapshot is read are in it (once, within the tile's count), not sent again", () =>
    Effect.gen(function* () {
      const s = yield* setup
      s.write(s.spark, num(1))
      let reads = 0
      // Before each storage read: a push to spark, and on the second read a clear and a label on the board.
      s.setHook(() => {
        reads++
        s.write(s.spark, num(100 + reads))
        if (reads === 2) {
          s.write(s.board, label("x"))
          s.write(s.board, { _tag: "Clear" })
          s.write(s.board, label("y"))
        }
      })
      const { events, sink } = recorder()
      yield* followDashboard(
        [
          { streamName: "spark", stream: s.spark.id, recent: 2 },
          { streamName: "board", stream: s.board.id, recent: 1 }
        ],
        s.runtime,
        sink
      )
      s.setHook(() => {})
      const snapshot = JSON.parse(events[0]!.slice("snapshot ".length)) as {
        tiles: Record<string, Array<{ point: unknown }>>
      }
      assert.deepStrictEqual(
        snapshot.tiles["spark"]!.map((e) => e.point),
        [{ number: 101 }, { number: 102 }]
      )
      assert.deepStrictEqual(
        snapshot.tiles["board"]!.map((e) => e.point),
        [{ label: "y" }]
      )
      assert.deepStrictEqual(events.slice(1), [])
    })
  )

  it.effect("a tile's widget deleted before the snapshot is left out of it and announced after it", () =>
    Effect.gen(function* () {
      const s = yield* setup
      s.setHook(() => {
        Effect.runSync(s.stores.accountStore.deleteWidget(s.board.accountId, "board"))
        s.setHook(() => {})
      })
      const { events, sink } = recorder()
      yield* followDashboard(
        [
          { streamName: "board", stream: s.board.id, recent: 1 },
          { streamName: "spark", stream: s.spark.id, recent: 5 }
        ],
        s.runtime,
        sink
      )
      assert.deepStrictEqual(events, [`snapshot {"tiles":{"spark":[]}}`, `deleted {"streamName":"board"}`])
    })
  )
})
