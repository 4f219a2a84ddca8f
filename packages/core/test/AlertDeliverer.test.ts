import { assert, describe, it } from "@effect/vitest"
import { Context, type Duration, Effect, Exit, Layer, Scope, TestClock } from "effect"
import { type Account, digestAccessKey, newAccessKey, newAccountId } from "../src/Account.js"
import { AccountStore } from "../src/AccountStore.js"
import {
  AlertDeliverer,
  type DeliveryOutcome,
  make as makeDeliverer,
  NotificationSender,
  sendTestNotification
} from "../src/alerts/AlertDeliverer.js"
import { newAlertRuleId } from "../src/alerts/AlertRule.js"
import { AlertStore, type NewAlertRule } from "../src/alerts/AlertStore.js"
import type { AttemptResult, NotificationRequest } from "../src/alerts/Notification.js"
import { newReceiverId, type Receiver, type ReceiverKind } from "../src/alerts/Receiver.js"
import { initialEvaluation, type Transition } from "../src/alerts/RuleStateMachine.js"
import { ReceiverNotFound } from "../src/Errors.js"
import { StreamName } from "../src/StreamName.js"
import { type Micros, micros } from "../src/Time.js"
import { MemoryStore } from "../src/testing/index.js"

/**
 * The deliverer over the memory store, a scripted sender (an in-memory stand-in for HTTP) and the test clock:
 * retries with the same event id and growing delays, transition order per rule and receiver, giving up after 24
 * hours, Alertmanager re-sends while firing, and the test notification.
 */

const T0_MS = 1_700_000_000_000
const S = 1_000_000
const at = (seconds: number): Micros => micros(T0_MS * 1000 + seconds * S)

interface Sent {
  readonly request: NotificationRequest
  readonly atMs: number
}

/** A sender answering from `script` in turn (the last answer repeats), recording every request and when. */
const scriptedSender = (script: ReadonlyArray<AttemptResult>) => {
  const sent: Array<Sent> = []
  const sender: NotificationSender["Type"] = {
    send: (request) =>
      Effect.map(TestClock.currentTimeMillis, (atMs) => {
        sent.push({ request, atMs })
        return script[Math.min(sent.length - 1, script.length - 1)]!
      })
  }
  return { sent, sender }
}

const setup = (
  kind: ReceiverKind,
  script: ReadonlyArray<AttemptResult>,
  pollEvery: Duration.DurationInput = "500 millis",
  alertmanagerResendEvery: Duration.DurationInput = "60 seconds"
) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(T0_MS)
    const stores = yield* MemoryStore.make
    const account: Account = { id: newAccountId(), name: "Acme", createdAt: at(0) }
    yield* stores.accountStore.createAccount(account, digestAccessKey(newAccessKey()))
    const widget = yield* stores.accountStore.createWidget(account.id, StreamName.make("cpu"), "number", at(0))
    const receiver: Receiver = {
      id: newReceiverId(),
      accountId: account.id,
      name: "ops",
      kind,
      url: "http://127.0.0.1:1/hook",
      hasSecret: true,
      createdAt: at(0)
    }
    yield* stores.alertStore.createReceiver(receiver, "s3cr3t")
    const rule: NewAlertRule = {
      id: newAlertRuleId(),
      accountId: account.id,
      streamId: widget.id,
      name: "CPU hot",
      streamName: widget.streamName,
      condition: { above: 90 },
      for: 0,
      receiverIds: [receiver.id],
      createdAt: at(0),
      silencedUntil: null,
      evaluation: initialEvaluation(at(0), null)
    }
    yield* stores.alertStore.createRule(rule)
    const { sent, sender } = scriptedSender(script)
    const outcomes: Array<DeliveryOutcome> = []
    const context = Context.make(AlertStore, stores.alertStore).pipe(
      Context.add(AccountStore, stores.accountStore),
      Context.add(NotificationSender, sender)
    )
    const scope = yield* Scope.make()
    const built = yield* Layer.buildWithScope(
      Layer.scoped(
        AlertDeliverer,
        makeDeliverer({
          onAttempt: (_, outcome) => outcomes.push(outcome),
          pollEvery,
          alertmanagerResendEvery
        })
      ),
      scope
    ).pipe(Effect.provide(context))
    let version = 1
    /** Stores `transitions` as the engine does (one commit over the rule's current version). */
    const commit = (transitions: ReadonlyArray<Transition>, state: "ok" | "firing") =>
      Effect.gen(function* () {
        const last = transitions[transitions.length - 1]!
        yield* stores.alertStore.commitEvaluations([
          {
            rule: rule.id,
            version: version++,
            evaluation: { ...rule.evaluation, state, stateSince: last.at, value: last.value, cursor: last.ts },
            transitions
          }
        ])
        yield* Context.get(built, AlertDeliverer).wake
      })
    const events = stores.alertStore.listEvents(account.id, micros(0), 1000)
    return { sent, outcomes, commit, events, rule, stop: Scope.close(scope, Exit.void), context }
  })

const fire = (t: number): Transition => ({
  from: "ok",
  to: "firing",
  at: at(t),
  value: 95,
  ts: at(t),
  startsAt: at(t),
  silenced: false
})
const resolve = (t: number, firedAt: number): Transition => ({
  from: "firing",
  to: "ok",
  at: at(t),
  value: 10,
  ts: at(t),
  startsAt: at(firedAt),
  silenced: false
})

/** Moves the test clock on by `ms` in steps of 100 ms, letting the deliverer's fibers run at each. */
const advance = (ms: number) =>
  Effect.gen(function* () {
    for (let done = 0; done < ms; done += 100) {
      yield* TestClock.adjust("100 millis")
      for (let i = 0; i < 5; i++) yield* Effect.yieldNow()
    }
  })

const ok: AttemptResult = { _tag: "Answered", status: 200 }
const e500: AttemptResult = { _tag: "Answered", status: 500 }
const refused: AttemptResult = { _tag: "Unreachable", reason: "connection refused" }

describe("alert deliverer", () => {
  it.scoped("retries a 500 and a refused connection with the same event id, 1 s then 2 s later, then delivers", () =>
    Effect.gen(function* () {
      const s = yield* setup("webhook", [e500, refused, ok])
      yield* s.commit([fire(0)], "firing")
      yield* advance(5000)
      assert.lengthOf(s.sent, 3)
      const ids = new Set(s.sent.map((x) => x.request.headers["x-dashstream-event-id"]))
      assert.strictEqual(ids.size, 1)
      const gaps = [s.sent[1]!.atMs - s.sent[0]!.atMs, s.sent[2]!.atMs - s.sent[1]!.atMs]
      assert.isTrue(gaps[0]! >= 900 && gaps[0]! <= 1600, `first retry after ${gaps[0]} ms`)
      assert.isTrue(gaps[1]! >= 1800 && gaps[1]! <= 2600, `second retry after ${gaps[1]} ms`)
      assert.deepStrictEqual(s.outcomes, ["retried", "retried", "delivered"])
      const [event] = yield* s.events
      assert.deepStrictEqual(
        event!.deliveries.map((d) => [d.state, d.attempts, d.lastStatus]),
        [["delivered", 3, 200]]
      )
      assert.match(s.sent[0]!.request.headers["x-dashstream-signature"]!, /^sha256=[0-9a-f]{64}$/)
      yield* s.stop
    })
  )

  it.scoped("a resolution waits for its firing's delivery: one rule to one receiver goes in transition order", () =>
    Effect.gen(function* () {
      const s = yield* setup("webhook", [e500, e500, ok])
      yield* s.commit([fire(0)], "firing")
      yield* s.commit([resolve(0, 0)], "ok")
      yield* advance(10_000)
      const states = s.sent.map((x) => JSON.parse(x.request.body).state)
      assert.deepStrictEqual(states, ["firing", "firing", "firing", "resolved"])
      yield* s.stop
    })
  )

  it.scoped(
    "gives up 24 hours after the transition: failed, counted",
    () =>
      Effect.gen(function* () {
        // Polling only hourly: each retry is claimed when it comes due, not found by a poll. A webhook has no
        // Alertmanager re-sends: their checks (every 15 s) would only add wake-ups for the test clock to run.
        const s = yield* setup("webhook", [e500], "1 hour", "1 day")
        yield* s.commit([fire(0)], "firing")
        // One adjustment: the test clock wakes each sleeper in time order and lets it run before the next.
        yield* TestClock.adjust("25 hours")
        const [event] = yield* s.events
        assert.strictEqual(event!.deliveries[0]!.state, "failed")
        assert.strictEqual(s.outcomes[s.outcomes.length - 1], "failed")
        const attempts = s.sent.length
        assert.isTrue(attempts > 280 && attempts < 320, `${attempts} attempts in a day`)
        yield* TestClock.adjust("1 hour")
        assert.strictEqual(s.sent.length, attempts)
        yield* s.stop
      }),
    { timeout: 30_000 }
  )

  it.scoped("alertmanager: a firing rule is sent again every 60 s with the same startsAt, not once resolved", () =>
    Effect.gen(function* () {
      const s = yield* setup("alertmanager", [ok])
      yield* s.commit([fire(0)], "firing")
      yield* advance(1000)
      assert.lengthOf(s.sent, 1)
      assert.strictEqual(s.sent[0]!.request.url, "http://127.0.0.1:1/hook/api/v2/alerts")
      yield* TestClock.adjust("60 seconds")
      for (let j = 0; j < 10; j++) yield* Effect.yieldNow()
      assert.lengthOf(s.sent, 2)
      const [first] = JSON.parse(s.sent[0]!.request.body)
      const [again] = JSON.parse(s.sent[1]!.request.body)
      assert.strictEqual(again.startsAt, first.startsAt)
      assert.isUndefined(again.endsAt)
      yield* s.commit([resolve(61, 0)], "ok")
      yield* advance(1000)
      const [gone] = JSON.parse(s.sent[2]!.request.body)
      assert.strictEqual(gone.startsAt, first.startsAt)
      assert.isString(gone.endsAt)
      yield* TestClock.adjust("60 seconds")
      for (let j = 0; j < 10; j++) yield* Effect.yieldNow()
      assert.lengthOf(s.sent, 3)
      yield* s.stop
    })
  )

  it.scoped("the test notification answers the receiver's status or why it is unreachable", () =>
    Effect.gen(function* () {
      const s = yield* setup("webhook", [{ _tag: "Answered", status: 418 }, refused])
      const receivers = yield* Effect.provide(
        Effect.flatMap(AlertStore, (store) => store.listReceivers(s.rule.accountId)),
        s.context
      )
      const test = sendTestNotification(s.rule.accountId, receivers[0]!.id).pipe(Effect.provide(s.context))
      assert.deepStrictEqual(yield* test, { _tag: "Answered", status: 418 })
      assert.deepStrictEqual(yield* test, refused)
      assert.strictEqual(JSON.parse(s.sent[0]!.request.body).rule.name, "Dashstream test notification")
      const missing = yield* Effect.flip(
        sendTestNotification(s.rule.accountId, newReceiverId()).pipe(Effect.provide(s.context))
      )
      assert.instanceOf(missing, ReceiverNotFound)
      yield* s.stop
    })
  )
})
