import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Layer } from "effect"
import { AccountStore } from "../src/AccountStore.js"
import { ChangeFeed } from "../src/ChangeFeed.js"
import * as Dashboards from "../src/Dashboards.js"
import { DashboardStore } from "../src/DashboardStore.js"
import { followDashboard } from "../src/FollowDashboard.js"
import { checkDashboardIds, checkRotationBody } from "../src/Rotation.js"
import * as Rotations from "../src/Rotations.js"
import { StreamName } from "../src/StreamName.js"
import { StreamStore } from "../src/StreamStore.js"
import { micros } from "../src/Time.js"
import * as UseCases from "../src/UseCases.js"
import { MemoryStore } from "../src/testing/index.js"
import { recorder as recordEvents } from "./support/recorder.js"

/**
 * Rotations (docs/api.md section 15): the body rules with the paths the admin API reports, the use cases over the memory
 * store (the account's dashboards only, tokens as dashboards have them), and a rotation's one event stream as core
 * builds it: the union of its dashboards' streams, each followed once, its events naming the dashboards that show it.
 */

const body = { name: "Wall", dashboardIds: ["a", "b"], intervalSeconds: 30 }

const pathOf = (input: unknown) =>
  Either.match(checkRotationBody(input), { onLeft: (e) => e.path ?? "", onRight: () => "ok" })

describe("rotation body rules", () => {
  it("accepts whole intervals 5 to 3600, 0 to 50 dashboards (repeats allowed), names of 1 to 200 characters", () => {
    for (const intervalSeconds of [5, 6, 60, 3600]) assert.strictEqual(pathOf({ ...body, intervalSeconds }), "ok")
    for (const n of [0, 1, 50]) {
      assert.strictEqual(pathOf({ ...body, dashboardIds: Array.from({ length: n }, () => "a") }), "ok")
    }
    assert.strictEqual(pathOf({ ...body, name: "x".repeat(200) }), "ok")
  })

  it("refuses a bad interval, name or dashboard list with the field's path", () => {
    const cases: Array<[unknown, string]> = [
      [{ ...body, intervalSeconds: 4 }, "intervalSeconds"],
      [{ ...body, intervalSeconds: 3601 }, "intervalSeconds"],
      [{ ...body, intervalSeconds: 5.5 }, "intervalSeconds"],
      [{ ...body, intervalSeconds: "30" }, "intervalSeconds"],
      [{ ...body, intervalSeconds: Number.NaN }, "intervalSeconds"],
      [{ ...body, name: "" }, "name"],
      [{ ...body, name: "x".repeat(201) }, "name"],
      [{ ...body, dashboardIds: ["a", 3] }, "dashboardIds[1]"],
      [{ ...body, dashboardIds: Array.from({ length: 51 }, () => "a") }, "dashboardIds"],
      [{ name: "Wall", intervalSeconds: 30 }, "dashboardIds"]
    ]
    for (const [input, path] of cases) assert.strictEqual(pathOf(input), path, JSON.stringify(input).slice(0, 80))
  })

  it("names the first dashboard id that is not the account's: dashboardIds[i]", () => {
    const mine = new Set(["a", "b"])
    assert.isTrue(Either.isRight(checkDashboardIds(["a", "b", "a"], mine)))
    const refused = checkDashboardIds(["a", "x", "y"], mine)
    assert.isTrue(Either.isLeft(refused) && refused.left.path === "dashboardIds[1]")
  })
})

type Stores = AccountStore | StreamStore | ChangeFeed | DashboardStore

/** The memory store's ports as a context (one state shared by every effect given it). */
const contextOf = (stores: MemoryStore.MemoryStores): Context.Context<Stores> =>
  Context.make(AccountStore, stores.accountStore).pipe(
    Context.add(StreamStore, stores.streamStore),
    Context.add(DashboardStore, stores.dashboardStore),
    Context.add(ChangeFeed, stores.changeFeed)
  )

const put = (n: number) => ({ _tag: "Put" as const, entries: [{ point: { number: n } }] })

/** An account with three widgets and dashboards A (shared, onlyA) and B (onlyB, shared). */
const setup = Effect.gen(function* () {
  const account = yield* UseCases.createAccount("acme")
  for (const [name, type] of [
    ["shared", "number"],
    ["onlyA", "label"],
    ["onlyB", "sparkline"]
  ] as const) {
    yield* UseCases.createWidget(account.id, name, type)
  }
  const tile = (streamName: string, y: number) => ({ streamName: StreamName.make(streamName), x: 0, y, w: 12, h: 1 })
  const a = yield* Dashboards.createDashboard(account.id, { name: "A", tiles: [tile("shared", 0), tile("onlyA", 1)] })
  const b = yield* Dashboards.createDashboard(account.id, { name: "B", tiles: [tile("onlyB", 0), tile("shared", 1)] })
  return { account, a: a.id, b: b.id }
})

const provided = <A, E>(effect: Effect.Effect<A, E, Stores>) => Effect.provide(effect, MemoryStore.layer)

describe("rotation use cases", () => {
  it.effect("create checks the account's dashboards; the token opens the rotation and nothing else", () =>
    provided(
      Effect.gen(function* () {
        const { account, a, b } = yield* setup
        const other = yield* UseCases.createAccount("other")
        const theirs = yield* Dashboards.createDashboard(other.id, { name: "T", tiles: [] })
        const refused = yield* Effect.flip(
          Rotations.createRotation(account.id, { ...body, dashboardIds: [a, theirs.id] })
        )
        assert.strictEqual(refused._tag, "InvalidRequest")
        assert.strictEqual(refused._tag === "InvalidRequest" && refused.path, "dashboardIds[1]")
        const unknown = yield* Effect.flip(Rotations.createRotation("nope", body))
        assert.strictEqual(unknown._tag, "AccountNotFound")
        assert.deepStrictEqual(yield* Rotations.views.list(account.id), [])

        const rotation = yield* Rotations.createRotation(account.id, {
          ...body,
          dashboardIds: [b, a, b]
        })
        const { viewToken } = rotation
        const view = yield* Rotations.resolveRotationView(viewToken)
        assert.deepStrictEqual(view.rotation, rotation)
        // Each distinct dashboard once, in the order of its first place.
        assert.deepStrictEqual(
          view.dashboards.map((d) => d.dashboard.name),
          ["B", "A"]
        )
        assert.strictEqual((yield* Effect.flip(Dashboards.resolveView(viewToken)))._tag, "DashboardNotFound")
        assert.strictEqual((yield* Effect.flip(Rotations.resolveRotationView("")))._tag, "RotationNotFound")

        const next = yield* Rotations.views.rotateToken(account.id, rotation.id)
        assert.strictEqual((yield* Effect.flip(Rotations.resolveRotationView(viewToken)))._tag, "RotationNotFound")
        assert.deepStrictEqual((yield* Rotations.resolveRotationView(next.viewToken)).rotation, next)
        assert.deepStrictEqual(next, { ...rotation, viewToken: next.viewToken })
        // Every answer shows the current share link again, under the base path when one is given.
        assert.deepStrictEqual(yield* Rotations.views.get(account.id, rotation.id), next)
        assert.strictEqual(Rotations.rotationView(next).url, `/r/${next.viewToken}`)
        assert.strictEqual(Rotations.rotationView(next, "/ds").url, `/ds/r/${next.viewToken}`)
        assert.deepStrictEqual(Rotations.rotationView({ ...next, viewToken: null }).url, null)

        // A deleted dashboard leaves it.
        yield* Dashboards.views.delete(account.id, b)
        assert.deepStrictEqual((yield* Rotations.views.get(account.id, rotation.id)).dashboardIds, [a])
        yield* Rotations.views.delete(account.id, rotation.id)
        assert.strictEqual((yield* Effect.flip(Rotations.views.get(account.id, rotation.id)))._tag, "RotationNotFound")
        assert.strictEqual((yield* Effect.flip(Rotations.resolveRotationView(next.viewToken)))._tag, "RotationNotFound")
      })
    )
  )
})

/** A sink that records each event as `<kind> <data>` (the layout event as `rotation`), without `live` notices. */
const recorder = () =>
  recordEvents({
    layoutName: "rotation",
    kinds: ["snapshot", "entry", "clear", "deleted", "layout", "failed", "overflowed"]
  })

describe("a rotation's one event stream", () => {
  it.live("follows the union of its dashboards' streams once each; events name the dashboards showing them", () =>
    Effect.gen(function* () {
      const stores = yield* MemoryStore.make
      const layer = Layer.succeedContext(contextOf(stores))
      const { account, a, b, viewToken, rotationId } = yield* Effect.provide(
        Effect.gen(function* () {
          const s = yield* setup
          const made = yield* Rotations.createRotation(s.account.id, { ...body, dashboardIds: [s.a, s.b] })
          return { ...s, viewToken: made.viewToken, rotationId: made.id }
        }),
        layer
      )
      const runtime = yield* Effect.provide(Effect.runtime<StreamStore | ChangeFeed>(), layer)
      const layout = Rotations.rotationLayout(yield* Effect.provide(Rotations.resolveRotationView(viewToken), layer))
      const data = JSON.parse(layout.data) as {
        rotation: { dashboardIds: Array<string> }
        dashboards: Array<{ id: string }>
      }
      assert.deepStrictEqual(data.rotation.dashboardIds, [a, b])
      assert.deepStrictEqual(
        data.dashboards.map((d) => d.id),
        [a, b]
      )
      const { sink, events } = recorder()
      const follower = followDashboard(layout, runtime, sink, { maxHeldBytes: 1 << 20 })
      yield* follower.idle
      assert.strictEqual(events.length, 1)
      assert.deepStrictEqual(Object.keys(JSON.parse(events[0]!.slice("snapshot ".length)).tiles), [
        "shared",
        "onlyA",
        "onlyB"
      ])
      const widgets = yield* stores.accountStore.findWidgets(account.id, ["shared", "onlyB"])
      yield* stores.streamStore.write(
        [{ widget: widgets.get("shared")!, op: put(5), path: "point" }],
        micros(1_700_000_000_000_100)
      )
      yield* stores.streamStore.write(
        [{ widget: widgets.get("onlyB")!, op: put(6), path: "point" }],
        micros(1_700_000_000_000_200)
      )
      yield* Effect.sleep("10 millis")
      const entries = events.slice(1).map((e) => JSON.parse(e.slice("entry ".length)))
      assert.deepStrictEqual(
        entries.map((e) => [e.streamName, e.dashboardId, e.dashboardIds]),
        [
          ["shared", a, [a, b]],
          ["onlyB", b, [b]]
        ]
      )

      // An edit: B only. The shared stream now names B alone; onlyA stops; a rotation event comes first.
      yield* Effect.provide(Rotations.updateRotation(account.id, rotationId, { ...body, dashboardIds: [b] }), layer)
      follower.relayout(
        Rotations.rotationLayout(yield* Effect.provide(Rotations.resolveRotationView(viewToken), layer))
      )
      yield* follower.idle
      const at = events.findIndex((e) => e.startsWith("rotation "))
      assert.isAbove(at, 0)
      assert.deepStrictEqual(JSON.parse(events[at]!.slice("rotation ".length)).rotation.dashboardIds, [b])
      yield* stores.streamStore.write(
        [{ widget: widgets.get("shared")!, op: put(7), path: "point" }],
        micros(1_700_000_000_000_300)
      )
      yield* Effect.sleep("10 millis")
      const last = JSON.parse(events.at(-1)!.slice("entry ".length))
      assert.deepStrictEqual([last.streamName, last.dashboardId, last.dashboardIds], ["shared", b, [b]])
      follower.close()
    })
  )
})
