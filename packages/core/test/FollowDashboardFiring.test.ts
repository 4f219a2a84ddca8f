import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { digestAccessKey, newAccessKey, newAccountId } from "../src/Account.js"
import { AccountStore } from "../src/AccountStore.js"
import { AlertEngine, layer as engineLayer } from "../src/alerts/AlertEngine.js"
import { type Condition, newAlertRuleId } from "../src/alerts/AlertRule.js"
import { AlertStore } from "../src/alerts/AlertStore.js"
import { initialEvaluation } from "../src/alerts/RuleStateMachine.js"
import * as RuleWatch from "../src/alerts/RuleWatch.js"
import { ChangeFeed } from "../src/ChangeFeed.js"
import { type DashboardFollower, followDashboard } from "../src/FollowDashboard.js"
import { StreamName } from "../src/StreamName.js"
import { StreamStore } from "../src/StreamStore.js"
import { micros } from "../src/Time.js"
import type { Widget } from "../src/Widget.js"
import { MemoryStore } from "../src/testing/index.js"
import { recorder } from "./support/recorder.js"

/**
 * The firing alert rules of a page's tiles (docs/api.md section 11.5): the snapshot's `firing` names the firing rules
 * of each tile's stream, and `event: alerts` says them all again when a rule fires or resolves; pending rules and
 * streams off the page are not named. Over the memory store, with the real engine and rule watch.
 */

const setup = Effect.gen(function* () {
  const stores = yield* MemoryStore.make
  const context = Context.make(AccountStore, stores.accountStore).pipe(
    Context.add(StreamStore, stores.streamStore),
    Context.add(AlertStore, stores.alertStore),
    Context.add(ChangeFeed, stores.changeFeed)
  )
  const accountId = newAccountId()
  const t0 = micros(Date.now() * 1000)
  yield* stores.accountStore.createAccount({ id: accountId, name: "t", createdAt: t0 }, digestAccessKey(newAccessKey()))
  const widget = (name: string) => stores.accountStore.createWidget(accountId, StreamName.make(name), "number", t0)
  const cpu = yield* widget("cpu")
  const disk = yield* widget("disk")
  const offPage = yield* widget("other")
  let created = t0
  // Created one after another: listed oldest first.
  const rule = (on: Widget, name: string, condition: Condition, forSeconds = 0) =>
    stores.alertStore.createRule({
      id: newAlertRuleId(),
      accountId,
      streamId: on.id,
      name,
      streamName: on.streamName,
      condition,
      for: forSeconds,
      receiverIds: [],
      createdAt: micros(++created),
      silencedUntil: null,
      evaluation: initialEvaluation(t0, null)
    })
  yield* rule(cpu, "CPU hot", { above: 90 })
  yield* rule(cpu, "CPU very hot", { above: 95 })
  yield* rule(cpu, "CPU warm for an hour", { above: 50 }, 3600)
  yield* rule(offPage, "Other", { above: 0 })
  const engine = Context.get(yield* Layer.build(engineLayer).pipe(Effect.provide(context)), AlertEngine)
  const watch = yield* RuleWatch.make({ intervalMs: 50, graceMs: 10_000 }).pipe(Effect.provide(context))
  const runtime = yield* Effect.runtime<StreamStore | ChangeFeed>().pipe(Effect.provide(context))
  const push = (on: Widget, n: number) =>
    Effect.zipRight(
      stores.streamStore.write(
        [{ widget: on, op: { _tag: "Put", entries: [{ point: { number: n } }] }, path: "point" }],
        micros(Date.now() * 1000)
      ),
      engine.settled
    )
  const follow = (): { events: Array<string>; follower: DashboardFollower } => {
    // A snapshot is recorded by its firing rules alone.
    const { events, sink } = recorder({
      kinds: ["snapshot", "alerts", "failed"],
      snapshot: (text) => `${/"firing":(\{.*?\}),"now"/.exec(text)?.[1]}`
    })
    const feeds = [cpu, disk].map((w) => ({ streamName: w.streamName, stream: w.id, recent: 1, type: "number" }))
    const follower = followDashboard({ data: "{}", key: "k", version: "v", feeds }, runtime, sink, {
      maxHeldBytes: 1 << 20,
      firing: { read: stores.alertStore.firingRules, watch }
    })
    return { events, follower }
  }
  return { cpu, disk, offPage, push, follow }
})

/** Waits (up to 5 s) until `events` has `count` entries. */
const until = (events: ReadonlyArray<string>, count: number) =>
  Effect.gen(function* () {
    for (let waited = 0; events.length < count && waited < 5_000; waited += 20) yield* Effect.sleep("20 millis")
  })

describe("firing rules on a dashboard's event stream", () => {
  it.scopedLive("the snapshot names the firing rules; event: alerts follows each firing and resolution", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const page = s.follow()
      yield* until(page.events, 1)
      yield* s.push(s.offPage, 5)
      yield* s.push(s.cpu, 60)
      // A pending rule and a rule off the page: nothing to say.
      yield* Effect.sleep("300 millis")
      assert.deepStrictEqual(page.events, ["snapshot {}"])
      yield* s.push(s.cpu, 97)
      yield* until(page.events, 2)
      assert.deepStrictEqual(page.events[1], `alerts {"firing":{"cpu":["CPU hot","CPU very hot"]}}`)
      // A page opened now gets them in its snapshot.
      const late = s.follow()
      yield* until(late.events, 1)
      assert.deepStrictEqual(late.events, [`snapshot {"cpu":["CPU hot","CPU very hot"]}`])
      yield* s.push(s.cpu, 93)
      yield* until(page.events, 3)
      assert.deepStrictEqual(page.events[2], `alerts {"firing":{"cpu":["CPU hot"]}}`)
      yield* s.push(s.cpu, 10)
      yield* until(page.events, 4)
      assert.deepStrictEqual(page.events[3], `alerts {"firing":{}}`)
      page.follower.close()
      late.follower.close()
    })
  )
})
