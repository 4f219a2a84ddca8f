import { Clock, Duration, Effect, type Scope } from "effect"
import type { StreamId } from "../Widget.js"
import { AlertStore } from "./AlertStore.js"

/**
 * Follows the rule signals of the store (see `RuleSignal.ts`) and tells its listeners which streams' rules changed,
 * in this process or any other on the same database (a second `serve`, the CLI), within {@link RuleWatchOptions}
 * `intervalMs` of the change's commit.
 *
 * One cheap read per interval, and only while someone listens: the signals above a floor, which are the few streams
 * changed in the last seconds. The floor is the highest `seq` seen at least `graceMs` ago, not the latest: on
 * PostgreSQL a transaction that took its `seq` first may commit after one that took a later `seq`, and reading again
 * above a slightly older floor still finds it (a change whose transaction stays open longer than `graceMs` after
 * writing its signal could be missed). A stream is told again only when its `seq` grew. A failed read is logged
 * once and tried again at the next interval; nothing is lost meanwhile, the signals stay in the store.
 */
export interface RuleWatch {
  /**
   * Calls `listener` with the streams whose rules changed, from now on, until the returned function is called.
   * Completes once the watch knows the signals stored so far: a listener that reads rules after it completes misses
   * no change made after that read. The listener must not throw.
   */
  readonly subscribe: (listener: RuleListener) => Effect.Effect<() => void>
}

/** Receives streams whose rules changed (each once per call, in no particular order). */
export type RuleListener = (streams: ReadonlyArray<StreamId>) => void

/** Timing of a {@link RuleWatch}, milliseconds. */
export interface RuleWatchOptions {
  /** How often the signals are read while someone listens (default 250). */
  readonly intervalMs: number
  /** How long a `seq` is read again after it was first seen as the highest (default 10,000). */
  readonly graceMs: number
}

/** The defaults of {@link RuleWatchOptions}: a change reaches every process within a quarter of a second. */
export const defaultRuleWatchOptions: RuleWatchOptions = { intervalMs: 250, graceMs: 10_000 }

/**
 * Starts a {@link RuleWatch} on the `AlertStore` in the current scope (its polling fiber ends with the scope). Never
 * fails: a failed read is logged and retried.
 */
export const make = (
  options: RuleWatchOptions = defaultRuleWatchOptions
): Effect.Effect<RuleWatch, never, AlertStore | Scope.Scope> =>
  Effect.gen(function* () {
    const alerts = yield* AlertStore
    const listeners = new Set<RuleListener>()
    // The `seq` last seen of each stream whose signal is above the floor.
    const known = new Map<StreamId, number>()
    // The highest `seq` seen at each read, oldest first, until `graceMs` old: the floor is the newest of those.
    const heads: Array<{ readonly at: number; readonly head: number }> = []
    let floor = 0
    let started = false
    let failing = false

    // One read: the streams whose `seq` grew, and the floor moved on.
    const read = Effect.gen(function* () {
      const { head, signals } = yield* alerts.ruleSignals(floor)
      const now = yield* Clock.currentTimeMillis
      while (heads.length > 0 && now - heads[0]!.at >= options.graceMs) floor = Math.max(floor, heads.shift()!.head)
      heads.push({ at: now, head })
      const changed: Array<StreamId> = []
      for (const { stream, seq } of signals) {
        const seen = known.get(stream)
        if (seen === undefined || seq > seen) {
          known.set(stream, seq)
          if (started) changed.push(stream)
        }
      }
      for (const [stream, seq] of known) if (seq <= floor) known.delete(stream)
      started = true
      return changed
    })

    const poll = Effect.gen(function* () {
      if (listeners.size === 0) return
      const changed = yield* read
      if (failing) yield* Effect.logInfo("alert rule changes are followed again")
      failing = false
      if (changed.length === 0) return
      for (const listener of [...listeners]) listener(changed)
    }).pipe(
      Effect.catchAll((error) =>
        failing
          ? Effect.void
          : Effect.zipRight(
              Effect.logWarning("alert rule changes could not be read; tried again shortly", error),
              Effect.sync(() => {
                failing = true
              })
            )
      )
    )

    yield* Effect.forkScoped(Effect.forever(Effect.zipRight(Effect.sleep(Duration.millis(options.intervalMs)), poll)))

    return {
      subscribe: (listener) =>
        Effect.gen(function* () {
          // The first listener: what is stored so far is known before it reads any rule (retried until it is).
          while (!started) {
            const done = yield* read.pipe(
              Effect.as(true),
              Effect.catchAll((error) =>
                Effect.as(
                  Effect.zipRight(
                    Effect.logWarning("alert rule changes could not be read; tried again shortly", error),
                    Effect.sleep(Duration.millis(options.intervalMs))
                  ),
                  false
                )
              )
            )
            if (done) break
          }
          listeners.add(listener)
          return () => {
            listeners.delete(listener)
          }
        })
    }
  })
