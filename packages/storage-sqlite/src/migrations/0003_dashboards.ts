import { type Kysely, sql } from "kysely"

/**
 * 0003: dashboards (docs/api.md section 11). Frozen in time: it takes `Kysely<any>` and imports no application code.
 *
 * - `dashboards(id, account_id, name, tiles, view_token, created_at)`: `tiles` is the JSON text of the tiles array
 *   (tiles name streams, not stream ids, so deleting a widget leaves them; no foreign key to `streams`);
 *   `view_token` the SHA-256 digest (hex) of the current view token, unique, looked up by the page.
 * - `dashboards_account_created` serves the account's list, oldest first. Deleting an account deletes its dashboards.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema
    .createTable("dashboards")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("tiles", "text", (c) => c.notNull())
    .addColumn("view_token", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "integer", (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema
    .createIndex("dashboards_account_created")
    .on("dashboards")
    .columns(["account_id", "created_at", "id"])
    .execute()
}

/** Drops what {@link up} created. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.dropTable("dashboards").execute()
}
