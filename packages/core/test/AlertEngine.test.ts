import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Effect, Exit, Layer, Option, Scope, TestClock } from "effect"
import { digestAccessKey, newAccessKey, newAccountId, type Account } from "../src/Account.js"
import { AccountStore } from "../src/AccountStore.js"
import { AlertEngine, layer as engineLayer } from "../src/alerts/AlertEngine.js"
import { type Condition, newAlertRuleId } from "../src/alerts/AlertRule.js"
import { AlertStore, type AlertEvent, type NewAlertRule } from "../src/alerts/AlertStore.js"
import { newReceiverId, type Receiver } from "../src/alerts/Receiver.js"
import { initialEvaluation } from "../src/alerts/RuleStateMachine.js"
import { ChangeFeed } from "../src/ChangeFeed.js"
import { StorageError } from "../src/Errors.js"
import { StreamName } from "../src/StreamName.js"
import { StreamStore } from "../src/StreamStore.js"
import { type Micros, micros } from "../src/Time.js"
import type { Widget } from "../src/Widget.js"
import { MemoryStore } from "../src/testing/index.js"

/**
 * The alert engine over the memory store and the test clock: entries pushed to a stream with rules are evaluated and
 * their transitions stored with deliveries; deadlines fire from one timer without an entry; a restart catches up on
 * what was stored while it was down and on deadlines that passed; streams without rules are not followed; two
 * engines on one store (two processes) store each transition once.
 */

const T0_MS = 1_700_000_000_000
const S = 1_000_000
const at = (seconds: number): Micros => micros(T0_MS * 1000 + seconds * S)

type Stores = AccountStore | StreamStore | AlertStore | ChangeFeed

/** A fresh memory store as a context, with its fan-out (to see which streams are followed). */
const freshStores = Effect.map(MemoryStore.make, (stores) => ({
  context: Context.make(AccountStore, stores.accountStore).pipe(
    Context.add(StreamStore, stores.streamStore),
    Context.add(AlertStore, stores.alertStore),
    Context.add(ChangeFeed, stores.changeFeed)
  ),
  fanout: stores.fanout
}))

/** Starts an engine on `context` in a scope of its own; closing the scope stops it (a process ending). */
const startEngine = (context: Context.Context<Stores>) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const built = yield* Layer.buildWithScope(engineLayer, scope).pipe(Effect.provide(context))
    const engine = Context.get(built, AlertEngine)
    yield* engine.settled
    return { engine, stop: Scope.close(scope, Exit.void) }
  })

const setup = (type: Widget["type"] = "number") =>
  Effect.gen(function* () {
    yield* TestClock.setTime(T0_MS)
    const { context, fanout } = yield* freshStores
    const account: Account = { id: newAccountId(), name: "acme", createdAt: at(0) }
    const accounts = Context.get(context, AccountStore)
    yield* accounts.createAccount(account, digestAccessKey(newAccessKey()))
    const widget = yield* accounts.createWidget(account.id, StreamName.make("cpu"), type, at(0))
    const quiet = yield* accounts.createWidget(account.id, StreamName.make("quiet"), "number", at(0))
    const receiver: Receiver = {
      id: newReceiverId(),
      accountId: account.id,
      name: "ops",
      kind: "webhook",
      url: "https://hooks.example.com/x",
      hasSecret: false,
      createdAt: at(0)
    }
    yield* Context.get(context, AlertStore).createReceiver(receiver, null)
    return { context, fanout, account, widget, quiet, receiver }
  })

type Setup = Effect.Effect.Success<ReturnType<typeof setup>>

const addRule = (s: Setup, condition: Condition, forSeconds = 0, silencedUntil: Micros | null = null) =>
  Effect.gen(function* () {
    const rule: NewAlertRule = {
      id: newAlertRuleId(),
      accountId: s.account.id,
      streamId: s.widget.id,
      name: "CPU",
      streamName: s.widget.streamName,
      condition,
      for: forSeconds,
      receiverIds: [s.receiver.id],
      createdAt: at(0),
      silencedUntil,
      evaluation: initialEvaluation(at(0), null)
    }
    yield* Context.get(s.context, AlertStore).createRule(rule)
    return rule
  })

/** Pushes `n` to the rule's stream now (a server `ts`). */
const push = (s: Setup, n: number) =>
  Effect.gen(function* () {
    const now = micros(Number((yield* Clock.currentTimeNanos) / 1000n))
    yield* Context.get(s.context, StreamStore).write(
      [{ widget: s.widget, op: { _tag: "Put", entries: [{ point: { number: n } }] }, path: "point" }],
      now
    )
  })

const events = (s: Setup) => Context.get(s.context, AlertStore).listEvents(s.account.id, micros(0), 1000)

const brief = (e: AlertEvent) => `${e.from}->${e.to}@${(e.at - at(0)) / S}`

/** Moves the test clock on and lets the engine's timer and worker run what came due. */
const advance = (engine: AlertEngine["Type"], seconds: number) =>
  Effect.gen(function* () {
    yield* TestClock.adjust(`${seconds} seconds`)
    for (let i = 0; i < 5; i++) {
      yield* Effect.yieldNow()
      yield* engine.settled
    }
  })

describe("alert engine", () => {
  it.scoped("a push crossing the threshold stores a firing event with its delivery; the next one resolves it", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      yield* addRule(s, { above: 90 })
      const { engine } = yield* startEngine(s.context)
      yield* advance(engine, 1)
      yield* push(s, 95)
      yield* engine.settled
      const [fired] = yield* events(s)
      assert.strictEqual(brief(fired!), "ok->firing@1")
      assert.strictEqual(fired!.value, 95)
      assert.strictEqual(fired!.ts, at(1))
      assert.deepStrictEqual(
        fired!.deliveries.map((d) => d.state),
        ["pending"]
      )
      yield* push(s, 99)
      yield* advance(engine, 1)
      yield* push(s, 10)
      yield* engine.settled
      assert.deepStrictEqual((yield* events(s)).map(brief), ["ok->firing@1", "firing->ok@2"])
    })
  )

  it.scoped("for: pending at the entry, firing at its deadline from the one timer, without an entry", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      const rule = yield* addRule(s, { above: 90 }, 30)
      const { engine } = yield* startEngine(s.context)
      yield* push(s, 95)
      yield* engine.settled
      const stored = Option.getOrThrow(yield* Context.get(s.context, AlertStore).getRule(s.account.id, rule.id))
      assert.strictEqual(stored.evaluation.state, "pending")
      yield* advance(engine, 29)
      assert.deepStrictEqual(yield* events(s), [])
      yield* advance(engine, 1)
      const fired = yield* events(s)
      assert.deepStrictEqual(fired.map(brief), ["pending->firing@30"])
      assert.strictEqual(fired[0]!.ts, null)
    })
  )

  it.scoped(
    "noDataFor: an empty stream fires noDataFor seconds after the rule's creation; the next entry resolves",
    () =>
      Effect.gen(function* () {
        const s = yield* setup("text-feed")
        yield* addRule(s, { noDataFor: 60 })
        const { engine } = yield* startEngine(s.context)
        yield* advance(engine, 59)
        assert.deepStrictEqual(yield* events(s), [])
        yield* advance(engine, 1)
        assert.deepStrictEqual((yield* events(s)).map(brief), ["ok->firing@60"])
        const now = micros(Number((yield* Clock.currentTimeNanos) / 1000n))
        yield* Context.get(s.context, StreamStore).write(
          [{ widget: s.widget, op: { _tag: "Put", entries: [{ point: { title: "t", msg: "m" } }] }, path: "point" }],
          now
        )
        yield* engine.settled
        assert.deepStrictEqual((yield* events(s)).map(brief), ["ok->firing@60", "firing->ok@60"])
      })
  )

  it.scoped("a restart evaluates the entries stored while the engine was down, and the deadlines that passed", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      yield* addRule(s, { above: 90 }, 30)
      const first = yield* startEngine(s.context)
      yield* push(s, 95)
      yield* first.engine.settled
      yield* first.stop
      // Down: an entry stored unevaluated, and the pending rule's deadline passes.
      yield* TestClock.adjust("10 seconds")
      yield* push(s, 96)
      yield* TestClock.adjust("50 seconds")
      const second = yield* startEngine(s.context)
      yield* advance(second.engine, 0)
      // Evaluated at the restart (60 s): the deadline (0 + 30) had passed, so the rule fires by it, then the entry
      // of 10 s, still meeting the condition, is evaluated and moves the cursor.
      const fired = yield* events(s)
      assert.deepStrictEqual(fired.map(brief), ["pending->firing@60"])
      assert.strictEqual(fired[0]!.value, null)
      const [rule] = yield* Context.get(s.context, AlertStore).listRules(s.account.id)
      assert.strictEqual(rule!.evaluation.cursor, at(10))
      assert.strictEqual(rule!.evaluation.value, 96)
    })
  )

  it.scoped("an evaluation that fails is logged and done again a second later from the cursor: nothing is lost", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      yield* addRule(s, { above: 90 })
      // The store fails the first evaluation commit (a storage error) and dies on the second (a bug).
      const alerts = Context.get(s.context, AlertStore)
      let calls = 0
      const flaky = Context.add(s.context, AlertStore, {
        ...alerts,
        commitEvaluations: (commits) =>
          ++calls === 1
            ? Effect.fail(new StorageError({ cause: new Error("disk on fire") }))
            : calls === 2
              ? Effect.die(new Error("a bug"))
              : alerts.commitEvaluations(commits)
      })
      const { engine } = yield* startEngine(flaky)
      yield* push(s, 95)
      yield* engine.settled
      assert.deepStrictEqual(yield* events(s), [])
      yield* advance(engine, 1)
      assert.deepStrictEqual(yield* events(s), [])
      yield* advance(engine, 1)
      assert.deepStrictEqual(
        (yield* events(s)).map((e) => [e.to, e.value]),
        [["firing", 95]]
      )
      assert.strictEqual(calls, 3)
    })
  )

  it.scoped("only streams with rules are followed; a deleted rule's stream is let go at its reload", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      const rule = yield* addRule(s, { above: 90 })
      const { engine } = yield* startEngine(s.context)
      assert.isTrue(s.fanout.has(s.widget.id))
      assert.isFalse(s.fanout.has(s.quiet.id))
      assert.strictEqual(s.fanout.streams, 1)
      yield* Context.get(s.context, AlertStore).deleteRule(s.account.id, rule.id)
      yield* engine.reload(s.widget.id)
      yield* engine.settled
      assert.strictEqual(s.fanout.streams, 0)
    })
  )

  it.scoped("a silenced rule's transitions are stored with silenced deliveries", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      yield* addRule(s, { below: 0 }, 0, at(3600))
      const { engine } = yield* startEngine(s.context)
      yield* push(s, -1)
      yield* engine.settled
      const [fired] = yield* events(s)
      assert.deepStrictEqual(
        fired!.deliveries.map((d) => d.state),
        ["silenced"]
      )
    })
  )

  it.scoped("two engines, one push of two entries crossing and back: the two transitions are stored once", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      yield* addRule(s, { above: 90 })
      const a = yield* startEngine(s.context)
      const b = yield* startEngine(s.context)
      const now = micros(Number((yield* Clock.currentTimeNanos) / 1000n))
      yield* Context.get(s.context, StreamStore).write(
        [
          {
            widget: s.widget,
            op: { _tag: "Put", entries: [{ point: { number: 95 } }, { point: { number: 10 } }] },
            path: "point"
          }
        ],
        now
      )
      yield* Effect.all([a.engine.settled, b.engine.settled])
      assert.deepStrictEqual((yield* events(s)).map(brief), ["ok->firing@0", "firing->ok@0"])
    })
  )

  it.scoped("a rule changed elsewhere (its version moved) is read again and evaluated from its new state", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      const rule = yield* addRule(s, { above: 90 })
      const { engine } = yield* startEngine(s.context)
      // Silenced by another process: this engine is not told.
      yield* Context.get(s.context, AlertStore).silenceRule(s.account.id, rule.id, at(3600))
      yield* push(s, 95)
      yield* engine.settled
      const [fired] = yield* events(s)
      assert.deepStrictEqual(
        fired!.deliveries.map((d) => d.state),
        ["silenced"]
      )
    })
  )

  it.scoped("two engines on one store, as two processes: each transition is stored once", () =>
    Effect.gen(function* () {
      const s = yield* setup()
      yield* addRule(s, { above: 90 }, 5)
      const a = yield* startEngine(s.context)
      const b = yield* startEngine(s.context)
      yield* push(s, 95)
      yield* advance(a.engine, 1)
      yield* push(s, 10)
      yield* push(s, 97)
      yield* Effect.all([a.engine.settled, b.engine.settled])
      yield* advance(b.engine, 10)
      yield* advance(a.engine, 0)
      // 97 took the ts 1 s + 1 µs (the same receive time as 10's): `for` runs from there.
      assert.deepStrictEqual((yield* events(s)).map(brief), ["pending->firing@6.000001"])
    })
  )
})
