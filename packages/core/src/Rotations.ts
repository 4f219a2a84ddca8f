import { createHash } from "node:crypto"
import { Effect, Option } from "effect"
import type { AccountId } from "./Account.js"
import { AccountStore } from "./AccountStore.js"
import type { Dashboard } from "./Dashboard.js"
import { dashboardFeeds, requireAccount, type ResolvedDashboard } from "./Dashboards.js"
import { DashboardStore } from "./DashboardStore.js"
import { AccountNotFound, type InvalidRequest, RotationNotFound, type StorageFailure } from "./Errors.js"
import type { DashboardFeed, DashboardLayout } from "./FollowDashboard.js"
import { checkDashboardIds, newRotationId, type Rotation, type RotationBody, type RotationId } from "./Rotation.js"
import { isoTime, nowMicros } from "./Time.js"
import { digestViewToken, newViewToken, viewUrl } from "./ViewToken.js"

/**
 * The use cases of rotations (docs/api.md section 15): what the admin API, the CLI and the rotation page call. Bodies
 * arrive decoded (`RotationBody`: name, interval and the count of dashboards are in its schema); these check what
 * needs storage (the account, its dashboards) and keep view tokens secret, as `Dashboards` does: a token is returned
 * only by the call that makes it (create, rotate), the store keeps its SHA-256 digest.
 */

/** A rotation with the view token just made for it (shown only by create and rotate). */
export interface RotationWithToken {
  readonly rotation: Rotation
  readonly viewToken: string
}

const rotationNotFound = (id: string) =>
  new RotationNotFound({ message: `no rotation with id ${JSON.stringify(id.slice(0, 100))} in this account` })

const found = <A>(option: Option.Option<A>, id: string): Effect.Effect<A, RotationNotFound> =>
  Option.match(option, { onNone: () => Effect.fail(rotationNotFound(id)), onSome: Effect.succeed })

/** The body's dashboard ids, checked against the account's dashboards (`InvalidRequest`, path `dashboardIds[i]`). */
const accountDashboards = (accountId: string, body: RotationBody) =>
  Effect.gen(function* () {
    yield* requireAccount(accountId)
    const dashboards = yield* Effect.flatMap(DashboardStore, (store) => store.list(accountId as AccountId))
    return yield* checkDashboardIds(body.dashboardIds, new Set(dashboards.map((d) => d.id)))
  })

/**
 * Creates a rotation with a new view token (docs/api.md section 15). Fails with `AccountNotFound`, or `InvalidRequest`
 * (path `dashboardIds[i]`) when an id is not one of the account's dashboards.
 */
export const createRotation = (
  accountId: string,
  body: RotationBody
): Effect.Effect<RotationWithToken, AccountNotFound | InvalidRequest | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    const dashboardIds = yield* accountDashboards(accountId, body)
    const rotation: Rotation = {
      id: newRotationId(),
      accountId: accountId as AccountId,
      name: body.name,
      dashboardIds,
      intervalSeconds: body.intervalSeconds,
      createdAt: nowMicros()
    }
    const viewToken = newViewToken()
    yield* Effect.flatMap(DashboardStore, (store) => store.createRotation(rotation, digestViewToken(viewToken)))
    return { rotation, viewToken }
  })

/** The account's rotations, oldest first. Fails with `AccountNotFound`. */
export const listRotations = (
  accountId: string
): Effect.Effect<ReadonlyArray<Rotation>, AccountNotFound | StorageFailure, AccountStore | DashboardStore> =>
  Effect.zipRight(
    requireAccount(accountId),
    Effect.flatMap(DashboardStore, (store) => store.listRotations(accountId as AccountId))
  )

/** One rotation. Fails with `AccountNotFound` or `RotationNotFound`. */
export const getRotation = (
  accountId: string,
  rotationId: string
): Effect.Effect<Rotation, AccountNotFound | RotationNotFound | StorageFailure, AccountStore | DashboardStore> =>
  Effect.zipRight(
    requireAccount(accountId),
    Effect.flatMap(DashboardStore, (store) =>
      Effect.flatMap(store.getRotation(accountId as AccountId, rotationId as RotationId), (r) => found(r, rotationId))
    )
  )

/**
 * Replaces a rotation's name, dashboards and interval and returns the new version; its view token keeps working, and
 * its open pages follow the change (docs/api.md section 15). Fails with `AccountNotFound`, `RotationNotFound`, or
 * `InvalidRequest` (path `dashboardIds[i]`).
 */
export const updateRotation = (
  accountId: string,
  rotationId: string,
  body: RotationBody
): Effect.Effect<
  Rotation,
  AccountNotFound | RotationNotFound | InvalidRequest | StorageFailure,
  AccountStore | DashboardStore
> =>
  Effect.gen(function* () {
    const dashboardIds = yield* accountDashboards(accountId, body)
    const store = yield* DashboardStore
    const updated = yield* store.updateRotation(accountId as AccountId, rotationId as RotationId, {
      name: body.name,
      dashboardIds,
      intervalSeconds: body.intervalSeconds
    })
    return yield* found(updated, rotationId)
  })

/** Deletes a rotation; its view URL stops working. Fails with `AccountNotFound` or `RotationNotFound`. */
export const deleteRotation = (
  accountId: string,
  rotationId: string
): Effect.Effect<void, AccountNotFound | RotationNotFound | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    yield* requireAccount(accountId)
    const store = yield* DashboardStore
    const deleted = yield* store.deleteRotation(accountId as AccountId, rotationId as RotationId)
    if (!deleted) return yield* rotationNotFound(rotationId)
  })

/**
 * Gives a rotation a new view token and returns it (docs/api.md section 15); the old view URL stops working at once.
 * Fails with `AccountNotFound` or `RotationNotFound`.
 */
export const rotateRotationViewToken = (
  accountId: string,
  rotationId: string
): Effect.Effect<
  RotationWithToken,
  AccountNotFound | RotationNotFound | StorageFailure,
  AccountStore | DashboardStore
> =>
  Effect.gen(function* () {
    yield* requireAccount(accountId)
    const viewToken = newViewToken()
    const store = yield* DashboardStore
    const updated = yield* store.setRotationViewToken(
      accountId as AccountId,
      rotationId as RotationId,
      digestViewToken(viewToken)
    )
    return { rotation: yield* found(updated, rotationId), viewToken }
  })

// ---------------------------------------------------------------------------------------------------------------
// The view: what the rotation page shows
// ---------------------------------------------------------------------------------------------------------------

/**
 * A rotation as its view token shows it: the rotation, the token, and each distinct dashboard it shows (in the order
 * of their first place in `dashboardIds`) with its tiles' widgets looked up now.
 */
export interface ResolvedRotation {
  readonly rotation: Rotation
  readonly viewToken: string
  readonly dashboards: ReadonlyArray<ResolvedDashboard>
}

const unknownViewToken = new RotationNotFound({ message: "no rotation has this view token" })

/**
 * The rotation of a view token (docs/api.md section 15, `GET /r/<viewToken>`) with its dashboards and each tile's widget
 * looked up now (one read of the account's dashboards, one of the widgets of every stream they show). Fails with
 * `RotationNotFound` for an unknown or rotated token, or a deleted rotation (the page answers 404). A dashboard token
 * opens no rotation, and a rotation token no dashboard.
 */
export const resolveRotationView = (
  viewToken: string
): Effect.Effect<ResolvedRotation, RotationNotFound | StorageFailure, AccountStore | DashboardStore> =>
  Effect.gen(function* () {
    if (viewToken === "") return yield* unknownViewToken
    const store = yield* DashboardStore
    const rotation = yield* Effect.flatMap(store.findRotationByViewToken(digestViewToken(viewToken)), (r) =>
      Option.match(r, { onNone: () => Effect.fail(unknownViewToken), onSome: Effect.succeed })
    )
    const all = rotation.dashboardIds.length === 0 ? [] : yield* store.list(rotation.accountId)
    const byId = new Map<string, Dashboard>(all.map((d) => [d.id, d]))
    const shown: Array<Dashboard> = []
    const seen = new Set<string>()
    for (const id of rotation.dashboardIds) {
      const dashboard = byId.get(id)
      if (dashboard === undefined || seen.has(id)) continue
      seen.add(id)
      shown.push(dashboard)
    }
    const names = [...new Set(shown.flatMap((d) => d.tiles.map((t) => t.streamName)))]
    const widgets = names.length === 0 ? new Map() : yield* (yield* AccountStore).findWidgets(rotation.accountId, names)
    return {
      rotation,
      viewToken,
      dashboards: shown.map((dashboard) => ({
        dashboard,
        tiles: dashboard.tiles.map((tile) => ({ tile, widget: widgets.get(tile.streamName) ?? null }))
      }))
    }
  })

/**
 * A rotation as the admin API shows it and its `rotation` event carries it (docs/api.md section 15):
 * `{"id","name","dashboardIds","intervalSeconds","viewToken","url","createdAt"}`, `createdAt` an ISO 8601 UTC time.
 * `viewToken` and `url` are `null` when the token is not at hand (the store keeps only its digest); `url` carries
 * `basePath`, the `serve --base-path` prefix (docs/api.md section 16; `""` for the root), see `viewUrl`.
 */
export const rotationView = (rotation: Rotation, viewToken: string | null = null, basePath = "") => ({
  id: rotation.id,
  name: rotation.name,
  dashboardIds: rotation.dashboardIds,
  intervalSeconds: rotation.intervalSeconds,
  viewToken,
  url: viewToken === null ? null : viewUrl(basePath, "rotation", viewToken),
  createdAt: isoTime(rotation.createdAt)
})

/**
 * What a rotation's event stream follows (see `followDashboard`): the union of its dashboards' feeds (one per
 * distinct stream, each naming the dashboards that show it, in the rotation's order), the data of its `rotation`
 * event (docs/api.md section 15): `{"rotation": <the rotation as the admin API shows it>, "dashboards": [{"id", "name",
 * "tiles": [...]}]}` with each tile as a dashboard's `layout` event shows it (its widget's `type`, `null` when the
 * widget no longer exists), and the key that tells a change of the rotation or of any of its dashboards.
 */
export const rotationLayout = (resolved: ResolvedRotation): DashboardLayout => {
  const { rotation } = resolved
  const key = JSON.stringify({
    name: rotation.name,
    dashboardIds: rotation.dashboardIds,
    intervalSeconds: rotation.intervalSeconds,
    dashboards: resolved.dashboards.map(({ dashboard }) => [dashboard.id, dashboard.name, dashboard.tiles])
  })
  const feeds: Array<DashboardFeed> = []
  for (const view of resolved.dashboards) {
    for (const feed of dashboardFeeds(view)) feeds.push({ ...feed, dashboardIds: [view.dashboard.id] })
  }
  return {
    data: JSON.stringify({
      rotation: rotationView(rotation, resolved.viewToken),
      dashboards: resolved.dashboards.map(({ dashboard, tiles }) => ({
        id: dashboard.id,
        name: dashboard.name,
        tiles: tiles.map(({ tile, widget }) => ({ ...tile, type: widget === null ? null : widget.type }))
      }))
    }),
    key,
    version: createHash("sha256").update(key).digest("base64url").slice(0, 16),
    feeds
  }
}
