import { type Kysely, sql } from "kysely"

/**
 * 0013: a rule's receivers signal its stream (docs/api.md section 18.5; see core's `RuleSignal.ts`). Frozen in time:
 * it takes `Kysely<any>` and imports no application code.
 *
 * `alert_rule_receivers_signal()` and a trigger on `alert_rule_receivers` write `alert_rule_signals` (migration 0012)
 * like the triggers on `alert_rules`: a row inserted or deleted (an edit of `receiverIds`, a receiver's deletion
 * through `on delete cascade`) takes the next number of `alert_rule_signals_seq` for its rule's stream. A row whose
 * rule is already gone (the rule's or its widget's deletion, which signals by itself) writes nothing.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`CREATE OR REPLACE FUNCTION alert_rule_receivers_signal() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      rule text;
    BEGIN
      IF TG_OP = 'DELETE' THEN rule := OLD.rule_id; ELSE rule := NEW.rule_id; END IF;
      INSERT INTO alert_rule_signals (stream_id, seq)
        SELECT stream_id, nextval('alert_rule_signals_seq') FROM alert_rules WHERE id = rule
        ON CONFLICT (stream_id) DO UPDATE SET seq = excluded.seq;
      RETURN NULL;
    END $$`.execute(db)
  await sql`CREATE TRIGGER alert_rule_receivers_signal AFTER INSERT OR DELETE ON alert_rule_receivers
    FOR EACH ROW EXECUTE FUNCTION alert_rule_receivers_signal()`.execute(db)
}

/** Drops what {@link up} created. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`DROP TRIGGER alert_rule_receivers_signal ON alert_rule_receivers`.execute(db)
  await sql`DROP FUNCTION alert_rule_receivers_signal()`.execute(db)
}
