/**
 * The decimation pass (docs/api.md section 9): visits every stream holding entries older than the decimation horizon,
 * streams its old entries through a `Selector` in chunks, and deletes what the selector drops in short batches.
 * No I/O of its own: everything goes through the `DecimationStore` port.
 */
import {
  type DecimationEntry,
  decimationMode,
  DecimationStore,
  type DecimationStream,
  type EntryId,
  type Micros,
  type StorageFailure,
  type StreamId
} from "@dashstream/core"
import { Clock, Duration, Effect, type Option } from "effect"
import { yieldToEventLoop } from "./internal/eventLoop.js"
import { makeSelector } from "./Selection.js"
import { decimationHorizon, type TierPolicy } from "./TierPolicy.js"

/** What one pass does and how it cuts its work into pieces. */
export interface PassOptions {
  /** The tiers (`defaultPolicy` for the contract's). */
  readonly policy: TierPolicy
  /** The pass time, integer microseconds since the UNIX epoch: bucket ages are measured from it. */
  readonly now: number
  /** Entries read per storage call, a positive integer; default {@link defaultPassSizes}. */
  readonly chunkSize?: number
  /** Entry ids deleted per transaction, a positive integer; default {@link defaultPassSizes}. */
  readonly deleteBatchSize?: number
  /** Streams listed per storage call, a positive integer; default {@link defaultPassSizes}. */
  readonly streamPageSize?: number
  /** Minimum time between two progress log lines; default 10 seconds. */
  readonly progressInterval?: Duration.DurationInput
}

/** The default sizes of a pass's pieces: reads of 5,000 entries, deletes of 1,000 ids, pages of 500 streams. */
export const defaultPassSizes = { chunkSize: 5_000, deleteBatchSize: 1_000, streamPageSize: 500 } as const

/** What a pass did. */
export interface PassResult {
  /** Streams that held entries older than the horizon. */
  readonly streamsVisited: number
  /** Entries read, all older than the horizon (younger ones are never read). */
  readonly entriesExamined: number
  /** Entries deleted. */
  readonly entriesRemoved: number
  /** Wall-clock duration of the pass, in milliseconds (from the effect `Clock`). */
  readonly durationMs: number
}

interface Counters {
  streamsVisited: number
  entriesExamined: number
  entriesRemoved: number
}

const positiveInteger = (name: string, value: number): Effect.Effect<number> =>
  Number.isSafeInteger(value) && value > 0
    ? Effect.succeed(value)
    : Effect.dieMessage(`decimation pass: ${name} must be a positive integer, got ${value}`)

/**
 * Runs one decimation pass at `options.now` over every stream (docs/api.md section 9) and reports what it did.
 *
 * For each stream with entries older than `decimationHorizon(policy, now)`, ascending by id: reads those entries in
 * ascending `ts` in chunks of `chunkSize`, feeds them to `makeSelector` (mode from the widget type, values from
 * the stored `value`), and deletes the selected ids in batches of at most `deleteBatchSize`, each batch its own
 * short transaction. Between storage calls it yields to the event loop, so concurrent pushes wait for one batch at
 * most. Entries at or after the horizon are never read.
 *
 * Idempotent and resumable: every batch deletes only entries the whole pass deletes, and the selection of what
 * remains is the same (a bucket's first, last, lowest and highest entries are never deleted), so a pass
 * interrupted after any batch leaves valid data and a later pass at the same time finishes the work exactly.
 * Logs a line when it starts, a progress line at most every `progressInterval` (counters so far), and one at the
 * end (the result). Does not take the pass lock (see
 * {@link runLockedPass}). Fails with `StorageFailure`; dies on a non-positive size or a non-integer `now`.
 */
export const runPass = (options: PassOptions): Effect.Effect<PassResult, StorageFailure, DecimationStore> =>
  Effect.gen(function* () {
    const chunkSize = yield* positiveInteger("chunkSize", options.chunkSize ?? defaultPassSizes.chunkSize)
    const deleteBatchSize = yield* positiveInteger(
      "deleteBatchSize",
      options.deleteBatchSize ?? defaultPassSizes.deleteBatchSize
    )
    const streamPageSize = yield* positiveInteger(
      "streamPageSize",
      options.streamPageSize ?? defaultPassSizes.streamPageSize
    )
    if (!Number.isSafeInteger(options.now)) {
      return yield* Effect.dieMessage(`decimation pass: now must be integer microseconds, got ${options.now}`)
    }
    const progressMillis = Duration.toMillis(options.progressInterval ?? Duration.seconds(10))
    const store = yield* DecimationStore
    const { now, policy } = options
    const horizon = decimationHorizon(policy, now) as Micros
    const started = yield* Clock.currentTimeMillis
    let lastLog = started
    const counters: Counters = { streamsVisited: 0, entriesExamined: 0, entriesRemoved: 0 }

    const progress = Effect.flatMap(Clock.currentTimeMillis, (t) => {
      if (t - lastLog < progressMillis) return Effect.void
      lastLog = t
      return Effect.logInfo("decimation pass in progress").pipe(Effect.annotateLogs({ ...counters }))
    })

    const deleteBatch = (stream: StreamId, ids: ReadonlyArray<EntryId>) =>
      Effect.flatMap(store.deleteEntries(stream, ids), (deleted) => {
        counters.entriesRemoved += deleted
        return yieldToEventLoop
      })

    const decimateStream = (stream: StreamId, mode: "extremes" | "last") =>
      Effect.gen(function* () {
        const selector = makeSelector<EntryId>({ policy, now, mode })
        let pending: Array<EntryId> = []
        let after: Micros | null = null
        for (;;) {
          const chunk: ReadonlyArray<DecimationEntry> = yield* store.entries(stream, {
            after,
            before: horizon,
            limit: chunkSize
          })
          counters.entriesExamined += chunk.length
          const selected = selector.push(chunk)
          for (let i = 0; i < selected.length; i++) pending.push(selected[i]!)
          while (pending.length >= deleteBatchSize) {
            yield* deleteBatch(stream, pending.slice(0, deleteBatchSize))
            pending = pending.slice(deleteBatchSize)
          }
          yield* progress
          // Also after a stream's last chunk: a pass over many short streams with nothing to delete would
          // otherwise block the event loop (better-sqlite3 is synchronous) from one stream to the next.
          yield* yieldToEventLoop
          if (chunk.length < chunkSize) break
          after = chunk[chunk.length - 1]!.ts
        }
        for (const id of selector.finish()) pending.push(id)
        if (pending.length > 0) yield* deleteBatch(stream, pending)
      })

    yield* Effect.logInfo("decimation pass started").pipe(
      Effect.annotateLogs({ now: new Date(now / 1000).toISOString(), horizon: new Date(horizon / 1000).toISOString() })
    )
    let afterStream: StreamId | null = null
    for (;;) {
      const page: ReadonlyArray<DecimationStream> = yield* store.streams({
        after: afterStream,
        olderThan: horizon,
        limit: streamPageSize
      })
      for (const stream of page) {
        yield* decimateStream(stream.id, decimationMode(stream.type))
        counters.streamsVisited++
      }
      if (page.length < streamPageSize) break
      afterStream = page[page.length - 1]!.id
    }
    const durationMs = (yield* Clock.currentTimeMillis) - started
    const result: PassResult = { ...counters, durationMs }
    yield* Effect.logInfo("decimation pass finished").pipe(Effect.annotateLogs({ ...result }))
    return result
  })

/**
 * {@link runPass} under the storage's pass lock (`DecimationStore.withPassLock`): `None`, without doing anything,
 * when another pass holds it (another server on the same PostgreSQL, or a pass already running in this process).
 * What the scheduled daily pass and `dashstream decimate` run.
 */
export const runLockedPass = (
  options: PassOptions
): Effect.Effect<Option.Option<PassResult>, StorageFailure, DecimationStore> =>
  Effect.flatMap(DecimationStore, (store) => store.withPassLock(runPass(options)))
