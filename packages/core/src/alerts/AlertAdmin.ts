import { Effect, Option, Schema } from "effect"
import type { AccountId } from "../Account.js"
import { requireAccount, type ResourceStorage, resourceUseCases } from "../AccountResource.js"
import { AccountStore } from "../AccountStore.js"
import {
  type AccountNotFound,
  AlertRuleNotFound,
  InvalidRequest,
  ReceiverNotFound,
  ReceiverUnreachable,
  type StorageFailure,
  StorageUnavailable
} from "../Errors.js"
import { firstIssue } from "../internal/issuePath.js"
import { StreamStore } from "../StreamStore.js"
import { formatTs, isoTime, type Micros, nowMicros } from "../Time.js"
import { latestOnly } from "../usecases/Read.js"
import type { Widget } from "../Widget.js"
import { NotificationSender, sendTestNotification } from "./AlertDeliverer.js"
import { type AlertRuleDefinition, checkRuleRefs, decodeRuleBody, newAlertRuleId } from "./AlertRule.js"
import {
  type AlertEvent,
  type AlertRule,
  type AlertRuleChange,
  AlertStore,
  MAX_EVENTS_PER_READ,
  type ReceiverChange
} from "./AlertStore.js"
import { decodeReceiverBody, newReceiverId, type Receiver, type ReceiverId } from "./Receiver.js"
import { initialEvaluation } from "./RuleStateMachine.js"

/**
 * The admin use cases of alerts (docs/api.md section 18): what the admin API and the CLI call to create, list, read,
 * replace and delete an account's alert rules and receivers, silence a rule, send a receiver a test notification
 * and read the account's transitions. Rules and receivers are account resources (`AccountResource.ts`): list, get,
 * replace and delete, the account checked first and an unknown id answered with `AlertRuleNotFound` (404
 * `rule_not_found`) or `ReceiverNotFound` (404 `receiver_not_found`), are the ones every account resource has.
 * Bodies arrive as sent (`unknown`) and are decoded here, by `decodeRuleBody` and `decodeReceiverBody`, after the
 * account is found; the rules that need the account's widgets and receivers are `checkRuleRefs`.
 *
 * The answers' shapes ({@link ruleJson}, {@link receiverJson}, {@link eventJson}) are written here once: times ISO
 * 8601 UTC, an entry's `ts` in UNIX seconds.
 */

type Failure = AccountNotFound | InvalidRequest | StorageFailure

/** The stores a rule's use cases read: the account's widgets, its receivers and rules, its streams' newest entries. */
export type RuleStores = AccountStore | AlertStore | StreamStore

/**
 * The account resource use cases of rules (`list`, `get`, `delete`, each failing with `AccountNotFound` or
 * `AlertRuleNotFound`); a deleted rule's transitions stay in the history.
 */
export const rules = resourceUseCases({
  noun: "alert rule",
  storage: Effect.map(AlertStore, (store): ResourceStorage<AlertRule, AlertRuleChange> => ({
    create: store.createRule,
    list: store.listRules,
    get: store.getRule,
    update: store.updateRule,
    delete: store.deleteRule
  })),
  notFound: (message) => new AlertRuleNotFound({ message })
})

/**
 * The account resource use cases of receivers (`list`, `get`, `delete`, each failing with `AccountNotFound` or
 * `ReceiverNotFound`), never with their secrets. A deleted receiver's id leaves every rule's `receiverIds` and its
 * deliveries not yet made are marked `failed` (docs/api.md section 18.2).
 */
export const receivers = resourceUseCases({
  noun: "receiver",
  storage: Effect.map(AlertStore, (store): ResourceStorage<Receiver, ReceiverChange, [secret: string | null]> => ({
    create: store.createReceiver,
    list: store.listReceivers,
    get: store.getReceiver,
    update: store.updateReceiver,
    delete: store.deleteReceiver
  })),
  notFound: (message) => new ReceiverNotFound({ message })
})

// ---------------------------------------------------------------------------------------------------------------
// Rules
// ---------------------------------------------------------------------------------------------------------------

/** A rule body checked against the account: its definition, the widget it watches and that stream's newest `ts`. */
interface CheckedRule {
  readonly definition: AlertRuleDefinition
  readonly widget: Widget
  readonly newest: Micros | null
}

/**
 * Decodes a rule body and checks it against the account (docs/api.md section 18.1): the account first
 * (`AccountNotFound`), then the body (`InvalidRequest` with its path: `condition`, `receiverIds[1]`, `streamName`).
 */
const checkedRule = (accountId: string, body: unknown): Effect.Effect<CheckedRule, Failure, RuleStores> =>
  Effect.gen(function* () {
    yield* requireAccount(accountId)
    const definition = yield* decodeRuleBody(body)
    const account = accountId as AccountId
    const widgets = yield* Effect.flatMap(AccountStore, (store) => store.listWidgets(account))
    const known = yield* Effect.flatMap(AlertStore, (store) => store.listReceivers(account))
    yield* checkRuleRefs(
      definition,
      new Map(widgets.map((w) => [w.streamName, w.type])),
      new Set(known.map((r) => r.id))
    )
    const widget = widgets.find((w) => w.streamName === definition.streamName)!
    const latest = yield* Effect.flatMap(StreamStore, (store) => store.read(widget.id, latestOnly))
    return { definition, widget, newest: latest[0]?.ts ?? null }
  })

/**
 * Creates a rule of the account from a body `{"name", "streamName", "condition", "for"?, "receiverIds"}` (docs/api.md
 * section 18.1), in state `ok` since now. Fails with `AccountNotFound`, or `InvalidRequest` with its path.
 */
export const createRule = (accountId: string, body: unknown): Effect.Effect<AlertRule, Failure, RuleStores> =>
  Effect.gen(function* () {
    const { definition, newest, widget } = yield* checkedRule(accountId, body)
    const createdAt = nowMicros()
    const rule = {
      ...definition,
      id: newAlertRuleId(),
      accountId: accountId as AccountId,
      streamId: widget.id,
      createdAt,
      silencedUntil: null,
      evaluation: initialEvaluation(createdAt, newest)
    }
    yield* Effect.flatMap(AlertStore, (store) => store.createRule(rule))
    return { ...rule, version: 1 }
  })

/** How many times a rule's edit is computed again after an evaluation or another edit was stored first. */
const MAX_EDIT_ATTEMPTS = 10

/**
 * Replaces a rule with a body as {@link createRule} takes it and returns the new version (docs/api.md section 18.5;
 * `id`, `createdAt` and the silence unchanged). A rule whose stream, condition and `for` stay the same keeps its
 * state (a rename or new receivers do not end a firing); any other change starts it over, `ok` since now. The body
 * is checked once; the rule is then read and the change stored over the version read (`AlertStore.updateRule`), and
 * when an engine stored an evaluation in between, read again and the change recomputed from the new state, so
 * neither the edit nor the evaluation is lost. Fails with `AccountNotFound`, `AlertRuleNotFound`, `InvalidRequest`
 * with its path, or `StorageUnavailable` when the rule kept changing under {@link MAX_EDIT_ATTEMPTS} edits.
 */
export const updateRule = (
  accountId: string,
  ruleId: string,
  body: unknown
): Effect.Effect<AlertRule, Failure | AlertRuleNotFound, RuleStores> =>
  Effect.gen(function* () {
    const { definition, newest, widget } = yield* checkedRule(accountId, body)
    const store = yield* AlertStore
    for (let attempt = 0; attempt < MAX_EDIT_ATTEMPTS; attempt++) {
      const current = yield* rules.get(accountId, ruleId)
      const sameTerms =
        current.streamId === widget.id &&
        current.for === definition.for &&
        JSON.stringify(current.condition) === JSON.stringify(definition.condition)
      const stored = yield* store.updateRule(current.accountId, current.id, {
        definition,
        streamId: widget.id,
        evaluation: sameTerms ? current.evaluation : initialEvaluation(nowMicros(), newest),
        version: current.version
      })
      if (Option.isSome(stored)) return stored.value
    }
    return yield* Effect.fail(
      new StorageUnavailable({ cause: new Error(`alert rule ${ruleId} kept changing during its edit; try again`) })
    )
  })

const decodeSilence = Schema.decodeUnknownEither(Schema.Struct({ until: Schema.NullOr(Schema.String) }), {
  onExcessProperty: "error",
  errors: "first"
})

/** An ISO 8601 time with a date, a time and a zone (`2026-12-06T12:00:00Z`, `...+01:00`), in microseconds. */
const isoMicros = (text: string): Micros | undefined => {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i.test(text)) return undefined
  const millis = Date.parse(text.toUpperCase())
  return Number.isFinite(millis) ? ((millis * 1000) as Micros) : undefined
}

const badTime = (name: string) =>
  new InvalidRequest({
    message: `${name} must be an ISO 8601 time with a zone, such as 2026-12-06T12:00:00Z`,
    path: name
  })

/**
 * Silences a rule until a time, or lifts its silence (docs/api.md section 18: body `{"until": "<ISO 8601 time>" |
 * null}`), and returns it. Transitions made while it is silenced are recorded and never sent. Fails with
 * `AccountNotFound`, `AlertRuleNotFound`, or `InvalidRequest` (path `until`; an unknown key at its own path).
 */
export const silenceRule = (
  accountId: string,
  ruleId: string,
  body: unknown
): Effect.Effect<AlertRule, Failure | AlertRuleNotFound, AccountStore | AlertStore> =>
  Effect.gen(function* () {
    yield* requireAccount(accountId)
    const { until } = yield* firstIssue(decodeSilence(body), "invalid silence")
    const micros = until === null ? null : isoMicros(until)
    if (micros === undefined) return yield* Effect.fail(badTime("until"))
    const store = yield* AlertStore
    return yield* rules.found(
      yield* store.silenceRule(accountId as AccountId, ruleId as AlertRule["id"], micros),
      ruleId
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// Receivers
// ---------------------------------------------------------------------------------------------------------------

/**
 * Creates a receiver of the account from a body `{"name", "kind", "url", "secret"?}` (docs/api.md section 18.2; the
 * secret is stored, never shown). Fails with `AccountNotFound`, or `InvalidRequest` with its path.
 */
export const createReceiver = (
  accountId: string,
  body: unknown
): Effect.Effect<Receiver, Failure, AccountStore | AlertStore> =>
  Effect.gen(function* () {
    yield* requireAccount(accountId)
    const decoded = yield* decodeReceiverBody(body)
    const secret = decoded.secret ?? null
    const receiver: Receiver = {
      id: newReceiverId(),
      accountId: accountId as AccountId,
      name: decoded.name,
      kind: decoded.kind,
      url: decoded.url,
      hasSecret: secret !== null,
      createdAt: nowMicros()
    }
    yield* Effect.flatMap(AlertStore, (store) => store.createReceiver(receiver, secret))
    return receiver
  })

/**
 * Replaces a receiver's name, kind and URL (docs/api.md section 18.2): a body without `secret` keeps the stored one,
 * `"secret": null` removes it, a string replaces it. Fails with `AccountNotFound`, `ReceiverNotFound`, or
 * `InvalidRequest` with its path.
 */
export const updateReceiver = (
  accountId: string,
  receiverId: string,
  body: unknown
): Effect.Effect<Receiver, Failure | ReceiverNotFound, AccountStore | AlertStore> =>
  receivers.update(
    accountId,
    receiverId,
    Effect.gen(function* () {
      yield* requireAccount(accountId)
      const decoded = yield* decodeReceiverBody(body)
      return { name: decoded.name, kind: decoded.kind, url: decoded.url, secret: decoded.secret }
    })
  )

/**
 * Sends a receiver one test notification of its kind (docs/api.md section 18.4) and answers its HTTP status, whatever
 * it is. Fails with `AccountNotFound`, `ReceiverNotFound`, or `ReceiverUnreachable` with the reason there was no
 * answer (a refused connection, 10 seconds without one).
 */
export const testReceiver = (
  accountId: string,
  receiverId: string
): Effect.Effect<
  { readonly status: number },
  AccountNotFound | ReceiverNotFound | ReceiverUnreachable | StorageFailure,
  AccountStore | AlertStore | NotificationSender
> =>
  Effect.gen(function* () {
    yield* requireAccount(accountId)
    const result = yield* Effect.catchTag(
      sendTestNotification(accountId as AccountId, receiverId as ReceiverId),
      "ReceiverNotFound",
      () => Effect.fail(receivers.notFound(receiverId))
    )
    if (result._tag === "Answered") return { status: result.status }
    return yield* Effect.fail(
      new ReceiverUnreachable({ message: `the receiver could not be reached: ${result.reason}` })
    )
  })

// ---------------------------------------------------------------------------------------------------------------
// Transitions
// ---------------------------------------------------------------------------------------------------------------

/**
 * The account's transitions made after `since` (an ISO 8601 time with a zone, to the millisecond as answers show
 * times; exclusive; absent: from the first), oldest first, at most {@link MAX_EVENTS_PER_READ} (docs/api.md section
 * 18.3: read on from the last one's `at`). A full page ends before a millisecond whose transitions go on past it
 * (see {@link wholeMilliseconds}).
 * Fails with `AccountNotFound`, or `InvalidRequest` (path `since`).
 */
export const listEvents = (
  accountId: string,
  since: string | undefined
): Effect.Effect<ReadonlyArray<AlertEvent>, Failure, AccountStore | AlertStore> =>
  Effect.gen(function* () {
    yield* requireAccount(accountId)
    const from = since === undefined ? 0 : isoMicros(since)
    if (from === undefined) return yield* Effect.fail(badTime("since"))
    // Answers show `at` to the millisecond: the whole millisecond `since` names is at or before it, so that the last
    // event's `at`, given back as `since`, is not read again.
    const after = (since === undefined ? 0 : from + 999) as Micros
    // One more than a page tells whether the page's last millisecond goes on past it.
    const found = yield* Effect.flatMap(AlertStore, (store) =>
      store.listEvents(accountId as AccountId, after, MAX_EVENTS_PER_READ + 1)
    )
    return wholeMilliseconds(found, MAX_EVENTS_PER_READ)
  })

const millisecondOf = (at: Micros): number => Math.floor(at / 1000)

/**
 * The first `limit` of `events` (ascending by `at`, microseconds), less the trailing ones of the millisecond of
 * `events[limit]` when there is one: a reader going on after the page's last `at` (to the millisecond) would skip
 * that millisecond's later events. Only when one millisecond holds more than `limit` events is a page cut inside it
 * (the first `limit` of them; the rest cannot be read by `since`).
 */
export const wholeMilliseconds = <E extends { readonly at: Micros }>(
  events: ReadonlyArray<E>,
  limit: number
): ReadonlyArray<E> => {
  if (events.length <= limit) return events
  const next = millisecondOf(events[limit]!.at)
  let end = limit
  while (end > 0 && millisecondOf(events[end - 1]!.at) === next) end--
  return events.slice(0, end === 0 ? limit : end)
}

// ---------------------------------------------------------------------------------------------------------------
// Answers
// ---------------------------------------------------------------------------------------------------------------

const isoOrNull = (micros: Micros | null): string | null => (micros === null ? null : isoTime(micros))

/**
 * A rule as the admin API answers it and `alerts rules list --json` prints it (docs/api.md section 18): `{"id",
 * "name", "streamName", "condition", "for", "receiverIds", "state", "stateSince", "value", "silencedUntil",
 * "createdAt"}`, times ISO 8601 UTC (`silencedUntil` `null` when not silenced), `value` the last value evaluated.
 */
export const ruleJson = (rule: AlertRule) => ({
  id: rule.id as string,
  name: rule.name,
  streamName: rule.streamName as string,
  condition: rule.condition,
  for: rule.for,
  receiverIds: rule.receiverIds as ReadonlyArray<string>,
  state: rule.evaluation.state,
  stateSince: isoTime(rule.evaluation.stateSince),
  value: rule.evaluation.value,
  silencedUntil: isoOrNull(rule.silencedUntil),
  createdAt: isoTime(rule.createdAt)
})

/**
 * A receiver as the admin API answers it (docs/api.md section 18.2): `{"id", "name", "kind", "url", "hasSecret",
 * "createdAt"}`; never its secret.
 */
export const receiverJson = (receiver: Receiver) => ({
  id: receiver.id as string,
  name: receiver.name,
  kind: receiver.kind,
  url: receiver.url,
  hasSecret: receiver.hasSecret,
  createdAt: isoTime(receiver.createdAt)
})

/**
 * A transition as `GET .../alert-events` answers it (docs/api.md section 18.3): `{"id", "ruleId", "ruleName",
 * "streamName", "from", "to", "value", "ts", "at", "deliveries"}`, `ts` the causing entry's in UNIX seconds (`null`
 * for a deadline or a clear), `at` ISO 8601 UTC, each delivery `{"receiverId", "state", "attempts", "lastStatus"}`.
 */
export const eventJson = (event: AlertEvent) => ({
  id: event.id as string,
  ruleId: event.ruleId as string,
  ruleName: event.ruleName,
  streamName: event.streamName,
  from: event.from,
  to: event.to,
  value: event.value,
  ts: event.ts === null ? null : Number(formatTs(event.ts)),
  at: isoTime(event.at),
  deliveries: event.deliveries.map((d) => ({
    receiverId: d.receiverId as string,
    state: d.state,
    attempts: d.attempts,
    lastStatus: d.lastStatus
  }))
})
