import { Effect } from "effect"
import type { InvalidPoint, StorageFailure, StreamNotFound } from "./Errors.js"
import { answerGuarded } from "./GuardedAnswer.js"
import type { StreamWrite } from "./StreamStore.js"
import type { Micros } from "./Time.js"

/**
 * The queue of a group commit, shared by the storage adapters that group concurrent `StreamStore.write` calls into
 * one transaction (SQLite and PostgreSQL): the queued call, how the next group is taken off the queue, when groups
 * run ({@link WriteQueue}: scheduling, lock retries, waiting limits, close and drain, counters) and how their calls
 * are answered. What a group does in its transaction is the adapter's ({@link GroupRunner}).
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
 * metrics of docs/api.md section 12) without the storage knowing how. Called on the event loop once per group, once its
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
 * One queued `write` call: its writes, its receive time `now` (microseconds) and `done`, which {@link resume} calls
 * to answer it (once). `cancelled` is set when the caller's fiber is interrupted before its group ran:
 * {@link takeGroup} drops it, so an interrupted call stores nothing. `queuedAt` is when it was queued, in milliseconds
 * of the queue's {@link QueueTimers.now} (0 until queued).
 */
export class PendingWrite {
  cancelled = false
  queuedAt = 0
  readonly size: number
  constructor(
    readonly writes: ReadonlyArray<StreamWrite>,
    readonly now: Micros,
    private readonly done: WriteDone
  ) {
    this.size = writeSize(writes)
  }
  /**
   * Answers the call with `error` (`undefined`: stored) and never throws ({@link answerGuarded}): a group's calls are
   * answered in a loop that runs in the adapter's promise handler or timer, so a throw from one caller's continuation
   * is answered again with a `StorageError` instead of leaving the rest of the group unanswered.
   */
  resume(error: WriteError | undefined): void {
    answerGuarded(this.done, error, undefined, undefined)
  }
  /** Takes the call back (`StreamStore.writeDirect`'s `Withdrawable`): marks it {@link cancelled}. */
  withdraw(): void {
    this.cancelled = true
  }
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

/**
 * The timers a {@link WriteQueue} runs on: Node's ({@link nodeTimers}) in the adapters, fakes in tests. Each
 * scheduling function returns the function that cancels what it scheduled.
 */
export interface QueueTimers {
  /** Calls `run` once on a later turn of the event loop, after the I/O pending now (`setImmediate`). */
  readonly immediate: (run: () => void) => () => void
  /** Calls `run` once after `ms` milliseconds (`setTimeout`). */
  readonly after: (ms: number, run: () => void) => () => void
  /** Calls `run` every `ms` milliseconds until cancelled, without keeping the process alive (`setInterval`, unref). */
  readonly every: (ms: number, run: () => void) => () => void
  /** Milliseconds since a fixed origin (`performance.now()`). */
  readonly now: () => number
}

/** {@link QueueTimers} on Node's event loop. */
export const nodeTimers: QueueTimers = {
  immediate: (run) => {
    const handle = setImmediate(run)
    return () => clearImmediate(handle)
  },
  after: (ms, run) => {
    const handle = setTimeout(run, ms)
    return () => clearTimeout(handle)
  },
  every: (ms, run) => {
    const handle = setInterval(run, ms)
    handle.unref()
    return () => clearInterval(handle)
  },
  now: () => performance.now()
}

/**
 * What a group's transaction gives back: each call's own error in group order (`undefined`: its writes are stored),
 * or the failure of the whole group (nothing of it stored; every call fails with it).
 */
export type GroupResult = ReadonlyArray<WriteError | undefined> | StorageFailure

/**
 * Given by a runner to {@link GroupEnd} when its stored calls may be acknowledged only later (SQLite's WAL sync off
 * the event loop): called once, with `acknowledge`, which the runner calls once with `undefined` when the group's
 * writes are durable, or with the failure that keeps that unknown (every stored call then fails with it).
 */
export type WhenDurable = (acknowledge: (failure: StorageFailure | undefined) => void) => void

/**
 * Ends a group, once: its {@link GroupResult}, and optionally {@link WhenDurable}. The queue counts the group,
 * answers the calls that failed at once and the stored ones at once or, with `whenDurable`, once durable, then tells
 * the {@link WriteObserver}. The next group may start as soon as this is called (before the acknowledgement).
 */
export type GroupEnd = (result: GroupResult, whenDurable?: WhenDurable) => void

/** Returned by {@link GroupRunner.run} for a group that could not start (a lock another process holds): try again. */
export const retryGroup: unique symbol = Symbol("retryGroup")

/** What a {@link GroupRunner} is told of the group it runs. */
export interface GroupTurn {
  /** The group's number: 0 for the first group started, counting every group started before it. */
  readonly number: number
  /** True when the queue is closing: the runner must not return {@link retryGroup} (nothing would wait for it). */
  readonly closing: boolean
  /**
   * Milliseconds since this group (or the ones it grew from) was first answered {@link retryGroup}; `undefined` on
   * its first try.
   */
  readonly retryingMs: number | undefined
}

/**
 * An adapter's part of a group commit: its transaction, and the rules that differ between adapters.
 */
export interface GroupRunner {
  /**
   * Runs `group` (never empty; its calls in arrival order, their writes in `PendingWrite.writes`) as one transaction
   * and calls `end` once with what happened, synchronously (SQLite: the event loop is blocked for the whole group)
   * or later (PostgreSQL: a transaction on a pooled connection). Or returns {@link retryGroup} without calling `end`
   * when the group could not start because another process holds a lock it waits for on the event loop: the queue
   * puts the group back at the head (later calls may join it) and runs it again at once, twice, then every
   * millisecond; the runner decides when waiting has lasted too long (see {@link GroupTurn.retryingMs}) and ends the
   * group with a failure. It must not throw.
   */
  readonly run: (group: ReadonlyArray<PendingWrite>, turn: GroupTurn, end: GroupEnd) => void | typeof retryGroup
  /**
   * Optional: asked before a group is taken off the queue (not while closing). Returns `true` to hold the queue
   * until it calls `resume` (SQLite: while the WAL sync runs, so that the calls arriving meanwhile join one group
   * whose calls could not be acknowledged before the next sync anyway), `false` to run the group now.
   */
  readonly defer?: (resume: () => void) => boolean
}

/**
 * How a {@link WriteQueue} forms and runs groups: {@link GroupSize}, how many groups may run at once, and how long
 * a call may wait to join one.
 */
export interface WriteQueueOptions extends GroupSize {
  /** Groups running at once (each on its own connection); default 1. */
  readonly maxInFlight?: number
  /**
   * A call still queued after this many milliseconds (every group busy) fails with {@link WriteQueueErrors.waited}
   * and is withdrawn; checked every quarter of it (at least every 10 ms) while calls are queued. None by default.
   */
  readonly maxWaitMs?: number
}

/** The errors a {@link WriteQueue} answers with on its own. */
export interface WriteQueueErrors {
  /** Every call made after {@link WriteQueue.close}. */
  readonly closed: StorageFailure
  /** A call that waited {@link WriteQueueOptions.maxWaitMs} (`ms`) for a group. */
  readonly waited?: (ms: number) => StorageFailure
}

/**
 * The group commit's queue, one per store and connection (pool), written once for every adapter: it queues
 * `StreamStore.write` calls, takes them off in groups ({@link takeGroup}) and hands each group to the adapter's
 * {@link GroupRunner}, then answers the group's calls and tells the {@link WriteObserver}.
 *
 * Scheduling: a call is queued and a turn is scheduled with {@link QueueTimers.immediate}, so every call made while
 * the current I/O phase runs (all the requests parsed in it) joins the same group. A turn starts groups while fewer
 * than `maxInFlight` run; calls arriving while `maxInFlight` groups run wait and form the next group, started as soon
 * as one ends. A group that ended synchronously (it blocked the event loop) ends the turn: the next group starts on a
 * later turn, so the I/O that arrived meanwhile is read first and joins it. A runner may hold the queue
 * ({@link GroupRunner.defer}) or refuse a group for now ({@link retryGroup}).
 *
 * Answers: each call is answered once, in arrival order within a group: with its own error, or (stored) with
 * `undefined` once the runner says so ({@link GroupEnd}), or with the group's failure. A withdrawn (interrupted)
 * call is dropped when its group forms, never answered. After {@link close} no call is accepted and every queued
 * call still runs.
 */
export class WriteQueue {
  private queue: Array<PendingWrite> = []
  private readonly maxInFlight: number
  private inFlight = 0
  private started = 0
  private groupCount = 0
  private callCount = 0
  private retryCount = 0
  private isClosed = false
  // What will run the next turn: a scheduled turn, a retry of a refused group, the runner's `defer`; `cancel` undoes
  // the first two.
  private waiting: "turn" | "retry" | "defer" | undefined = undefined
  private cancel: (() => void) | undefined = undefined
  // Refused tries of the head group in a row, and when the first was refused (`timers.now()`).
  private tries = 0
  private triesSince = 0
  // True while `runner.run` runs: a group ending then ended synchronously.
  private inRun = false
  private endedNow = false
  private stopSweep: (() => void) | undefined = undefined
  private drained: Array<() => void> = []
  private readonly turnNow = (): void => {
    this.waiting = undefined
    this.cancel = undefined
    this.turn()
  }
  private readonly resumeNow = (): void => {
    if (this.waiting !== "defer") return
    this.waiting = undefined
    if (this.queue.length > 0) this.turn()
  }
  private readonly sweepNow = (): void => this.sweep()

  /**
   * `runner` runs each group; `options` bound the groups; `errors` are the queue's own answers; `observer`, if
   * given, is told of every group once its calls are answered; `timers` default to Node's.
   */
  constructor(
    private readonly runner: GroupRunner,
    private readonly options: WriteQueueOptions,
    private readonly errors: WriteQueueErrors,
    private readonly observer: WriteObserver | undefined = undefined,
    private readonly timers: QueueTimers = nodeTimers
  ) {
    this.maxInFlight = options.maxInFlight ?? 1
  }

  /** Groups ended so far, stored or failed (calls / groups is the mean group size). */
  get groups(): number {
    return this.groupCount
  }

  /** Calls in those groups (withdrawn calls excluded). */
  get calls(): number {
    return this.callCount
  }

  /** Times a runner refused a group for now ({@link retryGroup}). */
  get retries(): number {
    return this.retryCount
  }

  /** Calls queued and not yet in a group (withdrawn ones included until a group forms past them). */
  get pending(): number {
    return this.queue.length
  }

  /**
   * Queues `writes` (applied in order, all or nothing, see `StreamStore.write`) received at `now` and succeeds once
   * the group they joined stored them (as durably as the adapter promises). Fails with the call's own error, with the
   * group's failure, with {@link WriteQueueErrors.closed} after {@link close} (nothing queued) or with
   * {@link WriteQueueErrors.waited}. Interrupting the fiber before the call's group forms withdraws it (nothing
   * stored).
   */
  write(writes: ReadonlyArray<StreamWrite>, now: Micros): Effect.Effect<void, WriteError> {
    return Effect.async<void, WriteError>((resume) => {
      const queued = this.writeDirect(writes, now, (error) =>
        resume(error === undefined ? Effect.void : Effect.fail(error))
      )
      if (queued !== undefined) return Effect.sync(() => queued.withdraw())
    })
  }

  /**
   * {@link write} without an effect (see `StreamStore.writeDirect`): `done` is called once, with `undefined` once
   * stored, else with the error {@link write} would fail with (at once after {@link close}: nothing queued, `undefined`
   * returned). Returns the queued call, whose `withdraw` takes it back until its group forms.
   */
  writeDirect(writes: ReadonlyArray<StreamWrite>, now: Micros, done: WriteDone): PendingWrite | undefined {
    if (this.isClosed) {
      done(this.errors.closed)
      return undefined
    }
    const pending = new PendingWrite(writes, now, done)
    this.enqueue(pending)
    return pending
  }

  /**
   * Stops accepting calls (later ones fail with {@link WriteQueueErrors.closed}) and runs every queued call: groups
   * that end synchronously run one after another before this returns, without waiting for a turn or asking
   * `defer`. Resolves once no call is queued and no group runs (answers waiting for durability may come later).
   * Idempotent.
   */
  close(): Promise<void> {
    if (!this.isClosed) {
      this.isClosed = true
      this.cancel?.()
      this.cancel = undefined
      this.waiting = undefined
      this.turn()
    }
    return new Promise((resolve) => {
      if (this.idle()) resolve()
      else this.drained.push(resolve)
    })
  }

  private idle(): boolean {
    return this.inFlight === 0 && this.queue.length === 0
  }

  private enqueue(pending: PendingWrite): void {
    pending.queuedAt = this.timers.now()
    this.queue.push(pending)
    if (this.waiting === undefined && this.inFlight < this.maxInFlight) {
      this.waiting = "turn"
      this.cancel = this.timers.immediate(this.turnNow)
    }
    if (this.options.maxWaitMs !== undefined && this.stopSweep === undefined) {
      this.stopSweep = this.timers.every(Math.max(10, this.options.maxWaitMs / 4), this.sweepNow)
    }
  }

  private schedule(): void {
    if (this.waiting === undefined && this.queue.length > 0 && this.inFlight < this.maxInFlight) {
      this.waiting = "turn"
      this.cancel = this.timers.immediate(this.turnNow)
    }
  }

  // One turn: starts groups while fewer than `maxInFlight` run, one that ends synchronously ending the turn (unless
  // closing, when they run back to back).
  private turn(): void {
    if (this.waiting !== undefined) return
    if (!this.isClosed && this.queue.length > 0 && this.runner.defer?.(this.resumeNow) === true) {
      this.waiting = "defer"
      return
    }
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const [group, rest] = takeGroup(this.queue, this.options)
      this.queue = rest
      if (group.length === 0) continue
      const retrying = this.tries === 0 ? undefined : this.timers.now() - this.triesSince
      this.inFlight++
      this.inRun = true
      this.endedNow = false
      let refused: void | typeof retryGroup
      try {
        refused = this.runner.run(
          group,
          { number: this.started, closing: this.isClosed, retryingMs: retrying },
          (r, d) => this.end(group, r, d)
        )
      } finally {
        this.inRun = false
      }
      if (refused === retryGroup) {
        this.inFlight--
        this.queue = group.concat(this.queue)
        this.retryCount++
        if (this.tries++ === 0) this.triesSince = this.timers.now()
        // At once first (another process's transaction usually commits within a millisecond or two), then 1 ms
        // timers, which cost no CPU while waiting.
        this.waiting = "retry"
        this.cancel = this.tries <= 2 ? this.timers.immediate(this.turnNow) : this.timers.after(1, this.turnNow)
        return
      }
      this.started++
      this.tries = 0
      if (this.endedNow && !this.isClosed) {
        this.schedule()
        break
      }
    }
    if (this.idle()) this.resolveDrained()
  }

  private end(group: ReadonlyArray<PendingWrite>, result: GroupResult, whenDurable: WhenDurable | undefined): void {
    this.inFlight--
    this.groupCount++
    this.callCount += group.length
    const observer = this.observer
    if (!Array.isArray(result)) {
      const failure = result as StorageFailure
      for (let i = 0; i < group.length; i++) group[i]!.resume(failure)
      observer?.groupCommitted(group.length, 0)
    } else if (whenDurable === undefined) {
      let points = 0
      for (let i = 0; i < group.length; i++) {
        const error = result[i] as WriteError | undefined
        group[i]!.resume(error)
        if (error === undefined && observer !== undefined) points += pointsOf(group[i]!.writes)
      }
      observer?.groupCommitted(group.length, points)
    } else {
      // The calls that failed are answered now, the stored ones once durable.
      const stored: Array<PendingWrite> = []
      for (let i = 0; i < group.length; i++) {
        const error = result[i] as WriteError | undefined
        if (error === undefined) stored.push(group[i]!)
        else group[i]!.resume(error)
      }
      if (stored.length === 0) observer?.groupCommitted(group.length, 0)
      else {
        whenDurable((failure) => {
          let points = 0
          for (let i = 0; i < stored.length; i++) {
            stored[i]!.resume(failure)
            if (failure === undefined && observer !== undefined) points += pointsOf(stored[i]!.writes)
          }
          observer?.groupCommitted(group.length, points)
        })
      }
    }
    if (this.inRun) {
      this.endedNow = true
      return
    }
    // Ended later (an asynchronous runner): start what waited for it.
    if (this.isClosed) this.turn()
    else this.schedule()
    if (this.idle()) this.resolveDrained()
  }

  private resolveDrained(): void {
    if (this.drained.length === 0) return
    for (const resolve of this.drained.splice(0)) resolve()
  }

  // Fails the calls that have waited longer than `maxWaitMs` (see `WriteQueueOptions.maxWaitMs`).
  private sweep(): void {
    if (this.queue.length === 0) {
      this.stopSweep?.()
      this.stopSweep = undefined
      return
    }
    const maxWaitMs = this.options.maxWaitMs!
    const deadline = this.timers.now() - maxWaitMs
    if (this.queue[0]!.queuedAt > deadline) return
    const waited = this.errors.waited?.(maxWaitMs) ?? this.errors.closed
    const kept: Array<PendingWrite> = []
    for (const pending of this.queue) {
      if (pending.cancelled) continue
      if (pending.queuedAt <= deadline) pending.resume(waited)
      else kept.push(pending)
    }
    this.queue = kept
    if (this.idle()) this.resolveDrained()
  }
}
