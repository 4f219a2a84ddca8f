import type { Kysely } from "kysely"

/**
 * Dashboards (docs/api.md section 11). Frozen in time: it takes `Kysely<any>` and imports no application code.
 *
 * - `dashboards(id, account_id, name, tiles, view_token, created_at)`: `tiles` is the JSON text of the tiles array
 *   (tiles name streams, not stream ids, so deleting a widget leaves them; no foreign key to `streams`);
 *   `view_token` the SHA-256 digest (hex) of the current view token, unique, looked up by the page; `created_at`
 *   integer microseconds. Deleting an account deletes its dashboards.
 * - `dashboards_account_id_created_at_idx` serves the account's list, oldest first.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema
    .createTable("dashboards")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("tiles", "text", (c) => c.notNull())
    .addColumn("view_token", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addForeignKeyConstraint("dashboards_account_id_fkey", ["account_id"], "accounts", ["id"], (fk) =>
      fk.onDelete("cascade")
    )
    .addUniqueConstraint("dashboards_view_token_key", ["view_token"])
    .execute()
  await db.schema
    .createIndex("dashboards_account_id_created_at_idx")
    .on("dashboards")
    .columns(["account_id", "created_at", "id"])
    .execute()
}

/** Drops the table of {@link up}. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.dropTable("dashboards").execute()
}
