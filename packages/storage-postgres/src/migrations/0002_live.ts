import type { Kysely } from "kysely"

/**
 * Live updates (docs/api.md section 10). Frozen in time: it takes `Kysely<any>` and imports no application code.
 *
 * - `streams.cleared_ts`: the `ts` (integer microseconds) of the stream's last clear, null if it was never cleared.
 *   A live event stream resumed from an older id learns from it that it missed a clear.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema.alterTable("streams").addColumn("cleared_ts", "bigint").execute()
}
