import {
  AccountNotFound,
  type AlertEvent,
  type AlertEventRow,
  type AlertReceiverRow,
  type AlertRule,
  type AlertRuleRow,
  type AlertStore,
  type ClaimedDelivery,
  type DeliveryId,
  type DeliveryState,
  eventOfRow,
  type Micros,
  newAlertEventId,
  newDeliveryId,
  receiverOfRow,
  type ReceiverId,
  type RuleEvaluation,
  ruleOfRow
} from "@dashstream/core"
import { Effect, Option } from "effect"
import type pg from "pg"
import { sqlState, toStorageFailure } from "./internal/errors.js"
import { holdLeaseOwner, ownerAlive } from "./internal/leaseOwner.js"
import { ruleSignalReads } from "./internal/ruleSignals.js"
import { type Queryable, transaction } from "./internal/sql.js"
import type { PostgresConfig } from "./PostgresConfig.js"

type EventRow = AlertEventRow & { readonly seq: string }

interface ClaimRow extends EventRow {
  readonly delivery_id: string
  readonly attempts: number
  readonly account_name: string
  readonly receiver: AlertReceiverRow
}

const receiverColumns = "id, account_id, name, kind, url, secret, created_at"

const ruleSelect = `SELECT r.id, r.account_id, r.stream_id, s.name AS stream_name, r.name, r.condition, r.for_seconds,
  r.created_at, r.silenced_until, r.state, r.state_since, r.value, r.since, r.newest, r.cursor, r.version,
  ARRAY(SELECT receiver_id FROM alert_rule_receivers WHERE rule_id = r.id ORDER BY position) AS receiver_ids
  FROM alert_rules r JOIN streams s ON s.id = r.stream_id`

// The deliveries a claim may take: pending, and the oldest pending of their rule and receiver.
const head = `d.state = 'pending' AND NOT EXISTS (SELECT 1 FROM alert_deliveries e
  WHERE e.state = 'pending' AND e.rule_id = d.rule_id AND e.receiver_id = d.receiver_id AND e.event_seq < d.event_seq)`

// One statement: the due heads not leased (or leased by an owner whose lock nobody holds: its process is gone),
// locked with SKIP LOCKED (rows another process is claiming are passed over), leased to the owner, and returned with
// their event, account name and receiver.
const claimStatement = `WITH due AS (
    SELECT d.id FROM alert_deliveries d
    WHERE ${head} AND d.next_attempt_at <= $1
      AND (d.lease_until IS NULL OR d.lease_until <= $1 OR (d.lease_owner IS NOT NULL AND NOT ${ownerAlive}))
    ORDER BY d.event_seq, d.position LIMIT $3
    FOR UPDATE OF d SKIP LOCKED
  ), leased AS (
    UPDATE alert_deliveries SET lease_until = $2, lease_owner = $4 FROM due WHERE alert_deliveries.id = due.id
    RETURNING alert_deliveries.id, alert_deliveries.attempts, alert_deliveries.event_seq, alert_deliveries.position,
      alert_deliveries.receiver_id
  )
  SELECT ev.*, l.id AS delivery_id, l.attempts, a.name AS account_name, row_to_json(r) AS receiver
  FROM leased l
  JOIN alert_events ev ON ev.seq = l.event_seq
  JOIN accounts a ON a.id = ev.account_id
  JOIN alert_receivers r ON r.id = l.receiver_id
  ORDER BY l.event_seq, l.position`

// One statement: the firing rules with an Alertmanager receiver whose firing began and last re-send were both at
// least the interval ago, locked with SKIP LOCKED and marked re-sent at `$1`, so one process re-sends each.
const resendStatement = `WITH due AS (
    SELECT r.id FROM alert_rules r
    WHERE r.state = 'firing' AND greatest(coalesce(r.resent_at, 0), r.state_since) <= $2
      AND EXISTS (SELECT 1 FROM alert_rule_receivers rr JOIN alert_receivers v ON v.id = rr.receiver_id
        WHERE rr.rule_id = r.id AND v.kind = 'alertmanager')
    ORDER BY r.created_at, r.id LIMIT $3
    FOR UPDATE OF r SKIP LOCKED
  )
  UPDATE alert_rules SET resent_at = $1 FROM due WHERE alert_rules.id = due.id RETURNING alert_rules.id`

const evaluationValues = (e: RuleEvaluation) => [e.state, e.stateSince, e.value, e.since, e.newest, e.cursor]

// Rewritten only when they differ: the rows' trigger signals the rule's stream (migration 0013).
const setReceivers = async (client: Queryable, rule: string, receiverIds: ReadonlyArray<string>) => {
  const current = await (client as pg.Pool).query<{ ids: Array<string> }>(
    "SELECT coalesce(array_agg(receiver_id ORDER BY position), '{}') AS ids FROM alert_rule_receivers WHERE rule_id = $1",
    [rule]
  )
  const ids = current.rows[0]?.ids ?? []
  if (ids.length === receiverIds.length && ids.every((id, i) => id === receiverIds[i])) return
  await client.query("DELETE FROM alert_rule_receivers WHERE rule_id = $1", [rule])
  if (receiverIds.length > 0) {
    await client.query(
      `INSERT INTO alert_rule_receivers (rule_id, position, receiver_id)
        SELECT $1, p - 1, r FROM unnest($2::text[]) WITH ORDINALITY AS m(r, p)`,
      [rule, receiverIds]
    )
  }
}

/**
 * The `AlertStore` port (docs/api.md section 18; the tables of migrations 0010 to 0013) on a `pg` pool. A change
 * that touches several tables is one transaction. Several processes share it safely: an evaluation is an `UPDATE ...
 * WHERE version = $v` (the row lock makes a second one wait, then find the version moved and store nothing), and a
 * claim leases the rows it locks with `FOR UPDATE SKIP LOCKED`, so two processes never claim one delivery, nor one
 * Alertmanager re-send. A lease owner holds a session-level advisory lock on a connection of its own, made from
 * `config` (`internal/leaseOwner.ts`): a lease whose owner's lock nobody holds is over. Errors: `AccountNotFound` on
 * create for an unknown account, `StorageUnavailable` when the server is unreachable, `StorageError` otherwise.
 */
export const makeAlertStore = (pool: pg.Pool, config: PostgresConfig): AlertStore["Type"] => {
  const attempt = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: toStorageFailure })
  const rows = async <R extends pg.QueryResultRow>(on: Queryable, text: string, values: Array<unknown>) =>
    (await (on as pg.Pool).query<R>(text, values)).rows
  const rules = (where: string, values: Array<unknown>, on: Queryable = pool) =>
    rows<AlertRuleRow>(on, `${ruleSelect} WHERE ${where}`, values).then((found) => found.map(ruleOfRow))
  const firstRule = (where: string, values: Array<unknown>, on: Queryable = pool) =>
    rules(where, values, on).then((found) => Option.fromNullable(found[0]))
  const receiverRow = (account: string, id: string) =>
    rows<AlertReceiverRow>(pool, `SELECT ${receiverColumns} FROM alert_receivers WHERE account_id = $1 AND id = $2`, [
      account,
      id
    ]).then((found) => Option.fromNullable(found[0]))
  const accountMissing = (account: string) => (cause: unknown) =>
    sqlState(cause) === "23503" && String((cause as { constraint?: string }).constraint).endsWith("account_id_fkey")
      ? new AccountNotFound({ message: `no account with id ${JSON.stringify(account)}` })
      : toStorageFailure(cause)

  return {
    createReceiver: (receiver, secret) =>
      Effect.tryPromise({
        try: () =>
          pool.query(`INSERT INTO alert_receivers (${receiverColumns}) VALUES ($1, $2, $3, $4, $5, $6, $7)`, [
            receiver.id,
            receiver.accountId,
            receiver.name,
            receiver.kind,
            receiver.url,
            secret,
            receiver.createdAt
          ]),
        catch: accountMissing(receiver.accountId)
      }),
    listReceivers: (account) =>
      attempt(async () =>
        (
          await rows<AlertReceiverRow>(
            pool,
            `SELECT ${receiverColumns} FROM alert_receivers WHERE account_id = $1 ORDER BY created_at, id`,
            [account]
          )
        ).map(receiverOfRow)
      ),
    getReceiver: (account, id) => attempt(async () => Option.map(await receiverRow(account, id), receiverOfRow)),
    getReceiverForDelivery: (account, id) =>
      attempt(async () =>
        Option.map(await receiverRow(account, id), (row) => ({ ...receiverOfRow(row), secret: row.secret }))
      ),
    updateReceiver: (account, id, change) =>
      attempt(async () => {
        const updated = await rows<AlertReceiverRow>(
          pool,
          `UPDATE alert_receivers SET name = $1, kind = $2, url = $3,
            secret = CASE WHEN $4::boolean THEN $5 ELSE secret END
            WHERE account_id = $6 AND id = $7 RETURNING ${receiverColumns}`,
          [change.name, change.kind, change.url, change.secret !== undefined, change.secret ?? null, account, id]
        )
        return Option.map(Option.fromNullable(updated[0]), receiverOfRow)
      }),
    deleteReceiver: (account, id) =>
      attempt(() =>
        transaction(pool, async (client) => {
          const found = await client.query(
            "SELECT 1 FROM alert_receivers WHERE account_id = $1 AND id = $2 FOR UPDATE",
            [account, id]
          )
          if (found.rowCount === 0) return { commit: false, value: false }
          await client.query(
            `UPDATE alert_rules SET version = version + 1
              WHERE id IN (SELECT rule_id FROM alert_rule_receivers WHERE receiver_id = $1)`,
            [id]
          )
          await client.query(
            "UPDATE alert_deliveries SET state = 'failed', lease_until = NULL WHERE receiver_id = $1 AND state = 'pending'",
            [id]
          )
          await client.query("DELETE FROM alert_receivers WHERE id = $1", [id])
          return { commit: true, value: true }
        })
      ),

    createRule: (rule) =>
      Effect.tryPromise({
        try: () =>
          transaction(pool, async (client) => {
            await client.query(
              `INSERT INTO alert_rules (id, account_id, stream_id, name, condition, for_seconds, created_at,
                silenced_until, state, state_since, value, since, newest, cursor, version)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, 1)`,
              [
                rule.id,
                rule.accountId,
                rule.streamId,
                rule.name,
                JSON.stringify(rule.condition),
                rule.for,
                rule.createdAt,
                rule.silencedUntil,
                ...evaluationValues(rule.evaluation)
              ]
            )
            await setReceivers(client, rule.id, rule.receiverIds)
            return { commit: true, value: undefined }
          }),
        catch: accountMissing(rule.accountId)
      }),
    listRules: (account) => attempt(() => rules("r.account_id = $1 ORDER BY r.created_at, r.id", [account])),
    getRule: (account, id) => attempt(() => firstRule("r.account_id = $1 AND r.id = $2", [account, id])),
    rulesOfStream: (stream) => attempt(() => rules("r.stream_id = $1 ORDER BY r.created_at, r.id", [stream])),
    allRules: attempt(() => rules("true ORDER BY r.created_at, r.id", [])),
    updateRule: (account, id, change) =>
      attempt(() =>
        transaction(pool, async (client) => {
          const { definition } = change
          const updated = await client.query(
            `UPDATE alert_rules SET stream_id = $1, name = $2, condition = $3, for_seconds = $4, state = $5,
              state_since = $6, value = $7, since = $8, newest = $9, cursor = $10, version = version + 1
              WHERE account_id = $11 AND id = $12 AND version = $13`,
            [
              change.streamId,
              definition.name,
              JSON.stringify(definition.condition),
              definition.for,
              ...evaluationValues(change.evaluation),
              account,
              id,
              change.version
            ]
          )
          if (updated.rowCount === 0) return { commit: false, value: Option.none<AlertRule>() }
          await setReceivers(client, id, definition.receiverIds)
          return { commit: true, value: await firstRule("r.id = $1", [id], client) }
        })
      ),
    deleteRule: (account, id) =>
      attempt(async () => {
        const result = await pool.query("DELETE FROM alert_rules WHERE account_id = $1 AND id = $2", [account, id])
        return (result.rowCount ?? 0) > 0
      }),
    silenceRule: (account, id, until) =>
      attempt(async () => {
        const result = await pool.query(
          "UPDATE alert_rules SET silenced_until = $1, version = version + 1 WHERE account_id = $2 AND id = $3",
          [until, account, id]
        )
        return result.rowCount === 0 ? Option.none() : await firstRule("r.id = $1", [id])
      }),
    ...ruleSignalReads(pool),
    commitEvaluations: (commits) =>
      attempt(() =>
        transaction(pool, async (client) => {
          // Without a transition the commit need not wait for the WAL flush (see the port's `commitEvaluations`).
          if (commits.every((c) => c.transitions.length === 0)) await client.query("SET LOCAL synchronous_commit = off")
          const stored: Array<Option.Option<AlertRule>> = []
          for (const { rule: id, version, evaluation, transitions } of commits) {
            const updated = await client.query(
              `UPDATE alert_rules SET state = $1, state_since = $2, value = $3, since = $4, newest = $5, cursor = $6,
              version = version + 1 WHERE id = $7 AND version = $8`,
              [...evaluationValues(evaluation), id, version]
            )
            if (updated.rowCount === 0) {
              stored.push(Option.none())
              continue
            }
            const rule = Option.getOrThrow(await firstRule("r.id = $1", [id], client))
            for (const t of transitions) {
              const [event] = await rows<{ seq: string }>(
                client,
                `INSERT INTO alert_events (id, account_id, rule_id, rule_name, stream_name, condition, for_seconds,
                from_state, to_state, value, ts, at, starts_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING seq`,
                [
                  newAlertEventId(),
                  rule.accountId,
                  rule.id,
                  rule.name,
                  rule.streamName,
                  JSON.stringify(rule.condition),
                  rule.for,
                  t.from,
                  t.to,
                  t.value,
                  t.ts,
                  t.at,
                  t.startsAt
                ]
              )
              if (rule.receiverIds.length === 0) continue
              await client.query(
                `INSERT INTO alert_deliveries (id, event_seq, rule_id, position, receiver_id, state, attempts,
                last_status, next_attempt_at, lease_until)
                SELECT d, $1, $2, p - 1, r, $3, 0, NULL, $4, NULL
                FROM unnest($5::text[], $6::text[]) WITH ORDINALITY AS m(d, r, p)`,
                [
                  event!.seq,
                  rule.id,
                  t.silenced ? "silenced" : "pending",
                  t.at,
                  rule.receiverIds.map(() => newDeliveryId()),
                  rule.receiverIds
                ]
              )
            }
            stored.push(Option.some(rule))
          }
          return { commit: true, value: stored }
        })
      ),

    listEvents: (account, since, limit) =>
      attempt(async () =>
        (
          await rows<EventRow & { readonly deliveries: ReadonlyArray<[string, string, number, number | null]> }>(
            pool,
            `SELECT e.*, coalesce((SELECT json_agg(json_build_array(receiver_id, state, attempts, last_status)
                ORDER BY position) FROM alert_deliveries WHERE event_seq = e.seq), '[]') AS deliveries
              FROM alert_events e WHERE e.account_id = $1 AND e.at > $2 ORDER BY e.at, e.seq LIMIT $3`,
            [account, since, limit]
          )
        ).map((row): AlertEvent => ({
          ...eventOfRow(row),
          deliveries: row.deliveries.map(([receiverId, state, attempts, lastStatus]) => ({
            receiverId: receiverId as ReceiverId,
            state: state as DeliveryState,
            attempts,
            lastStatus
          }))
        }))
      ),
    openDeliveryOwner: holdLeaseOwner(config, (owner) =>
      Effect.ignore(
        attempt(() =>
          pool.query(
            `UPDATE alert_deliveries SET lease_until = NULL, lease_owner = NULL
              WHERE state = 'pending' AND lease_owner = $1`,
            [owner]
          )
        )
      )
    ),
    claimDeliveries: (owner, now, leaseUntil, limit) =>
      attempt(async () =>
        (await rows<ClaimRow>(pool, claimStatement, [now, leaseUntil, limit, owner])).map((row): ClaimedDelivery => ({
          id: row.delivery_id as DeliveryId,
          attempts: row.attempts,
          event: eventOfRow(row),
          accountName: row.account_name,
          // row_to_json gives bigint columns as JSON numbers.
          receiver: {
            ...receiverOfRow(row.receiver),
            secret: row.receiver.secret
          }
        }))
      ),
    recordAttempt: (id, outcome) =>
      attempt(async () => {
        const result = await pool.query(
          `UPDATE alert_deliveries SET attempts = attempts + 1, state = $1, last_status = $2,
            next_attempt_at = coalesce($3, next_attempt_at), lease_until = NULL, lease_owner = NULL
            WHERE id = $4 AND state = 'pending'`,
          [outcome.state, outcome.status, outcome.nextAttemptAt, id]
        )
        return (result.rowCount ?? 0) > 0
      }),
    claimResends: (now, every, limit) =>
      attempt(async () => {
        const claimed = await rows<{ id: string }>(pool, resendStatement, [now, now - every, limit])
        if (claimed.length === 0) return []
        return rules("r.id = ANY($1) ORDER BY r.created_at, r.id", [claimed.map((row) => row.id)])
      }),
    nextDeliveryAt: attempt(async () => {
      const [row] = await rows<{ next: string | null }>(
        pool,
        `SELECT min(greatest(d.next_attempt_at, coalesce(d.lease_until, 0))) AS next FROM alert_deliveries d
          WHERE ${head}`,
        []
      )
      return row?.next == null ? null : (Number(row.next) as Micros)
    })
  }
}
