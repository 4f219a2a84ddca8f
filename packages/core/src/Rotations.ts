import { Effect } from "effect"
import type { AccountId } from "./Account.js"
import { requireAccount } from "./AccountResource.js"
import { AccountStore } from "./AccountStore.js"
import type { Dashboard } from "./Dashboard.js"
import { dashboardFeeds, layoutTile, type ResolvedDashboard, resolveDashboards, viewLayout } from "./Dashboards.js"
import { DashboardStore } from "./DashboardStore.js"
import { type AccountNotFound, type InvalidRequest, RotationNotFound, type StorageFailure } from "./Errors.js"
import type { DashboardFeed, DashboardLayout } from "./FollowDashboard.js"
import { checkDashboardIds, newRotationId, type Rotation, type RotationBody } from "./Rotation.js"
import { sharedViewJson, sharedViewUseCases, type WithViewToken } from "./SharedView.js"

/**
 * The use cases of rotations (docs/api.md section 15): what the admin API, the CLI and the rotation page call. A
 * rotation is a shared view (`SharedView.ts`): listing, reading, deleting and replacing its view token are the ones
 * every shared view has ({@link views}: `list`, `get`, `delete`, `rotateToken`, each failing with `AccountNotFound` or
 * `RotationNotFound`; a new token makes the old view URL stop working at once). Bodies arrive decoded (`RotationBody`: name, interval and the count of
 * dashboards are in its schema); these check what needs storage (the account, its dashboards).
 */

/** The shared view use cases of rotations; an unknown id is `RotationNotFound` (404 `rotation_not_found`). */
export const views = sharedViewUseCases(
  {
    kind: "rotation",
    noun: "rotation",
    storage: Effect.map(DashboardStore, (store) => store.rotations),
    notFound: (message) => new RotationNotFound({ message })
  },
  newRotationId
)

/** The body checked against the account's dashboards (`InvalidRequest`, path `dashboardIds[i]`): the change it makes. */
const checked = (accountId: string, body: RotationBody) =>
  Effect.gen(function* () {
    yield* requireAccount(accountId)
    const dashboards = yield* Effect.flatMap(DashboardStore, (store) => store.dashboards.list(accountId as AccountId))
    const dashboardIds = yield* checkDashboardIds(body.dashboardIds, new Set(dashboards.map((d) => d.id)))
    return { name: body.name, dashboardIds, intervalSeconds: body.intervalSeconds }
  })

/**
 * Creates a rotation with a new view token (docs/api.md section 15). Fails with `AccountNotFound`, or `InvalidRequest`
 * (path `dashboardIds[i]`) when an id is not one of the account's dashboards.
 */
export const createRotation = (
  accountId: string,
  body: RotationBody
): Effect.Effect<
  WithViewToken<Rotation>,
  AccountNotFound | InvalidRequest | StorageFailure,
  AccountStore | DashboardStore
> => views.create(accountId, checked(accountId, body), (base, change) => ({ ...base, ...change }))

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
> => views.update(accountId, rotationId, checked(accountId, body))

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
    const rotation = yield* views.findByToken(viewToken)
    const store = yield* DashboardStore
    const all = rotation.dashboardIds.length === 0 ? [] : yield* store.dashboards.list(rotation.accountId)
    const byId = new Map<string, Dashboard>(all.map((d) => [d.id, d]))
    const shown: Array<Dashboard> = []
    const seen = new Set<string>()
    for (const id of rotation.dashboardIds) {
      const dashboard = byId.get(id)
      if (dashboard === undefined || seen.has(id)) continue
      seen.add(id)
      shown.push(dashboard)
    }
    return { rotation, viewToken, dashboards: yield* resolveDashboards(rotation.accountId, shown) }
  })

/**
 * A rotation as the admin API shows it and its `rotation` event carries it (docs/api.md section 15):
 * `{"id","name","dashboardIds","intervalSeconds","viewToken","url","createdAt"}`, `createdAt` an ISO 8601 UTC time;
 * `url` carries `basePath`, the `serve --base-path` prefix (docs/api.md section 16; `""` for the root). `viewToken` and
 * `url` are `null` for a rotation whose token was made before tokens were kept (see `shareLink`).
 */
export const rotationView = (rotation: Rotation, basePath = "") =>
  sharedViewJson(
    "rotation",
    rotation,
    { dashboardIds: rotation.dashboardIds, intervalSeconds: rotation.intervalSeconds },
    basePath
  )

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
  const data = {
    rotation: rotationView({ ...rotation, viewToken: resolved.viewToken }),
    dashboards: resolved.dashboards.map(({ dashboard, tiles }) => ({
      id: dashboard.id,
      name: dashboard.name,
      tiles: tiles.map(layoutTile)
    }))
  }
  return viewLayout(key, data, feeds)
}
