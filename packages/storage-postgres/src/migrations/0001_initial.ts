import type { Kysely } from "kysely"

/**
 * The initial schema (same tables as the SQLite adapter). Frozen in time: it takes `Kysely<any>` and imports no
 * application code, so later changes to the app cannot change what this migration did.
 *
 * - `accounts(id, name, created_at)`; `access_keys(digest, account_id, created_at, revoked_at)`: SHA-256 digests.
 * - `streams(id, account_id, name, type, created_at, last_ts)`: one per widget, unique per account and name;
 *   `last_ts` is the highest `ts` ever assigned (kept across clears).
 * - `entries(id, stream_id, ts, value, point)`: `ts` integer microseconds, unique per stream; the unique index on
 *   `(stream_id, ts)` serves both "latest entry" (backward scan) and "entries after since" (range scan); `point` is
 *   the JSON text exactly as serialised.
 *
 * Times are integer microseconds since the UNIX epoch in BIGINT columns.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema
    .createTable("accounts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .execute()

  await db.schema
    .createTable("access_keys")
    .addColumn("digest", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("revoked_at", "bigint")
    .addForeignKeyConstraint("access_keys_account_id_fkey", ["account_id"], "accounts", ["id"], (fk) =>
      fk.onDelete("cascade")
    )
    .execute()
  await db.schema.createIndex("access_keys_account_id_idx").on("access_keys").column("account_id").execute()

  await db.schema
    .createTable("streams")
    .addColumn("id", "bigint", (c) => c.generatedAlwaysAsIdentity().primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("created_at", "bigint", (c) => c.notNull())
    .addColumn("last_ts", "bigint")
    .addForeignKeyConstraint("streams_account_id_fkey", ["account_id"], "accounts", ["id"], (fk) =>
      fk.onDelete("cascade")
    )
    .addUniqueConstraint("streams_account_id_name_key", ["account_id", "name"])
    .execute()

  await db.schema
    .createTable("entries")
    .addColumn("id", "bigint", (c) => c.generatedAlwaysAsIdentity().primaryKey())
    .addColumn("stream_id", "bigint", (c) => c.notNull())
    .addColumn("ts", "bigint", (c) => c.notNull())
    .addColumn("value", "double precision")
    .addColumn("point", "text", (c) => c.notNull())
    .addForeignKeyConstraint("entries_stream_id_fkey", ["stream_id"], "streams", ["id"], (fk) => fk.onDelete("cascade"))
    .addUniqueConstraint("entries_stream_id_ts_key", ["stream_id", "ts"])
    .execute()
}

/** Drops every table of {@link up}. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.dropTable("entries").execute()
  await db.schema.dropTable("streams").execute()
  await db.schema.dropTable("access_keys").execute()
  await db.schema.dropTable("accounts").execute()
}
