import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { MAX_TILES, type Tile } from "../src/Dashboard.js"
import * as Dashboards from "../src/Dashboards.js"
import type { InvalidRequest } from "../src/Errors.js"
import { dashboardEntryData, streamNameData } from "../src/FollowDashboard.js"
import { StreamName } from "../src/StreamName.js"
import { MemoryStore } from "../src/testing/index.js"
import * as UseCases from "../src/UseCases.js"
import { widgetKind, widgetTypes } from "../src/WidgetType.js"

const tile = (streamName: string, x: number, y = 0): Tile => ({
  streamName: StreamName.make(streamName),
  x,
  y,
  w: 2,
  h: 2
})

const withAccount = (streams: ReadonlyArray<readonly [string, string]>) =>
  Effect.gen(function* () {
    const account = yield* UseCases.createAccount("a")
    for (const [name, type] of streams) yield* UseCases.createWidget(account.id, name, type)
    return account
  })

const run = <A, E>(body: Effect.Effect<A, E, any>) => Effect.provide(body, MemoryStore.layer) as Effect.Effect<A, E>

describe("dashboard use cases", () => {
  it.effect("create without tiles lays out one tile per widget in creation order (not name order)", () =>
    run(
      Effect.gen(function* () {
        const account = yield* withAccount([
          ["zeta", "number"],
          ["alpha", "world-map"],
          ["mid", "table"]
        ])
        const dashboard = yield* Dashboards.createDashboard(account.id, { name: "Wall" })
        const { viewToken } = dashboard
        assert.deepStrictEqual(
          dashboard.tiles.map((t) => t.streamName),
          ["zeta", "alpha", "mid"]
        )
        assert.match(viewToken, /^dv_[A-Za-z0-9_-]{43}$/)
        assert.deepStrictEqual(yield* Dashboards.views.get(account.id, dashboard.id), dashboard)
        const view = yield* Dashboards.resolveView(viewToken)
        assert.deepStrictEqual(view.dashboard, dashboard)
        assert.deepStrictEqual(
          view.tiles.map((t) => t.widget?.type),
          ["number", "world-map", "table"]
        )
      })
    )
  )

  it.effect("the default layout obeys the tile limit a PUT of its tiles obeys", () =>
    run(
      Effect.gen(function* () {
        const names = Array.from({ length: MAX_TILES + 1 }, (_, i) => `w${String(i).padStart(3, "0")}`)
        const full = yield* withAccount(names.slice(0, MAX_TILES).map((name) => [name, "number"] as const))
        const dashboard = yield* Dashboards.createDashboard(full.id, { name: "All" })
        assert.strictEqual(dashboard.tiles.length, MAX_TILES)
        const updated = yield* Dashboards.updateDashboard(full.id, dashboard.id, {
          name: "All",
          tiles: dashboard.tiles
        })
        assert.deepStrictEqual(updated.tiles, dashboard.tiles)

        const over = yield* withAccount(names.map((name) => [name, "number"] as const))
        const refused = yield* Effect.flip(Dashboards.createDashboard(over.id, { name: "All" }))
        assert.strictEqual(refused._tag, "InvalidRequest")
        assert.strictEqual((refused as InvalidRequest).path, "tiles")
        assert.include(refused.message, `at most ${MAX_TILES} tiles`)
        assert.include(refused.message, `${MAX_TILES + 1} widgets`)
        assert.deepStrictEqual(yield* Dashboards.views.list(over.id), [])
      })
    )
  )

  it.effect("a tile whose stream is not a widget of the account: InvalidRequest at tiles[i].streamName", () =>
    run(
      Effect.gen(function* () {
        const account = yield* withAccount([["a", "number"]])
        const other = yield* withAccount([["b", "number"]])
        const create = yield* Effect.flip(
          Dashboards.createDashboard(account.id, { name: "d", tiles: [tile("a", 0), tile("b", 2)] })
        )
        assert.deepStrictEqual([create._tag, (create as any).path], ["InvalidRequest", "tiles[1].streamName"])
        const dashboard = yield* Dashboards.createDashboard(account.id, { name: "d", tiles: [tile("a", 0)] })
        const update = yield* Effect.flip(
          Dashboards.updateDashboard(account.id, dashboard.id, { name: "d", tiles: [tile("b", 0)] })
        )
        assert.deepStrictEqual([update._tag, (update as any).path], ["InvalidRequest", "tiles[0].streamName"])
        assert.deepStrictEqual(yield* Dashboards.views.list(other.id), [])
      })
    )
  )

  it.effect("every use case: AccountNotFound for an unknown account, DashboardNotFound for an unknown id", () =>
    run(
      Effect.gen(function* () {
        const account = yield* withAccount([])
        const ghost = "no-such-account"
        const dashboard = "no-such-dashboard"
        const body = { name: "d", tiles: [] }
        const tags = (effect: Effect.Effect<unknown, { readonly _tag: string }, any>) =>
          Effect.map(Effect.flip(effect), (e) => e._tag)
        for (const effect of [
          Dashboards.createDashboard(ghost, body),
          Dashboards.views.list(ghost),
          Dashboards.views.get(ghost, dashboard),
          Dashboards.updateDashboard(ghost, dashboard, body),
          Dashboards.views.delete(ghost, dashboard),
          Dashboards.views.rotateToken(ghost, dashboard)
        ]) {
          assert.strictEqual(yield* tags(effect), "AccountNotFound")
        }
        for (const effect of [
          Dashboards.views.get(account.id, dashboard),
          Dashboards.updateDashboard(account.id, dashboard, body),
          Dashboards.views.delete(account.id, dashboard),
          Dashboards.views.rotateToken(account.id, dashboard)
        ]) {
          assert.strictEqual(yield* tags(effect), "DashboardNotFound")
        }
      })
    )
  )

  it.effect("rotate: the new token resolves, the old one fails at once; delete stops every token", () =>
    run(
      Effect.gen(function* () {
        const account = yield* withAccount([["s", "label"]])
        const dashboard = yield* Dashboards.createDashboard(account.id, { name: "d" })
        const old = dashboard.viewToken
        const rotated = yield* Dashboards.views.rotateToken(account.id, dashboard.id)
        assert.notStrictEqual(rotated.viewToken, old)
        assert.deepStrictEqual(rotated, { ...dashboard, viewToken: rotated.viewToken })
        assert.deepStrictEqual(yield* Dashboards.views.get(account.id, dashboard.id), rotated)
        const error = yield* Effect.flip(Dashboards.resolveView(old))
        assert.strictEqual(error._tag, "DashboardNotFound")
        assert.notInclude(error.message, old)
        assert.deepStrictEqual((yield* Dashboards.resolveView(rotated.viewToken)).dashboard, rotated)
        assert.strictEqual((yield* Effect.flip(Dashboards.resolveView("")))._tag, "DashboardNotFound")
        yield* Dashboards.views.delete(account.id, dashboard.id)
        assert.strictEqual((yield* Effect.flip(Dashboards.resolveView(rotated.viewToken)))._tag, "DashboardNotFound")
        assert.deepStrictEqual(yield* Dashboards.views.list(account.id), [])
      })
    )
  )

  it.effect("update replaces name and tiles and keeps the view token", () =>
    run(
      Effect.gen(function* () {
        const account = yield* withAccount([
          ["a", "number"],
          ["b", "list"]
        ])
        const dashboard = yield* Dashboards.createDashboard(account.id, { name: "d" })
        const { viewToken } = dashboard
        const tiles = [tile("b", 0), tile("b", 2)]
        const updated = yield* Dashboards.updateDashboard(account.id, dashboard.id, { name: "e", tiles })
        assert.deepStrictEqual(updated, { ...dashboard, name: "e", tiles })
        assert.deepStrictEqual((yield* Dashboards.resolveView(viewToken)).dashboard, updated)
        assert.deepStrictEqual(yield* Dashboards.views.list(account.id), [updated])
      })
    )
  )

  it("the snapshot rule: 1 entry for state tiles, 2 for numeric, 1,000 for series and events", () => {
    const byType = Object.fromEntries(widgetTypes.map((t) => [t, Dashboards.snapshotEntries(widgetKind(t))]))
    assert.deepStrictEqual(byType, {
      number: 2,
      "horizontal-bar": 2,
      "vertical-bar": 2,
      dial: 2,
      sparkline: 1000,
      "line-graph": 1000,
      "usa-map": 1000,
      "world-map": 1000,
      "text-feed": 1000,
      leaderboard: 1,
      "pie-chart": 1,
      "bar-chart": 1,
      list: 1,
      image: 1,
      label: 1,
      table: 1,
      gallery: 1000,
      html: 1,
      "xy-graph": 1000,
      "multi-bar-graph": 1
    })
  })

  it("dashboard events name their stream as JSON, whatever it holds", () => {
    const name = 'a "q" \\ é'
    assert.deepStrictEqual(JSON.parse(dashboardEntryData(name, '{"ts":1000000.5,"point":{"number":1}}')), {
      streamName: name,
      ts: 1_000_000.5,
      point: { number: 1 }
    })
    assert.deepStrictEqual(JSON.parse(streamNameData(name)), { streamName: name })
  })
})
