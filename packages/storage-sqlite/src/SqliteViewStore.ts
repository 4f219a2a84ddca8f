import type Database from "better-sqlite3"
import {
  type Dashboard,
  type DashboardChange,
  dashboardOfRow,
  type DashboardStore,
  type Rotation,
  type RotationChange,
  rotationOfRow
} from "@dashstream/core"
import type { Context } from "effect"
import { makeViewStorage, type ViewTable } from "./internal/viewTable.js"

/**
 * Dashboards (docs/api.md section 11; table `dashboards` of migrations 0003 and 0008): tiles stored as JSON text and
 * read back as is (they were validated before they were stored). No foreign key ties tiles to streams.
 */
const dashboards = (db: Database.Database): ViewTable<Dashboard, DashboardChange> => {
  const insert = db.prepare<[string, string, string, string, string, string | null, number]>(
    `INSERT INTO dashboards (id, account_id, name, tiles, view_token, view_token_text, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`
  )
  const change = db.prepare<[string, string, string, string]>(
    "UPDATE dashboards SET name = ?, tiles = ? WHERE account_id = ? AND id = ?"
  )
  return {
    table: "dashboards",
    columns: "id, account_id, name, tiles, created_at",
    decode: dashboardOfRow,
    insert: (d, digest) =>
      insert.run(d.id, d.accountId, d.name, JSON.stringify(d.tiles), digest, d.viewToken, d.createdAt),
    change: (account, id, { name, tiles }) => change.run(name, JSON.stringify(tiles), account, id).changes > 0
  }
}

/**
 * Rotations (docs/api.md section 15; tables `rotations` and `rotation_dashboards` of migrations 0006 and 0008): the
 * dashboards a rotation shows are rows in `position` order, and a foreign key removes a deleted dashboard from every
 * rotation.
 */
const rotations = (db: Database.Database): ViewTable<Rotation, RotationChange> => {
  const insert = db.prepare<[string, string, string, number, string, string | null, number]>(
    `INSERT INTO rotations (id, account_id, name, interval_seconds, view_token, view_token_text, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`
  )
  const insertMember = db.prepare<[string, number, string]>(
    "INSERT INTO rotation_dashboards (rotation_id, position, dashboard_id) VALUES (?, ?, ?)"
  )
  const deleteMembers = db.prepare<[string]>("DELETE FROM rotation_dashboards WHERE rotation_id = ?")
  const change = db.prepare<[string, number, string, string]>(
    "UPDATE rotations SET name = ?, interval_seconds = ? WHERE account_id = ? AND id = ?"
  )
  const members = (id: string, dashboardIds: ReadonlyArray<string>) => {
    deleteMembers.run(id)
    dashboardIds.forEach((dashboardId, position) => insertMember.run(id, position, dashboardId))
  }
  return {
    table: "rotations",
    columns: `id, account_id, name, interval_seconds, created_at,
      (SELECT json_group_array(dashboard_id ORDER BY position) FROM rotation_dashboards
        WHERE rotation_id = t.id) AS dashboard_ids`,
    decode: rotationOfRow,
    insert: (r, digest) => {
      insert.run(r.id, r.accountId, r.name, r.intervalSeconds, digest, r.viewToken, r.createdAt)
      members(r.id, r.dashboardIds)
    },
    change: (account, id, { name, dashboardIds, intervalSeconds }) => {
      if (change.run(name, intervalSeconds, account, id).changes === 0) return false
      members(id, dashboardIds)
      return true
    }
  }
}

/**
 * The `DashboardStore` port over an open, migrated connection: dashboards and rotations, each the generic shared view
 * storage (`internal/viewTable.ts`) over its table. Throws when the schema is missing.
 */
export const make = (db: Database.Database): Context.Tag.Service<DashboardStore> => ({
  dashboards: makeViewStorage(db, dashboards(db)),
  rotations: makeViewStorage(db, rotations(db))
})
