import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, type Runtime } from "effect"
import { digestAccessKey, newAccessKey, newAccountId } from "../src/Account.js"
import { ChangeFeed } from "../src/ChangeFeed.js"
import {
  type DashboardFeed,
  type DashboardLayout,
  type DashboardSink,
  followDashboard
} from "../src/FollowDashboard.js"
import type { PointOp } from "../src/Point.js"
import { StreamName } from "../src/StreamName.js"
import { StreamStore } from "../src/StreamStore.js"
import { micros } from "../src/Time.js"
import type { Widget } from "../src/Widget.js"
import { MemoryStore } from "../src/testing/index.js"
import { recorder as recordEvents } from "./support/recorder.js"

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

/**
 * The shared recorder (`support/recorder.ts`), each snapshot's server time (`now`, which differs run to run) checked,
 * kept in `nows` and dropped from the recorded event.
 */
const recorder = () => {
  const nows: Array<number> = []
  const recorded = recordEvents({
    snapshot: (text) => {
      const now = /,"now":(\d+(?:\.\d+)?)\}$/.exec(text)
      if (now === null) throw new Error(`snapshot without the server's time: ${text}`)
      nows.push(Number(now[1]))
      return `${text.slice(0, now.index)}}`
    }
  })
  return { ...recorded, nows }
}

const options = { maxHeldBytes: 1024 * 1024 }

const follow = (
  s: { runtime: Runtime.Runtime<StreamStore | ChangeFeed> },
  feeds: ReadonlyArray<DashboardFeed>,
  sink: DashboardSink,
  pageSize?: number,
  maxHeldBytes = options.maxHeldBytes
) =>
  followDashboard(
    layoutOf(feeds),
    s.runtime,
    sink,
    pageSize === undefined ? { maxHeldBytes } : { maxHeldBytes, pageSize }
  )

/** A layout of these feeds; its key and `layout` data name the streams (and `name`). */
const layoutOf = (feeds: ReadonlyArray<DashboardFeed>, name = "d"): DashboardLayout => {
  const data = JSON.stringify({ name, tiles: feeds.map((f) => f.streamName) })
  return { data, key: data, version: data, feeds }
}

/** Lets forked fibers run until they wait for something. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
})

const num = (n: number): PointOp => ({ _tag: "Put", entries: [{ point: { number: n } }] })
const label = (text: string): PointOp => ({ _tag: "Put", entries: [{ point: { label: text } }] })

describe("followDashboard (docs/api.md section 11)", () => {
  it.effect("a snapshot of the most recent entries per tile, then entry and clear events with the stream name", () =>
    Effect.gen(function* () {
      const s = yield* setup
      for (const n of [1, 2, 3, 4]) s.write(s.spark, num(n))
      s.write(s.board, label("a"))
      s.write(s.board, label("b"))
      const { nows, sent, sink } = recorder()
      const follower = follow(
        s,
        [
          { streamName: "spark", stream: s.spark.id, recent: 3 },
          { streamName: "board", stream: s.board.id, recent: 1 },
          { streamName: "gone", stream: null, recent: 1 }
        ],
        sink
      )
      yield* follower.idle
      const events = sent()
      assert.strictEqual(events.length, 1)
      // The snapshot carries the server's clock (seconds), for the page's stale ages.
      assert.strictEqual(nows.length, 1)
      assert.approximately(nows[0]!, Date.now() / 1000, 5)
      assert.deepStrictEqual(JSON.parse(events[0]!.slice("snapshot ".length)), {
        tiles: {
          spark: [
            { ts: (T0 + 20) / 1e6, point: { number: 2 } },
            { ts: (T0 + 30) / 1e6, point: { number: 3 } },
            { ts: (T0 + 40) / 1e6, point: { number: 4 } }
          ],
          board: [{ ts: (T0 + 60) / 1e6, point: { label: "b" } }]
        },
        // A tile whose widget does not exist is named as such.
        deleted: ["gone"]
      })
      s.write(s.spark, num(5))
      s.write(s.board, { _tag: "Clear" })
      assert.deepStrictEqual(sent().slice(1), [
        `entry {"streamName":"spark","ts":${(T0 + 70) / 1e6},"point":{"number":5}}`,
        `clear {"streamName":"board"}`
      ])
      follower.close()
      s.write(s.spark, num(6))
      assert.strictEqual(sent().length, 3)
    })
  )

  it.effect(
    "writes made while the snapshot is read page by page: in a tile's member within its count, ascending, else events after it, none twice",
    () =>
      Effect.gen(function* () {
        const s = yield* setup
        for (const n of [1, 2, 3, 4, 5]) s.write(s.spark, num(n))
        let reads = 0
        // Before each storage read: a push to spark, and before the board's read a clear and a label on the board.
        s.setHook(() => {
          reads++
          s.write(s.spark, num(100 + reads))
          if (reads === 5) {
            s.write(s.board, label("x"))
            s.write(s.board, { _tag: "Clear" })
            s.write(s.board, label("y"))
          }
        })
        const { sent, sink } = recorder()
        yield* follow(
          s,
          [
            { streamName: "spark", stream: s.spark.id, recent: 4 },
            { streamName: "board", stream: s.board.id, recent: 1 }
          ],
          sink,
          2
        ).idle
        s.setHook(() => {})
        const events = sent()
        const snapshot = JSON.parse(events[0]!.slice("snapshot ".length)) as {
          tiles: Record<string, Array<{ point: { number: number } }>>
        }
        // Pages of 2: [3, 4] of the 4 most recent (101 came first), [5, 101], then [102, 103] and [104] past the count.
        assert.deepStrictEqual(
          snapshot.tiles["spark"]!.map((e) => e.point.number),
          [3, 4, 5, 101]
        )
        assert.deepStrictEqual(
          snapshot.tiles["board"]!.map((e) => e.point as unknown),
          [{ label: "y" }]
        )
        assert.deepStrictEqual(
          events.slice(1).map((e) => JSON.parse(e.slice("entry ".length)).point.number),
          [102, 103, 104, 105]
        )
      })
  )

  it.effect("a tile's widget deleted before its turn in the snapshot is named in its deleted member", () =>
    Effect.gen(function* () {
      const s = yield* setup
      s.setHook(() => {
        Effect.runSync(s.stores.accountStore.deleteWidget(s.board.accountId, "board"))
        s.setHook(() => {})
      })
      const { sent, sink } = recorder()
      yield* follow(
        s,
        [
          { streamName: "board", stream: s.board.id, recent: 1 },
          { streamName: "spark", stream: s.spark.id, recent: 5 }
        ],
        sink
      ).idle
      assert.deepStrictEqual(sent(), [`snapshot {"tiles":{"spark":[]},"deleted":["board"]}`])
    })
  )

  it.effect(
    "the snapshot is written a page at a time as the sink takes it: a sink that takes nothing holds one page",
    () =>
      Effect.gen(function* () {
        const s = yield* setup
        for (let n = 0; n < 100; n++) s.write(s.spark, num(n))
        let reads = 0
        s.setHook(() => void reads++)
        const { sent, pieces, sink, gate } = recorder()
        gate(false)
        const follower = follow(s, [{ streamName: "spark", stream: s.spark.id, recent: 80 }], sink, 10)
        yield* settle
        // The opening piece and the first page (8 entries); nothing more is read until the sink can take more.
        assert.strictEqual(reads, 1)
        assert.strictEqual(pieces.length, 9)
        assert.deepStrictEqual(sent(), [])
        gate(true)
        yield* follower.idle
        assert.strictEqual(reads, 9)
        const snapshot = JSON.parse(sent()[0]!.slice("snapshot ".length)) as {
          tiles: Record<string, Array<{ point: { number: number } }>>
        }
        assert.deepStrictEqual(
          snapshot.tiles["spark"]!.map((e) => e.point.number),
          Array.from({ length: 80 }, (_, i) => i + 20)
        )
        follower.close()
      })
  )

  it.effect(
    "events held behind a snapshot the sink does not take are bounded: past maxHeldBytes, overflowed and ended",
    () =>
      Effect.gen(function* () {
        const s = yield* setup
        for (let n = 0; n < 100; n++) s.write(s.spark, num(n))
        const { events, sink, gate } = recorder()
        gate(false)
        // The board's member is written first; the spark's first page then waits for the sink.
        const follower = follow(
          s,
          [
            { streamName: "board", stream: s.board.id, recent: 1 },
            { streamName: "spark", stream: s.spark.id, recent: 100 }
          ],
          sink,
          10,
          2_000
        )
        yield* settle
        for (let i = 0; i < 5; i++) s.write(s.board, label("x".repeat(100)))
        assert.deepStrictEqual(events, ["live false"])
        for (let i = 0; i < 10; i++) s.write(s.board, label("y".repeat(100)))
        assert.deepStrictEqual(events, ["live false", "overflowed"])
        gate(true)
        yield* follower.idle
        s.write(s.board, label("z"))
        assert.deepStrictEqual(events, ["live false", "overflowed"])
      })
  )

  it.effect("events held behind a snapshot follow it in order once it is out, then the stream is live", () =>
    Effect.gen(function* () {
      const s = yield* setup
      for (let n = 0; n < 30; n++) s.write(s.spark, num(n))
      const { events, sink, gate } = recorder()
      gate(false)
      const follower = follow(
        s,
        [
          { streamName: "board", stream: s.board.id, recent: 1 },
          { streamName: "spark", stream: s.spark.id, recent: 30 }
        ],
        sink,
        10
      )
      yield* settle
      s.write(s.board, label("a"))
      s.write(s.board, { _tag: "Clear" })
      s.write(s.board, label("b"))
      assert.deepStrictEqual(events, ["live false"])
      gate(true)
      yield* follower.idle
      s.write(s.board, label("c"))
      assert.deepStrictEqual(
        events.map((e) => e.replace(/^snapshot .*/, "snapshot").replace(/"ts":[0-9.]+,/, "")),
        [
          "live false",
          "snapshot",
          'entry {"streamName":"board","point":{"label":"a"}}',
          'clear {"streamName":"board"}',
          'entry {"streamName":"board","point":{"label":"b"}}',
          "live true",
          'entry {"streamName":"board","point":{"label":"c"}}'
        ]
      )
      follower.close()
    })
  )
})

describe("followDashboard: layout changes (docs/api.md section 14)", () => {
  const sparkFeed = (s: { spark: Widget }) => ({
    streamName: "spark",
    stream: s.spark.id,
    recent: 5,
    type: "sparkline"
  })
  const boardFeed = (s: { board: Widget }) => ({ streamName: "board", stream: s.board.id, recent: 1, type: "label" })
  const points = (e: string) => JSON.parse(e.slice(e.indexOf(" ") + 1))

  it.effect("a removed tile's entries stop at once; layout, then a snapshot of no tile; the kept tile goes on", () =>
    Effect.gen(function* () {
      const s = yield* setup
      s.write(s.spark, num(1))
      const { sent, sink } = recorder()
      const follower = follow(s, [sparkFeed(s), boardFeed(s)], sink)
      yield* follower.idle
      follower.relayout(layoutOf([sparkFeed(s)], "renamed"))
      // Nothing of the board after the layout change, even before its layout event is out.
      s.write(s.board, label("after"))
      yield* follower.idle
      s.write(s.spark, num(2))
      assert.deepStrictEqual(sent().slice(1), [
        `layout {"name":"renamed","tiles":["spark"]}`,
        `snapshot {"tiles":{},"deleted":[]}`,
        `entry {"streamName":"spark","ts":${(T0 + 30) / 1e6},"point":{"number":2}}`
      ])
      follower.close()
    })
  )

  it.effect("an added tile: layout, then a snapshot of that tile only; its entries follow", () =>
    Effect.gen(function* () {
      const s = yield* setup
      s.write(s.spark, num(1))
      s.write(s.board, label("b"))
      const { sent, sink } = recorder()
      const follower = follow(s, [sparkFeed(s)], sink)
      yield* follower.idle
      follower.relayout(layoutOf([sparkFeed(s), boardFeed(s)]))
      yield* follower.idle
      s.write(s.board, label("c"))
      const events = sent()
      assert.strictEqual(events.length, 4)
      assert.strictEqual(events[1], `layout {"name":"d","tiles":["spark","board"]}`)
      assert.deepStrictEqual(points(events[2]!), {
        tiles: { board: [{ ts: (T0 + 20) / 1e6, point: { label: "b" } }] },
        deleted: []
      })
      assert.deepStrictEqual(points(events[3]!).point, { label: "c" })
      follower.close()
    })
  )

  it.effect("the same layout again changes nothing; a widget made again is a tile not shown before", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const { sent, sink } = recorder()
      const follower = follow(s, [sparkFeed(s), boardFeed(s)], sink)
      yield* follower.idle
      follower.relayout(layoutOf([sparkFeed(s), boardFeed(s)]))
      yield* follower.idle
      assert.strictEqual(sent().length, 1)
      // The board's widget deleted: its own deleted event says so, and the layout that has no widget for it is no change.
      Effect.runSync(s.stores.accountStore.deleteWidget(s.board.accountId, "board"))
      follower.relayout(layoutOf([sparkFeed(s), { streamName: "board", stream: null, recent: 1, type: null }]))
      yield* follower.idle
      assert.deepStrictEqual(sent().slice(1), [`deleted {"streamName":"board"}`])
      // Made again, with the same type: a snapshot of it, no layout event; made with another type: both.
      const again = Effect.runSync(
        s.stores.accountStore.createWidget(s.board.accountId, StreamName.make("board"), "label", T0)
      )
      s.write(again, label("new"))
      follower.relayout(layoutOf([sparkFeed(s), { ...boardFeed(s), stream: again.id }]))
      yield* follower.idle
      assert.strictEqual(sent().length, 3)
      assert.deepStrictEqual(points(sent()[2]!).tiles.board.length, 1)
      s.write(again, label("live"))
      assert.deepStrictEqual(points(sent()[3]!).point, { label: "live" })
      follower.close()
    })
  )

  it.effect("while a snapshot waits for the sink: a removed tile's held events go; layout and snapshot follow it", () =>
    Effect.gen(function* () {
      const s = yield* setup
      for (let n = 0; n < 30; n++) s.write(s.spark, num(n))
      const { sent, sink, gate } = recorder()
      gate(false)
      const follower = follow(s, [boardFeed(s), sparkFeed(s), { ...sparkFeed(s), recent: 30 }], sink, 10)
      yield* settle
      // The board's member is out; the spark's waits for the sink. A board entry waits behind the snapshot.
      s.write(s.board, label("held"))
      follower.relayout(layoutOf([{ ...sparkFeed(s), recent: 30 }], "spark only"))
      follower.relayout(layoutOf([{ ...sparkFeed(s), recent: 30 }, boardFeed(s)], "both again"))
      s.write(s.board, label("re-added"))
      assert.deepStrictEqual(sent(), [])
      gate(true)
      yield* follower.idle
      const events = sent()
      assert.deepStrictEqual(
        events.map((e) => e.slice(0, e.indexOf(" "))),
        ["snapshot", "layout", "snapshot"]
      )
      assert.strictEqual(points(events[0]!).tiles.spark.length, 30)
      // Only the last layout is sent; the board is new to it again, with what it holds now.
      assert.strictEqual(events[1], `layout {"name":"both again","tiles":["spark","board"]}`)
      assert.deepStrictEqual(
        points(events[2]!).tiles.board.map((e: { point: unknown }) => e.point),
        [{ label: "re-added" }]
      )
      follower.close()
    })
  )

  it.effect("a client that shows another layout version gets event: layout before its snapshot; the same, none", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const layout = layoutOf([boardFeed(s)])
      const stale = recorder()
      yield* followDashboard(layout, s.runtime, stale.sink, { ...options, shown: "an older one" }).idle
      assert.deepStrictEqual(stale.sent(), [`layout ${layout.data}`, `snapshot {"tiles":{"board":[]},"deleted":[]}`])
      const current = recorder()
      yield* followDashboard(layout, s.runtime, current.sink, { ...options, shown: layout.version }).idle
      assert.deepStrictEqual(current.sent(), [`snapshot {"tiles":{"board":[]},"deleted":[]}`])
    })
  )
})
