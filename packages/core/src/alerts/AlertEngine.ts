import { Clock, Context, Deferred, Duration, Effect, Layer, Option, Queue, type Scope } from "effect"
import { ChangeFeed, type ChangedEntry, type StreamChange } from "../ChangeFeed.js"
import type { StorageFailure } from "../Errors.js"
import { type StoredEntry, StreamStore } from "../StreamStore.js"
import type { Micros } from "../Time.js"
import type { StreamId } from "../Widget.js"
import type { AlertRuleId } from "./AlertRule.js"
import { type AlertRule, AlertStore, type EvaluationCommit } from "./AlertStore.js"
import { entryValue } from "../internal/entryValue.js"
import { batches, retriesOf, type Work } from "../internal/alertWork.js"
import { DeadlineQueue } from "./DeadlineQueue.js"
import { QUIET_CHUNK, QUIET_PAUSE, QUIET_SWEEP, QuietSweep } from "./QuietSweep.js"
import { RestingRules, settle } from "./RestingRules.js"
import { nextDeadline, type RuleInput, step, type Transition } from "./RuleStateMachine.js"
import * as RuleWatch from "./RuleWatch.js"

/**
 * The alert engine (docs/api.md section 18, "Evaluation"): it feeds the rule state machine (`RuleStateMachine.ts`)
 * with every entry stored in a stream that has rules, every clear, and a tick at each rule's deadline, and stores
 * the outcomes with `AlertStore.commitEvaluations` (states, events and deliveries in one transaction per change).
 *
 * - **Only streams with rules cost anything.** The engine subscribes to the change feed for the streams that have
 *   rules and no other; the write path collects changes only for subscribed streams (one map lookup per write of any
 *   other stream).
 * - **One timer.** Every rule's next deadline (`nextDeadline`) is in one {@link DeadlineQueue}; one fiber sleeps until
 *   the earliest and queues the due rules' ticks.
 * - **One worker.** Changes, ticks and reloads are queued and evaluated one at a time, in order, so a rule's inputs
 *   reach the machine in the order they were stored. Under load the stored entries of the changes waiting in the
 *   queue, of any number of streams, are evaluated together and stored in ONE `commitEvaluations` (a group commit of
 *   evaluations: one transaction, not one a push).
 * - **Rules at rest cost O(log n) an entry.** The `above`/`below` rules of a stream that are `ok` with no run are kept
 *   in one {@link RestingRules} group, thresholds sorted: an entry that meets none of them is evaluated once for the
 *   group (its value, cursor and newest `ts` kept once, applied to each rule when it is stored or leaves), and only the
 *   rules it meets are stepped one by one. Any other input (a clear, a tick, a catch-up) takes the rules out first.
 * - **A push to a stream whose rules all rest is evaluated where it is published.** When the worker has nothing
 *   queued or running, the change feed's listener evaluates the entries against the stream's group at once and, when
 *   they meet no rule, is done: no queue, no fiber, nothing stored. Otherwise (a rule met, a rule not at rest, work
 *   waiting) the change is queued as any other, so a rule still sees its inputs in commit order.
 * - **Quiet evaluations are written behind.** An evaluation that changes neither the state nor the run (only the last
 *   value, the newest entry's `ts` and the cursor: nearly every entry of a stream whose rules hold steady) is kept in
 *   memory and stored by the next sweep (`QuietSweep.ts`: every 50 seconds, in small commits, each a queued item), or
 *   with the rule's next change of state, on `settled` and at the engine's end. A crash in between loses only cursor
 *   moves: the entries above the stored cursor are evaluated again at the next start, from the same stored state,
 *   with the same outcome. A transition or a change of state is stored at once.
 * - **Restarts and crashes.** On start every rule is loaded, its deadline computed from its stored state, its
 *   stream subscribed, and the entries stored above its cursor (stored but not evaluated when the process stopped)
 *   evaluated; a `Gap` of the change feed does the same for one stream. An entry at or below a rule's cursor that
 *   the feed says is `fresh` was evaluated already (it came through that catch-up) and is skipped.
 * - **Rule changes, from anywhere.** A {@link RuleWatch.RuleWatch} tells the engine which streams' rules changed
 *   (created, edited, silenced, deleted, or moved in or out of `firing`), through the admin API of any process, the
 *   CLI, or another engine, within a quarter of a second; the engine reloads those streams only.
 * - **Several processes.** An evaluation is stored only over the rule version it was computed from; when another
 *   process came first, the engine reloads the stream's rules and evaluates again from their new state (the
 *   entries it has seen are then at or below the new cursor).
 *
 * Times are integer microseconds from the effect `Clock` (an evaluation's `at` never goes below its rule's
 * `stateSince`). A storage failure (or a defect) is logged and the stream reloaded a second later (nothing is lost:
 * its entries are above the cursor).
 */
export class AlertEngine extends Context.Tag("@dashstream/core/AlertEngine")<
  AlertEngine,
  {
    /**
     * Reads the rules of `stream` again, subscribes or unsubscribes the stream accordingly, and evaluates its entries
     * above each rule's cursor. Queued: done in order with the engine's other work. The engine's rule watch does this
     * by itself for every change, within a quarter of a second; a caller that changed a rule may ask for it at once
     * (a rule moved to another stream wants both streams reloaded).
     */
    readonly reload: (stream: StreamId) => Effect.Effect<void>
    /**
     * Completes once everything queued before it is evaluated and stored, quiet evaluations included (for tests and
     * orderly shutdown).
     */
    readonly settled: Effect.Effect<void>
  }
>() {}

/** How many times one input is evaluated again after another process stored an evaluation of its rule first. */
const MAX_STALE_RETRIES = 5

/** The most queued changes evaluated together (see the module comment). */
const MAX_BATCH = 1024

/** The delay before a stream whose evaluation failed on storage is reloaded. */
const RETRY_AFTER = Duration.seconds(1)

const nowMicros = Effect.map(Clock.currentTimeNanos, (nanos) => Number(nanos / 1000n) as Micros)

/**
 * Starts the engine in the current scope (see the module comment): watches rule changes (`watchOptions`, read every
 * 250 ms by default), loads every rule, builds the deadline queue, subscribes to the streams with rules and catches up
 * on their entries above the cursors, then runs until the scope closes. Never fails: storage failures are logged and
 * retried.
 */
export const make = (
  watchOptions: RuleWatch.RuleWatchOptions = RuleWatch.defaultRuleWatchOptions
): Effect.Effect<AlertEngine["Type"], never, AlertStore | ChangeFeed | StreamStore | Scope.Scope> =>
  Effect.gen(function* () {
    const alerts = yield* AlertStore
    const feed = yield* ChangeFeed
    const streams = yield* StreamStore
    const work = yield* Queue.unbounded<Work>()
    const wake = yield* Queue.sliding<void>(1)
    const scope = yield* Effect.scope

    const rules = new Map<AlertRuleId, AlertRule>()
    const byStream = new Map<StreamId, ReadonlyArray<AlertRuleId>>()
    const subscriptions = new Map<StreamId, () => void>()
    const deadlines = new DeadlineQueue<AlertRuleId>()
    // Rules whose evaluation in `rules` is newer than the stored one (quiet evaluations not yet written).
    const unstored = new Set<AlertRuleId>()
    // The rules at rest of each stream; their evaluation in `rules` lacks their group's tail, if it has one.
    const resting = new Map<StreamId, RestingRules<AlertRuleId>>()
    // Streams whose group has a tail not yet stored.
    const unstoredTails = new Set<StreamId>()
    const sweeping = new QuietSweep<StreamId, AlertRuleId>()
    // Items queued and not yet done by the worker; while there is none, the feed's listener may evaluate a push itself.
    let waiting = 0
    const enqueue = (item: Work) => {
      waiting++
      Queue.unsafeOffer(work, item)
    }

    const forget = (stream: StreamId) => {
      for (const id of byStream.get(stream) ?? []) {
        rules.delete(id)
        deadlines.delete(id)
        unstored.delete(id)
      }
      resting.delete(stream)
      unstoredTails.delete(stream)
      byStream.delete(stream)
      subscriptions.get(stream)?.()
      subscriptions.delete(stream)
    }
    const remember = (rule: AlertRule) => {
      rules.set(rule.id, rule)
      deadlines.set(rule.id, nextDeadline(rule, rule.evaluation))
    }

    // Applies the tail of a stream's group to each of its rules (quiet evaluations, written behind).
    const settleGroup = (stream: StreamId) => {
      const group = resting.get(stream)
      const tail = group?.tail
      if (group === undefined || tail === undefined) return
      for (const id of group.keys()) {
        const rule = rules.get(id)!
        rules.set(id, { ...rule, evaluation: settle(rule.evaluation, tail) })
        unstored.add(id)
      }
      group.clearTail()
      unstoredTails.delete(stream)
    }
    // Takes the rule out of its stream's group, its evaluation settled with the group's tail.
    const leave = (id: AlertRuleId) => {
      const rule = rules.get(id)
      const group = rule === undefined ? undefined : resting.get(rule.streamId)
      if (rule === undefined || group === undefined || !group.has(id)) return
      const tail = group.tail
      if (tail !== undefined) {
        rules.set(id, { ...rule, evaluation: settle(rule.evaluation, tail) })
        unstored.add(id)
      }
      group.leave(id)
      if (group.size === 0) unstoredTails.delete(rule.streamId)
    }
    // Puts each of the rules that is at rest into its stream's group, when its cursor is the group's.
    const rest = (ids: Iterable<AlertRuleId>) => {
      for (const id of ids) {
        const rule = rules.get(id)
        if (rule === undefined) continue
        let group = resting.get(rule.streamId)
        if (group === undefined) {
          group = new RestingRules()
          resting.set(rule.streamId, group)
        }
        if (group.has(id)) continue
        if (group.size > 0 && group.tail !== undefined && group.cursor === rule.evaluation.cursor) {
          settleGroup(rule.streamId)
        }
        if (group.canJoin(rule, rule.evaluation)) group.join(id, rule, rule.evaluation)
      }
    }

    /**
     * Evaluates `inputsOf(rule)` for each of the rules `ids` and stores the outcomes in one `commitEvaluations`; the
     * rules whose version had moved (another process or an edit came first) have their stream reloaded and are
     * evaluated again, with their inputs recomputed from their new state.
     */
    const evaluate = (
      ids: ReadonlyArray<AlertRuleId>,
      inputsOf: (rule: AlertRule, at: Micros) => ReadonlyArray<RuleInput>
    ): Effect.Effect<void, StorageFailure> =>
      Effect.suspend(() => {
        for (const id of ids) leave(id)
        return Effect.zipRight(
          evaluateEach(ids, inputsOf),
          Effect.sync(() => rest(ids))
        )
      })

    // `evaluate` of rules at no group.
    const evaluateEach = (
      ids: ReadonlyArray<AlertRuleId>,
      inputsOf: (rule: AlertRule, at: Micros) => ReadonlyArray<RuleInput>
    ): Effect.Effect<void, StorageFailure> =>
      Effect.gen(function* () {
        let pending = ids
        for (let attempt = 0; attempt <= MAX_STALE_RETRIES; attempt++) {
          const now = yield* nowMicros
          const commits: Array<EvaluationCommit> = []
          const streamOf = new Map<AlertRuleId, StreamId>()
          for (const id of pending) {
            const rule = rules.get(id)
            if (rule === undefined) continue
            const inputs = inputsOf(rule, Math.max(now, rule.evaluation.stateSince) as Micros)
            if (inputs.length === 0) continue
            let evaluation = rule.evaluation
            const transitions: Array<Transition> = []
            for (const input of inputs) {
              const out = step(rule, evaluation, input)
              evaluation = out.evaluation
              transitions.push(...out.transitions)
            }
            const before = rule.evaluation
            if (
              transitions.length === 0 &&
              evaluation.state === before.state &&
              evaluation.stateSince === before.stateSince &&
              evaluation.since === before.since
            ) {
              // Quiet: written behind (see the module comment).
              remember({ ...rule, evaluation })
              unstored.add(id)
              continue
            }
            commits.push({ rule: id, version: rule.version, evaluation, transitions })
            streamOf.set(id, rule.streamId)
          }
          if (commits.length === 0) return
          for (const { rule } of commits) unstored.delete(rule)
          const stored = yield* alerts.commitEvaluations(commits)
          const stale: Array<AlertRuleId> = []
          stored.forEach((rule, i) => {
            if (Option.isSome(rule)) remember(rule.value)
            else stale.push(commits[i]!.rule)
          })
          if (stale.length === 0) return
          for (const stream of new Set(stale.map((id) => streamOf.get(id)!))) yield* load(stream)
          pending = stale
        }
        yield* Effect.logWarning(`${pending.length} alert rules kept being overtaken; they are evaluated again later`)
      })

    // The inputs of `entries` for each rule of their stream; each entry's value is parsed once, for all its rules
    // (and for the stream's group of rules at rest: `values`).
    const entryInputs = (entries: ReadonlyArray<ChangedEntry | StoredEntry>, parsed?: ReadonlyArray<number | null>) => {
      let values = parsed
      return (rule: AlertRule, at: Micros): ReadonlyArray<RuleInput> =>
        inputsAbove(entries, (values ??= entries.map((entry) => entryValue(entry.json))), rule, at)
    }
    // The entries a rule evaluates: those above its cursor, or not fresh.
    const inputsAbove = (
      entries: ReadonlyArray<ChangedEntry | StoredEntry>,
      values: ReadonlyArray<number | null>,
      rule: AlertRule,
      at: Micros
    ): ReadonlyArray<RuleInput> => {
      const cursor = rule.evaluation.cursor
      const inputs: Array<RuleInput> = []
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i]!
        const fresh = "fresh" in entry ? entry.fresh : true
        if (cursor !== null && entry.ts <= cursor && fresh) continue
        inputs.push({ _tag: "Entry", at, ts: entry.ts, value: values[i]! })
      }
      return inputs
    }

    // Reads the stream's rules again and (un)subscribes it; returns its rules.
    const load = (stream: StreamId): Effect.Effect<ReadonlyArray<AlertRule>, StorageFailure> =>
      Effect.gen(function* () {
        const found = yield* alerts.rulesOfStream(stream)
        const subscription = subscriptions.get(stream)
        subscriptions.delete(stream)
        forget(stream)
        if (found.length === 0) {
          subscription?.()
          return found
        }
        for (const rule of found) remember(rule)
        byStream.set(
          stream,
          found.map((rule) => rule.id)
        )
        subscriptions.set(
          stream,
          subscription ??
            (yield* feed.subscribe(stream, (change) => {
              // Evaluated here when nothing waits and every rule rests (see the module comment), else queued.
              if (waiting === 0 && change._tag === "Stored" && restAllSafely(stream, change.entries)) return
              enqueue({ _tag: "Change", stream, change })
            }))
        )
        return found
      })

    // Reload: the rules, then every entry above the lowest cursor, each rule skipping what it has evaluated.
    const reload = (stream: StreamId) =>
      Effect.gen(function* () {
        const found = yield* load(stream)
        if (found.length === 0) return
        const cursors = found.map((rule) => rule.evaluation.cursor ?? -1)
        const since = Math.min(...cursors) as Micros
        const entries = yield* streams.read(stream, { since, limit: null })
        yield* evaluate(
          found.map((rule) => rule.id),
          entryInputs(entries)
        )
        // A rule with nothing to catch up may still be past its deadline (the process was down): the timer sees it.
      })

    const onChange = (stream: StreamId, change: StreamChange) =>
      Effect.gen(function* () {
        switch (change._tag) {
          case "Deleted":
            forget(stream)
            return
          case "Gap":
            return yield* reload(stream)
          case "Cleared":
            return yield* evaluate(byStream.get(stream) ?? [], (_, at) => [
              { _tag: "Cleared", at, clearedAt: change.at }
            ])
          case "Stored":
            return yield* onStored(new Map([[stream, change.entries]]))
        }
      })

    // The entries of a stream whose rules all rest in its group and which meet none of them: the group advanced by
    // them, `true`. Otherwise nothing changed, `false` (see the module comment).
    const restAll = (stream: StreamId, entries: ReadonlyArray<ChangedEntry>): boolean => {
      const group = resting.get(stream)
      if (group === undefined || group.size === 0 || group.size !== byStream.get(stream)?.length) return false
      const batch = group.batch(
        entries,
        entries.map((entry) => entryValue(entry.json))
      )
      if (batch === undefined) return true
      if (group.meetsAny(batch)) return false
      group.advance(batch)
      unstoredTails.add(stream)
      return true
    }

    // `restAll` in the feed's listener: an entry it cannot read (a bug) is queued and fails there, logged.
    const restAllSafely = (stream: StreamId, entries: ReadonlyArray<ChangedEntry>): boolean => {
      try {
        return restAll(stream, entries)
      } catch {
        return false
      }
    }

    // The changes of several streams, evaluated together (see the module comment): each stream's group of rules at
    // rest at once, then the rules its entries meet and its other rules one by one.
    const onStored = (entries: ReadonlyMap<StreamId, ReadonlyArray<ChangedEntry>>) => {
      const ids: Array<AlertRuleId> = []
      const inputsOf = new Map<StreamId, ReturnType<typeof entryInputs>>()
      for (const [stream, list] of entries) {
        const all = byStream.get(stream)
        if (all === undefined || restAll(stream, list)) continue
        const group = resting.get(stream)
        if (group === undefined || group.size === 0) {
          ids.push(...all)
          inputsOf.set(stream, entryInputs(list))
          continue
        }
        const before = ids.length
        if (group.size < all.length) for (const id of all) if (!group.has(id)) ids.push(id)
        const values = list.map((entry) => entryValue(entry.json))
        const batch = group.batch(list, values)
        if (batch !== undefined) {
          for (const id of group.metBy(batch)) {
            leave(id)
            ids.push(id)
          }
          group.advance(batch)
          if (group.size > 0) unstoredTails.add(stream)
        }
        if (ids.length > before) inputsOf.set(stream, entryInputs(list, values))
      }
      return evaluate(ids, (rule, at) => inputsOf.get(rule.streamId)?.(rule, at) ?? [])
    }

    // Stores the quiet evaluations of `ids` still waiting, in one commit; returns the streams of those another process
    // changed meanwhile (their reload finds them again).
    const storeQuietOf = (ids: ReadonlyArray<AlertRuleId>) =>
      Effect.gen(function* () {
        const stale = new Set<StreamId>()
        const commits: Array<EvaluationCommit> = []
        for (const id of ids) {
          const rule = rules.get(id)
          if (!unstored.delete(id) || rule === undefined) continue
          commits.push({ rule: id, version: rule.version, evaluation: rule.evaluation, transitions: [] })
        }
        if (commits.length === 0) return stale
        const stored = yield* alerts.commitEvaluations(commits)
        stored.forEach((rule, i) => {
          if (Option.isSome(rule)) remember(rule.value)
          else {
            const known = rules.get(commits[i]!.rule)
            if (known !== undefined) stale.add(known.streamId)
          }
        })
        return stale
      })

    // Every quiet evaluation waiting, stored at once (on `settled` and at the end).
    const storeQuiet = Effect.gen(function* () {
      for (const stream of [...unstoredTails]) settleGroup(stream)
      sweeping.clear()
      const stale = new Set<StreamId>()
      while (unstored.size > 0) {
        const ids: Array<AlertRuleId> = []
        for (const id of unstored) if (ids.push(id) === QUIET_CHUNK) break
        for (const stream of yield* storeQuietOf(ids)) stale.add(stream)
      }
      for (const stream of stale) yield* reload(stream)
    })

    // One commit of a sweep (see `QuietSweep.ts`); the first of a sweep takes what waits then. The next is queued
    // QUIET_PAUSE later.
    const sweep = (first: boolean) =>
      Effect.gen(function* () {
        if (first) sweeping.start(unstoredTails, unstored)
        const ids = sweeping.next(QUIET_CHUNK, (stream) => {
          settleGroup(stream)
          return resting.get(stream)?.keys() ?? []
        })
        for (const stream of yield* storeQuietOf(ids)) yield* reload(stream)
        if (sweeping.running) {
          const next = Effect.sync(() => enqueue({ _tag: "Sweep", first: false }))
          yield* Effect.forkIn(Effect.delay(next, QUIET_PAUSE), scope)
        }
      })

    const onDue = Effect.gen(function* () {
      const now = yield* nowMicros
      const due = deadlines.popDue(now)
      if (due.length === 0) return
      yield* evaluate(due, (_, at) => [{ _tag: "Tick", at }]).pipe(
        Effect.catchAll((error) =>
          Effect.zipRight(
            Effect.logWarning("alert rule deadlines not evaluated; retried in a second", error),
            Effect.sync(() => {
              for (const id of due) if (rules.has(id)) deadlines.set(id, now + Duration.toMillis(RETRY_AFTER) * 1000)
            })
          )
        )
      )
    })

    // Start: every stream with rules is loaded and caught up, each as a reload of its own (retried alone).
    const start = Effect.gen(function* () {
      const all = yield* alerts.allRules
      for (const stream of new Set(all.map((rule) => rule.streamId))) yield* handle({ _tag: "Reload", stream })
    })

    // What to do again, a second after an item failed on storage.
    const handle = (item: Work): Effect.Effect<void> => {
      const run: Effect.Effect<void, StorageFailure> =
        item._tag === "Start"
          ? start
          : item._tag === "Change"
            ? onChange(item.stream, item.change)
            : item._tag === "Stored"
              ? onStored(item.entries)
              : item._tag === "Reload"
                ? reload(item.stream)
                : item._tag === "Due"
                  ? onDue
                  : item._tag === "Sweep"
                    ? sweep(item.first)
                    : Effect.zipRight(storeQuiet, Deferred.succeed(item.done, undefined))
      // A storage failure, or a bug, fails the one item: logged, done again a second later (its stream's entries are
      // above the cursor), and the worker goes on with the next.
      return run.pipe(
        Effect.catchAllCause((cause) => {
          const retries = retriesOf(item)
          return Effect.zipRight(
            Effect.logWarning("alert evaluation failed; it is done again in a second", cause),
            item._tag === "Flush"
              ? Deferred.succeed(item.done, undefined)
              : retries.length === 0
                ? Effect.void
                : Effect.forkIn(
                    Effect.delay(
                      Effect.sync(() => retries.forEach(enqueue)),
                      RETRY_AFTER
                    ),
                    scope
                  )
          )
        }),
        Effect.zipRight(Queue.offer(wake, undefined)),
        Effect.asVoid
      )
    }

    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          const first = yield* Queue.take(work)
          const more = yield* Queue.takeUpTo(work, MAX_BATCH - 1)
          for (const item of batches([first, ...more])) yield* handle(item)
          waiting -= 1 + more.length
        })
      )
    )

    // Quiet evaluations are stored within QUIET_FLUSH: a sweep every QUIET_SWEEP.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.zipRight(
          Effect.sleep(QUIET_SWEEP),
          Effect.sync(() => {
            if (unstored.size > 0 || unstoredTails.size > 0) enqueue({ _tag: "Sweep", first: true })
          })
        )
      )
    )

    // The timer: sleeps until the earliest deadline, or until the deadlines change.
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          const next = deadlines.next()
          const now = yield* nowMicros
          if (next !== undefined && next <= now) {
            enqueue({ _tag: "Due" })
            yield* Queue.take(wake)
          } else if (next === undefined) {
            yield* Queue.take(wake)
          } else {
            yield* Effect.raceFirst(Queue.take(wake), Effect.sleep(Duration.micros(BigInt(next - now))))
          }
        })
      )
    )

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const unsubscribe of subscriptions.values()) unsubscribe()
        subscriptions.clear()
      }).pipe(
        // What was evaluated and not yet stored; on failure the next start evaluates it again from the cursors.
        Effect.zipRight(Effect.ignore(storeQuiet))
      )
    )

    // Rule changes: subscribed before the start reads every rule, so that none made meanwhile is missed.
    const watch = yield* RuleWatch.make(watchOptions)
    const unwatch = yield* watch.subscribe((changed) => {
      for (const stream of changed) enqueue({ _tag: "Reload", stream })
    })
    yield* Effect.addFinalizer(() => Effect.sync(unwatch))

    enqueue({ _tag: "Start" })

    return {
      reload: (stream) => Effect.sync(() => enqueue({ _tag: "Reload", stream })),
      settled: Effect.gen(function* () {
        const done = yield* Deferred.make<void>()
        enqueue({ _tag: "Flush", done })
        yield* Deferred.await(done)
      })
    }
  })

/** The engine as a layer: started when the layer is built, stopped when it is released. */
export const layer: Layer.Layer<AlertEngine, never, AlertStore | ChangeFeed | StreamStore> = Layer.scoped(
  AlertEngine,
  make()
)
