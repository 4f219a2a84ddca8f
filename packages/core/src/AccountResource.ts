import { randomUUID } from "node:crypto"
import { Effect, Option, Schema } from "effect"
import type { AccountId } from "./Account.js"
import { AccountStore } from "./AccountStore.js"
import { AccountNotFound, type StorageFailure } from "./Errors.js"

/**
 * Account-owned resources: named things of one account that the admin API creates, lists, reads, replaces and deletes
 * (dashboards, docs/api.md section 11; rotations, section 15). The storage shape ({@link ResourceStorage}) and the
 * use cases every such resource shares ({@link resourceUseCases}: the account checked first, an unknown id answered
 * with the resource's own not-found error) are written here once; a resource adds only its body rules and its fields.
 * Shared views (`SharedView.ts`) are account resources with a view token.
 */

/** What every account-owned resource has. `createdAt` in integer microseconds; `id` a UUID made by the server. */
export interface AccountResource<Id extends string = string> {
  readonly id: Id
  readonly accountId: AccountId
  readonly name: string
  readonly createdAt: number
}

/**
 * The schema of a kind's resource ids: a string branded `brand` (`"DashboardId"`), so that one kind's id is never
 * passed for another's. The server makes them ({@link newResourceId}); as clients send them they are any string, and
 * an unknown one is the kind's not-found error.
 */
export const resourceId = <const Brand extends string>(brand: Brand) => Schema.String.pipe(Schema.brand(brand))

/** A new resource id of any kind: a random UUID (version 4), as the server makes ids of accounts and resources. */
export const newResourceId = <Id extends string>(): Id => randomUUID() as Id

/**
 * The storage of one kind of account resource (a part of a port). Every method that takes an account id and a
 * resource id finds the resource only in that account (`None` / `false` otherwise). `Extra` is what `create` needs
 * beside the resource (a shared view's token digest).
 */
export interface ResourceStorage<
  A extends AccountResource,
  Change,
  Extra extends ReadonlyArray<unknown> = readonly []
> {
  /** Stores a new resource. `AccountNotFound` when the account does not exist; nothing is stored then. */
  readonly create: (resource: A, ...extra: Extra) => Effect.Effect<void, AccountNotFound | StorageFailure>
  /** The account's resources, oldest first (by `createdAt`, then id); `[]` also for an unknown account. */
  readonly list: (account: AccountId) => Effect.Effect<ReadonlyArray<A>, StorageFailure>
  /** One resource of the account. */
  readonly get: (account: AccountId, id: A["id"]) => Effect.Effect<Option.Option<A>, StorageFailure>
  /** Replaces what `change` names in one commit; returns the new version (`id`, `createdAt` unchanged). */
  readonly update: (account: AccountId, id: A["id"], change: Change) => Effect.Effect<Option.Option<A>, StorageFailure>
  /** Deletes a resource; `false` when there was none. */
  readonly delete: (account: AccountId, id: A["id"]) => Effect.Effect<boolean, StorageFailure>
}

/** The `AccountNotFound` of an account id, as every admin use case answers it. */
export const accountNotFound = (id: string): AccountNotFound =>
  new AccountNotFound({ message: `no account with id ${JSON.stringify(id)}` })

/**
 * Succeeds when the account exists, else fails with `AccountNotFound` (the admin use cases of account resources check
 * it first, so an unknown account is 404 `account_not_found` whatever else is wrong).
 */
export const requireAccount = (
  accountId: string
): Effect.Effect<void, AccountNotFound | StorageFailure, AccountStore> =>
  Effect.flatMap(AccountStore, (store) =>
    Effect.flatMap(store.getAccount(accountId as AccountId), (found) =>
      Option.isSome(found) ? Effect.void : Effect.fail(accountNotFound(accountId))
    )
  )

/**
 * What a kind of account resource tells the shared use cases: how to reach its storage, the noun its messages use
 * (`"dashboard"`) and its not-found error (docs/api.md: `dashboard_not_found`, `rotation_not_found`).
 */
export interface ResourceKind<A extends AccountResource, Change, NotFound, R, Extra extends ReadonlyArray<unknown>> {
  readonly noun: string
  readonly storage: Effect.Effect<ResourceStorage<A, Change, Extra>, never, R>
  readonly notFound: (message: string) => NotFound
}

/**
 * The use cases every account resource shares, for one kind: `list`, `get`, `update` (with a checked change) and
 * `delete`, each failing with `AccountNotFound` for an unknown account and the kind's not-found error for an id that
 * is not one of the account's; `found` turns a store's `Option` into that error, `notFound` makes it.
 */
export const resourceUseCases = <
  A extends AccountResource,
  Change,
  NotFound,
  R,
  Extra extends ReadonlyArray<unknown> = readonly []
>(
  kind: ResourceKind<A, Change, NotFound, R, Extra>
) => {
  const notFound = (id: string): NotFound =>
    kind.notFound(`no ${kind.noun} with id ${JSON.stringify(id.slice(0, 100))} in this account`)
  const found = <B>(option: Option.Option<B>, id: string): Effect.Effect<B, NotFound> =>
    Option.match(option, { onNone: () => Effect.fail(notFound(id)), onSome: Effect.succeed })
  type Failure = AccountNotFound | StorageFailure
  return {
    notFound,
    found,
    /** The account's resources, oldest first. Fails with `AccountNotFound`. */
    list: (accountId: string): Effect.Effect<ReadonlyArray<A>, Failure, AccountStore | R> =>
      Effect.zipRight(
        requireAccount(accountId),
        Effect.flatMap(kind.storage, (store) => store.list(accountId as AccountId))
      ),
    /** One resource. Fails with `AccountNotFound` or the kind's not-found error. */
    get: (accountId: string, id: string): Effect.Effect<A, Failure | NotFound, AccountStore | R> =>
      Effect.zipRight(
        requireAccount(accountId),
        Effect.flatMap(kind.storage, (store) =>
          Effect.flatMap(store.get(accountId as AccountId, id as A["id"]), (a) => found(a, id))
        )
      ),
    /**
     * Replaces a resource with the change `checked` gives (it checks the body against the account, and is where the
     * account is required) and returns the new version.
     */
    update: <E, R2>(
      accountId: string,
      id: string,
      checked: Effect.Effect<Change, E, R2>
    ): Effect.Effect<A, Failure | NotFound | E, R | R2> =>
      Effect.gen(function* () {
        const change = yield* checked
        const store = yield* kind.storage
        return yield* found(yield* store.update(accountId as AccountId, id as A["id"], change), id)
      }),
    /** Deletes a resource. Fails with `AccountNotFound` or the kind's not-found error. */
    delete: (accountId: string, id: string): Effect.Effect<void, Failure | NotFound, AccountStore | R> =>
      Effect.gen(function* () {
        yield* requireAccount(accountId)
        const store = yield* kind.storage
        if (!(yield* store.delete(accountId as AccountId, id as A["id"]))) return yield* Effect.fail(notFound(id))
      })
  }
}
