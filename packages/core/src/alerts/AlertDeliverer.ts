import { randomUUID } from "node:crypto"
import { Clock, Context, Duration, Effect, FiberSet, Option, Queue, Random, Schedule, type Scope } from "effect"
import type { AccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import { ReceiverNotFound, type StorageFailure } from "../Errors.js"
import type { Micros } from "../Time.js"
import { AlertStore, type ClaimedDelivery } from "./AlertStore.js"
import {
  ALERTMANAGER_RESEND_EVERY,
  ATTEMPT_TIMEOUT_MS,
  type AttemptResult,
  attemptOutcome,
  deliveryRequest,
  type NotificationRequest,
  notificationRequest,
  testNotification
} from "./Notification.js"
import type { ReceiverId, ReceiverKind } from "./Receiver.js"

/**
 * The deliverer (docs/api.md section 18, "Receivers and delivery"): it sends the deliveries the engine stored in the
 * outbox (`AlertStore`) and records each attempt's outcome.
 *
 * - **At least once.** A delivery is claimed with a lease ({@link LEASE}, longer than an attempt's 10-second timeout)
 *   held by this deliverer's lease owner (`AlertStore.openDeliveryOwner`), sent, and its outcome recorded. A process
 *   that dies between a claim and the record leaves a lease whose owner is gone: the next deliverer to start (SQLite)
 *   or any live one (PostgreSQL) claims it again at once and sends it with the same `X-Dashstream-Event-Id` (its
 *   delivery id), which happens twice only when the receiver had already answered 2xx.
 * - **Retries.** A non-2xx answer, a refused connection or a timeout is retried after 1 second doubling up to 5
 *   minutes (jitter at most 10%), for 24 hours from the transition, then `failed` (logged as a warning, counted).
 *   The next attempt's time is stored, so a restart goes on with the same sequence.
 * - **Order.** The store hands out only the oldest pending delivery of a rule to a receiver: those go in transition
 *   order. Deliveries to different receivers or of different rules go in parallel (at most {@link MAX_IN_FLIGHT}).
 * - **Latency.** {@link AlertDeliverer} `wake` makes it claim at once (the composition root calls it when transitions
 *   were stored); otherwise it claims when the store's next delivery comes due (a retry), and at least every
 *   {@link POLL_EVERY}, which finds transitions stored by another process.
 * - **Alertmanager.** Every 60 seconds each firing rule is sent again to its `alertmanager` receivers (the same
 *   `startsAt`), as Prometheus does, so that Alertmanager keeps the alert until its resolution is delivered. A
 *   re-send is claimed (`AlertStore.claimResends`): one process of the deployment makes it. Re-sends are not retried:
 *   the next one is a minute later. A rule whose firing began while it was silenced is not re-sent.
 * - **Secrets.** A receiver's URL and secret are never logged: log lines name the receiver's id and kind, and an
 *   unreachable receiver's reason comes from the {@link NotificationSender}, which words it without the URL.
 *
 * Several processes may run a deliverer on one database: the store's leases give each delivery to one at a time.
 */
export class AlertDeliverer extends Context.Tag("@dashstream/core/AlertDeliverer")<
  AlertDeliverer,
  {
    /** Claims due deliveries now instead of at the next poll (cheap; call it after transitions were stored). */
    readonly wake: Effect.Effect<void>
  }
>() {}

/**
 * The HTTP side of delivery, an adapter's: `send` POSTs a {@link NotificationRequest} and answers the receiver's
 * status, or `Unreachable` with a reason that never contains the URL (refused, timed out after
 * {@link ATTEMPT_TIMEOUT_MS}, unknown host). Never fails.
 */
export class NotificationSender extends Context.Tag("@dashstream/core/NotificationSender")<
  NotificationSender,
  { readonly send: (request: NotificationRequest) => Effect.Effect<AttemptResult> }
>() {}

/** What the deliverer reports of each attempt (for `/metrics`): the receiver's kind and the attempt's outcome. */
export type DeliveryOutcome = "delivered" | "retried" | "failed"

/** Options of {@link make}. */
export interface DelivererOptions {
  /** Told of every recorded attempt (`serve`'s `/metrics`). */
  readonly onAttempt?: (kind: ReceiverKind, outcome: DeliveryOutcome) => void
  /**
   * The longest wait between two claims without a `wake` (default {@link POLL_EVERY}); the deliverer also wakes when
   * the store's next delivery comes due.
   */
  readonly pollEvery?: Duration.DurationInput
  /**
   * How long a rule fires between two Alertmanager re-sends (default `ALERTMANAGER_RESEND_EVERY`, 60 seconds, as
   * docs/api.md section 18 says); shorter in tests only.
   */
  readonly alertmanagerResendEvery?: Duration.DurationInput
}

/** How long a claim holds a delivery: one attempt's timeout and ample margin (30 seconds, in microseconds). */
export const LEASE = 30_000_000

/** How often the deliverer claims when not woken. */
export const POLL_EVERY = Duration.millis(500)

/** The most attempts in flight at once. */
export const MAX_IN_FLIGHT = 32

/** The most firing rules one re-send claim takes (the rest are taken by the next, at once). */
const RESENDS_PER_CLAIM = 100

/**
 * How often the deliverer looks for due Alertmanager re-sends, as a share of the interval: four times per interval,
 * so a re-send is made at most a quarter of the interval late (15 seconds of 60, well within Alertmanager's
 * five-minute `resolve_timeout`).
 */
const RESEND_CHECKS_PER_INTERVAL = 4

/** How long to wait before opening the lease owner again after the store failed to. */
const OWNER_RETRY = Duration.seconds(1)

const nowMicros = Effect.map(Clock.currentTimeNanos, (nanos) => Number(nanos / 1000n) as Micros)

/**
 * Starts the deliverer in the current scope (see {@link AlertDeliverer}) once its lease owner is open (tried again
 * every second while the store fails to, logged once: "alerts wait for the database"); it runs until the scope closes, when attempts in flight are interrupted and
 * then the owner's leases released, so that the next run sends them at once. Never fails: a storage failure is
 * logged and the claim made again at the next poll.
 */
export const make = (
  options: DelivererOptions = {}
): Effect.Effect<AlertDeliverer["Type"], never, AlertStore | AccountStore | NotificationSender | Scope.Scope> =>
  Effect.gen(function* () {
    const alerts = yield* AlertStore
    const accounts = yield* AccountStore
    const sender = yield* NotificationSender
    // Opened before the attempts' fiber set, so closed after it: a lease is released once its attempt has stopped.
    // While the database does not answer it is tried again every second, logged once.
    let waiting = false
    const owner = yield* alerts.openDeliveryOwner.pipe(
      Effect.tapErrorCause((cause) =>
        waiting
          ? Effect.logDebug("alert deliverer's lease owner not taken yet; tried again in a second", cause)
          : Effect.zipRight(
              Effect.logWarning("alerts wait for the database; tried again every second", cause),
              Effect.sync(() => {
                waiting = true
              })
            )
      ),
      Effect.retry(Schedule.spaced(OWNER_RETRY)),
      Effect.orDie
    )
    if (waiting) yield* Effect.logInfo("the database answers: alert deliverer's lease owner taken")
    const wakeUp = yield* Queue.sliding<void>(1)
    const attempts = yield* FiberSet.make<void, never>()
    const pollEvery = Duration.decode(options.pollEvery ?? POLL_EVERY)
    let inFlight = 0

    const attempt = (delivery: ClaimedDelivery): Effect.Effect<void> =>
      Effect.gen(function* () {
        const result = yield* sender.send(deliveryRequest(delivery))
        const now = yield* nowMicros
        const random = yield* Random.next
        const outcome = attemptOutcome(result, delivery.event.at, now, delivery.attempts + 1, random)
        const recorded = yield* alerts.recordAttempt(delivery.id, outcome)
        const { kind } = delivery.receiver
        const about = {
          event: delivery.id,
          rule: delivery.event.ruleId,
          receiver: delivery.receiver.id,
          kind,
          attempts: delivery.attempts + 1,
          answer: result._tag === "Answered" ? String(result.status) : result.reason
        }
        if (!recorded) {
          yield* Effect.logDebug("alert delivery no longer pending (its receiver was deleted)").pipe(
            Effect.annotateLogs(about)
          )
          return
        }
        options.onAttempt?.(kind, outcome.state === "pending" ? "retried" : outcome.state)
        if (outcome.state === "failed") {
          yield* Effect.logWarning("alert delivery failed: no 2xx answer within 24 hours").pipe(
            Effect.annotateLogs(about)
          )
        } else if (outcome.state === "pending") {
          yield* Effect.logInfo("alert delivery not accepted; retried later").pipe(
            Effect.annotateLogs({ ...about, retryInMs: String(Math.round((outcome.nextAttemptAt! - now) / 1000)) })
          )
        }
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.logWarning("alert delivery attempt not recorded; sent again once its lease runs out", cause)
        ),
        Effect.ensuring(
          Effect.sync(() => {
            inFlight--
          })
        )
      )

    const claim: Effect.Effect<number> = Effect.gen(function* () {
      const room = MAX_IN_FLIGHT - inFlight
      if (room <= 0) return 0
      const now = yield* nowMicros
      const claimed = yield* alerts.claimDeliveries(owner, now, (now + LEASE) as Micros, room)
      inFlight += claimed.length
      for (const delivery of claimed) yield* FiberSet.run(attempts, attempt(delivery))
      return claimed.length
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning("alert deliveries not claimed; claimed again shortly", cause), 0)
      )
    )

    // How long to wait before the next claim: until the next delivery comes due, at most `pollEvery`.
    const idle: Effect.Effect<Duration.Duration> = Effect.gen(function* () {
      const next = yield* alerts.nextDeliveryAt
      if (next === null) return pollEvery
      const now = yield* nowMicros
      return Duration.min(pollEvery, Duration.micros(BigInt(Math.max(0, next - now))))
    }).pipe(Effect.orElseSucceed(() => pollEvery))

    // The claim loop: claims while there is work, else waits for a wake or the next due delivery.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.flatMap(claim, (n) =>
          n > 0 && inFlight < MAX_IN_FLIGHT
            ? Effect.void
            : Effect.flatMap(idle, (wait) =>
                Effect.raceFirst(Queue.take(wakeUp), Effect.sleep(wait)).pipe(Effect.asVoid)
              )
        )
      )
    )

    // Alertmanager: each firing rule sent again every minute, by the one process that claims the re-send.
    const resendEvery = Duration.decode(
      options.alertmanagerResendEvery ?? Duration.micros(BigInt(ALERTMANAGER_RESEND_EVERY))
    )
    const resend: Effect.Effect<number> = Effect.gen(function* () {
      const now = yield* nowMicros
      const every = Number(Duration.toMillis(resendEvery)) * 1000
      const rules = yield* alerts.claimResends(now, every as Micros, RESENDS_PER_CLAIM)
      const names = new Map<AccountId, string>()
      for (const rule of rules) {
        if (rule.silencedUntil !== null && rule.evaluation.stateSince < rule.silencedUntil) continue
        for (const id of rule.receiverIds) {
          const receiver = yield* alerts.getReceiverForDelivery(rule.accountId, id)
          if (Option.isNone(receiver) || receiver.value.kind !== "alertmanager") continue
          let name = names.get(rule.accountId)
          if (name === undefined) {
            name = Option.match(yield* accounts.getAccount(rule.accountId), {
              onNone: () => "",
              onSome: (account) => account.name
            })
            names.set(rule.accountId, name)
          }
          const at = rule.evaluation.stateSince
          const request = notificationRequest(
            receiver.value,
            {
              id: "" as never,
              accountId: rule.accountId,
              ruleId: rule.id,
              ruleName: rule.name,
              streamName: rule.streamName,
              condition: rule.condition,
              for: rule.for,
              from: "pending",
              to: "firing",
              value: rule.evaluation.value,
              ts: null,
              at,
              startsAt: at
            },
            name,
            randomUUID()
          )
          const result = yield* sender.send(request)
          if (result._tag === "Unreachable" || result.status < 200 || result.status >= 300) {
            yield* Effect.logInfo("firing alert not sent again to Alertmanager; tried again in a minute").pipe(
              Effect.annotateLogs({
                rule: rule.id,
                receiver: id,
                answer: result._tag === "Answered" ? String(result.status) : result.reason
              })
            )
          }
        }
      }
      return rules.length
    }).pipe(
      Effect.catchAllCause((cause) =>
        Effect.as(Effect.logWarning("firing alerts not sent again to Alertmanager; tried again shortly", cause), 0)
      )
    )
    const checkEvery = Duration.unsafeDivide(resendEvery, RESEND_CHECKS_PER_INTERVAL)
    yield* Effect.forkScoped(
      Effect.forever(Effect.flatMap(resend, (n) => (n >= RESENDS_PER_CLAIM ? Effect.void : Effect.sleep(checkEvery))))
    )

    return { wake: Queue.offer(wakeUp, undefined).pipe(Effect.asVoid) }
  })

/**
 * What `POST /admin/accounts/<id>/receivers/<receiverId>/test` answers (docs/api.md section 18): the receiver's HTTP
 * status to one test notification of its kind (see `testNotification`), whatever that status
 * (`{"_tag": "Answered", status}`), or why it could not be reached (`Unreachable`, for a 502). `ReceiverNotFound`
 * when the account has no such receiver.
 */
export const sendTestNotification = (
  account: AccountId,
  receiverId: ReceiverId
): Effect.Effect<AttemptResult, ReceiverNotFound | StorageFailure, AlertStore | AccountStore | NotificationSender> =>
  Effect.gen(function* () {
    const alerts = yield* AlertStore
    const accounts = yield* AccountStore
    const sender = yield* NotificationSender
    const receiver = yield* alerts.getReceiverForDelivery(account, receiverId)
    if (Option.isNone(receiver)) {
      return yield* Effect.fail(new ReceiverNotFound({ message: "no receiver with that id in this account" }))
    }
    const name = Option.match(yield* accounts.getAccount(account), {
      onNone: () => "",
      onSome: (found) => found.name
    })
    const now = yield* nowMicros
    return yield* sender.send(testNotification(receiver.value, name, now, randomUUID()))
  })
