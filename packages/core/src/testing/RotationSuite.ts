import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, type Layer, Option } from "effect"
import { type Account, type AccountId, digestAccessKey, newAccessKey, newAccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import { type Dashboard, type DashboardId, newDashboardId } from "../Dashboard.js"
import { DashboardStore } from "../DashboardStore.js"
import { newRotationId, type Rotation } from "../Rotation.js"
import { StreamName } from "../StreamName.js"
import { digestViewToken, newViewToken } from "../ViewToken.js"

/**
 * The contract suite of rotations' storage (docs/api.md section 15, the `RotationStorage` part of `DashboardStore`).
 * Each adapter's test file calls {@link rotationSuite} with its layer, so memory, SQLite and PostgreSQL are held to
 * the same behaviour: rotations round-trip with their dashboards in order, are found only in their account and by
 * their current token, and a deleted dashboard leaves every rotation.
 */

type Stores = AccountStore | DashboardStore

/** A time well inside the valid range (2023-11-14T22:13:20Z), in microseconds. */
const T0 = 1_700_000_000_000_000

const newAccount = () =>
  Effect.gen(function* () {
    const store = yield* AccountStore
    const account: Account = { id: newAccountId(), name: "test", createdAt: T0 }
    yield* store.createAccount(account, digestAccessKey(newAccessKey()))
    return account
  })

const newDashboard = (account: Account, name: string) =>
  Effect.gen(function* () {
    const dashboard: Dashboard = {
      id: newDashboardId(),
      accountId: account.id,
      name,
      tiles: [{ streamName: StreamName.make("s"), x: 0, y: 0, w: 2, h: 2 }],
      createdAt: T0
    }
    yield* Effect.flatMap(DashboardStore, (s) => s.create(dashboard, digestViewToken(newViewToken())))
    return dashboard
  })

const rotationOf = (
  accountId: AccountId,
  name: string,
  dashboardIds: ReadonlyArray<DashboardId>,
  createdAt = T0
): Rotation => ({ id: newRotationId(), accountId, name, dashboardIds, intervalSeconds: 30, createdAt })

/** Stores a rotation with a fresh view token; returns both. */
const stored = (rotation: Rotation) =>
  Effect.gen(function* () {
    const viewToken = newViewToken()
    yield* Effect.flatMap(DashboardStore, (s) => s.createRotation(rotation, digestViewToken(viewToken)))
    return { rotation, viewToken }
  })

// Options are compared through getOrNull: chai's deep equality sees Option.some(x) and Option.none() as equal.
const byToken = (viewToken: string) =>
  Effect.map(
    Effect.flatMap(DashboardStore, (s) => s.findRotationByViewToken(digestViewToken(viewToken))),
    Option.getOrNull
  )

/**
 * Registers the suite under `describe("rotation contract: <name>")`. `makeLayer` is called once per test and must
 * give a fresh, empty, migrated store each time.
 */
export const rotationSuite = (name: string, makeLayer: () => Layer.Layer<Stores, unknown>): void => {
  describe(`rotation contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<unknown, unknown, Stores>) =>
      it.effect(title, () => Effect.provide(body, makeLayer()))

    test(
      "create, then get, list and find by view token return it with its dashboards in order (repeats kept)",
      Effect.gen(function* () {
        const store = yield* DashboardStore
        const account = yield* newAccount()
        const a = yield* newDashboard(account, "A")
        const b = yield* newDashboard(account, "B")
        const { rotation, viewToken } = yield* stored(rotationOf(account.id, "Wall \u00e9cran", [b.id, a.id, b.id]))
        assert.deepStrictEqual(Option.getOrNull(yield* store.getRotation(account.id, rotation.id)), rotation)
        assert.deepStrictEqual(yield* store.listRotations(account.id), [rotation])
        assert.deepStrictEqual(yield* byToken(viewToken), rotation)
      })
    )

    test(
      "a rotation with no dashboards round-trips; rotations are listed oldest first",
      Effect.gen(function* () {
        const store = yield* DashboardStore
        const account = yield* newAccount()
        const later = yield* stored(rotationOf(account.id, "later", [], T0 + 5))
        const first = yield* stored(rotationOf(account.id, "first", [], T0))
        assert.deepStrictEqual(
          Option.getOrNull(yield* store.getRotation(account.id, first.rotation.id)),
          first.rotation
        )
        assert.deepStrictEqual(yield* store.listRotations(account.id), [first.rotation, later.rotation])
        assert.deepStrictEqual(yield* store.listRotations(newAccountId()), [])
      })
    )

    test(
      "create for an unknown account fails with AccountNotFound and stores nothing",
      Effect.gen(function* () {
        const ghost = newAccountId()
        const exit = yield* Effect.exit(stored(rotationOf(ghost, "r", [])))
        assert.isTrue(Exit.isFailure(exit))
        if (Exit.isFailure(exit)) assert.strictEqual(JSON.stringify(exit.cause).includes("AccountNotFound"), true)
        assert.deepStrictEqual(yield* Effect.flatMap(DashboardStore, (s) => s.listRotations(ghost)), [])
      })
    )

    test(
      "update replaces name, dashboards and interval; createdAt and the view token stay",
      Effect.gen(function* () {
        const store = yield* DashboardStore
        const account = yield* newAccount()
        const a = yield* newDashboard(account, "A")
        const b = yield* newDashboard(account, "B")
        const { rotation, viewToken } = yield* stored(rotationOf(account.id, "r", [a.id]))
        const updated = Option.getOrNull(
          yield* store.updateRotation(account.id, rotation.id, {
            name: "r2",
            dashboardIds: [b.id, a.id],
            intervalSeconds: 3600
          })
        )
        const expected: Rotation = { ...rotation, name: "r2", dashboardIds: [b.id, a.id], intervalSeconds: 3600 }
        assert.deepStrictEqual(updated, expected)
        assert.deepStrictEqual(Option.getOrNull(yield* store.getRotation(account.id, rotation.id)), expected)
        assert.deepStrictEqual(yield* byToken(viewToken), expected)
        // Emptied.
        yield* store.updateRotation(account.id, rotation.id, { name: "r2", dashboardIds: [], intervalSeconds: 5 })
        assert.deepStrictEqual(Option.getOrNull(yield* store.getRotation(account.id, rotation.id))?.dashboardIds, [])
      })
    )

    test(
      "another account's id finds nothing: get, update, delete and token rotation leave the rotation as it was",
      Effect.gen(function* () {
        const store = yield* DashboardStore
        const account = yield* newAccount()
        const other = yield* newAccount()
        const { rotation, viewToken } = yield* stored(rotationOf(account.id, "r", []))
        assert.isTrue(Option.isNone(yield* store.getRotation(other.id, rotation.id)))
        assert.isTrue(
          Option.isNone(
            yield* store.updateRotation(other.id, rotation.id, { name: "x", dashboardIds: [], intervalSeconds: 9 })
          )
        )
        assert.isFalse(yield* store.deleteRotation(other.id, rotation.id))
        assert.isTrue(
          Option.isNone(yield* store.setRotationViewToken(other.id, rotation.id, digestViewToken(newViewToken())))
        )
        assert.deepStrictEqual(yield* byToken(viewToken), rotation)
        assert.isTrue(Option.isNone(yield* store.getRotation(account.id, newRotationId())))
      })
    )

    test(
      "a new view token replaces the old one at once; delete ends the rotation and its token",
      Effect.gen(function* () {
        const store = yield* DashboardStore
        const account = yield* newAccount()
        const { rotation, viewToken } = yield* stored(rotationOf(account.id, "r", []))
        const next = newViewToken()
        assert.deepStrictEqual(
          Option.getOrNull(yield* store.setRotationViewToken(account.id, rotation.id, digestViewToken(next))),
          rotation
        )
        assert.isNull(yield* byToken(viewToken))
        assert.deepStrictEqual(yield* byToken(next), rotation)
        assert.isTrue(yield* store.deleteRotation(account.id, rotation.id))
        assert.isFalse(yield* store.deleteRotation(account.id, rotation.id))
        assert.isNull(yield* byToken(next))
        assert.deepStrictEqual(yield* store.listRotations(account.id), [])
      })
    )

    test(
      "a rotation's token finds no dashboard, and a dashboard's token no rotation",
      Effect.gen(function* () {
        const store = yield* DashboardStore
        const account = yield* newAccount()
        const dashboardToken = newViewToken()
        const dashboard: Dashboard = {
          id: newDashboardId(),
          accountId: account.id,
          name: "d",
          tiles: [],
          createdAt: T0
        }
        yield* store.create(dashboard, digestViewToken(dashboardToken))
        const { viewToken } = yield* stored(rotationOf(account.id, "r", [dashboard.id]))
        assert.isTrue(Option.isNone(yield* store.findByViewToken(digestViewToken(viewToken))))
        assert.isNull(yield* byToken(dashboardToken))
      })
    )

    test(
      "a deleted dashboard leaves every rotation's dashboardIds (every place it held), the others keep their order",
      Effect.gen(function* () {
        const store = yield* DashboardStore
        const account = yield* newAccount()
        const a = yield* newDashboard(account, "A")
        const b = yield* newDashboard(account, "B")
        const c = yield* newDashboard(account, "C")
        const one = yield* stored(rotationOf(account.id, "one", [a.id, b.id, c.id, b.id]))
        const two = yield* stored(rotationOf(account.id, "two", [b.id]))
        const three = yield* stored(rotationOf(account.id, "three", [c.id, a.id]))
        assert.isTrue(yield* store.delete(account.id, b.id))
        assert.deepStrictEqual(Option.getOrNull(yield* store.getRotation(account.id, one.rotation.id))?.dashboardIds, [
          a.id,
          c.id
        ])
        assert.deepStrictEqual(
          Option.getOrNull(yield* store.getRotation(account.id, two.rotation.id))?.dashboardIds,
          []
        )
        assert.deepStrictEqual(
          Option.getOrNull(yield* store.getRotation(account.id, three.rotation.id))?.dashboardIds,
          [c.id, a.id]
        )
        assert.deepStrictEqual((yield* byToken(one.viewToken))?.dashboardIds, [a.id, c.id])
      })
    )
  })
}
