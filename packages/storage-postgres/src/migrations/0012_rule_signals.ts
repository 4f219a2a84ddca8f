import { type Kysely, sql } from "kysely"

/**
 * 0012: rule signals (docs/api.md section 18; see core's `RuleSignal.ts`). Frozen in time: it takes `Kysely<any>` and
 * imports no application code.
 *
 * - `alert_rule_signals(stream_id, seq)`: one row per stream that has (or had) rules; `seq` takes the next number of
 *   `alert_rule_signals_seq` (owned by the column: it goes with the table) at each signalled change of the stream's
 *   rules, in the change's transaction. Two transactions may commit in the other order than they took their numbers;
 *   readers allow for it (core's `RuleWatch.ts`). `alert_rule_signals_seq_idx` serves the read above a floor and the
 *   highest `seq`. No foreign key: a widget's deletion signals its rules' deletion while its row goes.
 * - `alert_rules_signal()` and two triggers on `alert_rules` write it: a rule inserted or deleted (also by its widget's
 *   deletion), and an update of its stream, name, condition, `for`, silence, or of whether its state is `firing` (both
 *   streams when it moves).
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`CREATE TABLE alert_rule_signals (stream_id bigint PRIMARY KEY, seq bigint NOT NULL)`.execute(db)
  await sql`CREATE SEQUENCE alert_rule_signals_seq OWNED BY alert_rule_signals.seq`.execute(db)
  await sql`CREATE INDEX alert_rule_signals_seq_idx ON alert_rule_signals (seq)`.execute(db)
  await sql`CREATE OR REPLACE FUNCTION alert_rules_signal() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP <> 'INSERT' THEN
        INSERT INTO alert_rule_signals (stream_id, seq) VALUES (OLD.stream_id, nextval('alert_rule_signals_seq'))
          ON CONFLICT (stream_id) DO UPDATE SET seq = excluded.seq;
      END IF;
      IF TG_OP = 'INSERT' OR (TG_OP = 'UPDATE' AND NEW.stream_id IS DISTINCT FROM OLD.stream_id) THEN
        INSERT INTO alert_rule_signals (stream_id, seq) VALUES (NEW.stream_id, nextval('alert_rule_signals_seq'))
          ON CONFLICT (stream_id) DO UPDATE SET seq = excluded.seq;
      END IF;
      RETURN NULL;
    END $$`.execute(db)
  await sql`CREATE TRIGGER alert_rules_signal_insert_delete AFTER INSERT OR DELETE ON alert_rules
    FOR EACH ROW EXECUTE FUNCTION alert_rules_signal()`.execute(db)
  await sql`CREATE TRIGGER alert_rules_signal_update AFTER UPDATE ON alert_rules FOR EACH ROW
    WHEN (OLD.stream_id IS DISTINCT FROM NEW.stream_id OR OLD.name IS DISTINCT FROM NEW.name
      OR OLD.condition IS DISTINCT FROM NEW.condition OR OLD.for_seconds IS DISTINCT FROM NEW.for_seconds
      OR OLD.silenced_until IS DISTINCT FROM NEW.silenced_until
      OR (OLD.state = 'firing') IS DISTINCT FROM (NEW.state = 'firing'))
    EXECUTE FUNCTION alert_rules_signal()`.execute(db)
}

/** Drops what {@link up} created. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`DROP TRIGGER alert_rules_signal_update ON alert_rules`.execute(db)
  await sql`DROP TRIGGER alert_rules_signal_insert_delete ON alert_rules`.execute(db)
  await sql`DROP FUNCTION alert_rules_signal()`.execute(db)
  await sql`DROP TABLE alert_rule_signals`.execute(db)
}
