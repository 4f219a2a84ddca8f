import { type Kysely, sql } from "kysely"

/**
 * 0012: a rule's receivers signal its stream (docs/api.md section 18.5; see core's `RuleSignal.ts`). Frozen in time:
 * it takes `Kysely<any>` and imports no application code.
 *
 * Triggers on `alert_rule_receivers` write `alert_rule_signals` (migration 0011) like those on `alert_rules`: a row
 * inserted or deleted (an edit of `receiverIds`, a receiver's deletion through `on delete cascade`) takes the next
 * `seq` for its rule's stream. A row whose rule is already gone (the rule's or its widget's deletion, which signals
 * by itself) writes nothing.
 */
const bump = (rule: string) =>
  `INSERT INTO alert_rule_signals (stream_id, seq)
    SELECT stream_id, (SELECT coalesce(max(seq), 0) + 1 FROM alert_rule_signals) FROM alert_rules WHERE id = ${rule}
    ON CONFLICT (stream_id) DO UPDATE SET seq = excluded.seq;`

export const up = async (db: Kysely<any>): Promise<void> => {
  await sql
    .raw(
      `CREATE TRIGGER alert_rule_receivers_signal_insert AFTER INSERT ON alert_rule_receivers
        BEGIN ${bump("new.rule_id")} END`
    )
    .execute(db)
  await sql
    .raw(
      `CREATE TRIGGER alert_rule_receivers_signal_delete AFTER DELETE ON alert_rule_receivers
        BEGIN ${bump("old.rule_id")} END`
    )
    .execute(db)
}

/** Drops what {@link up} created. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`DROP TRIGGER alert_rule_receivers_signal_insert`.execute(db)
  await sql`DROP TRIGGER alert_rule_receivers_signal_delete`.execute(db)
}
