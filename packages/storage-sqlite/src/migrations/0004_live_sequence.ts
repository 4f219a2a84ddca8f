import { type Kysely, sql } from "kysely"

/**
 * 0004: `live_sequence(id, seq)`, one row: the commit sequence of the write transactions whose changes someone follows,
 * when several server processes share the file (`serve --workers N`, docs/api.md section 10). Such a transaction adds one
 * to `seq` inside itself, so the numbers follow the order in which the transactions committed, whichever process ran
 * them, and the processes' live updates are delivered in that order. Frozen in time: it takes `Kysely<any>` and
 * imports no application code.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema
    .createTable("live_sequence")
    .addColumn("id", "integer", (c) => c.primaryKey().check(sql`id = 1`))
    .addColumn("seq", "integer", (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute()
  await db.insertInto("live_sequence").values({ id: 1, seq: 0 }).execute()
}

/** Drops what {@link up} created. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.dropTable("live_sequence").execute()
}
