import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, TestClock } from "effect"
import { type Account, digestAccessKey, newAccessKey, newAccountId } from "../src/Account.js"
import { AccountStore } from "../src/AccountStore.js"
import { AlertEngine, layer as engineLayer } from "../src/alerts/AlertEngine.js"
import { newAlertRuleId } from "../src/alerts/AlertRule.js"
import { AlertStore, type EvaluationCommit } from "../src/alerts/AlertStore.js"
import { initialEvaluation } from "../src/alerts/RuleStateMachine.js"
import { ChangeFeed } from "../src/ChangeFeed.js"
import { StreamName } from "../src/StreamName.js"
import { StreamStore } from "../src/StreamStore.js"
import { micros } from "../src/Time.js"
import type { Widget } from "../src/Widget.js"
import { MemoryStore } from "../src/testing/index.js"

/**
 * What the engine stores, and when (docs/api.md section 18.1, internals "the alert engine"): an evaluation that only
 * moves a rule's value and cursor is written behind, within a minute; a transition at once; the changes of many
 * streams queued together are stored in one `commitEvaluations`.
 */

const T0_MS = 1_700_000_000_000

const setup = (streams: number) =>
  Effect.gen(function* () {
    yield* TestClock.setTime(T0_MS)
    const stores = yield* MemoryStore.make
    const calls: Array<ReadonlyArray<EvaluationCommit>> = []
    const alerts: AlertStore["Type"] = {
      ...stores.alertStore,
      commitEvaluations: (commits) =>
        Effect.zipRight(
          Effect.sync(() => calls.push(commits)),
          stores.alertStore.commitEvaluations(commits)
        )
    }
    const context = Context.make(AccountStore, stores.accountStore).pipe(
      Context.add(StreamStore, stores.streamStore),
      Context.add(AlertStore, alerts),
      Context.add(ChangeFeed, stores.changeFeed)
    )
    const t0 = micros(T0_MS * 1000)
    const account: Account = { id: newAccountId(), name: "acme", createdAt: t0 }
    yield* stores.accountStore.createAccount(account, digestAccessKey(newAccessKey()))
    const widgets: Array<Widget> = []
    for (let k = 0; k < streams; k++) {
      const widget = yield* stores.accountStore.createWidget(account.id, StreamName.make(`s${k}`), "number", t0)
      widgets.push(widget)
      yield* alerts.createRule({
        id: newAlertRuleId(),
        accountId: account.id,
        streamId: widget.id,
        name: `s${k} hot`,
        streamName: widget.streamName,
        condition: { above: 90 },
        for: 0,
        receiverIds: [],
        createdAt: t0,
        silencedUntil: null,
        evaluation: initialEvaluation(t0, null)
      })
    }
    const engine = Context.get(yield* Layer.build(engineLayer).pipe(Effect.provide(context)), AlertEngine)
    yield* engine.settled
    calls.length = 0
    const push = (widget: Widget, n: number) =>
      Effect.flatMap(TestClock.currentTimeMillis, (ms) =>
        stores.streamStore.write(
          [{ widget, op: { _tag: "Put", entries: [{ point: { number: n } }] }, path: "point" }],
          micros(ms * 1000)
        )
      )
    const stored = (widget: Widget) =>
      Effect.map(stores.alertStore.rulesOfStream(widget.id), (rules) =>
        Option.getOrThrow(Option.fromNullable(rules[0]))
      )
    return { engine, widgets, calls, push, stored }
  })

/** Lets the engine's fibers run without moving the clock. */
const spin = Effect.gen(function* () {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow()
})

describe("alert engine storage", () => {
  it.scoped("quiet evaluations are stored by the next sweep or on settled; a transition at once", () =>
    Effect.gen(function* () {
      const s = yield* setup(2)
      const [a, b] = s.widgets as [Widget, Widget]
      yield* s.push(a, 10)
      yield* s.push(a, 20)
      yield* spin
      assert.deepStrictEqual(s.calls, [])
      assert.strictEqual((yield* s.stored(a)).evaluation.value, null)
      // The first sweep starts at 50 seconds, so a quiet evaluation is never stored more than a minute late.
      yield* TestClock.adjust("49 seconds")
      yield* spin
      assert.deepStrictEqual(s.calls, [])
      yield* TestClock.adjust("1 second")
      yield* spin
      assert.strictEqual(s.calls.length, 1)
      assert.strictEqual((yield* s.stored(a)).evaluation.value, 20)
      // A quiet one on `a`, then a transition on `b`: the transition is stored at once, alone.
      yield* s.push(a, 30)
      yield* spin
      yield* s.push(b, 95)
      yield* spin
      assert.strictEqual(s.calls.length, 2)
      assert.deepStrictEqual(
        s.calls[1]!.map((c) => [c.evaluation.value, c.transitions.length]),
        [[95, 1]]
      )
      assert.strictEqual((yield* s.stored(b)).evaluation.state, "firing")
      assert.strictEqual((yield* s.stored(a)).evaluation.value, 20)
      yield* s.engine.settled
      assert.strictEqual((yield* s.stored(a)).evaluation.value, 30)
    })
  )

  it.scoped("a sweep stores 64 rules a commit, 5 ms apart; a push between two is evaluated at once", () =>
    Effect.gen(function* () {
      const s = yield* setup(100)
      for (const widget of s.widgets) yield* s.push(widget, 10)
      yield* spin
      assert.deepStrictEqual(s.calls, [])
      yield* TestClock.adjust("50 seconds")
      yield* spin
      assert.deepStrictEqual(
        s.calls.map((c) => c.length),
        [64]
      )
      // Between two commits of the sweep the worker is idle: a push meeting no rule changes nothing stored, one
      // meeting its rule is stored at once, before the sweep goes on.
      const [first, second] = s.widgets as [Widget, Widget]
      yield* s.push(first, 20)
      yield* s.push(second, 95)
      yield* spin
      assert.deepStrictEqual(
        s.calls.map((c) => c.length),
        [64, 1]
      )
      assert.strictEqual((yield* s.stored(second)).evaluation.state, "firing")
      yield* TestClock.adjust("5 millis")
      yield* spin
      assert.deepStrictEqual(
        s.calls.map((c) => c.length),
        [64, 1, 35]
      )
      for (const widget of s.widgets.slice(2)) assert.strictEqual((yield* s.stored(widget)).evaluation.value, 10)
      yield* s.engine.settled
      assert.strictEqual((yield* s.stored(first)).evaluation.value, 20)
    })
  )

  it.scoped("the changes of many streams queued together are stored in one commitEvaluations", () =>
    Effect.gen(function* () {
      const s = yield* setup(50)
      for (const widget of s.widgets) yield* s.push(widget, 95)
      yield* s.engine.settled
      assert.strictEqual(s.calls.length, 1)
      assert.strictEqual(s.calls[0]!.length, 50)
      for (const widget of s.widgets) assert.strictEqual((yield* s.stored(widget)).evaluation.state, "firing")
    })
  )
})
