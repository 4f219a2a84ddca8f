import { type Kysely, sql } from "kysely"

/**
 * 0005: `ended_sessions(id, expires_at)`, the console sessions that were signed out (docs/api.md section 14): a session
 * cookie is signed, so any process can check it alone, but only this table can say it was signed out. `expires_at`
 * (integer microseconds) is when the session would expire anyway; rows past it are deleted, through the index on it.
 * Frozen in time: it takes `Kysely<any>` and imports no application code.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema
    .createTable("ended_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("expires_at", "integer", (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema.createIndex("ended_sessions_expires_at").on("ended_sessions").column("expires_at").execute()
}

/** Drops what {@link up} created. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.dropTable("ended_sessions").execute()
}
