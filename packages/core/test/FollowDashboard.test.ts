import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, type Runtime } from "effect"
import { digestAccessKey, newAccessKey, newAccountId } from "../src/Account.js"
import { ChangeFeed } from "../src/ChangeFeed.js"
import { type DashboardFeed, type DashboardSink, followDashboard } from "../src/FollowDashboard.js"
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

/**
 * A sink that records each event as `<kind> <data>` (a snapshot once its last piece is in), and every piece of a
 * snapshot in `pieces`. `writable` completes when `gate` says so (at once by default).
 */
const recorder = () => {
  const events: Array<string> = []
  const pieces: Array<string> = []
  let snapshot = ""
  let open = true
  const waiting: Array<() => void> = []
  const sink: DashboardSink = {
    snapshot: (part, last) => {
      pieces.push(part)
      snapshot += part
      if (!last) return
      events.push(`snapshot ${snapshot}`)
      snapshot = ""
    },
    entry: (d) => events.push(`entry ${d}`),
    clear: (d) => events.push(`clear ${d}`),
    deleted: (d) => events.push(`deleted ${d}`),
    failed: (e) => events.push(`failed ${e._tag}`),
    overflowed: () => events.push("overflowed"),
    writable: Effect.async<void>((resume) => {
      if (open) return resume(Effect.void)
      waiting.push(() => resume(Effect.void))
    }),
    live: (isLive) => events.push(`live ${isLive}`)
  }
  return {
    events,
    pieces,
    sink,
    /** Stops (`false`) or lets through (`true`) the sink's `writable`. */
    gate: (isOpen: boolean) => {
      open = isOpen
      if (isOpen) for (const w of waiting.splice(0)) w()
    },
    /** The events without the `live` notices. */
    sent: () => events.filter((e) => !e.startsWith("live "))
  }
}

const options = { maxHeldBytes: 1024 * 1024 }

const follow = (
  s: { runtime: Runtime.Runtime<StreamStore | ChangeFeed> },
  feeds: ReadonlyArray<DashboardFeed>,
  sink: DashboardSink,
  pageSize?: number,
  maxHeldBytes = options.maxHeldBytes
) => followDashboard(feeds, s.runtime, sink, pageSize === undefined ? { maxHeldBytes } : { maxHeldBytes, pageSize })

/** Lets forked fibers run until they wait for something. */
const settle = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
})

const num = (n: number): PointOp => ({ _tag: "Put", entries: [{ point: { number: n } }] })
const label = (text: string): PointOp => ({ _tag: "Put", entries: [{ point: { label: text } }] })

describe("followDashboard (contract section 11)", () => {
  it.effect("a snapshot of the most recent entries per tile, then entry and clear events with the stream name", () =>
    Effect.gen(function* () {
      const s = yield* setup
      for (const n of [1, 2, 3, 4]) s.write(s.spark, num(n))
      s.write(s.board, label("a"))
      s.write(s.board, label("b"))
      const { sent, sink } = recorder()
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

  it.effect("a tile's widget deleted before the snapshot is left out of it and announced after it", () =>
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
      assert.deepStrictEqual(sent(), [`snapshot {"tiles":{"spark":[]}}`, `deleted {"streamName":"board"}`])
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
        // The opening piece and the first page of 10 entries; nothing more is read until the sink can take more.
        assert.strictEqual(reads, 1)
        assert.strictEqual(pieces.length, 11)
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
