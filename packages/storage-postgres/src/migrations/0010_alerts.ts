import { type Kysely, sql } from "kysely"

/**
 * 0010: alert rules, receivers and the outbox of their transitions (docs/api.md section 18). Frozen in time: it takes
 * `Kysely<any>` and imports no application code. Times are integer microseconds (`bigint`).
 *
 * - `alert_receivers(id, account_id, name, kind, url, secret, created_at)`: `secret` `NULL` for none. Deleting an
 *   account deletes its receivers.
 * - `alert_rules(id, account_id, stream_id, name, condition, for_seconds, created_at, silenced_until, state,
 *   state_since, value, since, newest, cursor, version)`: `condition` its JSON text; `state` to `cursor` the rule's
 *   evaluation state; `version` grows with each change (an evaluation is stored only over the version it was
 *   computed from). Deleting a widget (its `streams` row) deletes its rules (`on delete cascade`, served by
 *   `alert_rules_stream_id_idx`).
 * - `alert_rule_receivers(rule_id, position, receiver_id)`: a rule's receivers in order; deleting a receiver deletes
 *   its rows (`on delete cascade`, served by `alert_rule_receivers_receiver_id_idx`).
 * - `alert_events(seq, id, account_id, rule_id, rule_name, stream_name, condition, for_seconds, from_state, to_state,
 *   value, ts, at, starts_at)`: a transition with its rule as it was; `seq` the order it was stored. No foreign key to
 *   its rule: events outlive rules. `alert_events_account_id_at_idx` serves the history read.
 * - `alert_deliveries(id, event_seq, rule_id, position, receiver_id, state, attempts, last_status, next_attempt_at,
 *   lease_until)`: one per transition and receiver. `alert_deliveries_pending_idx` (partial: pending only) serves the
 *   claim (`FOR UPDATE SKIP LOCKED`), which takes the oldest pending delivery of each rule and receiver.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`CREATE TABLE alert_receivers (
    id text PRIMARY KEY,
    account_id text NOT NULL CONSTRAINT alert_receivers_account_id_fkey REFERENCES accounts (id) ON DELETE CASCADE,
    name text NOT NULL,
    kind text NOT NULL,
    url text NOT NULL,
    secret text,
    created_at bigint NOT NULL
  )`.execute(db)
  await sql`CREATE INDEX alert_receivers_account_id_created_at_idx ON alert_receivers (account_id, created_at, id)`.execute(
    db
  )
  await sql`CREATE TABLE alert_rules (
    id text PRIMARY KEY,
    account_id text NOT NULL CONSTRAINT alert_rules_account_id_fkey REFERENCES accounts (id) ON DELETE CASCADE,
    stream_id bigint NOT NULL CONSTRAINT alert_rules_stream_id_fkey REFERENCES streams (id) ON DELETE CASCADE,
    name text NOT NULL,
    condition text NOT NULL,
    for_seconds integer NOT NULL,
    created_at bigint NOT NULL,
    silenced_until bigint,
    state text NOT NULL,
    state_since bigint NOT NULL,
    value double precision,
    since bigint,
    newest bigint NOT NULL,
    cursor bigint,
    version integer NOT NULL
  )`.execute(db)
  await sql`CREATE INDEX alert_rules_account_id_created_at_idx ON alert_rules (account_id, created_at, id)`.execute(db)
  await sql`CREATE INDEX alert_rules_stream_id_idx ON alert_rules (stream_id, created_at)`.execute(db)
  await sql`CREATE TABLE alert_rule_receivers (
    rule_id text NOT NULL REFERENCES alert_rules (id) ON DELETE CASCADE,
    position integer NOT NULL,
    receiver_id text NOT NULL REFERENCES alert_receivers (id) ON DELETE CASCADE,
    PRIMARY KEY (rule_id, position)
  )`.execute(db)
  await sql`CREATE INDEX alert_rule_receivers_receiver_id_idx ON alert_rule_receivers (receiver_id)`.execute(db)
  await sql`CREATE TABLE alert_events (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id text NOT NULL UNIQUE,
    account_id text NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    rule_id text NOT NULL,
    rule_name text NOT NULL,
    stream_name text NOT NULL,
    condition text NOT NULL,
    for_seconds integer NOT NULL,
    from_state text NOT NULL,
    to_state text NOT NULL,
    value double precision,
    ts bigint,
    at bigint NOT NULL,
    starts_at bigint NOT NULL
  )`.execute(db)
  await sql`CREATE INDEX alert_events_account_id_at_idx ON alert_events (account_id, at, seq)`.execute(db)
  await sql`CREATE TABLE alert_deliveries (
    id text PRIMARY KEY,
    event_seq bigint NOT NULL REFERENCES alert_events (seq) ON DELETE CASCADE,
    rule_id text NOT NULL,
    position integer NOT NULL,
    receiver_id text NOT NULL,
    state text NOT NULL,
    attempts integer NOT NULL,
    last_status integer,
    next_attempt_at bigint NOT NULL,
    lease_until bigint
  )`.execute(db)
  await sql`CREATE INDEX alert_deliveries_event_seq_idx ON alert_deliveries (event_seq, position)`.execute(db)
  await sql`CREATE INDEX alert_deliveries_pending_idx ON alert_deliveries (rule_id, receiver_id, event_seq)
    WHERE state = 'pending'`.execute(db)
  await sql`CREATE INDEX alert_deliveries_pending_receiver_id_idx ON alert_deliveries (receiver_id)
    WHERE state = 'pending'`.execute(db)
}

/** Drops the tables of {@link up}. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`DROP TABLE alert_deliveries, alert_events, alert_rule_receivers, alert_rules, alert_receivers`.execute(db)
}
