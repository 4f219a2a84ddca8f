import { Effect } from "effect"
import type { InvalidPoint, StorageFailure, StreamNotFound } from "./Errors.js"
import type { StreamWrite } from "./StreamStore.js"
import type { Micros } from "./Time.js"

/**
 * The queue of a group commit, shared by the storage adapters that group concurrent `StreamStore.write` calls into
 * one transaction (SQLite and PostgreSQL): the queued call, and how the next group is taken off the queue. What a
 * group does in its transaction is the adapter's.
 */

/** Every error a `StreamStore.write` call can fail with. */
export type WriteError = InvalidPoint | StreamNotFound | StorageFailure

/**
 * How large one group may grow before the rest waits for the next one, so that a burst cannot stretch the latency
 * of the calls at its head. `maxCalls` counts `write` calls; `maxEntries` counts the writes of those calls, a `Put`
 * counting one per entry. A single call larger than `maxEntries` still forms a group of its own.
 */
export interface GroupSize {
  readonly maxCalls: number
  readonly maxEntries: number
}

/** The size of one call for {@link GroupSize}: its writes, a `Put` counting one per entry. */
export const writeSize = (writes: ReadonlyArray<StreamWrite>): number => {
  let n = 0
  for (let i = 0; i < writes.length; i++) {
    const op = writes[i]!.op
    n += op._tag === "Put" ? op.entries.length : 1
  }
  return n
}

/**
 * The points a call stores when it succeeds: one per entry of a `Put`, none for a `Clear`, one for every other write
 * (a delta, `leaderboardItem`, `listItem` or `tableRow` stores one new entry).
 */
export const pointsOf = (writes: ReadonlyArray<StreamWrite>): number => {
  let n = 0
  for (let i = 0; i < writes.length; i++) {
    const op = writes[i]!.op
    n += op._tag === "Put" ? op.entries.length : op._tag === "Clear" ? 0 : 1
  }
  return n
}

/**
 * Told of every group a storage adapter's group commit ran, so that the composition root can count them (the
 * metrics of contract section 12) without the storage knowing how. Called on the event loop once per group, once its
 * calls are answered (with `synchronous=FULL` on SQLite, after the WAL sync); it must be cheap and must not throw.
 */
export interface WriteObserver {
  /**
   * A group of `calls` queued `write` calls ran (withdrawn calls excluded); the calls of it that were acknowledged
   * stored `points` points in all (see {@link pointsOf}; 0 when the group's transaction failed).
   */
  readonly groupCommitted: (calls: number, points: number) => void
}

/**
 * How a queued `write` call is answered, once: `undefined` when its writes are stored (durably, as the adapter's
 * `write` promises), else the error it fails with.
 */
export type WriteDone = (error: WriteError | undefined) => void

/**
 * One queued `write` call: its writes, its receive time `now` (microseconds) and `resume`, which answers it (once).
 * `cancelled` is set when the caller's fiber is interrupted before its group ran: {@link takeGroup} drops it, so an
 * interrupted call stores nothing. `queuedAt` is `performance.now()` (milliseconds) when it was queued.
 */
export class PendingWrite {
  cancelled = false
  readonly queuedAt = performance.now()
  readonly size: number
  constructor(
    readonly writes: ReadonlyArray<StreamWrite>,
    readonly now: Micros,
    readonly resume: WriteDone
  ) {
    this.size = writeSize(writes)
  }
  /** Takes the call back (`StreamStore.writeDirect`'s `Withdrawable`): marks it {@link cancelled}. */
  withdraw(): void {
    this.cancelled = true
  }
}

/**
 * A `write` call as an effect that queues it with `enqueue` (a {@link PendingWrite} the adapter answers later) and
 * waits for its answer; interrupting the fiber before that marks the call cancelled. When `refusal` gives an error
 * (the store is closed), the call fails with it at once and nothing is queued.
 */
export const queuedWrite = (
  writes: ReadonlyArray<StreamWrite>,
  now: Micros,
  refusal: () => WriteError | undefined,
  enqueue: (pending: PendingWrite) => void
): Effect.Effect<void, WriteError> =>
  Effect.async<void, WriteError>((resume) => {
    const refused = refusal()
    if (refused !== undefined) return resume(Effect.fail(refused))
    const pending = new PendingWrite(writes, now, (error) =>
      resume(error === undefined ? Effect.void : Effect.fail(error))
    )
    enqueue(pending)
    return Effect.sync(() => {
      pending.cancelled = true
    })
  })

/**
 * A `write` call without an effect, for `StreamStore.writeDirect`: queues it with `enqueue` and answers `done` once
 * its group ran, or at once (nothing queued, `undefined` returned) with the error `refusal` gives. Returns the queued
 * call, which `withdraw` takes back until its group starts.
 */
export const queuedWriteDirect = (
  writes: ReadonlyArray<StreamWrite>,
  now: Micros,
  refusal: () => WriteError | undefined,
  enqueue: (pending: PendingWrite) => void,
  done: WriteDone
): PendingWrite | undefined => {
  const refused = refusal()
  if (refused !== undefined) {
    done(refused)
    return undefined
  }
  const pending = new PendingWrite(writes, now, done)
  enqueue(pending)
  return pending
}

/**
 * The next group of `queue`: calls in arrival order up to `size`, at least one unless every call is cancelled;
 * cancelled calls are dropped. Returns the group and what is left of the queue.
 */
export const takeGroup = (
  queue: ReadonlyArray<PendingWrite>,
  size: GroupSize
): [group: Array<PendingWrite>, rest: Array<PendingWrite>] => {
  const group: Array<PendingWrite> = []
  let entries = 0
  let i = 0
  for (; i < queue.length && group.length < size.maxCalls; i++) {
    const pending = queue[i]!
    if (pending.cancelled) continue
    if (group.length > 0 && entries + pending.size > size.maxEntries) break
    entries += pending.size
    group.push(pending)
  }
  return [group, i === queue.length ? [] : queue.slice(i)]
}
