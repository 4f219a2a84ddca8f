import { createHash } from "node:crypto"
import { snapshotEntries } from "@dashstream/contract"
import { Effect, Either } from "effect"
import type { AccountId } from "./Account.js"
import { AccountStore } from "./AccountStore.js"
import {
  checkStreams,
  checkTiles,
  type CreateDashboardBody,
  type Dashboard,
  defaultLayout,
  newDashboardId,
  type Tile,
  type UpdateDashboardBody
} from "./Dashboard.js"
import { DashboardStore } from "./DashboardStore.js"
import { type AccountNotFound, DashboardNotFound, InvalidRequest, type StorageFailure } from "./Errors.js"
import type { DashboardFeed, DashboardLayout } from "./FollowDashboard.js"
import { sharedViewJson, sharedViewUseCases, type WithViewToken } from "./SharedView.js"
import type { Widget } from "./Widget.js"
import { widgetKind } from "./WidgetType.js"

/**
 * The use cases of dashboards (docs/api.md section 11): what the admin API, the CLI and the dashboard page call. A
 * dashboard is a shared view (`SharedView.ts`): listing, reading, deleting and replacing its view token are the ones
 * every shared view has ({@link views}: `list`, `get`, `delete`, `rotateToken`, each failing with `AccountNotFound`
 * or `DashboardNotFound`; a new token makes the old view URL stop working at once). Bodies arrive decoded (`CreateDashboardBody`, `UpdateDashboardBody`: the grid
 * rules are in their schemas); these check what needs storage (the account, its widgets).
 */

/** The shared view use cases of dashboards; an unknown id is `DashboardNotFound` (404 `dashboard_not_found`). */
export const views = sharedViewUseCases(
  {
    kind: "dashboard",
    noun: "dashboard",
    storage: Effect.map(DashboardStore, (store) => store.dashboards),
    notFound: (message) => new DashboardNotFound({ message })
  },
  newDashboardId
)

/**
 * A dashboard as the admin API answers and `dashboards create --json` prints it (docs/api.md section 11):
 * `{"id","name","tiles","viewToken","url","createdAt"}`, `createdAt` an ISO 8601 UTC time; `url` carries `basePath`,
 * the `serve --base-path` prefix (docs/api.md section 16; `""` for the root). `viewToken` and `url` are `null` for a
 * dashboard whose token was made before tokens were kept (see `shareLink`).
 */
export const dashboardView = (dashboard: Dashboard, basePath = "") =>
  sharedViewJson("dashboard", dashboard, { tiles: dashboard.tiles }, basePath)

/** The account's widgets in creation order (the order of the default layout). */
const widgetsInCreationOrder = (accountId: string) =>
  Effect.map(
    Effect.flatMap(AccountStore, (store) => store.listWidgets(accountId as AccountId)),
    (widgets) => [...widgets].sort((a, b) => a.createdAt - b.createdAt || a.id - b.id)
  )

/**
 * The default layout of `widgets`, checked by the rules every dashboard's tiles obey (`checkTiles`): an account with
 * more widgets than a dashboard holds tiles gets `InvalidRequest` (path `tiles`) rather than a dashboard that a `PUT`
 * of its own tiles would refuse.
 */
const defaultTiles = (widgets: ReadonlyArray<Widget>): Either.Either<ReadonlyArray<Tile>, InvalidRequest> =>
  Either.mapLeft(
    checkTiles(defaultLayout(widgets)),
    (error) =>
      new InvalidRequest({
        message:
          `without tiles a dashboard gets one tile per widget, and this account has ${widgets.length} widgets: ` +
          `${error.message}; give the tiles to show`,
        path: "tiles"
      })
  )

/**
 * Creates a dashboard with a new view token (docs/api.md section 11). Without `tiles`, one tile per widget of the
 * account in creation order (`defaultLayout`). Fails with `AccountNotFound`, or `InvalidRequest` (path
 * `tiles[i].streamName`) when a tile's stream is not a widget of the account, or (path `tiles`) when the account has
 * more widgets than a dashboard may have tiles and no `tiles` were given.
 */
export const createDashboard = (
  accountId: string,
  body: CreateDashboardBody
): Effect.Effect<
  WithViewToken<Dashboard>,
  AccountNotFound | InvalidRequest | StorageFailure,
  AccountStore | DashboardStore
> =>
  views.create(
    accountId,
    Effect.gen(function* () {
      const widgets = yield* widgetsInCreationOrder(accountId)
      const tiles = body.tiles ?? (yield* defaultTiles(widgets))
      yield* checkStreams(tiles, new Map(widgets.map((w) => [w.streamName, w.type])))
      return tiles
    }),
    (base, tiles) => ({ ...base, name: body.name, tiles })
  )

/**
 * Replaces a dashboard's name and tiles and returns the new version; its view token keeps working. Fails with
 * `AccountNotFound`, `DashboardNotFound`, or `InvalidRequest` (path `tiles[i].streamName`) for a tile whose stream
 * is not a widget of the account.
 */
export const updateDashboard = (
  accountId: string,
  dashboardId: string,
  body: UpdateDashboardBody
): Effect.Effect<
  Dashboard,
  AccountNotFound | DashboardNotFound | InvalidRequest | StorageFailure,
  AccountStore | DashboardStore
> =>
  views.update(
    accountId,
    dashboardId,
    Effect.gen(function* () {
      const widgets = yield* Effect.flatMap(AccountStore, (store) => store.listWidgets(accountId as AccountId))
      yield* checkStreams(body.tiles, new Map(widgets.map((w) => [w.streamName, w.type])))
      return { name: body.name, tiles: body.tiles }
    })
  )

// ---------------------------------------------------------------------------------------------------------------
// The view: what the dashboard page shows
// ---------------------------------------------------------------------------------------------------------------

/**
 * A tile with the widget its stream names now: `widget` is `null` when no widget of the account has that stream
 * name (it was deleted: the page shows the tile as "stream deleted"). A widget created again with the same name is
 * found again, with its new stream.
 */
export interface ResolvedTile {
  readonly tile: Tile
  readonly widget: Widget | null
}

/** A dashboard as its view token shows it: the dashboard and its tiles, each with its widget. */
export interface ResolvedDashboard {
  readonly dashboard: Dashboard
  readonly tiles: ReadonlyArray<ResolvedTile>
}

/**
 * Dashboards of the account with each tile's widget (type and stream) looked up now: one read of the widgets of every
 * stream they show (none when they show none).
 */
export const resolveDashboards = (
  accountId: AccountId,
  dashboards: ReadonlyArray<Dashboard>
): Effect.Effect<Array<ResolvedDashboard>, StorageFailure, AccountStore> =>
  Effect.gen(function* () {
    const names = [...new Set(dashboards.flatMap((d) => d.tiles.map((t) => t.streamName)))]
    const widgets = names.length === 0 ? new Map() : yield* (yield* AccountStore).findWidgets(accountId, names)
    return dashboards.map((dashboard) => ({
      dashboard,
      tiles: dashboard.tiles.map((tile) => ({ tile, widget: widgets.get(tile.streamName) ?? null }))
    }))
  })

/**
 * The dashboard of a view token (docs/api.md section 11, `GET /d/<viewToken>`) with each tile's widget (type and
 * stream) looked up now. Fails with `DashboardNotFound` for an unknown or rotated token (the page answers 404).
 */
export const resolveView = (
  viewToken: string
): Effect.Effect<ResolvedDashboard, DashboardNotFound | StorageFailure, AccountStore | DashboardStore> =>
  Effect.flatMap(views.findByToken(viewToken), (dashboard) =>
    Effect.map(resolveDashboards(dashboard.accountId, [dashboard]), (resolved) => resolved[0]!)
  )

/** The snapshot rule (docs/api.md section 11), from `@dashstream/contract`, which the page's tiles hold to as well. */
export { MAX_SNAPSHOT_ENTRIES, snapshotEntries } from "@dashstream/contract"

/**
 * The streams a resolved dashboard follows (see `followDashboard`): one per tile, with the snapshot size of
 * {@link snapshotEntries} for its widget's kind; `stream` is `null` for a tile whose widget no longer exists.
 */
export const dashboardFeeds = (resolved: ResolvedDashboard): Array<DashboardFeed> =>
  resolved.tiles.map(({ tile, widget }) => ({
    streamName: tile.streamName,
    stream: widget === null ? null : widget.id,
    recent: widget === null ? 1 : snapshotEntries(widgetKind(widget.type)),
    type: widget === null ? null : widget.type
  }))

/** A tile as the `layout` and `rotation` events show it: as stored (every member of it), with its widget's type. */
export const layoutTile = ({ tile, widget }: ResolvedTile) => ({ ...tile, type: widget === null ? null : widget.type })

/**
 * What a view's event stream follows, from the key that tells a change (a dashboard's name and tiles, a rotation's
 * fields and dashboards), the data of the event that announces one (serialised here) and the feeds; `version` is a
 * short URL-safe digest of `key`.
 */
export const viewLayout = (key: string, data: unknown, feeds: ReadonlyArray<DashboardFeed>): DashboardLayout => ({
  data: JSON.stringify(data),
  key,
  version: createHash("sha256").update(key).digest("base64url").slice(0, 16),
  feeds
})

/**
 * What a dashboard's event stream follows (see `followDashboard`): its feeds, the data of its `layout` event
 * (docs/api.md section 14, "Layout changes reach open pages": `{"name","tiles"}`, each tile as stored plus its widget's
 * `type`, `null` when its widget no longer exists, so that a page can draw a tile it did not show before), and the
 * key that tells a changed name or tiles.
 */
export const dashboardLayout = (resolved: ResolvedDashboard): DashboardLayout =>
  viewLayout(
    JSON.stringify({ name: resolved.dashboard.name, tiles: resolved.dashboard.tiles }),
    { name: resolved.dashboard.name, tiles: resolved.tiles.map(layoutTile) },
    dashboardFeeds(resolved)
  )
