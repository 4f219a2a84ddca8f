import type { DecimationStore } from "@dashstream/core"
import { type PassResult, runLockedPass, type TierPolicy } from "@dashstream/decimation"
import { Cause, Clock, Cron, DateTime, Duration, Effect, Option } from "effect"
import { type DailyTime, formatDailyTime } from "./Config.js"

/**
 * The decimation pass as the server runs it (docs/api.md section 9): once a day inside `serve`, and on demand with
 * `dashstream decimate`. Both run it under the storage's pass lock, so one pass at a time runs per database (per
 * process for SQLite).
 */

const utc = DateTime.zoneUnsafeMakeNamed("UTC")

/** The schedule "every day at `at` UTC" (second 0 of that minute) as an effect `Cron`. */
export const dailyCron = (at: DailyTime): Cron.Cron =>
  Cron.make({ minutes: [at.minute], hours: [at.hour], days: [], months: [], weekdays: [], tz: utc })

/** The first time strictly after `nowMillis` (UNIX milliseconds) whose UTC time of day is `at`, in UNIX milliseconds. */
export const nextRunAt = (nowMillis: number, at: DailyTime): number => Cron.next(dailyCron(at), nowMillis).getTime()

/** What `decimate` prints: `streams visited N, entries examined N, entries removed N`. */
export const summary = (result: PassResult): string =>
  `streams visited ${result.streamsVisited}, entries examined ${result.entriesExamined}, ` +
  `entries removed ${result.entriesRemoved}`

/**
 * Runs one pass at the current time (from the effect `Clock`) under the pass lock, and logs its outcome: the result,
 * a skip when another process holds the lock, or the failure. Never fails: a pass that fails midway left valid data
 * and the next one finishes its work. Interruption (shutdown) stops it between two storage calls. `onPass` is given
 * the result of a completed pass (`serve`'s metrics).
 */
export const scheduledPass = (
  policy: TierPolicy,
  onPass: (result: PassResult) => void = () => {}
): Effect.Effect<void, never, DecimationStore> =>
  Effect.gen(function* () {
    const now = yield* Clock.currentTimeMillis
    const outcome = yield* runLockedPass({ policy, now: now * 1000 })
    yield* Option.match(outcome, {
      onNone: () => Effect.logInfo("decimation pass skipped: another process is running one on this database"),
      onSome: (result) =>
        Effect.zipRight(
          Effect.sync(() => onPass(result)),
          Effect.logInfo(`decimation pass done: ${summary(result)}`)
        )
    })
  }).pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.interrupt
        : Effect.logWarning("decimation pass failed; the next pass finishes its work", cause)
    )
  )

/**
 * Runs {@link scheduledPass} every day at `at` (UTC, {@link dailyCron}), forever, on the effect `Clock` (so a
 * `TestClock` drives it); meant to be forked in `serve`'s scope, which interrupts it on shutdown. Logs when the next
 * pass is due (`next decimation pass scheduled`, annotated with the time as `at` and the daily time as `daily`).
 * `onPass` is given the result of each completed pass.
 */
export const daily = (
  at: DailyTime,
  policy: TierPolicy,
  onPass: (result: PassResult) => void = () => {}
): Effect.Effect<never, never, DecimationStore> => {
  const cron = dailyCron(at)
  return Effect.forever(
    Effect.gen(function* () {
      const now = yield* Clock.currentTimeMillis
      const next = Cron.next(cron, now).getTime()
      yield* Effect.logInfo("next decimation pass scheduled").pipe(
        Effect.annotateLogs({ at: new Date(next).toISOString(), daily: `${formatDailyTime(at)} UTC` })
      )
      yield* Effect.sleep(Duration.millis(next - now))
      yield* scheduledPass(policy, onPass)
    })
  )
}
