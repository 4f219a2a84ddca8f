import { Effect, Option } from "effect"
import type { AccountId } from "./Account.js"
import {
  type AccountResource,
  type ResourceKind,
  type ResourceStorage,
  requireAccount,
  resourceUseCases
} from "./AccountResource.js"
import type { AccountStore } from "./AccountStore.js"
import type { AccountNotFound, StorageFailure } from "./Errors.js"
import { isoTime, nowMicros } from "./Time.js"
import { digestViewToken, newViewToken, type ViewKind, type ViewTokenDigest, viewUrl } from "./ViewToken.js"

/**
 * Shared views (docs/api.md sections 11 and 15): account resources that anyone holding their view URL can watch in a
 * browser, a page and one event stream, without the account's key. Dashboards (`/d/<viewToken>`) and rotations
 * (`/r/<viewToken>`) are the two kinds. What they share is written here once: the view token (made on create, replaced
 * on rotate, looked up by its digest), the share link every admin answer carries, and the storage shape
 * ({@link ViewStorage}).
 */

/**
 * A shared view as stored. `viewToken` is the current view token, kept so that every admin answer can show the share
 * link again; `null` for a view whose token was made before tokens were kept (only its digest is known: rotating the
 * token gives it a link that can be shown).
 */
export interface SharedView<Id extends string = string> extends AccountResource<Id> {
  readonly viewToken: string | null
}

/**
 * The storage of one kind of shared view: {@link ResourceStorage} (create takes the new token's digest beside the view,
 * whose `viewToken` is that token) plus the token's replacement and lookup. Digests of one kind live in a namespace of
 * their own: a rotation's token never finds a dashboard, nor the reverse.
 */
export interface ViewStorage<A extends SharedView, Change> extends ResourceStorage<
  A,
  Change,
  [digest: ViewTokenDigest]
> {
  /**
   * Replaces the view token (kept as `viewToken`) and its digest in one commit: from then on only the new token finds
   * the view. Returns the view with its new token.
   */
  readonly setViewToken: (
    account: AccountId,
    id: A["id"],
    viewToken: string,
    digest: ViewTokenDigest
  ) => Effect.Effect<Option.Option<A>, StorageFailure>
  /** The view whose current view token has this digest. */
  readonly findByViewToken: (digest: ViewTokenDigest) => Effect.Effect<Option.Option<A>, StorageFailure>
}

/**
 * The share link of a view as the admin API answers it and the CLI prints it (docs/api.md sections 11, 15, 16):
 * `{"viewToken", "url"}`, `url` the view's path under `basePath` (`""` for the root) or, with `baseUrl`, the full
 * URL. Both are `null` for a view whose token cannot be shown (see {@link SharedView}).
 */
export const shareLink = (
  kind: ViewKind,
  view: SharedView,
  basePath = ""
): { readonly viewToken: string | null; readonly url: string | null } => ({
  viewToken: view.viewToken,
  url: view.viewToken === null ? null : viewUrl(basePath, kind, view.viewToken)
})

/**
 * A shared view as the admin API answers it: `{"id", "name", ...fields, "viewToken", "url", "createdAt"}`, `fields` the
 * kind's own (a dashboard's `tiles`), `createdAt` an ISO 8601 UTC time, the share link by {@link shareLink}.
 */
export const sharedViewJson = <F extends object>(kind: ViewKind, view: SharedView, fields: F, basePath = "") => ({
  id: view.id,
  name: view.name,
  ...fields,
  ...shareLink(kind, view, basePath),
  createdAt: isoTime(view.createdAt)
})

/** A view with a token that can be shown: what create and rotate answer. */
export type WithViewToken<A extends SharedView> = A & { readonly viewToken: string }

/** What a new view of any kind starts from: a new id, its account, a new view token and the time it is made. */
export interface NewView<Id extends string> {
  readonly id: Id
  readonly accountId: AccountId
  readonly viewToken: string
  readonly createdAt: number
}

/**
 * What a kind of shared view tells the shared use cases: the account resource's (noun, storage, not-found error) and
 * which page its token opens.
 */
export interface ViewKindOf<A extends SharedView, Change, NotFound, R> extends ResourceKind<
  A,
  Change,
  NotFound,
  R,
  [digest: ViewTokenDigest]
> {
  readonly kind: ViewKind
  readonly storage: Effect.Effect<ViewStorage<A, Change>, never, R>
}

/**
 * The use cases every shared view has, for one kind: those of {@link resourceUseCases}, and
 * - `create`: stores the view `make` builds from a new id, the account id, the creation time and a new view token;
 * - `rotateToken`: gives the view a new view token (the old URL stops working at once);
 * - `findByToken`: the view a token opens, failing with `notFoundByToken` for an unknown or replaced token or a deleted
 *   view (the page answers 404).
 */
export const sharedViewUseCases = <A extends SharedView, Change, NotFound, R>(
  kind: ViewKindOf<A, Change, NotFound, R>,
  newId: () => A["id"]
) => {
  const resources = resourceUseCases(kind)
  const unknownToken = kind.notFound(`no ${kind.noun} has this view token`)
  return {
    ...resources,
    /**
     * Creates a view of the account with a new view token. `checked` checks the body against the account (it is where
     * the account is required) and gives the kind's fields.
     */
    create: <Fields, E, R2>(
      accountId: string,
      checked: Effect.Effect<Fields, E, R2>,
      make: (base: NewView<A["id"]>, fields: Fields) => A
    ): Effect.Effect<WithViewToken<A>, E | AccountNotFound | StorageFailure, R | R2> =>
      Effect.gen(function* () {
        const fields = yield* checked
        const viewToken = newViewToken()
        const view = make({ id: newId(), accountId: accountId as AccountId, viewToken, createdAt: nowMicros() }, fields)
        yield* Effect.flatMap(kind.storage, (store) => store.create(view, digestViewToken(viewToken)))
        return { ...view, viewToken }
      }),
    /** Gives a view a new view token and returns it with the token. Fails with `AccountNotFound` or `NotFound`. */
    rotateToken: (
      accountId: string,
      id: string
    ): Effect.Effect<WithViewToken<A>, AccountNotFound | NotFound | StorageFailure, AccountStore | R> =>
      Effect.gen(function* () {
        yield* requireAccount(accountId)
        const viewToken = newViewToken()
        const store = yield* kind.storage
        const updated = yield* store.setViewToken(
          accountId as AccountId,
          id as A["id"],
          viewToken,
          digestViewToken(viewToken)
        )
        return { ...(yield* resources.found(updated, id)), viewToken }
      }),
    /** The view a token opens. Fails with `NotFound` for an unknown or replaced token, or a deleted view. */
    findByToken: (viewToken: string): Effect.Effect<A, NotFound | StorageFailure, R> =>
      viewToken === ""
        ? Effect.fail(unknownToken)
        : Effect.flatMap(kind.storage, (store) =>
            Effect.flatMap(store.findByViewToken(digestViewToken(viewToken)), (found) =>
              Option.match(found, { onNone: () => Effect.fail(unknownToken), onSome: Effect.succeed })
            )
          )
  }
}
