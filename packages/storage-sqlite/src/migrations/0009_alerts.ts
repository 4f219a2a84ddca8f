import { type Kysely, sql } from "kysely"

/**
 * 0009: alert rules, receivers and the outbox of their transitions (docs/api.md section 18). Frozen in time: it takes
 * `Kysely<any>` and imports no application code. Times are integer microseconds.
 *
 * - `alert_receivers(id, account_id, name, kind, url, secret, created_at)`: `secret` `NULL` for none. Deleting an
 *   account deletes its receivers.
 * - `alert_rules(id, account_id, stream_id, name, condition, for_seconds, created_at, silenced_until, state,
 *   state_since, value, since, newest, cursor, version)`: `condition` its JSON text; `state` to `cursor` the rule's
 *   evaluation state; `version` grows with each change. Deleting a widget (its `streams` row) deletes its rules
 *   (`on delete cascade`, served by `alert_rules_stream`).
 * - `alert_rule_receivers(rule_id, position, receiver_id)`: a rule's receivers in order; deleting a receiver deletes
 *   its rows (`on delete cascade`, served by `alert_rule_receivers_receiver`).
 * - `alert_events(seq, id, account_id, rule_id, rule_name, stream_name, condition, for_seconds, from_state, to_state,
 *   value, ts, at, starts_at)`: a transition with its rule as it was; `seq` the order it was stored. No foreign key
 *   to its rule: events outlive rules. `alert_events_account_at` serves the history read.
 * - `alert_deliveries(id, event_seq, rule_id, position, receiver_id, state, attempts, last_status, next_attempt_at,
 *   lease_until)`: one per transition and receiver. `alert_deliveries_pending` (partial: pending only) serves the
 *   claim, which takes the oldest pending delivery of each rule and receiver, and the receiver's deletion.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await db.schema
    .createTable("alert_receivers")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("secret", "text")
    .addColumn("created_at", "integer", (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema
    .createIndex("alert_receivers_account_created")
    .on("alert_receivers")
    .columns(["account_id", "created_at", "id"])
    .execute()
  await db.schema
    .createTable("alert_rules")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("stream_id", "integer", (c) => c.notNull().references("streams.id").onDelete("cascade"))
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("condition", "text", (c) => c.notNull())
    .addColumn("for_seconds", "integer", (c) => c.notNull())
    .addColumn("created_at", "integer", (c) => c.notNull())
    .addColumn("silenced_until", "integer")
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("state_since", "integer", (c) => c.notNull())
    .addColumn("value", "real")
    .addColumn("since", "integer")
    .addColumn("newest", "integer", (c) => c.notNull())
    .addColumn("cursor", "integer")
    .addColumn("version", "integer", (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema
    .createIndex("alert_rules_account_created")
    .on("alert_rules")
    .columns(["account_id", "created_at", "id"])
    .execute()
  await db.schema.createIndex("alert_rules_stream").on("alert_rules").columns(["stream_id", "created_at"]).execute()
  await db.schema
    .createTable("alert_rule_receivers")
    .addColumn("rule_id", "text", (c) => c.notNull().references("alert_rules.id").onDelete("cascade"))
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("receiver_id", "text", (c) => c.notNull().references("alert_receivers.id").onDelete("cascade"))
    .addPrimaryKeyConstraint("alert_rule_receivers_pk", ["rule_id", "position"])
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema
    .createIndex("alert_rule_receivers_receiver")
    .on("alert_rule_receivers")
    .column("receiver_id")
    .execute()
  await db.schema
    .createTable("alert_events")
    .addColumn("seq", "integer", (c) => c.primaryKey().autoIncrement())
    .addColumn("id", "text", (c) => c.notNull().unique())
    .addColumn("account_id", "text", (c) => c.notNull().references("accounts.id").onDelete("cascade"))
    .addColumn("rule_id", "text", (c) => c.notNull())
    .addColumn("rule_name", "text", (c) => c.notNull())
    .addColumn("stream_name", "text", (c) => c.notNull())
    .addColumn("condition", "text", (c) => c.notNull())
    .addColumn("for_seconds", "integer", (c) => c.notNull())
    .addColumn("from_state", "text", (c) => c.notNull())
    .addColumn("to_state", "text", (c) => c.notNull())
    .addColumn("value", "real")
    .addColumn("ts", "integer")
    .addColumn("at", "integer", (c) => c.notNull())
    .addColumn("starts_at", "integer", (c) => c.notNull())
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema
    .createIndex("alert_events_account_at")
    .on("alert_events")
    .columns(["account_id", "at", "seq"])
    .execute()
  await db.schema
    .createTable("alert_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("event_seq", "integer", (c) => c.notNull().references("alert_events.seq").onDelete("cascade"))
    .addColumn("rule_id", "text", (c) => c.notNull())
    .addColumn("position", "integer", (c) => c.notNull())
    .addColumn("receiver_id", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull())
    .addColumn("last_status", "integer")
    .addColumn("next_attempt_at", "integer", (c) => c.notNull())
    .addColumn("lease_until", "integer")
    .modifyEnd(sql`strict`)
    .execute()
  await db.schema
    .createIndex("alert_deliveries_event")
    .on("alert_deliveries")
    .columns(["event_seq", "position"])
    .execute()
  await sql`CREATE INDEX alert_deliveries_pending ON alert_deliveries (rule_id, receiver_id, event_seq)
    WHERE state = 'pending'`.execute(db)
  await sql`CREATE INDEX alert_deliveries_pending_receiver ON alert_deliveries (receiver_id)
    WHERE state = 'pending'`.execute(db)
}

/** Drops what {@link up} created. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await db.schema.dropTable("alert_deliveries").execute()
  await db.schema.dropTable("alert_events").execute()
  await db.schema.dropTable("alert_rule_receivers").execute()
  await db.schema.dropTable("alert_rules").execute()
  await db.schema.dropTable("alert_receivers").execute()
}
