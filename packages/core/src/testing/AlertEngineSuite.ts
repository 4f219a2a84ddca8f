import { assert, describe, it } from "@effect/vitest"
import { Clock, Context, Effect, Exit, Layer, Scope } from "effect"
import { type Account, digestAccessKey, newAccessKey, newAccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import { AlertEngine, layer as engineLayer } from "../alerts/AlertEngine.js"
import { newAlertRuleId } from "../alerts/AlertRule.js"
import { type AlertEvent, AlertStore } from "../alerts/AlertStore.js"
import { newReceiverId, type ReceiverId } from "../alerts/Receiver.js"
import { initialEvaluation } from "../alerts/RuleStateMachine.js"
import type { ChangeFeed } from "../ChangeFeed.js"
import { StreamName } from "../StreamName.js"
import { StreamStore } from "../StreamStore.js"
import { type Micros, micros } from "../Time.js"
import type { Widget } from "../Widget.js"

/**
 * The alert engine over a real storage adapter (docs/api.md section 18.3): an entry acknowledged while no engine ran
 * (a process killed between a push and its evaluation) is evaluated at the next start, from the rule's cursor; a
 * rule stored by another process reaches a running engine within a second; two processes on one database, each with
 * its engine, store each transition once. Each adapter's test file calls
 * {@link alertEngineSuite} with a way to make a fresh database and open it as a new process would.
 */

type Stores = AccountStore | StreamStore | AlertStore | ChangeFeed

/**
 * Makes a fresh, empty database for one test and returns how to open it: each call of the returned function is one
 * process's storage on that database (its own connection), closed with the scope it is built in.
 */
export type AlertEngineStorage = () => Effect.Effect<() => Layer.Layer<Stores, unknown>, unknown, Scope.Scope>

const now = Effect.map(Clock.currentTimeNanos, (nanos) => micros(Number(nanos / 1000n)))

/** Opens a process: its stores and, when `engine`, its alert engine; `stop` ends it (engine, then storage). */
const openProcess = (open: () => Layer.Layer<Stores, unknown>, engine = true) =>
  Effect.gen(function* () {
    const scope = yield* Scope.make()
    const stores = yield* Layer.buildWithScope(open(), scope)
    const running = engine
      ? Context.get(yield* Layer.buildWithScope(engineLayer, scope).pipe(Effect.provide(stores)), AlertEngine)
      : undefined
    return { stores, engine: running, stop: Scope.close(scope, Exit.void) }
  })

type Process = Effect.Effect.Success<ReturnType<typeof openProcess>>

/** An account with a number widget, a receiver and (unless `rule` is false) a rule `above 90` (for 0) on it. */
const setup = (on: Process, rule = true) =>
  Effect.gen(function* () {
    const created = yield* now
    const account: Account = { id: newAccountId(), name: "acme", createdAt: created }
    const accounts = Context.get(on.stores, AccountStore)
    yield* accounts.createAccount(account, digestAccessKey(newAccessKey()))
    const widget = yield* accounts.createWidget(account.id, StreamName.make("cpu"), "number", created)
    const alerts = Context.get(on.stores, AlertStore)
    const receiverId = newReceiverId()
    yield* alerts.createReceiver(
      {
        id: receiverId,
        accountId: account.id,
        name: "ops",
        kind: "webhook",
        url: "https://hooks.example.com/x",
        hasSecret: false,
        createdAt: created
      },
      null
    )
    if (rule) yield* addRule(on, account, widget, receiverId, created)
    return { account, widget, receiverId }
  })

/** Stores the rule `CPU`: `above 90`, for 0, created at `created` (microseconds). */
const addRule = (on: Process, account: Account, widget: Widget, receiverId: ReceiverId, created: Micros) =>
  Context.get(on.stores, AlertStore).createRule({
    id: newAlertRuleId(),
    accountId: account.id,
    streamId: widget.id,
    name: "CPU",
    streamName: widget.streamName,
    condition: { above: 90 },
    for: 0,
    receiverIds: [receiverId],
    createdAt: created,
    silencedUntil: null,
    evaluation: initialEvaluation(created, null)
  })

const push = (on: Process, widget: Widget, n: number) =>
  Effect.flatMap(now, (at: Micros) =>
    Context.get(on.stores, StreamStore).write(
      [{ widget, op: { _tag: "Put", entries: [{ point: { number: n } }] }, path: "point" }],
      at
    )
  )

/** The account's transitions, as `from->to`, once there are `count` of them (waits up to 10 s). */
const transitions = (on: Process, account: Account, count: number) =>
  Effect.gen(function* () {
    const alerts = Context.get(on.stores, AlertStore)
    const brief = (events: ReadonlyArray<AlertEvent>) => events.map((e) => `${e.from}->${e.to}:${e.value}`)
    for (let waited = 0; ; waited += 20) {
      const events = yield* alerts.listEvents(account.id, micros(0), 1000)
      if (events.length >= count || waited >= 10_000) return brief(events)
      yield* Effect.sleep("20 millis")
    }
  })

/** Registers the suite under `describe("alert engine over storage: <name>")`. */
export const alertEngineSuite = (name: string, storage: AlertEngineStorage): void => {
  describe(`alert engine over storage: ${name}`, () => {
    it.scopedLive(
      "an entry stored while no engine ran is evaluated at the next start, from the rule's cursor",
      () =>
        Effect.gen(function* () {
          const open = yield* storage()
          const first = yield* openProcess(open)
          const { account, widget } = yield* setup(first)
          yield* first.engine!.reload(widget.id)
          yield* first.engine!.settled
          yield* push(first, widget, 95)
          assert.deepStrictEqual(yield* transitions(first, account, 1), ["ok->firing:95"])
          yield* first.stop
          // A process with no engine running (one killed after acknowledging the push, before evaluating it).
          const writer = yield* openProcess(open, false)
          yield* push(writer, widget, 10)
          yield* writer.stop
          const next = yield* openProcess(open)
          assert.deepStrictEqual(yield* transitions(next, account, 2), ["ok->firing:95", "firing->ok:10"])
          yield* next.stop
        }),
      30_000
    )

    it.scopedLive(
      "a rule created by another process (as the CLI does) reaches the running engine within a second",
      () =>
        Effect.gen(function* () {
          const open = yield* storage()
          const server = yield* openProcess(open)
          const cli = yield* openProcess(open, false)
          const { account, widget, receiverId } = yield* setup(cli, false)
          yield* server.engine!.settled
          yield* addRule(cli, account, widget, receiverId, yield* now)
          yield* cli.stop
          yield* Effect.sleep("1 second")
          yield* push(server, widget, 95)
          assert.deepStrictEqual(yield* transitions(server, account, 1), ["ok->firing:95"])
          yield* server.stop
        }),
      30_000
    )

    it.scopedLive(
      "two processes on one database, each with its engine: each transition is stored once",
      () =>
        Effect.gen(function* () {
          const open = yield* storage()
          const a = yield* openProcess(open)
          const { account, widget } = yield* setup(a)
          const b = yield* openProcess(open)
          yield* a.engine!.reload(widget.id)
          yield* Effect.all([a.engine!.settled, b.engine!.settled])
          yield* push(a, widget, 95)
          assert.deepStrictEqual(yield* transitions(a, account, 1), ["ok->firing:95"])
          yield* push(b, widget, 10)
          assert.deepStrictEqual(yield* transitions(b, account, 2), ["ok->firing:95", "firing->ok:10"])
          // Give a late duplicate every chance to show.
          yield* Effect.sleep("300 millis")
          yield* Effect.all([a.engine!.settled, b.engine!.settled])
          assert.deepStrictEqual(yield* transitions(a, account, 3), ["ok->firing:95", "firing->ok:10"])
          yield* b.stop
          yield* a.stop
        }),
      30_000
    )
  })
}
