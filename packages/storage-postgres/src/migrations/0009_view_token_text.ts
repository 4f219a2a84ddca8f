import type { Kysely } from "kysely"

/**
 * 0009: share links that stay (docs/api.md section 11). Frozen in time: it takes `Kysely<any>` and imports no
 * application code.
 *
 * - `dashboards.view_token_text`, `rotations.view_token_text`: the current view token itself, so that every admin
 *   answer can show the view's URL again (`view_token` keeps its SHA-256 digest, which the page looks up). Rows made
 *   before this migration have only the digest: their column is `NULL` until their token is replaced.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema.alterTable("dashboards").addColumn("view_token_text", "text").execute()
  await db.schema.alterTable("rotations").addColumn("view_token_text", "text").execute()
}

/** Drops what {@link up} added (the digests stay: every view keeps working, its link can no longer be shown). */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.alterTable("rotations").dropColumn("view_token_text").execute()
  await db.schema.alterTable("dashboards").dropColumn("view_token_text").execute()
}
