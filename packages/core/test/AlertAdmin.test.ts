import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Option } from "effect"
import { type Account, digestAccessKey, newAccessKey, newAccountId } from "../src/Account.js"
import { AccountStore } from "../src/AccountStore.js"
import * as AlertAdmin from "../src/alerts/AlertAdmin.js"
import { AlertStore } from "../src/alerts/AlertStore.js"
import { StreamName } from "../src/StreamName.js"
import { StreamStore } from "../src/StreamStore.js"
import { micros } from "../src/Time.js"
import { MemoryStore } from "../src/testing/index.js"

/**
 * A rule's edit (docs/api.md section 18.5) against an engine that stores an evaluation between the edit's read and
 * its commit: the edit is stored over the version it read, so it is computed again from the evaluation stored first,
 * and neither is lost.
 */

const at = (seconds: number) => micros(1_700_000_000_000_000 + seconds * 1_000_000)

describe("alert rule edits", () => {
  /**
   * A memory store whose next `updateRule` call lets an "engine" store a firing of the rule first (after the use
   * case read the rule, before its change is stored).
   */
  const racedStores = Effect.gen(function* () {
    const stores = yield* MemoryStore.make
    const alerts = stores.alertStore
    let engineFirst = true
    const raced: AlertStore["Type"] = {
      ...alerts,
      updateRule: (account, id, change) =>
        Effect.gen(function* () {
          if (engineFirst) {
            engineFirst = false
            const rule = Option.getOrThrow(yield* alerts.getRule(account, id))
            const [stored] = yield* alerts.commitEvaluations([
              {
                rule: id,
                version: rule.version,
                evaluation: {
                  state: "firing",
                  stateSince: at(10),
                  value: 95,
                  since: at(10),
                  newest: at(10),
                  cursor: at(10)
                },
                transitions: [
                  { from: "ok", to: "firing", at: at(10), value: 95, ts: at(10), startsAt: at(10), silenced: false }
                ]
              }
            ])
            assert.isTrue(Option.isSome(stored!))
          }
          return yield* alerts.updateRule(account, id, change)
        })
    }
    const context = Context.make(AccountStore, stores.accountStore).pipe(
      Context.add(StreamStore, stores.streamStore),
      Context.add(AlertStore, raced)
    )
    const account: Account = { id: newAccountId(), name: "acme", createdAt: at(0) }
    yield* stores.accountStore.createAccount(account, digestAccessKey(newAccessKey()))
    yield* stores.accountStore.createWidget(account.id, StreamName.make("cpu"), "number", at(0))
    return { context, account, alerts }
  })

  const body = (name: string, receiverIds: ReadonlyArray<string>, above = 90) => ({
    name,
    streamName: "cpu",
    condition: { above },
    receiverIds
  })

  it.effect("a rename landing after an engine's firing keeps the firing and stores the rename", () =>
    Effect.gen(function* () {
      const { account, alerts, context } = yield* racedStores
      const run = <A, E>(effect: Effect.Effect<A, E, AccountStore | AlertStore | StreamStore>) =>
        Effect.provide(effect, context)
      const receiver = yield* run(
        AlertAdmin.createReceiver(account.id, { name: "ops", kind: "webhook", url: "http://h/" })
      )
      const rule = yield* run(AlertAdmin.createRule(account.id, body("CPU", [])))
      const edited = yield* run(AlertAdmin.updateRule(account.id, rule.id, body("CPU high", [receiver.id])))
      assert.strictEqual(edited.name, "CPU high")
      assert.deepStrictEqual<ReadonlyArray<string>>(edited.receiverIds, [receiver.id])
      assert.strictEqual(edited.evaluation.state, "firing")
      assert.strictEqual(edited.version, 3)
      assert.deepStrictEqual(Option.getOrThrow(yield* alerts.getRule(account.id, rule.id)), edited)
      const events = yield* alerts.listEvents(account.id, micros(0), 1000)
      assert.deepStrictEqual(
        events.map((e) => [e.ruleName, e.to]),
        [["CPU", "firing"]]
      )
    })
  )

  it.effect("a new condition landing after an engine's firing starts the rule over; the firing stays in history", () =>
    Effect.gen(function* () {
      const { account, alerts, context } = yield* racedStores
      const run = <A, E>(effect: Effect.Effect<A, E, AccountStore | AlertStore | StreamStore>) =>
        Effect.provide(effect, context)
      const rule = yield* run(AlertAdmin.createRule(account.id, body("CPU", [])))
      const edited = yield* run(AlertAdmin.updateRule(account.id, rule.id, body("CPU", [], 99)))
      assert.deepStrictEqual(edited.condition, { above: 99 })
      assert.strictEqual(edited.evaluation.state, "ok")
      assert.strictEqual(edited.version, 3)
      assert.strictEqual((yield* alerts.listEvents(account.id, micros(0), 1000)).length, 1)
    })
  )
})
