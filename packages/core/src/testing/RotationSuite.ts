import { assert, describe } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { type Account, type AccountId, newAccountId } from "../Account.js"
import { type Dashboard, type DashboardId, newDashboardId } from "../Dashboard.js"
import { DashboardStore } from "../DashboardStore.js"
import { newRotationId, type Rotation, type RotationChange } from "../Rotation.js"
import { StreamName } from "../StreamName.js"
import { digestViewToken, newViewToken } from "../ViewToken.js"
import { newAccount, sharedViewSuite, T0, type ViewKindFixture, type ViewSuiteStores } from "./SharedViewSuite.js"

/**
 * The contract suite of rotations' storage (docs/api.md section 15, `DashboardStore.rotations`): the shared view
 * contract (`sharedViewSuite`) and what is a rotation's own. Each adapter's test file calls {@link rotationSuite} with
 * its layer, so memory, SQLite and PostgreSQL are held to the same behaviour: rotations round-trip with their
 * dashboards in order, their tokens find no dashboard, and a deleted dashboard leaves every rotation.
 */

type Stores = ViewSuiteStores

const newDashboard = (account: Account, name: string) =>
  Effect.gen(function* () {
    const viewToken = newViewToken()
    const dashboard: Dashboard = {
      id: newDashboardId(),
      accountId: account.id,
      name,
      tiles: [{ streamName: StreamName.make("s"), x: 0, y: 0, w: 2, h: 2 }],
      viewToken,
      createdAt: T0
    }
    yield* Effect.flatMap(DashboardStore, (s) => s.dashboards.create(dashboard, digestViewToken(viewToken)))
    return dashboard
  })

const rotationOf = (
  accountId: AccountId,
  name: string,
  dashboardIds: ReadonlyArray<DashboardId>,
  createdAt = T0,
  viewToken = newViewToken()
): Rotation => ({ id: newRotationId(), accountId, name, dashboardIds, intervalSeconds: 30, viewToken, createdAt })

/** Rotations as a kind of shared view (`sharedViewSuite`). */
const rotationKind: ViewKindFixture<Rotation, RotationChange> = {
  noun: "rotation",
  storage: (store) => store.rotations,
  make: (account, name, createdAt, viewToken) =>
    Effect.map(newDashboard(account, "A"), (a) => rotationOf(account.id, name, [a.id, a.id], createdAt, viewToken)),
  change: (account) =>
    Effect.map(newDashboard(account, "B"), (b) => ({ name: "new", dashboardIds: [b.id], intervalSeconds: 3600 }))
}

/**
 * Registers the suite under `describe("rotation contract: <name>")`. `makeLayer` is called once per test and must
 * give a fresh, empty, migrated store each time.
 */
export const rotationSuite = (name: string, makeLayer: () => Layer.Layer<Stores, unknown>): void => {
  const { byToken, create: stored, roundTrips, test, token } = sharedViewSuite(rotationKind, name, makeLayer)
  describe(`rotation contract: ${name}`, () => {
    test(
      "create, then get, list and find by view token return it with its dashboards in order (repeats kept)",
      Effect.gen(function* () {
        const account = yield* newAccount()
        const a = yield* newDashboard(account, "A")
        const b = yield* newDashboard(account, "B")
        yield* roundTrips(yield* stored(rotationOf(account.id, "Wall \u00e9cran", [b.id, a.id, b.id])))
      })
    )

    test(
      "a rotation with no dashboards round-trips; rotations are listed oldest first",
      Effect.gen(function* () {
        const store = (yield* DashboardStore).rotations
        const account = yield* newAccount()
        const later = yield* stored(rotationOf(account.id, "later", [], T0 + 5))
        const first = yield* stored(rotationOf(account.id, "first", [], T0))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(account.id, first.id)), first)
        assert.deepStrictEqual(yield* store.list(account.id), [first, later])
        assert.deepStrictEqual(yield* store.list(newAccountId()), [])
      })
    )

    test(
      "update may empty a rotation's dashboards; the view token stays",
      Effect.gen(function* () {
        const store = (yield* DashboardStore).rotations
        const account = yield* newAccount()
        const a = yield* newDashboard(account, "A")
        const rotation = yield* stored(rotationOf(account.id, "r", [a.id, a.id]))
        const expected: Rotation = { ...rotation, dashboardIds: [], intervalSeconds: 5 }
        yield* store.update(account.id, rotation.id, { name: "r", dashboardIds: [], intervalSeconds: 5 })
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(account.id, rotation.id)), expected)
        assert.deepStrictEqual(yield* byToken(token(rotation)), expected)
      })
    )

    test(
      "a rotation's token finds no dashboard, and a dashboard's token no rotation",
      Effect.gen(function* () {
        const store = yield* DashboardStore
        const account = yield* newAccount()
        const dashboard = yield* newDashboard(account, "d")
        const rotation = yield* stored(rotationOf(account.id, "r", [dashboard.id]))
        assert.isTrue(Option.isNone(yield* store.dashboards.findByViewToken(digestViewToken(token(rotation)))))
        assert.isNull(yield* byToken(token(dashboard)))
      })
    )

    test(
      "a deleted dashboard leaves every rotation's dashboardIds (every place it held), the others keep their order",
      Effect.gen(function* () {
        const store = (yield* DashboardStore).rotations
        const account = yield* newAccount()
        const a = yield* newDashboard(account, "A")
        const b = yield* newDashboard(account, "B")
        const c = yield* newDashboard(account, "C")
        const one = yield* stored(rotationOf(account.id, "one", [a.id, b.id, c.id, b.id]))
        const two = yield* stored(rotationOf(account.id, "two", [b.id]))
        const three = yield* stored(rotationOf(account.id, "three", [c.id, a.id]))
        assert.isTrue(yield* Effect.flatMap(DashboardStore, (s) => s.dashboards.delete(account.id, b.id)))
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(account.id, one.id))?.dashboardIds, [a.id, c.id])
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(account.id, two.id))?.dashboardIds, [])
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(account.id, three.id))?.dashboardIds, [c.id, a.id])
        assert.deepStrictEqual((yield* byToken(token(one)))?.dashboardIds, [a.id, c.id])
      })
    )
  })
}
