import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, type Layer, Option, type Scope } from "effect"
import { newAccountId } from "../../Account.js"
import { AccountStore } from "../../AccountStore.js"
import { type AlertRuleDefinition, newAlertRuleId } from "../../alerts/AlertRule.js"
import { AlertStore } from "../../alerts/AlertStore.js"
import { newReceiverId } from "../../alerts/Receiver.js"
import { initialEvaluation } from "../../alerts/RuleStateMachine.js"
import { micros } from "../../Time.js"
import { alertOutboxTests } from "./AlertOutboxSuite.js"
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
  ruleOf,
  some,
  type Stores,
  T0
} from "./alertFixtures.js"

export type { AlertStoreTraits } from "./alertFixtures.js"

/**
 * The contract suite of the `AlertStore` port (docs/api.md section 18): receivers never show their secret, rules
 * round-trip with their evaluation state, an evaluation is stored with its events and deliveries in one commit and
 * only over the version it was computed from, the outbox's deliveries and re-sends are claimed as `AlertOutboxSuite.ts`
 * says, and deleting a widget or a receiver cleans up in the same commit. Each adapter's test file calls
 * {@link alertStoreSuite} with its layer, so memory, SQLite and PostgreSQL are held to the same behaviour.
 */

/**
 * Registers the suite under `describe("alert store contract: <name>")`. `makeLayer` is called once per test and must
 * give a fresh, empty, migrated store each time.
 */
export const alertStoreSuite = (
  name: string,
  makeLayer: () => Layer.Layer<Stores, unknown>,
  traits: AlertStoreTraits
): void => {
  describe(`alert store contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<unknown, unknown, Stores | Scope.Scope>) =>
      it.effect(title, () => Effect.provide(Effect.scoped(body), makeLayer()), 20_000)
    const store = AlertStore

    test(
      "receivers round-trip without their secret, oldest first, only in their account; delivery reads see it",
      Effect.gen(function* () {
        const { account, alerts } = yield* storeAndAccount
        const other = yield* newAccount("other")
        const plain = yield* newReceiver(account, "ops")
        const signed = yield* newReceiver(account, "sig", "s3cr\u00e9t", "alertmanager", at(-1))
        yield* newReceiver(other, "theirs")
        const listed = yield* alerts.listReceivers(account.id)
        assert.deepStrictEqual(listed, [signed, plain])
        assert.isTrue(listed.every((r) => !("secret" in r)))
        assert.deepStrictEqual(some(yield* alerts.getReceiver(account.id, signed.id)), signed)
        assert.isFalse("secret" in some(yield* alerts.getReceiver(account.id, signed.id)))
        assert.isTrue(Option.isNone(yield* alerts.getReceiver(other.id, signed.id)))
        assert.deepStrictEqual(some(yield* alerts.getReceiverForDelivery(account.id, signed.id)), {
          ...signed,
          secret: "s3cr\u00e9t"
        })
        assert.strictEqual(some(yield* alerts.getReceiverForDelivery(account.id, plain.id)).secret, null)
        assert.deepStrictEqual(yield* alerts.listReceivers(newAccountId()), [])
        const ghost = { ...plain, id: newReceiverId(), accountId: newAccountId() }
        const exit = yield* Effect.exit(alerts.createReceiver(ghost, null))
        assert.isTrue(Exit.isFailure(exit) && JSON.stringify(exit.cause).includes("AccountNotFound"))
      })
    )

    test(
      "updating a receiver keeps its secret without one, removes it with null, replaces it with a string",
      Effect.gen(function* () {
        const { account, alerts } = yield* storeAndAccount
        const receiver = yield* newReceiver(account, "ops", "one")
        const change = { name: "ops 2", kind: "slack" as const, url: "https://chat.example.com/x" }
        const kept = some(yield* alerts.updateReceiver(account.id, receiver.id, { ...change, secret: undefined }))
        assert.deepStrictEqual(kept, { ...receiver, ...change, hasSecret: true })
        assert.strictEqual(some(yield* alerts.getReceiverForDelivery(account.id, receiver.id)).secret, "one")
        yield* alerts.updateReceiver(account.id, receiver.id, { ...change, secret: "two" })
        assert.strictEqual(some(yield* alerts.getReceiverForDelivery(account.id, receiver.id)).secret, "two")
        const removed = some(yield* alerts.updateReceiver(account.id, receiver.id, { ...change, secret: null }))
        assert.isFalse(removed.hasSecret)
        assert.strictEqual(some(yield* alerts.getReceiverForDelivery(account.id, receiver.id)).secret, null)
        const other = yield* newAccount("other")
        assert.isTrue(
          Option.isNone(yield* alerts.updateReceiver(other.id, receiver.id, { ...change, secret: undefined }))
        )
      })
    )

    test(
      "rules round-trip with their definition and evaluation; listed oldest first, by account, stream and in all",
      Effect.gen(function* () {
        const { account, alerts } = yield* storeAndAccount
        const cpu = yield* newWidget(account, "cpu")
        const feed = yield* newWidget(account, "feed", "text-feed")
        const a = yield* newReceiver(account, "a")
        const b = yield* newReceiver(account, "b")
        const first = yield* newRule(cpu, [b, a])
        const quiet = yield* newRule(feed, [], {
          name: "Feed quiet",
          condition: { noDataFor: 600 },
          for: 0,
          createdAt: at(2),
          silencedUntil: at(5000),
          evaluation: { ...evaluationAfter("firing", 700), value: null, since: null }
        })
        const low = yield* newRule(cpu, [a], { condition: { below: -1e-7 }, createdAt: at(3) })
        assert.deepStrictEqual(some(yield* alerts.getRule(account.id, first.id)), first)
        assert.deepStrictEqual(yield* alerts.listRules(account.id), [first, quiet, low])
        assert.deepStrictEqual(yield* alerts.rulesOfStream(cpu.id), [first, low])
        assert.deepStrictEqual(yield* alerts.allRules, [first, quiet, low])
        const other = yield* newAccount("other")
        assert.isTrue(Option.isNone(yield* alerts.getRule(other.id, first.id)))
        assert.deepStrictEqual(yield* alerts.listRules(other.id), [])
        const exit = yield* Effect.exit(alerts.createRule({ ...ruleOf(cpu, []), accountId: newAccountId() }))
        assert.isTrue(Exit.isFailure(exit))
      })
    )

    test(
      "update replaces definition, stream and evaluation; silence sets and lifts; each change grows the version",
      Effect.gen(function* () {
        const { account, alerts } = yield* storeAndAccount
        const cpu = yield* newWidget(account, "cpu")
        const mem = yield* newWidget(account, "mem")
        const a = yield* newReceiver(account, "a")
        const rule = yield* newRule(cpu, [a])
        const definition: AlertRuleDefinition = {
          name: "Memory low",
          streamName: mem.streamName,
          condition: { below: 10 },
          for: 0,
          receiverIds: []
        }
        const evaluation = initialEvaluation(at(9), at(8))
        const updated = some(
          yield* alerts.updateRule(account.id, rule.id, { definition, streamId: mem.id, evaluation, version: 1 })
        )
        assert.deepStrictEqual(updated, { ...rule, ...definition, streamId: mem.id, evaluation, version: 2 })
        assert.deepStrictEqual(some(yield* alerts.getRule(account.id, rule.id)), updated)
        const silenced = some(yield* alerts.silenceRule(account.id, rule.id, at(100)))
        assert.deepStrictEqual(silenced, { ...updated, silencedUntil: at(100), version: 3 })
        const lifted = some(yield* alerts.silenceRule(account.id, rule.id, null))
        assert.deepStrictEqual(lifted, { ...updated, version: 4 })
        const other = yield* newAccount("other")
        assert.isTrue(Option.isNone(yield* alerts.silenceRule(other.id, rule.id, null)))
        assert.isFalse(yield* alerts.deleteRule(other.id, rule.id))
        assert.isTrue(yield* alerts.deleteRule(account.id, rule.id))
        assert.isFalse(yield* alerts.deleteRule(account.id, rule.id))
        assert.deepStrictEqual(yield* alerts.listRules(account.id), [])
      })
    )

    test(
      "an edit and an engine's evaluation interleaved: each is stored over the version it read, neither is lost",
      Effect.gen(function* () {
        const alerts = yield* store
        const account = yield* newAccount()
        const cpu = yield* newWidget(account, "cpu")
        const a = yield* newReceiver(account, "a")
        const b = yield* newReceiver(account, "b")
        const rule = yield* newRule(cpu, [a])
        const renamed: AlertRuleDefinition = {
          name: "CPU very high",
          streamName: rule.streamName,
          condition: rule.condition,
          for: rule.for,
          receiverIds: [a.id, b.id]
        }
        // The edit reads version 1 (ok); the engine stores a firing over version 1 before the edit commits.
        const fired = some(yield* commitOne(rule.id, 1, evaluationAfter("firing", 10), [firing(10, 95)]))
        const lost = yield* alerts.updateRule(account.id, rule.id, {
          definition: renamed,
          streamId: cpu.id,
          evaluation: rule.evaluation,
          version: 1
        })
        assert.isTrue(Option.isNone(lost))
        assert.deepStrictEqual(some(yield* alerts.getRule(account.id, rule.id)), fired)
        // Read again, the edit keeps the firing it now sees.
        const edited = some(
          yield* alerts.updateRule(account.id, rule.id, {
            definition: renamed,
            streamId: cpu.id,
            evaluation: fired.evaluation,
            version: fired.version
          })
        )
        assert.deepStrictEqual(edited, { ...fired, ...renamed, version: 3 })
        // The engine read version 2 before the edit: its resolution is refused, then stored over version 3, with
        // a delivery to each receiver of the edited rule.
        const resolvedState = evaluationAfter("ok", 20)
        assert.isTrue(Option.isNone(yield* commitOne(rule.id, fired.version, resolvedState, [resolved(20, 10)])))
        const after = some(yield* commitOne(rule.id, edited.version, resolvedState, [resolved(20, 10)]))
        assert.deepStrictEqual(after, { ...edited, evaluation: resolvedState, version: 4 })
        const events = yield* alerts.listEvents(account.id, micros(0), 1000)
        assert.deepStrictEqual(
          events.map((e) => [e.ruleName, e.to, e.deliveries.map((d) => d.receiverId)]),
          [
            ["CPU high", "firing", [a.id]],
            ["CPU very high", "ok", [a.id, b.id]]
          ]
        )
      })
    )

    test(
      "a rule's receivers changed by an edit or by a receiver's deletion signal its stream; an edit changing nothing does not",
      Effect.gen(function* () {
        const alerts = yield* store
        const account = yield* newAccount()
        const cpu = yield* newWidget(account, "cpu")
        const mem = yield* newWidget(account, "mem")
        const a = yield* newReceiver(account, "a")
        const b = yield* newReceiver(account, "b")
        const rule = yield* newRule(cpu, [a])
        yield* newRule(mem, [a])
        const signalledAfter = (head: number) =>
          Effect.map(alerts.ruleSignals(head), ({ signals }) => signals.map((signal) => signal.stream))
        const edit = (receivers: ReadonlyArray<typeof a>, version: number) =>
          alerts.updateRule(account.id, rule.id, {
            definition: {
              name: rule.name,
              streamName: rule.streamName,
              condition: rule.condition,
              for: rule.for,
              receiverIds: receivers.map((r) => r.id)
            },
            streamId: cpu.id,
            evaluation: rule.evaluation,
            version
          })
        const start = (yield* alerts.ruleSignals(0)).head
        assert.isTrue(Option.isSome(yield* edit([a], 1)))
        assert.deepStrictEqual(yield* signalledAfter(start), [])
        assert.isTrue(Option.isSome(yield* edit([a, b], 2)))
        assert.deepStrictEqual(yield* signalledAfter(start), [cpu.id])
        const edited = (yield* alerts.ruleSignals(0)).head
        assert.isTrue(yield* alerts.deleteReceiver(account.id, b.id))
        assert.deepStrictEqual(yield* signalledAfter(edited), [cpu.id])
        const deleted = (yield* alerts.ruleSignals(0)).head
        assert.isTrue(yield* alerts.deleteReceiver(account.id, a.id))
        assert.sameMembers([...(yield* signalledAfter(deleted))], [cpu.id, mem.id])
      })
    )

    test(
      "an evaluation is stored with its events and deliveries only over the version it was computed from",
      Effect.gen(function* () {
        const { account, alerts } = yield* storeAndAccount
        const cpu = yield* newWidget(account, "cpu")
        const a = yield* newReceiver(account, "a")
        const b = yield* newReceiver(account, "b")
        const rule = yield* newRule(cpu, [b, a])
        const next = evaluationAfter("firing", 40)
        const stored = some(yield* commitOne(rule.id, 1, next, [firing(40, 95.25)]))
        assert.deepStrictEqual(stored, { ...rule, evaluation: next, version: 2 })
        // The same evaluation again, computed from version 1: stale, nothing stored.
        assert.isTrue(Option.isNone(yield* commitOne(rule.id, 1, next, [firing(40, 95.25)])))
        assert.isTrue(Option.isNone(yield* commitOne(newAlertRuleId(), 1, next, [])))
        const events = yield* alerts.listEvents(account.id, micros(0), 1000)
        assert.strictEqual(events.length, 1)
        const event = events[0]!
        assert.deepStrictEqual(
          { ...event, id: "" },
          {
            id: "",
            accountId: account.id,
            ruleId: rule.id,
            ruleName: "CPU high",
            streamName: "cpu",
            condition: { above: 90.5 },
            for: 30,
            from: "pending",
            to: "firing",
            value: 95.25,
            ts: at(39.5),
            at: at(40),
            startsAt: at(40),
            deliveries: [
              { receiverId: b.id, state: "pending", attempts: 0, lastStatus: null },
              { receiverId: a.id, state: "pending", attempts: 0, lastStatus: null }
            ]
          }
        )
        // No transitions: the state alone moves on.
        const calm = evaluationAfter("pending", 50)
        assert.strictEqual(some(yield* commitOne(rule.id, 2, calm, [])).version, 3)
        assert.strictEqual((yield* alerts.listEvents(account.id, micros(0), 1000)).length, 1)
      })
    )

    test(
      "a batch of evaluations is stored in one go; a stale one stores nothing and the others are stored all the same",
      Effect.gen(function* () {
        const { account, alerts } = yield* storeAndAccount
        const cpu = yield* newWidget(account, "cpu")
        const a = yield* newReceiver(account, "a")
        const one = yield* newRule(cpu, [a])
        const two = yield* newRule(cpu, [a], { name: "second", createdAt: at(2) })
        const three = yield* newRule(cpu, [], { name: "third", createdAt: at(3) })
        yield* alerts.silenceRule(account.id, two.id, at(1000))
        const stored = yield* alerts.commitEvaluations([
          { rule: one.id, version: 1, evaluation: evaluationAfter("firing", 40), transitions: [firing(40, 95)] },
          { rule: two.id, version: 1, evaluation: evaluationAfter("firing", 40), transitions: [firing(40, 95)] },
          { rule: three.id, version: 1, evaluation: evaluationAfter("firing", 40), transitions: [firing(40, 95)] }
        ])
        assert.deepStrictEqual(
          stored.map((r) => Option.map(r, (rule) => [rule.name, rule.version, rule.evaluation.state])),
          [Option.some(["CPU high", 2, "firing"]), Option.none(), Option.some(["third", 2, "firing"])]
        )
        assert.deepStrictEqual(
          (yield* alerts.listEvents(account.id, micros(0), 1000)).map((e) => [e.ruleName, e.deliveries.length]),
          [
            ["CPU high", 1],
            ["third", 0]
          ]
        )
        assert.deepStrictEqual(yield* alerts.commitEvaluations([]), [])
      })
    )

    test(
      "two evaluations from one version at once: exactly one is stored",
      Effect.gen(function* () {
        const { account, alerts } = yield* storeAndAccount
        const rule = yield* newRule(yield* newWidget(account, "cpu"), [yield* newReceiver(account, "a")])
        const outcomes = yield* Effect.all(
          Array.from({ length: 4 }, () => commitOne(rule.id, 1, evaluationAfter("firing", 40), [firing(40, 95.25)])),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(outcomes.filter(Option.isSome).length, 1)
        assert.strictEqual((yield* alerts.listEvents(account.id, micros(0), 1000)).length, 1)
      })
    )

    test(
      "events: after since (exclusive), ascending, at most limit, only the account's; silenced deliveries; null ts",
      Effect.gen(function* () {
        const { account, alerts } = yield* storeAndAccount
        const other = yield* newAccount("other")
        const a = yield* newReceiver(account, "a")
        const rule = yield* newRule(yield* newWidget(account, "cpu"), [a])
        const theirs = yield* newRule(yield* newWidget(other, "cpu"), [])
        yield* commitOne(theirs.id, 1, evaluationAfter("firing", 15), [firing(15, null)])
        yield* commitOne(rule.id, 1, evaluationAfter("ok", 20), [firing(10, null, true), resolved(20, 10)])
        yield* commitOne(rule.id, 2, evaluationAfter("firing", 30), [firing(30, 99)])
        const all = yield* alerts.listEvents(account.id, micros(0), 1000)
        assert.deepStrictEqual(
          all.map((e) => [e.to, (e.at - T0) / 1e6, e.ts, e.deliveries[0]!.state]),
          [
            ["firing", 10, null, "silenced"],
            ["ok", 20, at(20), "pending"],
            ["firing", 30, at(29.5), "pending"]
          ]
        )
        assert.strictEqual(all[1]!.startsAt, at(10))
        assert.deepStrictEqual(
          (yield* alerts.listEvents(account.id, at(10), 1000)).map((e) => e.at),
          [at(20), at(30)]
        )
        assert.deepStrictEqual(
          (yield* alerts.listEvents(account.id, at(10), 1)).map((e) => e.at),
          [at(20)]
        )
        assert.deepStrictEqual(yield* alerts.listEvents(account.id, at(30), 1000), [])
        assert.strictEqual((yield* alerts.listEvents(other.id, micros(0), 1000)).length, 1)
      })
    )

    alertOutboxTests(test, traits)

    test(
      "deleting a receiver removes it from every rule (version grows) and fails its pending deliveries",
      Effect.gen(function* () {
        const alerts = yield* store
        const owner = yield* alerts.openDeliveryOwner
        const account = yield* newAccount()
        const a = yield* newReceiver(account, "a")
        const b = yield* newReceiver(account, "b")
        const rule = yield* newRule(yield* newWidget(account, "cpu"), [a, b])
        yield* commitOne(rule.id, 1, evaluationAfter("firing", 10), [firing(10, 95)])
        const other = yield* newAccount("other")
        assert.isFalse(yield* alerts.deleteReceiver(other.id, a.id))
        assert.isTrue(yield* alerts.deleteReceiver(account.id, a.id))
        assert.isFalse(yield* alerts.deleteReceiver(account.id, a.id))
        const after = some(yield* alerts.getRule(account.id, rule.id))
        assert.deepStrictEqual<ReadonlyArray<string>>(after.receiverIds, [b.id])
        assert.strictEqual(after.version, 3)
        assert.deepStrictEqual(yield* alerts.listReceivers(account.id), [b])
        const [event] = yield* alerts.listEvents(account.id, micros(0), 1000)
        assert.deepStrictEqual(
          event!.deliveries.map((d) => [d.receiverId, d.state]),
          [
            [a.id, "failed"],
            [b.id, "pending"]
          ]
        )
        assert.deepStrictEqual(
          (yield* alerts.claimDeliveries(owner, at(20), at(30), 10)).map((d) => d.receiver.id),
          [b.id]
        )
      })
    )

    test(
      "deleting a widget deletes its rules in the same commit; their events stay",
      Effect.gen(function* () {
        const { account, alerts } = yield* storeAndAccount
        const cpu = yield* newWidget(account, "cpu")
        const mem = yield* newWidget(account, "mem")
        const rule = yield* newRule(cpu, [])
        const kept = yield* newRule(mem, [])
        yield* commitOne(rule.id, 1, evaluationAfter("firing", 10), [firing(10, 95)])
        yield* Effect.flatMap(AccountStore, (s) => s.deleteWidget(account.id, "cpu"))
        assert.isTrue(Option.isNone(yield* alerts.getRule(account.id, rule.id)))
        assert.deepStrictEqual(yield* alerts.listRules(account.id), [kept])
        assert.deepStrictEqual(yield* alerts.rulesOfStream(cpu.id), [])
        assert.deepStrictEqual(yield* alerts.allRules, [kept])
        const events = yield* alerts.listEvents(account.id, micros(0), 1000)
        assert.deepStrictEqual(
          events.map((e) => [e.ruleId, e.streamName]),
          [[rule.id, "cpu"]]
        )
      })
    )
  })
}
