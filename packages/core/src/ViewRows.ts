import type { AccountId } from "./Account.js"
import type { Dashboard, DashboardId, Tile } from "./Dashboard.js"
import type { Rotation } from "./Rotation.js"

/**
 * The rows of the shared view tables as both SQL adapters read them (`dashboards`: SQLite migrations 0003 and 0008,
 * PostgreSQL 0003 and 0009; `rotations` with `rotation_dashboards`: SQLite 0006, PostgreSQL 0005), and their decoding
 * into core's types, written once. `created_at` (integer microseconds) may arrive as a number (SQLite) or as text
 * (PostgreSQL's `bigint`): it is read through `Number`, exact for integer microseconds. JSON columns were validated
 * before they were stored and are read back as they are. A decoded view's `viewToken` is `null`: only its digest is
 * stored (docs/api.md section 11).
 */

type Int = number | string

/** A row of `dashboards`; `tiles` is the tiles' JSON text. */
export interface DashboardRow {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly tiles: string
  readonly created_at: Int
}

/** A row of `rotations` with `dashboard_ids`, the JSON array of its dashboards' ids in position order. */
export interface RotationRow {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly interval_seconds: number
  readonly created_at: Int
  readonly dashboard_ids: string
}

/** The dashboard of a {@link DashboardRow}. */
export const dashboardOfRow = (row: DashboardRow): Dashboard => ({
  id: row.id as DashboardId,
  accountId: row.account_id as AccountId,
  name: row.name,
  tiles: JSON.parse(row.tiles) as ReadonlyArray<Tile>,
  viewToken: null,
  createdAt: Number(row.created_at)
})

/** The rotation of a {@link RotationRow}. */
export const rotationOfRow = (row: RotationRow): Rotation => ({
  id: row.id as Rotation["id"],
  accountId: row.account_id as AccountId,
  name: row.name,
  dashboardIds: JSON.parse(row.dashboard_ids) as ReadonlyArray<DashboardId>,
  intervalSeconds: row.interval_seconds,
  viewToken: null,
  createdAt: Number(row.created_at)
})
