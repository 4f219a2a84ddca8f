import type { Kysely } from "kysely"

/**
 * 0010: alert leases with their owner, and Alertmanager re-sends claimed once (docs/api.md section 18). Frozen in
 * time: it takes `Kysely<any>` and imports no application code. Times are integer microseconds.
 *
 * - `alert_deliveries.lease_owner`: the deliverer that holds the delivery's lease (`NULL` with no lease). A starting
 *   deliverer releases the leases of every other owner: on SQLite it is the one alerts process of the deployment.
 * - `alert_rules.resent_at`: when a firing rule was last re-sent to its Alertmanager receivers (`NULL`: never).
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema.alterTable("alert_deliveries").addColumn("lease_owner", "integer").execute()
  await db.schema.alterTable("alert_rules").addColumn("resent_at", "integer").execute()
}

/** Drops what {@link up} added. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.alterTable("alert_rules").dropColumn("resent_at").execute()
  await db.schema.alterTable("alert_deliveries").dropColumn("lease_owner").execute()
}
