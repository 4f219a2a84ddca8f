import { Effect, Option } from "effect"
import type { Account, AccountId } from "../Account.js"
import type { AlertRuleId } from "../alerts/AlertRule.js"
import {
  type AlertEvent,
  type AlertRule,
  type AlertStore,
  type ClaimedDelivery,
  type DeliveryId,
  type DeliveryState,
  type LeaseOwner,
  newAlertEventId,
  newDeliveryId,
  newLeaseOwner
} from "../alerts/AlertStore.js"
import type { Receiver, ReceiverId } from "../alerts/Receiver.js"
import { type FiringRule, signalled } from "../alerts/RuleSignal.js"
import { AccountNotFound, quoted, StorageError } from "../Errors.js"
import type { Micros } from "../Time.js"
import type { StreamId, Widget } from "../Widget.js"

/**
 * The alert storage of the in-memory store (`AlertStore`, docs/api.md section 18) over the memory store's accounts
 * and widgets. A rule whose widget is gone is dropped before any read or write looks at rules, which is what the
 * foreign key of the SQL stores does at the widget's deletion. One process: a claim leases rows as PostgreSQL's does,
 * and opening a lease owner releases every other owner's leases, as SQLite's does.
 */

interface DeliveryRow {
  readonly id: DeliveryId
  readonly event: Omit<AlertEvent, "deliveries">
  readonly seq: number
  readonly position: number
  readonly receiverId: ReceiverId
  state: DeliveryState
  attempts: number
  lastStatus: number | null
  nextAttemptAt: Micros
  leaseUntil: Micros | null
  leaseOwner: LeaseOwner | null
}

const byCreation = <T extends { readonly createdAt: number; readonly id: string }>(a: T, b: T) =>
  a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** The `AlertStore` port over the memory store's `accounts` and `widgets` maps (see the module comment). */
export const make = (
  accounts: ReadonlyMap<AccountId, Account>,
  widgets: ReadonlyMap<StreamId, Widget>
): AlertStore["Type"] => {
  const receivers = new Map<ReceiverId, { receiver: Receiver; secret: string | null }>()
  const rules = new Map<AlertRuleId, AlertRule>()
  const events: Array<{ readonly event: Omit<AlertEvent, "deliveries">; readonly seq: number }> = []
  const deliveries: Array<DeliveryRow> = []
  // When each rule was last re-sent to Alertmanager (`claimResends`).
  const resentAt = new Map<AlertRuleId, Micros>()
  let seq = 0

  // Rule signals (`RuleSignal.ts`): the `seq` of each stream's last signalled change.
  const signals = new Map<StreamId, number>()
  let signalSeq = 0
  const signal = (before: AlertRule | undefined, after: AlertRule | undefined) => {
    if (!signalled(before, after)) return
    for (const stream of new Set([before?.streamId, after?.streamId])) {
      if (stream !== undefined) signals.set(stream, ++signalSeq)
    }
  }
  const remove = (id: AlertRuleId) => {
    signal(rules.get(id), undefined)
    return rules.delete(id)
  }
  const purge = () => {
    for (const [id, rule] of rules) if (!widgets.has(rule.streamId)) remove(id)
  }
  const ruleOf = (account: AccountId, id: AlertRuleId) => {
    purge()
    const rule = rules.get(id)
    return rule !== undefined && rule.accountId === account ? rule : undefined
  }
  const receiverOf = (account: AccountId, id: ReceiverId) => {
    const found = receivers.get(id)
    return found !== undefined && found.receiver.accountId === account ? found : undefined
  }
  const put = (rule: AlertRule) => {
    signal(rules.get(rule.id), rule)
    rules.set(rule.id, rule)
    return rule
  }
  const release = (whose: (row: DeliveryRow) => boolean) => {
    for (const row of deliveries) {
      if (row.state === "pending" && row.leaseOwner !== null && whose(row)) {
        row.leaseUntil = null
        row.leaseOwner = null
      }
    }
  }
  const accountNotFound = (id: AccountId) => new AccountNotFound({ message: `no account with id ${quoted(id)}` })
  // The oldest pending delivery of each rule and receiver: the only ones a claim may take.
  const heads = () => {
    const first = new Map<string, DeliveryRow>()
    for (const row of deliveries) {
      const key = `${row.event.ruleId} ${row.receiverId}`
      if (row.state === "pending" && !first.has(key)) first.set(key, row)
    }
    return [...first.values()]
  }

  return {
    createReceiver: (receiver, secret) =>
      Effect.suspend(() => {
        if (!accounts.has(receiver.accountId)) return Effect.fail(accountNotFound(receiver.accountId))
        receivers.set(receiver.id, { receiver: { ...receiver, hasSecret: secret !== null }, secret })
        return Effect.void
      }),
    listReceivers: (account) =>
      Effect.sync(() =>
        [...receivers.values()]
          .map((r) => r.receiver)
          .filter((r) => r.accountId === account)
          .sort(byCreation)
      ),
    getReceiver: (account, id) => Effect.sync(() => Option.fromNullable(receiverOf(account, id)?.receiver)),
    getReceiverForDelivery: (account, id) =>
      Effect.sync(() =>
        Option.map(Option.fromNullable(receiverOf(account, id)), (r) => ({ ...r.receiver, secret: r.secret }))
      ),
    updateReceiver: (account, id, change) =>
      Effect.sync(() => {
        const found = receiverOf(account, id)
        if (found === undefined) return Option.none()
        const secret = change.secret === undefined ? found.secret : change.secret
        const receiver: Receiver = {
          ...found.receiver,
          name: change.name,
          kind: change.kind,
          url: change.url,
          hasSecret: secret !== null
        }
        receivers.set(id, { receiver, secret })
        return Option.some(receiver)
      }),
    deleteReceiver: (account, id) =>
      Effect.sync(() => {
        if (receiverOf(account, id) === undefined) return false
        receivers.delete(id)
        purge()
        for (const rule of rules.values()) {
          if (rule.receiverIds.includes(id)) {
            put({ ...rule, receiverIds: rule.receiverIds.filter((r) => r !== id), version: rule.version + 1 })
          }
        }
        for (const row of deliveries) {
          if (row.receiverId === id && row.state === "pending") {
            row.state = "failed"
            row.leaseUntil = null
            row.leaseOwner = null
          }
        }
        return true
      }),

    createRule: (rule) =>
      Effect.suspend((): Effect.Effect<void, AccountNotFound | StorageError> => {
        if (!accounts.has(rule.accountId)) return Effect.fail(accountNotFound(rule.accountId))
        const widget = widgets.get(rule.streamId)
        const missing = rule.receiverIds.find((id) => receiverOf(rule.accountId, id) === undefined)
        if (widget === undefined || widget.accountId !== rule.accountId || missing !== undefined) {
          return Effect.fail(new StorageError({ cause: new Error("a rule's stream or receiver was deleted") }))
        }
        put({ ...rule, version: 1 })
        return Effect.void
      }),
    listRules: (account) =>
      Effect.sync(() => {
        purge()
        return [...rules.values()].filter((r) => r.accountId === account).sort(byCreation)
      }),
    getRule: (account, id) => Effect.sync(() => Option.fromNullable(ruleOf(account, id))),
    rulesOfStream: (stream) =>
      Effect.sync(() => {
        purge()
        return [...rules.values()].filter((r) => r.streamId === stream).sort(byCreation)
      }),
    allRules: Effect.sync(() => {
      purge()
      return [...rules.values()].sort(byCreation)
    }),
    updateRule: (account, id, change) =>
      Effect.suspend(() => {
        const rule = ruleOf(account, id)
        if (rule === undefined || rule.version !== change.version) return Effect.succeed(Option.none())
        const missing = change.definition.receiverIds.find((r) => receiverOf(account, r) === undefined)
        if (!widgets.has(change.streamId) || missing !== undefined) {
          return Effect.fail(new StorageError({ cause: new Error("a rule's stream or receiver was deleted") }))
        }
        return Effect.succeed(
          Option.some(
            put({
              ...rule,
              ...change.definition,
              streamId: change.streamId,
              evaluation: change.evaluation,
              version: rule.version + 1
            })
          )
        )
      }),
    deleteRule: (account, id) => Effect.sync(() => ruleOf(account, id) !== undefined && remove(id)),
    silenceRule: (account, id, until) =>
      Effect.sync(() => {
        const rule = ruleOf(account, id)
        return rule === undefined
          ? Option.none()
          : Option.some(put({ ...rule, silencedUntil: until, version: rule.version + 1 }))
      }),
    commitEvaluations: (commits) =>
      Effect.sync(() => {
        purge()
        return commits.map(({ rule: id, version, evaluation, transitions }) => {
          const rule = rules.get(id)
          if (rule === undefined || rule.version !== version) return Option.none()
          for (const t of transitions) {
            const event: Omit<AlertEvent, "deliveries"> = {
              id: newAlertEventId(),
              accountId: rule.accountId,
              ruleId: rule.id,
              ruleName: rule.name,
              streamName: rule.streamName,
              condition: rule.condition,
              for: rule.for,
              from: t.from,
              to: t.to,
              value: t.value,
              ts: t.ts,
              at: t.at,
              startsAt: t.startsAt
            }
            const eventSeq = ++seq
            events.push({ event, seq: eventSeq })
            rule.receiverIds.forEach((receiverId, position) =>
              deliveries.push({
                id: newDeliveryId(),
                event,
                seq: eventSeq,
                position,
                receiverId,
                state: t.silenced ? "silenced" : "pending",
                attempts: 0,
                lastStatus: null,
                nextAttemptAt: t.at,
                leaseUntil: null,
                leaseOwner: null
              })
            )
          }
          return Option.some(put({ ...rule, evaluation, version: rule.version + 1 }))
        })
      }),

    ruleSignals: (after) =>
      Effect.sync(() => {
        purge()
        return {
          head: signalSeq,
          signals: [...signals]
            .filter(([, seq]) => seq > after)
            .map(([stream, seq]) => ({ stream, seq }))
            .sort((a, b) => a.seq - b.seq)
        }
      }),
    firingRules: (streams) =>
      Effect.sync(() => {
        purge()
        const order = new Map(streams.map((stream, i) => [stream, i]))
        return [...rules.values()]
          .filter((r) => r.evaluation.state === "firing" && order.has(r.streamId))
          .sort((a, b) => order.get(a.streamId)! - order.get(b.streamId)! || byCreation(a, b))
          .map((r): FiringRule => ({ streamId: r.streamId, ruleId: r.id, name: r.name }))
      }),
    listEvents: (account, since, limit) =>
      Effect.sync(() =>
        events
          .filter(({ event }) => event.accountId === account && event.at > since)
          .sort((a, b) => a.event.at - b.event.at || a.seq - b.seq)
          .slice(0, limit)
          .map(({ event }) => ({
            ...event,
            deliveries: deliveries
              .filter((d) => d.event === event)
              .sort((a, b) => a.position - b.position)
              .map((d) => ({
                receiverId: d.receiverId,
                state: d.state,
                attempts: d.attempts,
                lastStatus: d.lastStatus
              }))
          }))
      ),
    openDeliveryOwner: Effect.acquireRelease(
      Effect.sync(() => {
        const owner = newLeaseOwner()
        release((row) => row.leaseOwner !== owner)
        return owner
      }),
      (owner) => Effect.sync(() => release((row) => row.leaseOwner === owner))
    ),
    claimDeliveries: (owner, now, leaseUntil, limit) =>
      Effect.sync(() => {
        const claimed: Array<ClaimedDelivery> = []
        for (const row of heads().sort((a, b) => a.seq - b.seq || a.position - b.position)) {
          if (claimed.length >= limit) break
          if (row.nextAttemptAt > now || (row.leaseUntil !== null && row.leaseUntil > now)) continue
          const receiver = receivers.get(row.receiverId)
          const account = accounts.get(row.event.accountId)
          if (receiver === undefined || account === undefined) continue
          row.leaseUntil = leaseUntil
          row.leaseOwner = owner
          claimed.push({
            id: row.id,
            attempts: row.attempts,
            event: row.event,
            accountName: account.name,
            receiver: { ...receiver.receiver, secret: receiver.secret }
          })
        }
        return claimed
      }),
    recordAttempt: (id, outcome) =>
      Effect.sync(() => {
        const row = deliveries.find((d) => d.id === id)
        if (row === undefined || row.state !== "pending") return false
        row.attempts++
        row.state = outcome.state
        row.lastStatus = outcome.status
        if (outcome.nextAttemptAt !== null) row.nextAttemptAt = outcome.nextAttemptAt
        row.leaseUntil = null
        row.leaseOwner = null
        return true
      }),
    claimResends: (now, every, limit) =>
      Effect.sync(() => {
        purge()
        const due: Array<AlertRule> = []
        for (const rule of [...rules.values()].sort(byCreation)) {
          if (due.length >= limit) break
          if (rule.evaluation.state !== "firing") continue
          if (Math.max(resentAt.get(rule.id) ?? 0, rule.evaluation.stateSince) > now - every) continue
          if (!rule.receiverIds.some((id) => receivers.get(id)?.receiver.kind === "alertmanager")) continue
          resentAt.set(rule.id, now)
          due.push(rule)
        }
        return due
      }),
    nextDeliveryAt: Effect.sync(() => {
      let next: number | null = null
      for (const row of heads()) {
        const at = Math.max(row.nextAttemptAt, row.leaseUntil ?? 0)
        if (next === null || at < next) next = at
      }
      return next as Micros | null
    })
  }
}
