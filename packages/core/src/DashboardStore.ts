import { Context } from "effect"
import type { Dashboard, DashboardChange } from "./Dashboard.js"
import type { Rotation, RotationChange } from "./Rotation.js"
import type { ViewStorage } from "./SharedView.js"

/**
 * The storage port of shared views (docs/api.md sections 11 and 15): dashboards and rotations, one
 * {@link ViewStorage} each, in one port because a rotation lists dashboards and a deleted dashboard leaves every
 * rotation's `dashboardIds` in the same commit. Each view keeps its current view token (shown again in every admin
 * answer) and that token's SHA-256 digest (what the page looks up); a view stored before tokens were kept has only the
 * digest (`viewToken` `null`) until its token is replaced. Times are integer microseconds.
 *
 * - `dashboards`: tiles are stored as given (validated by the caller) and read back equal; they name streams, not
 *   widgets, so deleting a widget leaves its tiles in place. `update` replaces the name and tiles; `delete` also
 *   removes the dashboard from every rotation.
 * - `rotations`: `dashboardIds` are stored in the order given (the same id may appear more than once) and read back
 *   equal, except that a deleted dashboard is gone from every rotation's list. `create` and `update` expect the
 *   account's dashboards (the caller checks; one deleted meanwhile is a `StorageFailure`, nothing stored); `update`
 *   replaces the name, dashboards and interval in one transaction.
 */
export class DashboardStore extends Context.Tag("@dashstream/core/DashboardStore")<
  DashboardStore,
  {
    readonly dashboards: ViewStorage<Dashboard, DashboardChange>
    readonly rotations: ViewStorage<Rotation, RotationChange>
  }
>() {}
