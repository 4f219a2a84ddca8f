import { type Kysely, sql } from "kysely"

/**
 * 0011: rule signals (docs/api.md section 18; see core's `RuleSignal.ts`). Frozen in time: it takes `Kysely<any>` and
 * imports no application code.
 *
 * - `alert_rule_signals(stream_id, seq)`: one row per stream that has (or had) rules; `seq` takes the next number of
 *   one sequence (the table's highest `seq` + 1: SQLite has one writer at a time, so numbers follow commit order) at
 *   each signalled change of the stream's rules. `alert_rule_signals_seq` serves the read above a floor and the
 *   highest `seq`. No foreign key: a widget's deletion signals its rules' deletion while its row goes.
 * - Triggers on `alert_rules` write it: a rule inserted or deleted (also by its widget's deletion), and an update of
 *   its stream, name, condition, `for`, silence, or of whether its state is `firing` (both streams when it moves).
 */
const bump = (stream: string) =>
  `INSERT INTO alert_rule_signals (stream_id, seq)
    SELECT ${stream}, (SELECT coalesce(max(seq), 0) + 1 FROM alert_rule_signals) WHERE true
    ON CONFLICT (stream_id) DO UPDATE SET seq = excluded.seq;`

export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`CREATE TABLE alert_rule_signals (stream_id integer PRIMARY KEY, seq integer NOT NULL) STRICT`.execute(db)
  await sql`CREATE INDEX alert_rule_signals_seq ON alert_rule_signals (seq)`.execute(db)
  await sql
    .raw(`CREATE TRIGGER alert_rules_signal_insert AFTER INSERT ON alert_rules BEGIN ${bump("new.stream_id")} END`)
    .execute(db)
  await sql
    .raw(`CREATE TRIGGER alert_rules_signal_delete AFTER DELETE ON alert_rules BEGIN ${bump("old.stream_id")} END`)
    .execute(db)
  await sql
    .raw(
      `CREATE TRIGGER alert_rules_signal_update AFTER UPDATE ON alert_rules
        WHEN old.stream_id IS NOT new.stream_id OR old.name IS NOT new.name OR old.condition IS NOT new.condition
          OR old.for_seconds IS NOT new.for_seconds OR old.silenced_until IS NOT new.silenced_until
          OR (old.state = 'firing') IS NOT (new.state = 'firing')
        BEGIN
          ${bump("old.stream_id")}
          ${bump("new.stream_id").replace("WHERE true", "WHERE new.stream_id IS NOT old.stream_id")}
        END`
    )
    .execute(db)
}

/** Drops what {@link up} created. */
export const down = async (db: Kysely<any>): Promise<void> => {
  for (const trigger of ["alert_rules_signal_insert", "alert_rules_signal_delete", "alert_rules_signal_update"]) {
    await sql.raw(`DROP TRIGGER ${trigger}`).execute(db)
  }
  await sql`DROP TABLE alert_rule_signals`.execute(db)
}
