import {
  type Dashboard,
  type DashboardChange,
  dashboardOfRow,
  type DashboardStore,
  type Rotation,
  type RotationChange,
  rotationOfRow
} from "@dashstream/core"
import type pg from "pg"
import { makeViewStorage, type ViewTable } from "./internal/viewTable.js"

/**
 * Dashboards (docs/api.md section 11; table `dashboards` of migrations 0003 and 0009): tiles stored as JSON text and
 * read back as is (they were validated before they were stored). No foreign key ties tiles to streams.
 */
const dashboards: ViewTable<Dashboard, DashboardChange> = {
  table: "dashboards",
  columns: "id, account_id, name, tiles, created_at",
  decode: dashboardOfRow,
  insert: (client, d, digest) =>
    client.query(
      `INSERT INTO dashboards (id, account_id, name, tiles, view_token, view_token_text, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [d.id, d.accountId, d.name, JSON.stringify(d.tiles), digest, d.viewToken, d.createdAt]
    ),
  change: async (client, account, id, { name, tiles }) =>
    ((
      await client.query("UPDATE dashboards SET name = $1, tiles = $2 WHERE account_id = $3 AND id = $4", [
        name,
        JSON.stringify(tiles),
        account,
        id
      ])
    ).rowCount ?? 0) > 0
}

// The dashboards of a rotation in one statement: positions 0, 1, ... in the order given.
const insertMembers = (client: pg.PoolClient, id: string, dashboardIds: ReadonlyArray<string>) =>
  dashboardIds.length === 0
    ? Promise.resolve()
    : client.query(
        `INSERT INTO rotation_dashboards (rotation_id, position, dashboard_id)
           SELECT $1, p - 1, d FROM unnest($2::text[]) WITH ORDINALITY AS m(d, p)`,
        [id, dashboardIds]
      )

/**
 * Rotations (docs/api.md section 15; tables `rotations` and `rotation_dashboards` of migrations 0005 and 0009): the
 * dashboards a rotation shows are rows in `position` order, and a foreign key removes a deleted dashboard from every
 * rotation.
 */
const rotations: ViewTable<Rotation, RotationChange> = {
  table: "rotations",
  columns: `id, account_id, name, interval_seconds, created_at,
    coalesce((SELECT json_agg(dashboard_id ORDER BY position) FROM rotation_dashboards
      WHERE rotation_id = t.id), '[]')::text AS dashboard_ids`,
  decode: rotationOfRow,
  insert: async (client, r, digest) => {
    await client.query(
      `INSERT INTO rotations (id, account_id, name, interval_seconds, view_token, view_token_text, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [r.id, r.accountId, r.name, r.intervalSeconds, digest, r.viewToken, r.createdAt]
    )
    await insertMembers(client, r.id, r.dashboardIds)
  },
  change: async (client, account, id, { name, dashboardIds, intervalSeconds }) => {
    const updated = await client.query(
      "UPDATE rotations SET name = $1, interval_seconds = $2 WHERE account_id = $3 AND id = $4",
      [name, intervalSeconds, account, id]
    )
    if (updated.rowCount === 0) return false
    await client.query("DELETE FROM rotation_dashboards WHERE rotation_id = $1", [id])
    await insertMembers(client, id, dashboardIds)
    return true
  }
}

/**
 * The `DashboardStore` port on a `pg` pool: dashboards and rotations, each the generic shared view storage
 * (`internal/viewTable.ts`) over its table.
 */
export const makeViewStore = (pool: pg.Pool): DashboardStore["Type"] => ({
  dashboards: makeViewStorage(pool, dashboards),
  rotations: makeViewStorage(pool, rotations)
})
