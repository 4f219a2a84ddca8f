import { Effect, Stream } from "effect"
import { type AccountId, digestAccessKey, newAccessKey, newAccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import { ChangeFeed, type StreamChange } from "../ChangeFeed.js"
import { newDashboardId } from "../Dashboard.js"
import * as Dashboards from "../Dashboards.js"
import { DashboardStore } from "../DashboardStore.js"
import { DecimationStore } from "../DecimationStore.js"
import { defaultLimits } from "../Limits.js"
import { StreamName } from "../StreamName.js"
import { StreamStore } from "../StreamStore.js"
import { type Micros, micros } from "../Time.js"
import * as UseCases from "../UseCases.js"
import { digestViewToken, newViewToken } from "../ViewToken.js"
import type { Widget } from "../Widget.js"

/**
 * The hot paths' workload, for the tests that check every statement an adapter issues on them uses an index (issue
 * 12: latency must not grow with the database). An adapter's test captures the SQL its connection runs during
 * {@link hotPathWorkload} (not during {@link hotPathSetup}, whose admin statements are not hot) and EXPLAINs each
 * distinct statement, so a statement added to a hot path later is covered without editing a list.
 *
 * The workload goes through the use cases where the server does (push, latest read, paged since read, dashboard
 * view) and through the ports elsewhere: live reads and a change-feed subscription (the live lane), and the calls a
 * decimation pass makes for each stream (a page of streams, chunks of a stream's entries, deleting a batch).
 */

type Stores = AccountStore | StreamStore | DashboardStore | DecimationStore | ChangeFeed

/** What {@link hotPathSetup} created for the workload. */
export interface HotPathFixture {
  readonly accountId: AccountId
  readonly accessKey: string
  /** `n` (number), `s` (sparkline), `t` (text-feed), `l` (leaderboard). */
  readonly widgets: ReadonlyMap<string, Widget>
  readonly viewToken: string
}

/** A time well inside the valid range (2023-11-14T22:13:20Z), in microseconds. */
const T0 = 1_700_000_000_000_000

/** Creates an account, four widgets and a dashboard showing them (admin statements: run it before capturing). */
export const hotPathSetup: Effect.Effect<HotPathFixture, unknown, AccountStore | DashboardStore> = Effect.gen(
  function* () {
    const accounts = yield* AccountStore
    const accountId = newAccountId()
    const accessKey = newAccessKey()
    yield* accounts.createAccount({ id: accountId, name: "hot", createdAt: T0 }, digestAccessKey(accessKey))
    const widgets = new Map<string, Widget>()
    for (const [name, type] of [
      ["n", "number"],
      ["s", "sparkline"],
      ["t", "text-feed"],
      ["l", "leaderboard"]
    ] as const) {
      widgets.set(name, yield* accounts.createWidget(accountId, StreamName.make(name), type, T0))
    }
    const viewToken = newViewToken()
    const tiles = [...widgets.keys()].map((name, i) => ({
      streamName: StreamName.make(name),
      x: 2 * i,
      y: 0,
      w: 2,
      h: 2
    }))
    yield* Effect.flatMap(DashboardStore, (store) =>
      store.dashboards.create(
        { id: newDashboardId(), accountId, name: "hot", tiles, viewToken, createdAt: T0 },
        digestViewToken(viewToken)
      )
    )
    return { accountId, accessKey, widgets, viewToken }
  }
)

const pushed = (body: unknown, now: number) => UseCases.push(body, defaultLimits, micros(now))

/**
 * Runs every hot operation at least once against the stores of {@link hotPathSetup}'s `fixture`. Fails when an
 * operation fails or answers what it should not (it is a workload, not a contract suite: the checks only make sure
 * each operation really ran its statements).
 */
export const hotPathWorkload = (fixture: HotPathFixture): Effect.Effect<void, unknown, Stores> =>
  Effect.scoped(
    Effect.gen(function* () {
      const key = fixture.accessKey
      const widget = (name: string) => fixture.widgets.get(name)!
      const streams = yield* StreamStore
      const feed = yield* ChangeFeed
      // The live lane follows `n`: each committed change of it is published (PostgreSQL: on its notification).
      const received: Array<StreamChange> = []
      yield* Effect.acquireRelease(
        feed.subscribe(widget("n").id, (change) => received.push(change)),
        (unsubscribe) => Effect.sync(unsubscribe)
      )
      // Pushes: one point (server ts), a delta (reads the latest entry), 300 timestamped points (multi-row upserts),
      // a multi-stream push, items added to a leaderboard and a text feed, a clear and a push after it.
      yield* pushed({ accessKey: key, streamName: "n", point: 1 }, T0)
      yield* pushed({ accessKey: key, streamName: "n", point: { delta: 2 } }, T0 + 1_000_000)
      const spark = Array.from({ length: 300 }, (_, i) => ({ number: i, timestamp: 1_600_000_000 + i * 60 }))
      yield* pushed({ accessKey: key, streamName: "s", point: spark }, T0 + 2_000_000)
      yield* pushed(
        {
          accessKey: key,
          streams: [
            { streamName: "n", point: 3 },
            { streamName: "s", point: 4 },
            { streamName: "t", point: { title: "t", msg: "hello" } }
          ]
        },
        T0 + 3_000_000
      )
      yield* pushed(
        { accessKey: key, streamName: "l", point: { leaderboardItem: { name: "a", value: 1 } } },
        T0 + 4_000_000
      )
      yield* pushed({ accessKey: key, streamName: "t", command: "clear" }, T0 + 5_000_000)
      yield* pushed({ accessKey: key, streamName: "t", point: { title: "t", msg: "again" } }, T0 + 6_000_000)

      // Reads: the latest entry (no since), a since read in pages, live reads (snapshot and after a cursor), a range
      // read with points.
      const latest = yield* UseCases.read(key, "n", {})
      if (latest.length !== 1) return yield* Effect.die(new Error(`latest read gave ${latest.length} entries`))
      const pages = yield* UseCases.readPages(key, "s", { since: "0" }, 100)
      let count = pages.first.count
      if (pages.rest !== undefined) {
        yield* Stream.runForEach(pages.rest, (page) => Effect.sync(() => (count += page.count)))
      }
      if (count !== 301) return yield* Effect.die(new Error(`since read gave ${count} entries, not 301`))
      yield* UseCases.read(key, "s", { since: "1600000000", limit: "10" })
      const s = widget("s").id
      yield* streams.readLive(s, { _tag: "Recent", count: 1 })
      yield* streams.readLive(s, { _tag: "Recent", count: 1000 })
      yield* streams.readLive(s, { _tag: "After", since: micros(0), limit: 1000 })
      // A range read of the 300 timestamped points at 10 points (each bucket keeps its first and last, which are its
      // lowest and highest), whose pages are the stream's stored blocks.
      const ranged = yield* streams.readRange(s, {
        from: micros(1_600_000_000_000_000),
        since: null,
        to: micros((1_600_000_000 + 299 * 60) * 1_000_000),
        points: 10,
        mode: "extremes",
        limit: null
      })
      if (ranged.length !== 20) return yield* Effect.die(new Error(`range read kept ${ranged.length} entries, not 20`))
      // And of one instant, one bucket of no length: its blocks are read whole (no summary, see `BlockSummary.ts`).
      const instant = yield* streams.readRange(s, {
        from: micros(1_600_000_000_000_000),
        since: null,
        to: micros(1_600_000_000_000_000),
        points: 10,
        mode: "extremes",
        limit: null
      })
      if (instant.length !== 1)
        return yield* Effect.die(new Error(`instant read kept ${instant.length} entries, not 1`))

      // The dashboard page: its view token, then its tiles' widgets and snapshots.
      const view = yield* Dashboards.resolveView(fixture.viewToken)
      for (const tile of view.tiles) {
        if (tile.widget !== null) yield* streams.readLive(tile.widget.id, { _tag: "Recent", count: 100 })
      }

      // Wait until the followed stream's pushes reached the feed (on PostgreSQL, through a notification).
      for (let waited = 0; !received.some((c) => c._tag === "Stored"); waited += 10) {
        if (waited > 10_000) return yield* Effect.die(new Error("no change of the followed stream arrived"))
        yield* Effect.sleep("10 millis")
      }

      // A decimation pass's calls for each stream: a page of streams with old entries, chunks of one stream's entries,
      // and a batch of them deleted (never the newest).
      const decimation = yield* DecimationStore
      const olderThan: Micros = micros(T0 + 10_000_000)
      const page = yield* decimation.streams({ after: null, olderThan, limit: 2 })
      if (page.length === 0) return yield* Effect.die(new Error("no stream with old entries"))
      yield* decimation.streams({ after: page[page.length - 1]!.id, olderThan, limit: 2 })
      const first = yield* decimation.entries(s, { after: null, before: olderThan, limit: 100 })
      yield* decimation.entries(s, { after: first[first.length - 1]!.ts, before: olderThan, limit: 100 })
      const deleted = yield* decimation.deleteEntries(
        s,
        first.slice(1, 10).map((e) => e.id)
      )
      if (deleted !== 9) return yield* Effect.die(new Error(`deleted ${deleted} entries, not 9`))
      // A read of an unknown stream looks the key and the widget up, and finds none.
      yield* Effect.flip(UseCases.read(key, "missing", {}))
    })
  )
