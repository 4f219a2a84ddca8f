import { Context, type Effect, type Option } from "effect"
import type { AccountId } from "./Account.js"
import type { Dashboard, DashboardId, Tile } from "./Dashboard.js"
import type { AccountNotFound, StorageFailure } from "./Errors.js"
import type { RotationStorage } from "./RotationStore.js"
import type { ViewTokenDigest } from "./ViewToken.js"

/**
 * The storage port of dashboards (docs/api.md section 11). View tokens are only ever seen by the store as SHA-256
 * digests, one per dashboard. Tiles are stored as given (validated by the caller) and read back equal; they name
 * streams, not widgets, so deleting a widget leaves its tiles in place. Every method that takes an account id and a
 * dashboard id finds the dashboard only in that account (`None` / `false` otherwise). Times are integer
 * microseconds. The port also stores rotations (docs/api.md section 15, {@link RotationStorage}): deleting a dashboard
 * removes it from every rotation's `dashboardIds` in the same commit.
 */
export class DashboardStore extends Context.Tag("@dashstream/core/DashboardStore")<
  DashboardStore,
  RotationStorage & {
    /** Stores a new dashboard with its view token digest. `AccountNotFound` when the account does not exist. */
    readonly create: (
      dashboard: Dashboard,
      viewToken: ViewTokenDigest
    ) => Effect.Effect<void, AccountNotFound | StorageFailure>
    /** The account's dashboards, oldest first (by `createdAt`, then id); `[]` also for an unknown account. */
    readonly list: (account: AccountId) => Effect.Effect<ReadonlyArray<Dashboard>, StorageFailure>
    /** One dashboard of the account. */
    readonly get: (account: AccountId, id: DashboardId) => Effect.Effect<Option.Option<Dashboard>, StorageFailure>
    /** Replaces the name and tiles; returns the new version (`createdAt` and the view token unchanged). */
    readonly update: (
      account: AccountId,
      id: DashboardId,
      name: string,
      tiles: ReadonlyArray<Tile>
    ) => Effect.Effect<Option.Option<Dashboard>, StorageFailure>
    /**
     * Deletes a dashboard; `false` when there was none. Its view token stops working with it, and it leaves every
     * rotation's `dashboardIds` (docs/api.md section 15).
     */
    readonly delete: (account: AccountId, id: DashboardId) => Effect.Effect<boolean, StorageFailure>
    /** Replaces the view token digest (rotation): from the commit on, only the new token finds the dashboard. */
    readonly setViewToken: (
      account: AccountId,
      id: DashboardId,
      viewToken: ViewTokenDigest
    ) => Effect.Effect<Option.Option<Dashboard>, StorageFailure>
    /** The dashboard whose current view token has this digest. */
    readonly findByViewToken: (viewToken: ViewTokenDigest) => Effect.Effect<Option.Option<Dashboard>, StorageFailure>
  }
>() {}
