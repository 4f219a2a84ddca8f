import type { Kysely } from "kysely"

/**
 * 0002: `streams.cleared_ts`, the `ts` of the stream's last clear in integer microseconds (`NULL`: never cleared), so
 * that a live event stream resuming from an older id learns of a clear it missed (docs/api.md section 10). Frozen in
 * time: it takes `Kysely<any>` and imports no application code.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema.alterTable("streams").addColumn("cleared_ts", "integer").execute()
}

/** Drops the column of {@link up}. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.alterTable("streams").dropColumn("cleared_ts").execute()
}
