import type { Kysely } from "kysely"

/**
 * Rotations (docs/api.md section 15). Frozen in time: it takes `Kysely<any>` and imports no application code.
 *
 * - `rotations(id, account_id, name, interval_seconds, view_token, created_at)`: `view_token` the SHA-256 digest (hex)
 *   of the current view token, unique, looked up by the page; `created_at` integer microseconds. Deleting an account
 *   deletes its rotations.
 * - `rotation_dashboards(rotation_id, position, dashboard_id)`: the dashboards a rotation shows, in `position` order
 *   (a dashboard may appear more than once). Deleting a dashboard deletes its rows (a foreign key with `on delete
 *   cascade`), so it leaves every rotation in the same commit; `rotation_dashboards_dashboard_id_idx` serves that.
 * - `rotations_account_id_created_at_idx` serves the account's list, oldest first.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema
    .createTable("rotations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("interval_seconds", "integer", (c) => c.notNull())
    .addColumn("view_token", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addForeignKeyConstraint("rotations_account_id_fkey", ["account_id"], "accounts", ["id"], (fk) =>
      fk.onDelete("cascade")
    )
    .addUniqueConstraint("rotations_view_token_key", ["view_token"])
    .execute()
  await db.schema
    .createIndex("rotations_account_id_created_at_idx")
    .on("rotations")
    .columns(["account_id", "created_at", "id"])
    .execute()
  await db.schema
    .createTable("rotation_dashboards")
    .addColumn("rotation_id", "text", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("dashboard_id", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("rotation_dashboards_pkey", ["rotation_id", "position"])
    .addForeignKeyConstraint("rotation_dashboards_rotation_id_fkey", ["rotation_id"], "rotations", ["id"], (fk) =>
      fk.onDelete("cascade")
    )
    .addForeignKeyConstraint("rotation_dashboards_dashboard_id_fkey", ["dashboard_id"], "dashboards", ["id"], (fk) =>
      fk.onDelete("cascade")
    )
    .execute()
  await db.schema
    .createIndex("rotation_dashboards_dashboard_id_idx")
    .on("rotation_dashboards")
    .column("dashboard_id")
    .execute()
}

/** Drops the tables of {@link up}. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.dropTable("rotation_dashboards").execute()
  await db.schema.dropTable("rotations").execute()
}
