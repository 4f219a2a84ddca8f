import { type Kysely, sql } from "kysely"

/**
 * 0001: accounts, access keys, streams (one per widget) and their entries. Frozen in time: it takes `Kysely<any>`,
 * imports no application code, and is never edited once released; later changes are new migrations.
 *
 * Times are INTEGER microseconds. Tables are STRICT, so a non-integer `ts` is an error rather than a silent REAL.
 * `streams.id` is AUTOINCREMENT so a deleted stream's id is never reused. `entries_stream_ts` serves the latest
 * entry (`ORDER BY ts DESC LIMIT 1`), the `ts > since` range, the upsert by `(stream_id, ts)` and the cascade.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema
    .createTable("accounts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("created_at", "integer", (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute()

  await db.schema
    .createTable("access_keys")
    .addColumn("digest", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("created_at", "integer", (c) => c.notNull())
    .addColumn("revoked_at", "integer")
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema.createIndex("access_keys_account").on("access_keys").column("account_id").execute()

  await db.schema
    .createTable("streams")
    .addColumn("id", "integer", (c) => c.primaryKey().autoIncrement())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("created_at", "integer", (c) => c.notNull())
    .addColumn("last_ts", "integer")
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema.createIndex("streams_account_name").on("streams").columns(["account_id", "name"]).unique().execute()

  await db.schema
    .createTable("entries")
    .addColumn("id", "integer", (c) => c.primaryKey())
    .addColumn("stream_id", "integer", (c) => c.notNull().references("streams.id").onDelete("cascade"))
    .addColumn("ts", "integer", (c) => c.notNull())
    .addColumn("value", "real")
    .addColumn("point", "text", (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema.createIndex("entries_stream_ts").on("entries").columns(["stream_id", "ts"]).unique().execute()
}

/** Drops everything 0001 created. */
export const down = async (db: Kysely<any>): Promise<void> => {
  for (const table of ["entries", "streams", "access_keys", "accounts"]) await db.schema.dropTable(table).execute()
}
