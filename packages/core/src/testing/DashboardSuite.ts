import { assert, describe } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import type { Account } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import type { ChangeFeed } from "../ChangeFeed.js"
import { type Dashboard, type DashboardChange, newDashboardId, type Tile } from "../Dashboard.js"
import * as Dashboards from "../Dashboards.js"
import { DashboardStore } from "../DashboardStore.js"
import { followDashboard } from "../FollowDashboard.js"
import { StreamName } from "../StreamName.js"
import { StreamStore } from "../StreamStore.js"
import { micros } from "../Time.js"
import { newViewToken } from "../ViewToken.js"
import type { WidgetType } from "../WidgetType.js"
import { newAccount, sharedViewSuite, T0, type ViewKindFixture, type ViewSuiteStores } from "./SharedViewSuite.js"

/**
 * The contract suite of `DashboardStore.dashboards` (docs/api.md section 11 and the port docs): the shared view
 * contract (`sharedViewSuite`) and what is a dashboard's own (its tiles), and what the dashboard use cases need from
 * the other ports (`StreamStore.readRecent`, widgets found again by name). Each adapter's test file calls
 * {@link dashboardSuite} with its layer, so memory, SQLite and PostgreSQL are held to the same behaviour.
 */

type Stores = ViewSuiteStores

const tile = (streamName: string, x: number, y: number, w = 2, h = 2, title?: string): Tile => ({
  streamName: StreamName.make(streamName),
  ...(title === undefined ? {} : { title }),
  x,
  y,
  w,
  h
})

const dashboardOf = (
  account: Account,
  name: string,
  tiles: ReadonlyArray<Tile>,
  createdAt = T0,
  viewToken = newViewToken()
): Dashboard => ({ id: newDashboardId(), accountId: account.id, name, tiles, viewToken, createdAt })

/** Dashboards as a kind of shared view (`sharedViewSuite`). */
const dashboardKind: ViewKindFixture<Dashboard, DashboardChange> = {
  noun: "dashboard",
  storage: (store) => store.dashboards,
  make: (account, name, createdAt, viewToken) =>
    Effect.succeed(dashboardOf(account, name, [tile("a", 0, 0, 4, 2, "A")], createdAt, viewToken)),
  change: () => Effect.succeed({ name: "new", tiles: [tile("b", 6, 1, 6, 3, "B"), tile("a", 0, 0, 1, 1)] })
}

/**
 * Registers the suite under `describe("dashboard contract: <name>")`. `makeLayer` is called once per test and must give
 * a fresh, empty, migrated store each time.
 */
export const dashboardSuite = (name: string, makeLayer: () => Layer.Layer<Stores, unknown>): void => {
  const { create: stored, roundTrips, test } = sharedViewSuite(dashboardKind, name, makeLayer)
  describe(`dashboard contract: ${name}`, () => {
    test(
      "create, then get, list and find by view token return it with its tiles exactly as given",
      Effect.gen(function* () {
        const store = (yield* DashboardStore).dashboards
        const account = yield* newAccount()
        const tiles = [
          tile("revenue", 0, 0, 4, 2, 'Revenue (€) "today"'),
          tile("n\u00e9 \u{1F600}", 4, 0),
          tile("x", 0, 2, 12, 1)
        ]
        const dashboard = yield* stored(dashboardOf(account, "Wall \u00e9cran", tiles))
        yield* roundTrips(dashboard)
        // A tile without a title has no title key at all (exact optional property).
        const read = Option.getOrThrow(yield* store.get(account.id, dashboard.id))
        assert.isFalse(Object.hasOwn(read.tiles[1]!, "title"))
      })
    )

    test(
      "tile options (docs/api.md section 15) round-trip exactly, on create and on update",
      Effect.gen(function* () {
        const store = (yield* DashboardStore).dashboards
        const account = yield* newAccount()
        const options = {
          thresholds: [
            { above: 80.5, color: "amber" as const },
            { below: -1e-7, color: "blue" as const }
          ],
          min: -3,
          max: 1e12,
          staleAfter: 31_536_000
        }
        const tiles = [
          { ...tile("n", 0, 0), options },
          { ...tile("s", 2, 0), options: { staleAfter: 10 } }
        ]
        const dashboard = yield* stored(dashboardOf(account, "opts", tiles))
        yield* roundTrips(dashboard)
        const next = [{ ...tile("n", 0, 0), options: { thresholds: [{ above: 0, color: "red" as const }] } }]
        yield* store.update(account.id, dashboard.id, { name: "opts", tiles: next })
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(account.id, dashboard.id))?.tiles, next)
      })
    )

    test(
      "a dashboard with no tiles round-trips",
      Effect.gen(function* () {
        yield* roundTrips(yield* stored(dashboardOf(yield* newAccount(), "empty", [])))
      })
    )

    test(
      "deleting a widget leaves its tiles; resolveView shows them deleted, and a widget created again shows again",
      Effect.gen(function* () {
        const accounts = yield* AccountStore
        const account = yield* newAccount()
        const make = (name: string, type: WidgetType) =>
          accounts.createWidget(account.id, StreamName.make(name), type, T0)
        yield* make("sales", "number")
        yield* make("feed", "text-feed")
        const dashboard = yield* stored(
          dashboardOf(account, "d", [tile("sales", 0, 0), tile("feed", 2, 0), tile("sales", 4, 0)])
        )
        yield* accounts.deleteWidget(account.id, "sales")
        const stays = Option.getOrNull(
          yield* Effect.flatMap(DashboardStore, (s) => s.dashboards.get(account.id, dashboard.id))
        )
        assert.deepStrictEqual(stays, dashboard)
        const view = yield* Dashboards.resolveView(dashboard.viewToken!)
        assert.deepStrictEqual(
          view.tiles.map((t) => [t.tile.streamName, t.widget?.type ?? null]),
          [
            ["sales", null],
            ["feed", "text-feed"],
            ["sales", null]
          ]
        )
        const again = yield* make("sales", "dial")
        const after = yield* Dashboards.resolveView(dashboard.viewToken!)
        assert.deepStrictEqual(after.tiles[0]!.widget, again)
        assert.deepStrictEqual(after.tiles[2]!.widget, again)
      })
    )

    test(
      "a dashboard's snapshot (followDashboard of its feeds) holds each live tile's stream by the snapshot rule, rendered as the export read renders it",
      Effect.gen(function* () {
        const accounts = yield* AccountStore
        const streams = yield* StreamStore
        const account = yield* newAccount()
        const make = (name: string, type: WidgetType) =>
          accounts.createWidget(account.id, StreamName.make(name), type, T0)
        const number = yield* make("n", "number")
        const line = yield* make("line", "line-graph")
        const list = yield* make("list", "list")
        yield* make("empty", "gallery")
        yield* make("gone", "label")
        const put = (widget: typeof number, points: ReadonlyArray<readonly [number, unknown]>) =>
          streams.write(
            [
              {
                widget,
                op: {
                  _tag: "Put",
                  entries: points.map(([ts, point]) => ({ ts: micros(T0 + ts), point: point as never }))
                },
                path: "point"
              }
            ],
            micros(T0)
          )
        yield* put(
          number,
          [1, 2, 3].map((i) => [i * 1_000_000 + 500_000, { number: i }] as const)
        )
        yield* put(
          line,
          Array.from({ length: 1003 }, (_, i) => [i + 1, { number: i }] as const)
        )
        yield* streams.write(
          [{ widget: list, op: { _tag: "Put", entries: [{ point: { list: [{ listItem: "a" }] } }] }, path: "point" }],
          micros(T0 + 1)
        )
        yield* streams.write(
          [{ widget: list, op: { _tag: "Put", entries: [{ point: { list: [{ listItem: "b" }] } }] }, path: "point" }],
          micros(T0 + 2)
        )
        const dashboard = yield* stored(
          dashboardOf(account, "d", [
            tile("n", 0, 0),
            tile("line", 2, 0),
            tile("list", 4, 0),
            tile("empty", 6, 0),
            tile("gone", 8, 0),
            tile("n", 10, 0)
          ])
        )
        yield* accounts.deleteWidget(account.id, "gone")
        const resolved = yield* Dashboards.resolveView(dashboard.viewToken!)
        const snapshots: Array<string> = []
        let pieces = ""
        const follower = followDashboard(
          Dashboards.dashboardLayout(resolved),
          yield* Effect.runtime<StreamStore | ChangeFeed>(),
          {
            snapshot: (part, last) => {
              pieces += part
              if (!last) return
              snapshots.push(pieces)
              pieces = ""
            },
            entry: () => {},
            clear: () => {},
            deleted: () => {},
            layout: () => {},
            failed: () => {},
            overflowed: () => {},
            writable: Effect.void,
            live: () => {}
          },
          { maxHeldBytes: 1024 * 1024 }
        )
        yield* follower.idle
        follower.close()
        const text = snapshots[0]!
        const parsed = JSON.parse(text) as {
          tiles: Record<string, Array<{ ts: number; point: any }>>
          deleted: Array<string>
        }
        assert.deepStrictEqual(Object.keys(parsed.tiles).sort(), ["empty", "line", "list", "n"])
        assert.deepStrictEqual(parsed.deleted, ["gone"])
        assert.deepStrictEqual(parsed.tiles["n"], [
          { ts: 1_700_000_002.5, point: { number: 2 } },
          { ts: 1_700_000_003.5, point: { number: 3 } }
        ])
        const series = parsed.tiles["line"]!
        assert.strictEqual(series.length, Dashboards.MAX_SNAPSHOT_ENTRIES)
        assert.deepStrictEqual(series[0]!.point, { number: 3 })
        assert.deepStrictEqual(series.at(-1)!.point, { number: 1002 })
        assert.deepStrictEqual(
          parsed.tiles["list"]!.map((e) => e.point),
          [{ list: [{ listItem: "b" }] }]
        )
        assert.deepStrictEqual(parsed.tiles["empty"], [])
        assert.include(text, '"n":[{"ts":1700000002.5,"point":{"number":2}}')
      })
    )
  })
}
