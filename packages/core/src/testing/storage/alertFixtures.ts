import { Effect, Option, type Scope } from "effect"
import { type Account, newAccessKey, newAccountId } from "../../Account.js"
import { AccountStore } from "../../AccountStore.js"
import { newAlertRuleId } from "../../alerts/AlertRule.js"
import { type AlertRule, AlertStore, type NewAlertRule } from "../../alerts/AlertStore.js"
import { newReceiverId, type Receiver, type ReceiverKind } from "../../alerts/Receiver.js"
import { initialEvaluation, type RuleEvaluation, type Transition } from "../../alerts/RuleStateMachine.js"
import { digestAccessKey } from "../../Account.js"
import { StreamName } from "../../StreamName.js"
import { type Micros, micros } from "../../Time.js"
import type { Widget } from "../../Widget.js"
import type { WidgetType } from "../../WidgetType.js"

/**
 * What the alert store's contract suites share (`AlertStoreSuite.ts`, `AlertOutboxSuite.ts`), and the adapters' alert
 * tests through `AlertFixtures` of `@dashstream/core/testing`: accounts, widgets, receivers and rules made through the
 * ports, transitions and evaluation states at fixed times.
 */

export type Stores = AccountStore | AlertStore

/** 2023-11-14T22:13:20Z in microseconds. */
export const T0 = 1_700_000_000_000_000
/** `seconds` after {@link T0}, in microseconds. */
export const at = (seconds: number): Micros => micros(T0 + seconds * 1_000_000)

/** An account `name` made through `AccountStore` at {@link T0}. */
export const newAccount = (name = "acme") =>
  Effect.gen(function* () {
    const account: Account = { id: newAccountId(), name, createdAt: T0 }
    yield* Effect.flatMap(AccountStore, (s) => s.createAccount(account, digestAccessKey(newAccessKey())))
    return account
  })

/** The alert store and a fresh account "acme" (see {@link newAccount}): how most of the suites' tests begin. */
export const storeAndAccount = Effect.all({ alerts: AlertStore, account: newAccount() })

/** A widget of `account` (a number by default) made through `AccountStore` at {@link T0}. */
export const newWidget = (account: Account, name: string, type: WidgetType = "number") =>
  Effect.flatMap(AccountStore, (s) => s.createWidget(account.id, StreamName.make(name), type, T0))

/** A receiver of `account` made through `AlertStore`; its URL is a hooks.example.com one named after it by default. */
export const newReceiver = (
  account: Account,
  name: string,
  secret: string | null = null,
  kind: ReceiverKind = "webhook",
  createdAt = at(0),
  url = `https://hooks.example.com/${encodeURIComponent(name)}?a=1&b=2`
) =>
  Effect.gen(function* () {
    const receiver: Receiver = {
      id: newReceiverId(),
      accountId: account.id,
      name,
      kind,
      url,
      hasSecret: secret !== null,
      createdAt
    }
    yield* Effect.flatMap(AlertStore, (s) => s.createReceiver(receiver, secret))
    return receiver
  })

/** A rule "CPU high" on `widget` (above 90.5 for 30 s, made at `at(1)`, state ok) sending to `receivers`, with `changes`. */
export const ruleOf = (
  widget: Widget,
  receivers: ReadonlyArray<Receiver>,
  changes: Partial<NewAlertRule> = {}
): NewAlertRule => ({
  id: newAlertRuleId(),
  accountId: widget.accountId,
  streamId: widget.id,
  name: "CPU high",
  streamName: widget.streamName,
  condition: { above: 90.5 },
  for: 30,
  receiverIds: receivers.map((r) => r.id),
  createdAt: at(1),
  silencedUntil: null,
  evaluation: initialEvaluation(at(1), null),
  ...changes
})

/** The rule {@link ruleOf} gives, made through `AlertStore`; returned at version 1. */
export const newRule = (widget: Widget, receivers: ReadonlyArray<Receiver>, changes: Partial<NewAlertRule> = {}) =>
  Effect.gen(function* () {
    const rule = ruleOf(widget, receivers, changes)
    yield* Effect.flatMap(AlertStore, (s) => s.createRule(rule))
    return { ...rule, version: 1 } satisfies AlertRule
  })

export const firing = (seconds: number, value: number | null, silenced = false): Transition => ({
  from: "pending",
  to: "firing",
  at: at(seconds),
  value,
  ts: value === null ? null : at(seconds - 0.5),
  startsAt: at(seconds),
  silenced
})

export const resolved = (seconds: number, startsAt: number): Transition => ({
  from: "firing",
  to: "ok",
  at: at(seconds),
  value: 1.25,
  ts: at(seconds),
  startsAt: at(startsAt),
  silenced: false
})

export const evaluationAfter = (state: RuleEvaluation["state"], seconds: number): RuleEvaluation => ({
  state,
  stateSince: at(seconds),
  value: 95.25,
  since: state === "ok" ? null : at(seconds - 30),
  newest: at(seconds),
  cursor: at(seconds)
})

/** Stores one evaluation (a batch of one; see `commitEvaluations`). */
export const commitOne = (
  rule: AlertRule["id"],
  version: number,
  evaluation: RuleEvaluation,
  transitions: ReadonlyArray<Transition>
) =>
  Effect.map(
    Effect.flatMap(AlertStore, (s) => s.commitEvaluations([{ rule, version, evaluation, transitions }])),
    (stored) => stored[0]!
  )
export const some = <A>(option: Option.Option<A>): A => Option.getOrThrow(option)

/** What an adapter says of itself to `alertStoreSuite`. */
export interface AlertStoreTraits {
  /**
   * `true` when several processes share the store (PostgreSQL): a live owner's lease holds until its time. `false`
   * for a store of one alerts process (SQLite, memory): opening an owner releases every other owner's leases.
   */
  readonly sharedByProcesses: boolean
}

/** Registers one test of the suite: its body runs in a scope, on a fresh store. */
export type SuiteTest = (title: string, body: Effect.Effect<unknown, unknown, Stores | Scope.Scope>) => void
