import { assert, describe, it } from "@effect/vitest"
import { type Context, Effect, type Layer, Option } from "effect"
import { type Account, digestAccessKey, newAccessKey, newAccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import type { ChangeFeed } from "../ChangeFeed.js"
import { DashboardStore } from "../DashboardStore.js"
import type { SharedView, ViewStorage } from "../SharedView.js"
import type { StreamStore } from "../StreamStore.js"
import { digestViewToken, newViewToken } from "../ViewToken.js"

/**
 * The contract every kind of shared view's storage keeps (docs/api.md sections 11 and 15, `ViewStorage`): views
 * round-trip with their share link, are found only in their account and by their current token, a new token replaces
 * the old one (and is shown from then on), delete ends the view and its token. `dashboardSuite` and `rotationSuite`
 * run it for their kind, so every adapter is held to it for both; a new kind of shared view runs it with its own
 * {@link ViewKindFixture}.
 */

/** The ports a shared view suite may use. */
export type ViewSuiteStores = AccountStore | StreamStore | DashboardStore | ChangeFeed

/** A time well inside the valid range (2023-11-14T22:13:20Z), in microseconds. */
export const T0 = 1_700_000_000_000_000

/** A new account with an access key, stored. */
export const newAccount = (name = "test") =>
  Effect.gen(function* () {
    const store = yield* AccountStore
    const account: Account = { id: newAccountId(), name, createdAt: T0 }
    yield* store.createAccount(account, digestAccessKey(newAccessKey()))
    return account
  })

/** What the suite needs to know of one kind of shared view. */
export interface ViewKindFixture<A extends SharedView, Change> {
  /** The kind's noun, in test titles. */
  readonly noun: string
  /** The kind's storage in the port. */
  readonly storage: (store: Context.Tag.Service<DashboardStore>) => ViewStorage<A, Change>
  /** A view of `account` (not stored yet), storing what it refers to first (a rotation's dashboards). */
  readonly make: (
    account: Account,
    name: string,
    createdAt: number,
    viewToken: string
  ) => Effect.Effect<A, unknown, ViewSuiteStores>
  /** A change of every field `update` replaces, different from what `make` gives (it may store what it refers to). */
  readonly change: (account: Account) => Effect.Effect<Change, unknown, ViewSuiteStores>
}

/**
 * What a kind's own cases (and the shared ones) use, for one kind and layer: `test` registers a case run on a fresh
 * store from `makeLayer`; `storage` is the kind's storage; `create` stores a view with its own `viewToken` and returns
 * it; `byToken` is the view a token finds, `null` when none (Options are compared through `getOrNull`: chai's deep
 * equality sees `Option.some(x)` and `Option.none()` as equal); `roundTrips` asserts that `get`, `list` (of an account
 * with no other view) and the view's token each give the view back as stored.
 */
export const viewSuiteKit = <A extends SharedView, Change>(
  kind: Pick<ViewKindFixture<A, Change>, "storage">,
  makeLayer: () => Layer.Layer<ViewSuiteStores, unknown>
) => {
  const storage = Effect.map(DashboardStore, kind.storage)
  const token = (view: { readonly viewToken: string | null }) =>
    view.viewToken ?? assert.fail("a stored view shows its token")
  const byToken = (viewToken: string) =>
    Effect.map(
      Effect.flatMap(storage, (s) => s.findByViewToken(digestViewToken(viewToken))),
      Option.getOrNull
    )
  return {
    storage,
    token,
    byToken,
    test: (title: string, body: Effect.Effect<unknown, unknown, ViewSuiteStores>) =>
      it.effect(title, () => Effect.provide(body, makeLayer())),
    create: (view: A) =>
      Effect.as(
        Effect.flatMap(storage, (s) => s.create(view, digestViewToken(token(view)))),
        view
      ),
    roundTrips: (view: A) =>
      Effect.gen(function* () {
        const store = yield* storage
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(view.accountId, view.id)), view)
        assert.deepStrictEqual(yield* store.list(view.accountId), [view])
        assert.deepStrictEqual(yield* byToken(token(view)), view)
      })
  }
}

/**
 * Registers the suite under `describe("<noun> as a shared view: <name>")`. `makeLayer` is called once per test and must
 * give a fresh, empty, migrated store each time. Returns the {@link viewSuiteKit} of the kind, for its own cases.
 */
export const sharedViewSuite = <A extends SharedView, Change>(
  kind: ViewKindFixture<A, Change>,
  name: string,
  makeLayer: () => Layer.Layer<ViewSuiteStores, unknown>
): ReturnType<typeof viewSuiteKit<A, Change>> => {
  const kit = viewSuiteKit(kind, makeLayer)
  describe(`${kind.noun} as a shared view: ${name}`, () => {
    const { byToken, create, roundTrips, storage, test, token } = kit
    /** Makes and stores a view with a fresh view token. */
    const stored = (account: Account, name: string, createdAt = T0) =>
      Effect.flatMap(kind.make(account, name, createdAt, newViewToken()), create)

    test(
      "create, then get, list and find by view token return it as given, its view token shown again",
      Effect.gen(function* () {
        const account = yield* newAccount()
        const view = yield* stored(account, "Wall \u00e9cran \u{1F600}")
        assert.match(token(view), /^dv_[A-Za-z0-9_-]{43}$/)
        yield* roundTrips(view)
      })
    )

    test(
      "list: the account's views only, oldest first; [] for an account without any and for an unknown one",
      Effect.gen(function* () {
        const store = yield* storage
        const a = yield* newAccount()
        const b = yield* newAccount()
        const second = yield* stored(a, "second", T0 + 2)
        const first = yield* stored(a, "first", T0 + 1)
        const third = yield* stored(a, "third", T0 + 3)
        yield* stored(b, "other")
        assert.deepStrictEqual(yield* store.list(a.id), [first, second, third])
        assert.deepStrictEqual(yield* store.list((yield* newAccount()).id), [])
        assert.deepStrictEqual(yield* store.list(newAccountId()), [])
      })
    )

    test(
      "create for an unknown account fails with AccountNotFound and stores nothing",
      Effect.gen(function* () {
        const owner = yield* newAccount()
        const ghost: Account = { id: newAccountId(), name: "", createdAt: T0 }
        const viewToken = newViewToken()
        const view = { ...(yield* kind.make(owner, "v", T0, viewToken)), accountId: ghost.id }
        const error = yield* Effect.flip(Effect.flatMap(storage, (s) => s.create(view, digestViewToken(viewToken))))
        assert.strictEqual(error._tag, "AccountNotFound")
        assert.strictEqual(yield* byToken(viewToken), null)
        assert.deepStrictEqual(yield* Effect.flatMap(storage, (s) => s.list(ghost.id)), [])
      })
    )

    test(
      "another account's id finds nothing: get, update, delete and a new token leave the view as it was",
      Effect.gen(function* () {
        const store = yield* storage
        const owner = yield* newAccount()
        const other = yield* newAccount()
        const view = yield* stored(owner, "v")
        const change = yield* kind.change(owner)
        assert.strictEqual(Option.getOrNull(yield* store.get(other.id, view.id)), null)
        assert.strictEqual(Option.getOrNull(yield* store.update(other.id, view.id, change)), null)
        const fresh = newViewToken()
        assert.strictEqual(
          Option.getOrNull(yield* store.setViewToken(other.id, view.id, fresh, digestViewToken(fresh))),
          null
        )
        assert.isFalse(yield* store.delete(other.id, view.id))
        assert.deepStrictEqual(yield* byToken(token(view)), view)
        assert.strictEqual(yield* byToken(fresh), null)
      })
    )

    test(
      "update replaces what the change names; id, createdAt and the view token stay",
      Effect.gen(function* () {
        const store = yield* storage
        const account = yield* newAccount()
        const view = yield* stored(account, "old")
        const change = yield* kind.change(account)
        const expected = { ...view, ...change }
        assert.deepStrictEqual(Option.getOrNull(yield* store.update(account.id, view.id, change)), expected)
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(account.id, view.id)), expected)
        assert.deepStrictEqual(yield* byToken(token(view)), expected)
        const unknown = { ...view, id: (yield* kind.make(account, "x", T0, newViewToken())).id }
        assert.strictEqual(Option.getOrNull(yield* store.update(account.id, unknown.id, change)), null)
      })
    )

    test(
      "setViewToken: the new token finds the view and is shown from then on, the old one finds nothing",
      Effect.gen(function* () {
        const store = yield* storage
        const account = yield* newAccount()
        const view = yield* stored(account, "v")
        const neighbour = yield* stored(account, "n", T0 + 1)
        const fresh = newViewToken()
        const renewed = { ...view, viewToken: fresh }
        assert.deepStrictEqual(
          Option.getOrNull(yield* store.setViewToken(account.id, view.id, fresh, digestViewToken(fresh))),
          renewed
        )
        assert.strictEqual(yield* byToken(token(view)), null)
        assert.deepStrictEqual(yield* byToken(fresh), renewed)
        assert.deepStrictEqual(Option.getOrNull(yield* store.get(account.id, view.id)), renewed)
        assert.deepStrictEqual(yield* store.list(account.id), [renewed, neighbour])
        assert.deepStrictEqual(yield* byToken(token(neighbour)), neighbour)
      })
    )

    test(
      "delete: true once, then false; the view and its token are gone, others stay",
      Effect.gen(function* () {
        const store = yield* storage
        const account = yield* newAccount()
        const view = yield* stored(account, "v")
        const kept = yield* stored(account, "kept", T0 + 1)
        assert.isTrue(yield* store.delete(account.id, view.id))
        assert.isFalse(yield* store.delete(account.id, view.id))
        assert.strictEqual(Option.getOrNull(yield* store.get(account.id, view.id)), null)
        assert.strictEqual(yield* byToken(token(view)), null)
        assert.deepStrictEqual(yield* store.list(account.id), [kept])
      })
    )

    test(
      "an unknown view token finds nothing",
      Effect.gen(function* () {
        assert.strictEqual(yield* byToken(newViewToken()), null)
      })
    )
  })
  return kit
}
