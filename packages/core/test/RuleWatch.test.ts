import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Option, Scope, TestClock } from "effect"
import { type Account, digestAccessKey, newAccessKey, newAccountId } from "../src/Account.js"
import { AccountStore } from "../src/AccountStore.js"
import { AlertEngine, layer as engineLayer } from "../src/alerts/AlertEngine.js"
import { newAlertRuleId } from "../src/alerts/AlertRule.js"
import { AlertStore, type NewAlertRule } from "../src/alerts/AlertStore.js"
import type { RuleSignals } from "../src/alerts/RuleSignal.js"
import { initialEvaluation } from "../src/alerts/RuleStateMachine.js"
import * as RuleWatch from "../src/alerts/RuleWatch.js"
import { ChangeFeed } from "../src/ChangeFeed.js"
import { StreamName } from "../src/StreamName.js"
import { StreamStore } from "../src/StreamStore.js"
import { type Micros, micros } from "../src/Time.js"
import type { StreamId, Widget } from "../src/Widget.js"
import { MemoryStore } from "../src/testing/index.js"

/**
 * Rule changes reach a running engine without being told (docs/api.md section 18): the store signals each change of
 * a stream's rules, the rule watch reads the signals every quarter of a second and the engine reloads those streams
 * only. Over the memory store and the test clock; the watch's floor is checked against a store whose signals commit
 * out of order, as two PostgreSQL transactions may.
 */

const T0_MS = 1_700_000_000_000
const at = (seconds: number): Micros => micros(T0_MS * 1000 + seconds * 1_000_000)

const setup = Effect.gen(function* () {
  yield* TestClock.setTime(T0_MS)
  const stores = yield* MemoryStore.make
  const context = Context.make(AccountStore, stores.accountStore).pipe(
    Context.add(StreamStore, stores.streamStore),
    Context.add(AlertStore, stores.alertStore),
    Context.add(ChangeFeed, stores.changeFeed)
  )
  const account: Account = { id: newAccountId(), name: "acme", createdAt: at(0) }
  yield* stores.accountStore.createAccount(account, digestAccessKey(newAccessKey()))
  const cpu = yield* stores.accountStore.createWidget(account.id, StreamName.make("cpu"), "number", at(0))
  const disk = yield* stores.accountStore.createWidget(account.id, StreamName.make("disk"), "number", at(0))
  return { context, fanout: stores.fanout, alerts: stores.alertStore, account, cpu, disk }
})

type Setup = Effect.Effect.Success<typeof setup>

const newRule = (s: Setup, widget: Widget, name: string, above: number): NewAlertRule => ({
  id: newAlertRuleId(),
  accountId: s.account.id,
  streamId: widget.id,
  name,
  streamName: widget.streamName,
  condition: { above },
  for: 0,
  receiverIds: [],
  createdAt: at(0),
  silencedUntil: null,
  evaluation: initialEvaluation(at(0), null)
})

const push = (s: Setup, widget: Widget, n: number) =>
  Effect.flatMap(TestClock.currentTimeMillis, (ms) =>
    Context.get(s.context, StreamStore).write(
      [{ widget, op: { _tag: "Put", entries: [{ point: { number: n } }] }, path: "point" }],
      micros(ms * 1000)
    )
  )

/** Lets the watch read the signals (the test clock moves a quarter of a second) and the engine do what it queued. */
const tick = (engine: AlertEngine["Type"]) =>
  Effect.gen(function* () {
    yield* TestClock.adjust("250 millis")
    for (let i = 0; i < 5; i++) {
      yield* Effect.yieldNow()
      yield* engine.settled
    }
  })

const startEngine = (s: Setup) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const built = yield* Layer.buildWithScope(engineLayer, scope).pipe(Effect.provide(s.context))
    const engine = Context.get(built, AlertEngine)
    yield* engine.settled
    return { engine, stop: Scope.close(scope, Exit.void) }
  })

describe("rule changes reach a running engine", () => {
  it.scoped("a rule created elsewhere is followed within a quarter of a second, without a reload call", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const { engine } = yield* startEngine(s)
      assert.strictEqual(s.fanout.streams, 0)
      const rule = newRule(s, s.cpu, "CPU", 90)
      yield* s.alerts.createRule(rule)
      yield* tick(engine)
      assert.isTrue(s.fanout.has(s.cpu.id))
      assert.isFalse(s.fanout.has(s.disk.id))
      yield* push(s, s.cpu, 95)
      yield* engine.settled
      const stored = Option.getOrThrow(yield* s.alerts.getRule(s.account.id, rule.id))
      assert.strictEqual(stored.evaluation.state, "firing")
    })
  )

  it.scoped("a rule deleted, or moved to another stream, elsewhere: only the streams concerned are reloaded", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const rule = newRule(s, s.cpu, "CPU", 90)
      yield* s.alerts.createRule(rule)
      const { engine } = yield* startEngine(s)
      assert.isTrue(s.fanout.has(s.cpu.id))
      yield* s.alerts.updateRule(s.account.id, rule.id, {
        definition: { name: "Disk", streamName: s.disk.streamName, condition: { above: 50 }, for: 0, receiverIds: [] },
        streamId: s.disk.id,
        evaluation: initialEvaluation(at(0), null),
        version: 1
      })
      yield* tick(engine)
      assert.isFalse(s.fanout.has(s.cpu.id))
      assert.isTrue(s.fanout.has(s.disk.id))
      yield* s.alerts.deleteRule(s.account.id, rule.id)
      yield* tick(engine)
      assert.strictEqual(s.fanout.streams, 0)
    })
  )

  it.scoped("the store signals a rule's firing and its resolution, not its moves between ok and pending", () =>
    Effect.gen(function* () {
      const s = yield* setup
      yield* s.alerts.createRule({ ...newRule(s, s.cpu, "CPU", 90), for: 60 })
      yield* s.alerts.createRule(newRule(s, s.disk, "Disk", 90))
      const { engine } = yield* startEngine(s)
      const head = (yield* s.alerts.ruleSignals(0)).head
      yield* push(s, s.cpu, 95)
      yield* engine.settled
      assert.deepStrictEqual((yield* s.alerts.ruleSignals(head)).signals, [])
      yield* push(s, s.disk, 95)
      yield* engine.settled
      assert.deepStrictEqual(
        (yield* s.alerts.ruleSignals(head)).signals.map((signal) => signal.stream),
        [s.disk.id]
      )
      assert.deepStrictEqual(
        (yield* s.alerts.firingRules([s.cpu.id, s.disk.id])).map((r) => r.name),
        ["Disk"]
      )
    })
  )
})

describe("rule watch", () => {
  /** A store whose signals are set by the test; the rest of the port is never called. */
  const scripted = () => {
    let answer: RuleSignals = { head: 0, signals: [] }
    const asked: Array<number> = []
    const store = {
      ruleSignals: (after: number) =>
        Effect.sync(() => {
          asked.push(after)
          return { head: answer.head, signals: answer.signals.filter((signal) => signal.seq > after) }
        })
    } as unknown as AlertStore["Type"]
    return { store, asked, set: (next: RuleSignals) => (answer = next) }
  }
  const stream = (n: number) => n as StreamId

  it.scoped("a signal committed after a higher one was read is still told, from a floor seconds old", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0_MS)
      const script = scripted()
      script.set({ head: 3, signals: [{ stream: stream(1), seq: 3 }] })
      const watch = yield* RuleWatch.make({ intervalMs: 250, graceMs: 10_000 }).pipe(
        Effect.provideService(AlertStore, script.store)
      )
      const told: Array<ReadonlyArray<StreamId>> = []
      yield* watch.subscribe((streams) => told.push(streams))
      // What was stored before the subscription is known, not told.
      yield* TestClock.adjust("250 millis")
      assert.deepStrictEqual(told, [])
      // seq 5 commits first, seq 4 later (two PostgreSQL transactions in the other order).
      script.set({
        head: 5,
        signals: [
          { stream: stream(1), seq: 3 },
          { stream: stream(3), seq: 5 }
        ]
      })
      yield* TestClock.adjust("1 second")
      script.set({
        head: 5,
        signals: [
          { stream: stream(1), seq: 3 },
          { stream: stream(2), seq: 4 },
          { stream: stream(3), seq: 5 }
        ]
      })
      yield* TestClock.adjust("250 millis")
      assert.deepStrictEqual(told, [[stream(3)], [stream(2)]])
      // Told once; and once the grace has passed, the floor moves up to the head seen then.
      yield* TestClock.adjust("11 seconds")
      assert.deepStrictEqual(told, [[stream(3)], [stream(2)]])
      assert.strictEqual(script.asked.at(-1), 5)
    })
  )

  it.scoped("nobody listening: the store is not read", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(T0_MS)
      const script = scripted()
      const watch = yield* RuleWatch.make().pipe(Effect.provideService(AlertStore, script.store))
      yield* TestClock.adjust("5 seconds")
      assert.deepStrictEqual(script.asked, [])
      const stop = yield* watch.subscribe(() => {})
      yield* TestClock.adjust("1 second")
      const reads = script.asked.length
      assert.isAtLeast(reads, 4)
      stop()
      yield* TestClock.adjust("5 seconds")
      assert.strictEqual(script.asked.length, reads)
    })
  )
})
