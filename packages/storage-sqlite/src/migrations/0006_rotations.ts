import { type Kysely, sql } from "kysely"

/**
 * 0006: rotations (docs/api.md section 15). Frozen in time: it takes `Kysely<any>` and imports no application code.
 *
 * - `rotations(id, account_id, name, interval_seconds, view_token, created_at)`: `view_token` the SHA-256 digest (hex)
 *   of the current view token, unique, looked up by the page. Deleting an account deletes its rotations.
 * - `rotation_dashboards(rotation_id, position, dashboard_id)`: the dashboards a rotation shows, in `position` order
 *   (a dashboard may appear more than once). Deleting a dashboard deletes its rows (a foreign key with `on delete
 *   cascade`), so it leaves every rotation in the same commit; `rotation_dashboards_dashboard` serves that cascade.
 * - `rotations_account_created` serves the account's list, oldest first.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema
    .createTable("rotations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("interval_seconds", "integer", (c) => c.notNull())
    .addColumn("view_token", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "integer", (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema
    .createIndex("rotations_account_created")
    .on("rotations")
    .columns(["account_id", "created_at", "id"])
    .execute()
  await db.schema
    .createTable("rotation_dashboards")
    .addColumn("rotation_id", "text", (c) => c.notNull().references("rotations.id").onDelete("cascade"))
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("dashboard_id", "text", (c) => c.notNull().references("dashboards.id").onDelete("cascade"))
    .addPrimaryKeyConstraint("rotation_dashboards_pk", ["rotation_id", "position"])
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema
    .createIndex("rotation_dashboards_dashboard")
    .on("rotation_dashboards")
    .column("dashboard_id")
    .execute()
}

/** Drops what {@link up} created. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.dropTable("rotation_dashboards").execute()
  await db.schema.dropTable("rotations").execute()
}
