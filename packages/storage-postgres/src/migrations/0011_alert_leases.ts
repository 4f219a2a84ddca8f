import { type Kysely, sql } from "kysely"

/**
 * 0011: alert leases with their owner, and Alertmanager re-sends claimed once (docs/api.md section 18). Frozen in
 * time: it takes `Kysely<any>` and imports no application code. Times are integer microseconds (`bigint`).
 *
 * - `alert_deliveries.lease_owner`: the deliverer that holds the delivery's lease (`NULL` with no lease), the second
 *   key of the session-level advisory lock that deliverer holds while it lives: a lease whose owner's lock nobody
 *   holds is over.
 * - `alert_rules.resent_at`: when a firing rule was last re-sent to its Alertmanager receivers (`NULL`: never).
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`ALTER TABLE alert_deliveries ADD COLUMN lease_owner integer`.execute(db)
  await sql`ALTER TABLE alert_rules ADD COLUMN resent_at bigint`.execute(db)
}

/** Drops what {@link up} added. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`ALTER TABLE alert_rules DROP COLUMN resent_at`.execute(db)
  await sql`ALTER TABLE alert_deliveries DROP COLUMN lease_owner`.execute(db)
}
