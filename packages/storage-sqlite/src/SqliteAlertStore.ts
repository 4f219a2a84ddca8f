import type Database from "better-sqlite3"
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
  type DeliveryStatus,
  type EvaluationCommit,
  eventOfRow,
  type LeaseOwner,
  type Micros,
  newAlertEventId,
  newDeliveryId,
  newLeaseOwner,
  type NewAlertRule,
  receiverOfRow,
  type ReceiverForDelivery,
  type ReceiverId,
  ruleOfRow
} from "@dashstream/core"
import { Effect, Option } from "effect"
import { storageFailure } from "./internal/errors.js"
import { ruleSignalReads } from "./internal/ruleSignals.js"

type RuleRow = Omit<AlertRuleRow, "receiver_ids"> & {
  /** The JSON array of the rule's receiver ids, in position order. */
  readonly receiver_ids: string
}

type EventRow = AlertEventRow & { readonly seq: number }

interface ClaimRow extends EventRow {
  readonly delivery_id: string
  readonly attempts: number
  readonly account_name: string
  readonly receiver_id: string
  readonly receiver_account_id: string
  readonly receiver_name: string
  readonly kind: string
  readonly url: string
  readonly secret: string | null
  readonly receiver_created_at: number
}

const toRule = (row: RuleRow): AlertRule =>
  ruleOfRow({ ...row, receiver_ids: JSON.parse(row.receiver_ids) as ReadonlyArray<string> })

const receiverColumns = "id, account_id, name, kind, url, secret, created_at"

const ruleSelect = `SELECT r.id, r.account_id, r.stream_id, s.name AS stream_name, r.name, r.condition, r.for_seconds,
  r.created_at, r.silenced_until, r.state, r.state_since, r.value, r.since, r.newest, r.cursor, r.version,
  (SELECT json_group_array(receiver_id ORDER BY position) FROM alert_rule_receivers WHERE rule_id = r.id)
    AS receiver_ids
  FROM alert_rules r JOIN streams s ON s.id = r.stream_id`

// The deliveries a claim may take: pending, and the oldest pending of their rule and receiver.
const head = `d.state = 'pending' AND NOT EXISTS (SELECT 1 FROM alert_deliveries e
  WHERE e.state = 'pending' AND e.rule_id = d.rule_id AND e.receiver_id = d.receiver_id AND e.event_seq < d.event_seq)`

/**
 * The `AlertStore` port (docs/api.md section 18; the tables of migrations 0009 to 0012) over an open, migrated connection.
 * Statements are prepared once and run synchronously; a change that touches several tables (a rule and its
 * receivers, an evaluation with its events and deliveries, a claim) is one better-sqlite3 transaction, never a Kysely
 * one, which would span event-loop turns on the shared connection. One alerts process (migration 0010): a claim's
 * lease keeps a delivery from a second claim of the same process, and opening a lease owner releases the leases of
 * every other owner, left by a process that is gone. SQLite errors map to `StorageUnavailable` (busy, locked, closed) or
 * `StorageError`. Throws when the schema is missing.
 */
export const make = (db: Database.Database): AlertStore["Type"] => {
  const accountExists = db.prepare<[string], number>("SELECT 1 FROM accounts WHERE id = ?").pluck()
  const insertReceiver = db.prepare<[string, string, string, string, string, string | null, number]>(
    `INSERT INTO alert_receivers (${receiverColumns}) VALUES (?, ?, ?, ?, ?, ?, ?)`
  )
  const listReceivers = db.prepare<[string], AlertReceiverRow>(
    `SELECT ${receiverColumns} FROM alert_receivers WHERE account_id = ? ORDER BY created_at, id`
  )
  const getReceiver = db.prepare<[string, string], AlertReceiverRow>(
    `SELECT ${receiverColumns} FROM alert_receivers WHERE account_id = ? AND id = ?`
  )
  const updateReceiver = db.prepare<[string, string, string, number, string | null, string, string]>(
    `UPDATE alert_receivers SET name = ?, kind = ?, url = ?, secret = CASE WHEN ? THEN ? ELSE secret END
      WHERE account_id = ? AND id = ?`
  )
  const bumpRulesOfReceiver = db.prepare<[string]>(
    `UPDATE alert_rules SET version = version + 1
      WHERE id IN (SELECT rule_id FROM alert_rule_receivers WHERE receiver_id = ?)`
  )
  const failDeliveriesOf = db.prepare<[string]>(
    "UPDATE alert_deliveries SET state = 'failed', lease_until = NULL WHERE receiver_id = ? AND state = 'pending'"
  )
  const deleteReceiver = db.prepare<[string, string]>("DELETE FROM alert_receivers WHERE account_id = ? AND id = ?")

  const insertRule = db.prepare(
    `INSERT INTO alert_rules (id, account_id, stream_id, name, condition, for_seconds, created_at, silenced_until,
      state, state_since, value, since, newest, cursor, version)
      VALUES (@id, @accountId, @streamId, @name, @condition, @for, @createdAt, @silencedUntil,
        @state, @stateSince, @value, @since, @newest, @cursor, 1)`
  )
  const insertRuleReceiver = db.prepare<[string, number, string]>(
    "INSERT INTO alert_rule_receivers (rule_id, position, receiver_id) VALUES (?, ?, ?)"
  )
  const deleteRuleReceivers = db.prepare<[string]>("DELETE FROM alert_rule_receivers WHERE rule_id = ?")
  const ruleReceivers = db
    .prepare<[string], string>("SELECT receiver_id FROM alert_rule_receivers WHERE rule_id = ? ORDER BY position")
    .pluck()
  const listRules = db.prepare<[string], RuleRow>(`${ruleSelect} WHERE r.account_id = ? ORDER BY r.created_at, r.id`)
  const getRule = db.prepare<[string, string], RuleRow>(`${ruleSelect} WHERE r.account_id = ? AND r.id = ?`)
  const ruleById = db.prepare<[string], RuleRow>(`${ruleSelect} WHERE r.id = ?`)
  const rulesOfStream = db.prepare<[number], RuleRow>(`${ruleSelect} WHERE r.stream_id = ? ORDER BY r.created_at, r.id`)
  const allRules = db.prepare<[], RuleRow>(`${ruleSelect} ORDER BY r.created_at, r.id`)
  const updateRule = db.prepare(
    `UPDATE alert_rules SET stream_id = @streamId, name = @name, condition = @condition, for_seconds = @for,
      state = @state, state_since = @stateSince, value = @value, since = @since, newest = @newest, cursor = @cursor,
      version = version + 1
      WHERE account_id = @accountId AND id = @id AND version = @version`
  )
  const setEvaluation = db.prepare(
    `UPDATE alert_rules SET state = @state, state_since = @stateSince, value = @value, since = @since,
      newest = @newest, cursor = @cursor, version = version + 1
      WHERE id = @id AND version = @version`
  )
  const silence = db.prepare<[number | null, string, string]>(
    "UPDATE alert_rules SET silenced_until = ?, version = version + 1 WHERE account_id = ? AND id = ?"
  )
  const deleteRule = db.prepare<[string, string]>("DELETE FROM alert_rules WHERE account_id = ? AND id = ?")

  const insertEvent = db.prepare(
    `INSERT INTO alert_events (id, account_id, rule_id, rule_name, stream_name, condition, for_seconds, from_state,
      to_state, value, ts, at, starts_at)
      VALUES (@id, @accountId, @ruleId, @ruleName, @streamName, @condition, @for, @from, @to, @value, @ts, @at,
        @startsAt)`
  )
  const insertDelivery = db.prepare<[string, number | bigint, string, number, string, string, number]>(
    `INSERT INTO alert_deliveries (id, event_seq, rule_id, position, receiver_id, state, attempts, last_status,
      next_attempt_at, lease_until) VALUES (?, ?, ?, ?, ?, ?, 0, NULL, ?, NULL)`
  )
  const listEvents = db.prepare<[string, number, number], EventRow & { readonly deliveries: string }>(
    `SELECT e.*, (SELECT json_group_array(json_array(receiver_id, state, attempts, last_status) ORDER BY position)
        FROM alert_deliveries WHERE event_seq = e.seq) AS deliveries
      FROM alert_events e WHERE e.account_id = ? AND e.at > ? ORDER BY e.at, e.seq LIMIT ?`
  )
  const claimable = db.prepare<[number, number, number], ClaimRow>(
    `SELECT ev.*, d.id AS delivery_id, d.attempts, a.name AS account_name, r.id AS receiver_id,
        r.account_id AS receiver_account_id, r.name AS receiver_name, r.kind, r.url, r.secret,
        r.created_at AS receiver_created_at
      FROM alert_deliveries d
      JOIN alert_events ev ON ev.seq = d.event_seq
      JOIN accounts a ON a.id = ev.account_id
      JOIN alert_receivers r ON r.id = d.receiver_id
      WHERE ${head} AND d.next_attempt_at <= ? AND (d.lease_until IS NULL OR d.lease_until <= ?)
      ORDER BY d.event_seq, d.position LIMIT ?`
  )
  const lease = db.prepare<[number, number, string]>(
    "UPDATE alert_deliveries SET lease_until = ?, lease_owner = ? WHERE id = ?"
  )
  const recordAttempt = db.prepare<[string, number | null, number | null, string]>(
    `UPDATE alert_deliveries SET attempts = attempts + 1, state = ?, last_status = ?,
      next_attempt_at = coalesce(?, next_attempt_at), lease_until = NULL, lease_owner = NULL
      WHERE id = ? AND state = 'pending'`
  )
  const releaseOthers = db.prepare<[number]>(
    `UPDATE alert_deliveries SET lease_until = NULL, lease_owner = NULL
      WHERE state = 'pending' AND lease_until IS NOT NULL AND lease_owner IS NOT ?`
  )
  const releaseOwn = db.prepare<[number]>(
    `UPDATE alert_deliveries SET lease_until = NULL, lease_owner = NULL
      WHERE state = 'pending' AND lease_owner = ?`
  )
  const dueResends = db.prepare<[number, number], { readonly id: string }>(
    `SELECT r.id FROM alert_rules r
      WHERE r.state = 'firing' AND max(coalesce(r.resent_at, 0), r.state_since) <= ?
        AND EXISTS (SELECT 1 FROM alert_rule_receivers rr JOIN alert_receivers v ON v.id = rr.receiver_id
          WHERE rr.rule_id = r.id AND v.kind = 'alertmanager')
      ORDER BY r.created_at, r.id LIMIT ?`
  )
  const markResent = db.prepare<[number, string]>("UPDATE alert_rules SET resent_at = ? WHERE id = ?")
  const nextDelivery = db
    .prepare<[], number | null>(
      `SELECT min(max(d.next_attempt_at, coalesce(d.lease_until, 0))) FROM alert_deliveries d WHERE ${head}`
    )
    .pluck()

  const attempt = <A>(f: () => A) => Effect.try({ try: f, catch: storageFailure })
  const oneRule = (row: RuleRow | undefined) => Option.map(Option.fromNullable(row), toRule)
  const oneReceiver = (row: AlertReceiverRow | undefined) => Option.map(Option.fromNullable(row), receiverOfRow)
  const evaluationParams = (evaluation: AlertRule["evaluation"]) => ({
    state: evaluation.state,
    stateSince: evaluation.stateSince,
    value: evaluation.value,
    since: evaluation.since,
    newest: evaluation.newest,
    cursor: evaluation.cursor
  })
  // Rewritten only when they differ: the rows' triggers signal the rule's stream (migration 0012).
  const setReceivers = (rule: string, receiverIds: ReadonlyArray<string>) => {
    const current = ruleReceivers.all(rule)
    if (current.length === receiverIds.length && current.every((id, i) => id === receiverIds[i])) return
    deleteRuleReceivers.run(rule)
    receiverIds.forEach((receiver, position) => insertRuleReceiver.run(rule, position, receiver))
  }

  const createRule = db.transaction((rule: NewAlertRule) => {
    if (accountExists.get(rule.accountId) === undefined) return false
    insertRule.run({
      id: rule.id,
      accountId: rule.accountId,
      streamId: rule.streamId,
      name: rule.name,
      condition: JSON.stringify(rule.condition),
      for: rule.for,
      createdAt: rule.createdAt,
      silencedUntil: rule.silencedUntil,
      ...evaluationParams(rule.evaluation)
    })
    setReceivers(rule.id, rule.receiverIds)
    return true
  })
  const changeRule = db.transaction(
    (account: string, id: string, change: Parameters<AlertStore["Type"]["updateRule"]>[2]) => {
      const { definition } = change
      const changed = updateRule.run({
        accountId: account,
        id,
        streamId: change.streamId,
        name: definition.name,
        condition: JSON.stringify(definition.condition),
        for: definition.for,
        version: change.version,
        ...evaluationParams(change.evaluation)
      })
      if (changed.changes === 0) return undefined
      setReceivers(id, definition.receiverIds)
      return getRule.get(account, id)
    }
  )
  const removeReceiver = db.transaction((account: string, id: string) => {
    if (getReceiver.get(account, id) === undefined) return false
    bumpRulesOfReceiver.run(id)
    failDeliveriesOf.run(id)
    deleteReceiver.run(account, id)
    return true
  })
  // One commit of `commitEvaluations`, inside its transaction: the rule row as stored, or undefined when stale.
  const commitOne = ({ rule: id, version, evaluation, transitions }: EvaluationCommit) => {
    if (setEvaluation.run({ id, version, ...evaluationParams(evaluation) }).changes === 0) return undefined
    const rule = ruleById.get(id)!
    const receivers = JSON.parse(rule.receiver_ids) as ReadonlyArray<string>
    for (const t of transitions) {
      const seq = insertEvent.run({
        id: newAlertEventId(),
        accountId: rule.account_id,
        ruleId: rule.id,
        ruleName: rule.name,
        streamName: rule.stream_name,
        condition: rule.condition,
        for: rule.for_seconds,
        from: t.from,
        to: t.to,
        value: t.value,
        ts: t.ts,
        at: t.at,
        startsAt: t.startsAt
      }).lastInsertRowid
      receivers.forEach((receiver, position) =>
        insertDelivery.run(newDeliveryId(), seq, rule.id, position, receiver, t.silenced ? "silenced" : "pending", t.at)
      )
    }
    return rule
  }
  const commit = db.transaction((commits: ReadonlyArray<EvaluationCommit>) => commits.map(commitOne))
  // A commit of evaluations without a transition is written with `synchronous=NORMAL` (see the port's
  // `commitEvaluations`): no WAL sync on the event loop; the next synced commit (a push's, a transition's) syncs it.
  // `db.exec` each time: a prepared pragma that sets a value takes effect when prepared, not when run.
  const level = db.memory ? 0 : (db.pragma("synchronous", { simple: true }) as number)
  const commitRelaxed = (commits: ReadonlyArray<EvaluationCommit>) => {
    if (level < 2 || commits.some((c) => c.transitions.length > 0)) return commit.immediate(commits)
    db.exec("PRAGMA synchronous = NORMAL")
    try {
      return commit.immediate(commits)
    } finally {
      db.exec(`PRAGMA synchronous = ${level}`)
    }
  }
  const claim = db.transaction((owner: LeaseOwner, now: number, leaseUntil: number, limit: number) => {
    const rows = claimable.all(now, now, limit)
    for (const row of rows) lease.run(leaseUntil, owner, row.delivery_id)
    return rows
  })
  const claimResends = db.transaction((now: number, every: number, limit: number) =>
    dueResends.all(now - every, limit).map(({ id }) => {
      markResent.run(now, id)
      return toRule(ruleById.get(id)!)
    })
  )

  return {
    createReceiver: (receiver, secret) =>
      Effect.flatMap(
        attempt(() => {
          if (accountExists.get(receiver.accountId) === undefined) return false
          insertReceiver.run(
            receiver.id,
            receiver.accountId,
            receiver.name,
            receiver.kind,
            receiver.url,
            secret,
            receiver.createdAt
          )
          return true
        }),
        (created) =>
          created
            ? Effect.void
            : Effect.fail(new AccountNotFound({ message: `no account with id ${JSON.stringify(receiver.accountId)}` }))
      ),
    listReceivers: (account) => attempt(() => listReceivers.all(account).map(receiverOfRow)),
    getReceiver: (account, id) => attempt(() => oneReceiver(getReceiver.get(account, id))),
    getReceiverForDelivery: (account, id) =>
      attempt(() =>
        Option.map(Option.fromNullable(getReceiver.get(account, id)), (row): ReceiverForDelivery => ({
          ...receiverOfRow(row),
          secret: row.secret
        }))
      ),
    updateReceiver: (account, id, change) =>
      attempt(() => {
        const replace = change.secret === undefined ? 0 : 1
        const secret = change.secret ?? null
        if (updateReceiver.run(change.name, change.kind, change.url, replace, secret, account, id).changes === 0) {
          return Option.none()
        }
        return oneReceiver(getReceiver.get(account, id))
      }),
    deleteReceiver: (account, id) => attempt(() => removeReceiver.immediate(account, id)),

    createRule: (rule) =>
      Effect.flatMap(
        attempt(() => createRule.immediate(rule)),
        (created) =>
          created
            ? Effect.void
            : Effect.fail(new AccountNotFound({ message: `no account with id ${JSON.stringify(rule.accountId)}` }))
      ),
    listRules: (account) => attempt(() => listRules.all(account).map(toRule)),
    getRule: (account, id) => attempt(() => oneRule(getRule.get(account, id))),
    rulesOfStream: (stream) => attempt(() => rulesOfStream.all(stream).map(toRule)),
    allRules: attempt(() => allRules.all().map(toRule)),
    updateRule: (account, id, change) => attempt(() => oneRule(changeRule.immediate(account, id, change))),
    deleteRule: (account, id) => attempt(() => deleteRule.run(account, id).changes > 0),
    silenceRule: (account, id, until) =>
      attempt(() =>
        silence.run(until, account, id).changes === 0 ? Option.none() : oneRule(getRule.get(account, id))
      ),
    commitEvaluations: (commits) => attempt(() => commitRelaxed(commits).map(oneRule)),
    ...ruleSignalReads(db),

    listEvents: (account, since, limit) =>
      attempt(() =>
        listEvents.all(account, since, limit).map((row): AlertEvent => ({
          ...eventOfRow(row),
          deliveries: (JSON.parse(row.deliveries) as ReadonlyArray<[string, string, number, number | null]>).map(
            ([receiverId, state, attempts, lastStatus]): DeliveryStatus => ({
              receiverId: receiverId as ReceiverId,
              state: state as DeliveryState,
              attempts,
              lastStatus
            })
          )
        }))
      ),
    openDeliveryOwner: Effect.acquireRelease(
      attempt(() => {
        const owner = newLeaseOwner()
        releaseOthers.run(owner)
        return owner
      }),
      (owner) => Effect.ignore(attempt(() => releaseOwn.run(owner)))
    ),
    claimDeliveries: (owner, now, leaseUntil, limit) =>
      attempt(() =>
        claim.immediate(owner, now, leaseUntil, limit).map((row): ClaimedDelivery => ({
          id: row.delivery_id as DeliveryId,
          attempts: row.attempts,
          event: eventOfRow(row),
          accountName: row.account_name,
          receiver: {
            ...receiverOfRow({
              id: row.receiver_id,
              account_id: row.receiver_account_id,
              name: row.receiver_name,
              kind: row.kind,
              url: row.url,
              secret: row.secret,
              created_at: row.receiver_created_at
            }),
            secret: row.secret
          }
        }))
      ),
    recordAttempt: (id, outcome) =>
      attempt(() => recordAttempt.run(outcome.state, outcome.status, outcome.nextAttemptAt, id).changes > 0),
    claimResends: (now, every, limit) => attempt(() => claimResends.immediate(now, every, limit)),
    nextDeliveryAt: attempt(() => (nextDelivery.get() ?? null) as Micros | null)
  }
}
