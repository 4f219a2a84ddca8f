import type { AccountId } from "../Account.js"
import type { StreamName } from "../StreamName.js"
import type { Micros } from "../Time.js"
import type { StreamId } from "../Widget.js"
import type { AlertRuleId, AlertState, Condition } from "./AlertRule.js"
import type { AlertEvent, AlertEventId, AlertRule } from "./AlertStore.js"
import type { Receiver, ReceiverId, ReceiverKind } from "./Receiver.js"

/**
 * The rows of the alert tables as both SQL adapters read them (SQLite migration 0009, PostgreSQL 0010: the same
 * columns), and their decoding into core's types, written once. An integer column may arrive as a number (SQLite)
 * or as text (PostgreSQL's `bigint`): every one is read through `Number`, exact for integer microseconds. `condition`
 * is the condition's JSON text.
 */

type Int = number | string

/** A row of `alert_receivers`. */
export interface AlertReceiverRow {
  readonly id: string
  readonly account_id: string
  readonly name: string
  readonly kind: string
  readonly url: string
  readonly secret: string | null
  readonly created_at: Int
}

/** A row of `alert_rules` with its stream's name and its receivers' ids in order. */
export interface AlertRuleRow {
  readonly id: string
  readonly account_id: string
  readonly stream_id: Int
  readonly stream_name: string
  readonly name: string
  readonly condition: string
  readonly for_seconds: number
  readonly created_at: Int
  readonly silenced_until: Int | null
  readonly state: string
  readonly state_since: Int
  readonly value: number | null
  readonly since: Int | null
  readonly newest: Int
  readonly cursor: Int | null
  readonly version: number
  readonly receiver_ids: ReadonlyArray<string>
}

/** A row of `alert_events`. */
export interface AlertEventRow {
  readonly id: string
  readonly account_id: string
  readonly rule_id: string
  readonly rule_name: string
  readonly stream_name: string
  readonly condition: string
  readonly for_seconds: number
  readonly from_state: string
  readonly to_state: string
  readonly value: number | null
  readonly ts: Int | null
  readonly at: Int
  readonly starts_at: Int
}

const micros = (n: Int): Micros => Number(n) as Micros
const microsOrNull = (n: Int | null): Micros | null => (n === null ? null : micros(n))

/** A receiver row as the admin API shows it: never its secret, only `hasSecret`. */
export const receiverOfRow = (row: AlertReceiverRow): Receiver => ({
  id: row.id as ReceiverId,
  accountId: row.account_id as AccountId,
  name: row.name,
  kind: row.kind as ReceiverKind,
  url: row.url,
  hasSecret: row.secret !== null,
  createdAt: micros(row.created_at)
})

/** A rule row as the port returns it. */
export const ruleOfRow = (row: AlertRuleRow): AlertRule => ({
  id: row.id as AlertRuleId,
  accountId: row.account_id as AccountId,
  streamId: Number(row.stream_id) as StreamId,
  name: row.name,
  streamName: row.stream_name as StreamName,
  condition: JSON.parse(row.condition) as Condition,
  for: row.for_seconds,
  receiverIds: row.receiver_ids as ReadonlyArray<ReceiverId>,
  createdAt: micros(row.created_at),
  silencedUntil: microsOrNull(row.silenced_until),
  evaluation: {
    state: row.state as AlertState,
    stateSince: micros(row.state_since),
    value: row.value,
    since: microsOrNull(row.since),
    newest: micros(row.newest),
    cursor: microsOrNull(row.cursor)
  },
  version: row.version
})

/** An event row, without its deliveries. */
export const eventOfRow = (row: AlertEventRow): Omit<AlertEvent, "deliveries"> => ({
  id: row.id as AlertEventId,
  accountId: row.account_id as AccountId,
  ruleId: row.rule_id as AlertRuleId,
  ruleName: row.rule_name,
  streamName: row.stream_name,
  condition: JSON.parse(row.condition) as Condition,
  for: row.for_seconds,
  from: row.from_state as AlertState,
  to: row.to_state as AlertState,
  value: row.value,
  ts: microsOrNull(row.ts),
  at: micros(row.at),
  startsAt: micros(row.starts_at)
})
