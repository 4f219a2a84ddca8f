import { assert } from "@effect/vitest"
import { Effect } from "effect"
import { AlertStore } from "../../alerts/AlertStore.js"
import { micros } from "../../Time.js"
import {
  type AlertStoreTraits,
  at,
  commitOne,
  evaluationAfter,
  firing,
  newAccount,
  storeAndAccount,
  newReceiver,
  newRule,
  newWidget,
  resolved,
  type SuiteTest
} from "./alertFixtures.js"

/**
 * The outbox half of the `AlertStore` contract suite (docs/api.md section 18, "Receivers and delivery"): deliveries
 * are claimed when due, once, in transition order per rule and receiver, leased to their owner until their time or
 * until the owner is gone, and Alertmanager re-sends are claimed once per interval. Registered by `alertStoreSuite`.
 */
export const alertOutboxTests = (test: SuiteTest, traits: AlertStoreTraits): void => {
  const store = AlertStore
  test(
    "deliveries: claimed when due, leased, in transition order per rule and receiver; attempts are recorded",
    Effect.gen(function* () {
      const alerts = yield* store
      const owner = yield* alerts.openDeliveryOwner
      const account = yield* newAccount()
      const a = yield* newReceiver(account, "a", "key")
      const b = yield* newReceiver(account, "b")
      const rule = yield* newRule(yield* newWidget(account, "cpu"), [a, b])
      assert.strictEqual(yield* alerts.nextDeliveryAt, null)
      yield* commitOne(rule.id, 1, evaluationAfter("ok", 20), [firing(10, 95.25), resolved(20, 10)])
      assert.strictEqual(yield* alerts.nextDeliveryAt, at(10))
      assert.deepStrictEqual(yield* alerts.claimDeliveries(owner, at(9), at(100), 10), [])
      // Due at 10: the firing's two deliveries; the resolution's wait for them (same rule and receiver).
      const first = yield* alerts.claimDeliveries(owner, at(25), at(35), 10)
      assert.deepStrictEqual(
        first.map((d) => [d.receiver.name, d.event.to, d.attempts]),
        [
          ["a", "firing", 0],
          ["b", "firing", 0]
        ]
      )
      const toA = first[0]!
      assert.strictEqual(toA.accountName, "acme")
      assert.strictEqual(toA.receiver.secret, "key")
      assert.strictEqual(toA.event.ruleId, rule.id)
      assert.strictEqual(toA.event.value, 95.25)
      assert.notStrictEqual(first[0]!.id, first[1]!.id)
      // Leased until 35: nobody else gets them.
      assert.deepStrictEqual(yield* alerts.claimDeliveries(owner, at(30), at(40), 10), [])
      assert.strictEqual(yield* alerts.nextDeliveryAt, at(35))
      // a answered 200; b refused: retry at 50.
      assert.isTrue(yield* alerts.recordAttempt(toA.id, { state: "delivered", status: 200, nextAttemptAt: null }))
      assert.isTrue(
        yield* alerts.recordAttempt(first[1]!.id, { state: "pending", status: null, nextAttemptAt: at(50) })
      )
      assert.isFalse(yield* alerts.recordAttempt(toA.id, { state: "failed", status: 500, nextAttemptAt: null }))
      // a's resolution is next; b's resolution still waits behind b's firing.
      const second = yield* alerts.claimDeliveries(owner, at(31), at(60), 10)
      assert.deepStrictEqual(
        second.map((d) => [d.receiver.name, d.event.to, d.event.startsAt]),
        [["a", "ok", at(10)]]
      )
      const third = yield* alerts.claimDeliveries(owner, at(50), at(60), 10)
      assert.deepStrictEqual(
        third.map((d) => [d.receiver.name, d.event.to, d.attempts]),
        [["b", "firing", 1]]
      )
      yield* alerts.recordAttempt(third[0]!.id, { state: "failed", status: 503, nextAttemptAt: null })
      const events = yield* alerts.listEvents(account.id, micros(0), 1000)
      assert.deepStrictEqual(
        events[0]!.deliveries.map((d) => [d.state, d.attempts, d.lastStatus]),
        [
          ["delivered", 1, 200],
          ["failed", 2, 503]
        ]
      )
      // b's resolution is free now.
      assert.deepStrictEqual(
        (yield* alerts.claimDeliveries(owner, at(61), at(70), 10)).map((d) => [d.receiver.name, d.event.to]),
        [
          ["a", "ok"],
          ["b", "ok"]
        ]
      )
    })
  )

  test(
    "concurrent claims never return the same delivery",
    Effect.gen(function* () {
      const alerts = yield* store
      const owner = yield* alerts.openDeliveryOwner
      const account = yield* newAccount()
      const receivers = yield* Effect.all(Array.from({ length: 6 }, (_, i) => newReceiver(account, `r${i}`)))
      const rule = yield* newRule(yield* newWidget(account, "cpu"), receivers)
      yield* commitOne(rule.id, 1, evaluationAfter("firing", 10), [firing(10, 95)])
      const claims = yield* Effect.all(
        Array.from({ length: 4 }, () => alerts.claimDeliveries(owner, at(20), at(100), 2)),
        { concurrency: "unbounded" }
      )
      const ids = claims.flat().map((d) => d.id)
      assert.strictEqual(new Set(ids).size, ids.length)
      assert.strictEqual(ids.length, 6)
    })
  )

  test(
    "an owner's leases are released when it closes: another owner claims those deliveries at once",
    Effect.gen(function* () {
      const { account, alerts } = yield* storeAndAccount
      const receivers = [yield* newReceiver(account, "a"), yield* newReceiver(account, "b")]
      const rule = yield* newRule(yield* newWidget(account, "cpu"), receivers)
      yield* commitOne(rule.id, 1, evaluationAfter("firing", 10), [firing(10, 95)])
      const first = yield* Effect.scoped(
        Effect.flatMap(alerts.openDeliveryOwner, (owner) => alerts.claimDeliveries(owner, at(20), at(1000), 10))
      )
      assert.strictEqual(first.length, 2)
      const next = yield* alerts.openDeliveryOwner
      assert.deepStrictEqual(
        (yield* alerts.claimDeliveries(next, at(21), at(1000), 10)).map((d) => d.id),
        first.map((d) => d.id)
      )
      // Leased to `next` now, which lives on.
      assert.deepStrictEqual(yield* alerts.claimDeliveries(next, at(22), at(1000), 10), [])
    })
  )

  test(
    traits.sharedByProcesses
      ? "a live owner's lease holds against another owner until its time"
      : "opening an owner releases every other owner's lease: one alerts process, the other is gone",
    Effect.gen(function* () {
      const { account, alerts } = yield* storeAndAccount
      const rule = yield* newRule(yield* newWidget(account, "cpu"), [yield* newReceiver(account, "a")])
      yield* commitOne(rule.id, 1, evaluationAfter("firing", 10), [firing(10, 95)])
      const first = yield* alerts.openDeliveryOwner
      const [claimed] = yield* alerts.claimDeliveries(first, at(20), at(100), 10)
      assert.isDefined(claimed)
      const second = yield* alerts.openDeliveryOwner
      assert.notStrictEqual(second, first)
      const early = yield* alerts.claimDeliveries(second, at(21), at(200), 10)
      if (traits.sharedByProcesses) {
        assert.deepStrictEqual(early, [])
        assert.deepStrictEqual(
          (yield* alerts.claimDeliveries(second, at(100), at(200), 10)).map((d) => d.id),
          [claimed!.id]
        )
      } else {
        assert.deepStrictEqual(
          early.map((d) => d.id),
          [claimed!.id]
        )
      }
    })
  )

  test(
    "Alertmanager re-sends: firing rules with an alertmanager receiver, claimed once per interval",
    Effect.gen(function* () {
      const { account, alerts } = yield* storeAndAccount
      const cpu = yield* newWidget(account, "cpu")
      const am = yield* newReceiver(account, "am", null, "alertmanager")
      const hook = yield* newReceiver(account, "hook")
      const firingSince40 = { evaluation: evaluationAfter("firing", 40) }
      const watched = yield* newRule(cpu, [hook, am], firingSince40)
      yield* newRule(cpu, [hook], { ...firingSince40, name: "webhook only", createdAt: at(2) })
      yield* newRule(cpu, [am], { evaluation: evaluationAfter("ok", 40), name: "calm", createdAt: at(3) })
      const minute = micros(60_000_000)
      const claim = (seconds: number) =>
        Effect.map(alerts.claimResends(at(seconds), minute, 10), (rules) => rules.map((r) => r.id))
      assert.deepStrictEqual(yield* claim(99), [])
      assert.deepStrictEqual(yield* claim(100), [watched.id])
      assert.deepStrictEqual(yield* claim(159), [])
      assert.deepStrictEqual(yield* claim(161), [watched.id])
      const [again] = yield* alerts.claimResends(at(300), minute, 10)
      assert.deepStrictEqual(again, watched)
      // At once from several claimers: one gets it.
      const racing = yield* Effect.all(
        Array.from({ length: 4 }, () => claim(400)),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(racing.flat(), [watched.id])
      // A firing that starts again counts from its start.
      const restarted = { ...evaluationAfter("firing", 1000) }
      yield* commitOne(watched.id, 1, restarted, [])
      assert.deepStrictEqual(yield* claim(1059), [])
      assert.deepStrictEqual(yield* claim(1060), [watched.id])
    })
  )
}
