import type { Kysely } from "kysely"

/**
 * Console sign-outs (docs/api.md section 14). Frozen in time: it takes `Kysely<any>` and imports no application code.
 *
 * - `ended_sessions(id, expires_at)`: the console sessions that were signed out. A session cookie is signed, so any
 *   process can check it alone, but only this table can say it was signed out, to every process on the database.
 *   `expires_at` (integer microseconds) is when the session would expire anyway; rows past it are deleted, through
 *   `ended_sessions_expires_at_idx`.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema
    .createTable("ended_sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("expires_at", "bigint", (c) => c.notNull())
    .execute()
  await db.schema.createIndex("ended_sessions_expires_at_idx").on("ended_sessions").column("expires_at").execute()
}

/** Drops the table of {@link up}. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.dropTable("ended_sessions").execute()
}
