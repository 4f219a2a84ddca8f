import { randomInt, randomUUID } from "node:crypto"
import { Context, type Effect, type Option, type Scope } from "effect"
import type { AccountId } from "../Account.js"
import type { AccountNotFound, StorageFailure } from "../Errors.js"
import type { Micros } from "../Time.js"
import type { StreamId } from "../Widget.js"
import type { AlertRuleDefinition, AlertRuleId, AlertState, Condition } from "./AlertRule.js"
import type { Receiver, ReceiverForDelivery, ReceiverId, ReceiverKind, SecretChange } from "./Receiver.js"
import type { RuleEvaluation, Transition } from "./RuleStateMachine.js"

/**
 * The storage port of alerts (docs/api.md section 18): receivers, rules with their evaluation state, and a
 * transactional outbox of transitions and their deliveries.
 *
 * **How evaluation survives a crash without slowing pushes.** A push stores its entries as before and nothing
 * else: a stream with no rule costs the push nothing (the engine follows only streams that have rules, through the
 * change feed, whose write path asks one map lookup of a stream nobody follows). The engine evaluates each stored
 * entry after the push's commit and stores the outcome with {@link AlertStore} `commitEvaluations`: the rule's new
 * {@link RuleEvaluation}, its transition events and one delivery row per receiver, in ONE transaction, so a
 * transition is never stored without its state change, nor the reverse. Each rule keeps a cursor, the highest entry
 * `ts` it evaluated (`RuleEvaluation.cursor`, microseconds): after a crash between a push's commit and its
 * evaluation (SIGKILL), the engine reads each rule's stream above its cursor on start and evaluates those entries,
 * so no stored entry goes unevaluated. (The one entry the cursor cannot bring back is a backdated one, a client `ts`
 * below one already evaluated, stored in the instant before a crash.) Evaluating inside the push's transaction was
 * the alternative; it would put a read of rule state into every group commit of a stream with rules, on PostgreSQL
 * a round trip, where the cursor costs the push nothing.
 *
 * **Several processes** (PostgreSQL). Every rule row has a `version` that grows with each change; an evaluation is
 * stored only over the version it was computed from, so when two processes evaluate the same entry or deadline, one
 * stores it and the other is told it is stale (`None`), reloads the rule and finds the work done: each transition
 * happens once. Deliveries are claimed by one process at a time ({@link AlertStore} `claimDeliveries`: a lease
 * taken with `FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite and memory serve one process), and so are Alertmanager
 * re-sends (`claimResends`).
 *
 * **Leases and their owners.** Each running deliverer is a {@link LeaseOwner} (`openDeliveryOwner`) and its leases
 * carry it. A lease ends when its time runs out (30 seconds) or at once when its owner is gone, so a process killed
 * between a claim and its attempt does not hold the delivery up: on SQLite and memory, the one alerts process of
 * the deployment, opening an owner releases every other owner's lease (they were left by a process that is gone);
 * on PostgreSQL each owner holds a session-level advisory lock for as long as it lives, and a claim takes a
 * delivery whose lease owner's lock no process holds. A live owner's lease is never taken before its time.
 *
 * Every method that takes an account id and a rule or receiver id finds it only in that account (`None` / `false`
 * otherwise). Times are integer microseconds. Deleting a widget deletes its rules in the same commit; deleting a
 * receiver removes its id from every rule's `receiverIds` and fails its pending deliveries, in the same commit.
 * Events outlive their rules (they carry the rule's name, stream, condition and `for` as they were).
 */

/** An alert event id (a transition's): a UUID string. */
export type AlertEventId = string & { readonly AlertEventId: unique symbol }

/** A new random alert event id. */
export const newAlertEventId = (): AlertEventId => randomUUID() as AlertEventId

/**
 * A delivery id: a UUID string, one per transition and receiver, sent as `X-Dashstream-Event-Id` on every attempt
 * (docs/api.md section 18).
 */
export type DeliveryId = string & { readonly DeliveryId: unique symbol }

/** A new random delivery id. */
export const newDeliveryId = (): DeliveryId => randomUUID() as DeliveryId

/**
 * Where a delivery stands (docs/api.md section 18): `pending` (to be sent, or being retried), `delivered` (a 2xx),
 * `failed` (no 2xx within 24 hours, or its receiver was deleted), `silenced` (made while its rule was silenced:
 * never sent).
 */
export const deliveryStates = ["pending", "delivered", "failed", "silenced"] as const
export type DeliveryState = (typeof deliveryStates)[number]

/** A delivery as an event shows it: `lastStatus` is the receiver's last HTTP status (`null`: none yet). */
export interface DeliveryStatus {
  readonly receiverId: ReceiverId
  readonly state: DeliveryState
  readonly attempts: number
  readonly lastStatus: number | null
}

/**
 * A stored transition (docs/api.md section 18's transition event): the rule as it was (`ruleName`, `streamName`,
 * `condition`, `for` in whole seconds), `from`/`to`, the causing entry's `value` and `ts` (microseconds; both `null`
 * for a deadline or a clear), `at` when it was made and `startsAt` when its firing began (microseconds), and its
 * deliveries in the order of the rule's `receiverIds` at the time.
 */
export interface AlertEvent {
  readonly id: AlertEventId
  readonly accountId: AccountId
  readonly ruleId: AlertRuleId
  readonly ruleName: string
  readonly streamName: string
  readonly condition: Condition
  readonly for: number
  readonly from: AlertState
  readonly to: AlertState
  readonly value: number | null
  readonly ts: Micros | null
  readonly at: Micros
  readonly startsAt: Micros
  readonly deliveries: ReadonlyArray<DeliveryStatus>
}

/**
 * A stored alert rule (docs/api.md section 18): its definition, the stream it watches (`streamId`, and its name in
 * the definition), when it was created and until when it is silenced (microseconds; `null`: not silenced), its
 * {@link RuleEvaluation} (state, since when, last value, evaluation cursor) and its `version` (see the module
 * comment).
 */
export interface AlertRule extends AlertRuleDefinition {
  readonly id: AlertRuleId
  readonly accountId: AccountId
  readonly streamId: StreamId
  readonly createdAt: Micros
  readonly silencedUntil: Micros | null
  readonly evaluation: RuleEvaluation
  readonly version: number
}

/** A new rule to store: a rule without its version (a new rule's is 1). */
export type NewAlertRule = Omit<AlertRule, "version">

/**
 * What a rule's `PUT` replaces: the definition, the stream it names, and the evaluation state it keeps or starts over
 * from; `version` is the rule's version that evaluation was read at. The change is stored only over that version (a
 * compare-and-set, like an evaluation's), so an engine's evaluation stored in between is never overwritten by the
 * state the edit read before it.
 */
export interface AlertRuleChange {
  readonly definition: AlertRuleDefinition
  readonly streamId: StreamId
  readonly evaluation: RuleEvaluation
  readonly version: number
}

/** What a receiver's `PUT` replaces; `secret` as {@link SecretChange} says (absent keeps the stored one). */
export interface ReceiverChange {
  readonly name: string
  readonly kind: ReceiverKind
  readonly url: string
  readonly secret: SecretChange
}

/**
 * A delivery claimed for sending: its id (the `X-Dashstream-Event-Id`), how many attempts were made before this one,
 * its event (without the other deliveries), the account's name, and the receiver with its secret.
 */
export interface ClaimedDelivery {
  readonly id: DeliveryId
  readonly attempts: number
  readonly event: Omit<AlertEvent, "deliveries">
  readonly accountName: string
  readonly receiver: ReceiverForDelivery
}

/**
 * The outcome of one delivery attempt: `delivered` (a 2xx), `pending` (try again at `nextAttemptAt`, microseconds),
 * or `failed` (given up); `status` the receiver's HTTP status, `null` when it answered none (refused, timed out).
 */
export interface AttemptOutcome {
  readonly state: "delivered" | "pending" | "failed"
  readonly status: number | null
  readonly nextAttemptAt: Micros | null
}

/** An evaluation of one rule to store (see `AlertStore.commitEvaluations`), computed from the rule's `version`. */
export interface EvaluationCommit {
  readonly rule: AlertRuleId
  readonly version: number
  readonly evaluation: RuleEvaluation
  readonly transitions: ReadonlyArray<Transition>
}

/**
 * The owner of the leases one running deliverer takes (see `AlertStore.openDeliveryOwner`): a positive integer below
 * 2^31, unique among the owners alive on one database.
 */
export type LeaseOwner = number & { readonly LeaseOwner: unique symbol }

/** A new random lease owner (1 to 2^31 - 1). */
export const newLeaseOwner = (): LeaseOwner => randomInt(1, 2 ** 31) as LeaseOwner

/** The most events one `listEvents` returns (docs/api.md section 18). */
export const MAX_EVENTS_PER_READ = 1000

/** A stream's signal: `seq` grows with each signalled change of its rules (`RuleSignal.ts`). */
export interface RuleSignal {
  readonly stream: StreamId
  readonly seq: number
}

/**
 * What `AlertStore.ruleSignals(after)` answers: `head`, the highest `seq` of any signal (0 when there is none), and the
 * signals whose `seq` is above `after`, ascending by `seq`.
 */
export interface RuleSignals {
  readonly head: number
  readonly signals: ReadonlyArray<RuleSignal>
}

/** A firing rule as a tile shows it (docs/api.md section 11.5): its stream, id and name. */
export interface FiringRule {
  readonly streamId: StreamId
  readonly ruleId: AlertRuleId
  readonly name: string
}

export class AlertStore extends Context.Tag("@dashstream/core/AlertStore")<
  AlertStore,
  {
    /** Stores a new receiver with its secret (`null`: none). `AccountNotFound` when the account does not exist. */
    readonly createReceiver: (
      receiver: Receiver,
      secret: string | null
    ) => Effect.Effect<void, AccountNotFound | StorageFailure>
    /** The account's receivers, oldest first (by `createdAt`, then id), never with a secret; `[]` for an unknown account. */
    readonly listReceivers: (account: AccountId) => Effect.Effect<ReadonlyArray<Receiver>, StorageFailure>
    /** One receiver of the account, without its secret. */
    readonly getReceiver: (account: AccountId, id: ReceiverId) => Effect.Effect<Option.Option<Receiver>, StorageFailure>
    /** One receiver of the account with its secret, for sending to it (a test notification). Never for an answer. */
    readonly getReceiverForDelivery: (
      account: AccountId,
      id: ReceiverId
    ) => Effect.Effect<Option.Option<ReceiverForDelivery>, StorageFailure>
    /** Replaces a receiver's name, kind, URL and, as `change.secret` says, its secret; returns the new version. */
    readonly updateReceiver: (
      account: AccountId,
      id: ReceiverId,
      change: ReceiverChange
    ) => Effect.Effect<Option.Option<Receiver>, StorageFailure>
    /**
     * Deletes a receiver; `false` when there was none. In the same commit its id leaves every rule's `receiverIds`
     * (each such rule's version grows) and its pending deliveries become `failed`.
     */
    readonly deleteReceiver: (account: AccountId, id: ReceiverId) => Effect.Effect<boolean, StorageFailure>

    /**
     * Stores a new rule (version 1). Its stream and receivers must be the account's (the caller checks; one deleted
     * meanwhile is a `StorageFailure`, nothing stored). `AccountNotFound` when the account does not exist.
     */
    readonly createRule: (rule: NewAlertRule) => Effect.Effect<void, AccountNotFound | StorageFailure>
    /** The account's rules, oldest first (by `createdAt`, then id); `[]` for an unknown account. */
    readonly listRules: (account: AccountId) => Effect.Effect<ReadonlyArray<AlertRule>, StorageFailure>
    /** One rule of the account. */
    readonly getRule: (account: AccountId, id: AlertRuleId) => Effect.Effect<Option.Option<AlertRule>, StorageFailure>
    /** The rules watching one stream, oldest first: what the engine evaluates an entry of that stream against. */
    readonly rulesOfStream: (stream: StreamId) => Effect.Effect<ReadonlyArray<AlertRule>, StorageFailure>
    /** Every rule of every account, for the engine's start (its deadlines and cursors). */
    readonly allRules: Effect.Effect<ReadonlyArray<AlertRule>, StorageFailure>
    /**
     * Replaces a rule's definition, stream and evaluation state in one transaction, only when its version is still
     * `change.version`; returns the new version (`createdAt` and the silence unchanged, version + 1). `None` when the
     * account has no such rule, or its version moved (an evaluation, a silence or another edit came first: read it
     * again and recompute the change; `AlertAdmin.updateRule` does).
     */
    readonly updateRule: (
      account: AccountId,
      id: AlertRuleId,
      change: AlertRuleChange
    ) => Effect.Effect<Option.Option<AlertRule>, StorageFailure>
    /** Deletes a rule; `false` when there was none. Its events stay. */
    readonly deleteRule: (account: AccountId, id: AlertRuleId) => Effect.Effect<boolean, StorageFailure>
    /** Sets (microseconds) or lifts (`null`) a rule's silence; returns the new version (version + 1). */
    readonly silenceRule: (
      account: AccountId,
      id: AlertRuleId,
      until: Micros | null
    ) => Effect.Effect<Option.Option<AlertRule>, StorageFailure>
    /**
     * The rule signals above `after` and the highest `seq` (see `RuleSignal.ts`): a stream whose signal grew has
     * changed rules. Signals are written in the transaction of the change; on PostgreSQL two transactions may commit
     * in the other order than they took their `seq`, which `RuleWatch` allows for by asking again above a floor a few
     * seconds old.
     */
    readonly ruleSignals: (after: number) => Effect.Effect<RuleSignals, StorageFailure>
    /**
     * The `firing` rules of `streams` (docs/api.md section 11.5: what their tiles show), each stream's oldest first (by
     * `createdAt`, then id). `[]` for no streams.
     */
    readonly firingRules: (streams: ReadonlyArray<StreamId>) => Effect.Effect<ReadonlyArray<FiringRule>, StorageFailure>
    /**
     * Stores evaluations of rules (the rules of one stream after one change, typically), all in ONE transaction. Each
     * {@link EvaluationCommit} computed from its rule's version `version` stores the rule's new `evaluation` (version
     * + 1) and, for each transition in order, an event with a new id and one delivery per receiver of the rule (new
     * ids; `silenced` when the transition is, else `pending` with its first attempt due at the transition's `at`, no
     * attempts). Returns, in the order given, each rule as stored, or `None` for a commit that stored nothing because
     * its rule is gone or its version is no longer `version` (another evaluation or an edit came first: reload and
     * evaluate again); the other commits are stored all the same. A call that makes a transition is durable when it
     * returns; one that makes none (values, cursors, `ok`/`pending`: the engine's quiet evaluations) may be stored
     * without waiting for the disk (SQLite `synchronous=NORMAL`, PostgreSQL `synchronous_commit = off`): a crash of
     * the machine may take it back, cursors included, and the engine then evaluates those entries again from the state
     * stored before, with the same outcome.
     */
    readonly commitEvaluations: (
      commits: ReadonlyArray<EvaluationCommit>
    ) => Effect.Effect<ReadonlyArray<Option.Option<AlertRule>>, StorageFailure>

    /**
     * The account's events made after `since` (exclusive, by `at`, microseconds), ascending by `at` then by the
     * order they were stored, at most `limit` (1 to {@link MAX_EVENTS_PER_READ} + 1: the admin read looks one past
     * its page), each with its deliveries.
     */
    readonly listEvents: (
      account: AccountId,
      since: Micros,
      limit: number
    ) => Effect.Effect<ReadonlyArray<AlertEvent>, StorageFailure>
    /**
     * Makes the running deliverer a lease owner for the life of the scope (see "Leases and their owners" in the
     * module comment). SQLite and memory: a new owner, and every lease of another owner released. PostgreSQL: a new
     * owner whose session-level advisory lock is held on a connection of its own (taken again on a new connection if
     * that one breaks). When the scope closes, the owner's leases are released (its attempts were interrupted) and,
     * on PostgreSQL, its lock too.
     */
    readonly openDeliveryOwner: Effect.Effect<LeaseOwner, StorageFailure, Scope.Scope>
    /**
     * Claims up to `limit` deliveries due for sending at `now` (microseconds): `pending`, the next attempt at or before
     * `now`, not claimed by a lease still running (a lease runs until its time or until its owner is gone), and each
     * the oldest pending delivery of its rule to its receiver (deliveries of one rule to one receiver go in transition
     * order). Each is leased to `owner` until `leaseUntil` (microseconds): no other claim returns it before, in this
     * process or another (PostgreSQL: the claim locks the rows it takes with `FOR UPDATE SKIP LOCKED`). Oldest
     * transitions first.
     */
    readonly claimDeliveries: (
      owner: LeaseOwner,
      now: Micros,
      leaseUntil: Micros,
      limit: number
    ) => Effect.Effect<ReadonlyArray<ClaimedDelivery>, StorageFailure>
    /**
     * Records one attempt of a claimed delivery: attempts + 1, the outcome's state, status and next attempt time, and
     * the lease lifted. `false` when there is no such delivery, or it is no longer `pending` (its receiver was deleted).
     */
    readonly recordAttempt: (id: DeliveryId, outcome: AttemptOutcome) => Effect.Effect<boolean, StorageFailure>
    /**
     * Claims the firing rules due for an Alertmanager re-send at `now` (docs/api.md section 18: every 60 seconds while
     * firing), at most `limit`: `firing`, with at least one `alertmanager` receiver, and neither their firing's start
     * nor their last re-send less than `every` (microseconds) before `now`. Each is marked re-sent at `now` in the
     * claim, so one process re-sends it (PostgreSQL: `FOR UPDATE SKIP LOCKED`). Returns them as stored.
     */
    readonly claimResends: (
      now: Micros,
      every: Micros,
      limit: number
    ) => Effect.Effect<ReadonlyArray<AlertRule>, StorageFailure>
    /**
     * When a claim would next find a delivery (microseconds): the earliest instant one of the deliveries a claim may
     * take (the oldest pending of its rule and receiver) is due and unleased; `null` for none.
     */
    readonly nextDeliveryAt: Effect.Effect<Micros | null, StorageFailure>
  }
>() {}
