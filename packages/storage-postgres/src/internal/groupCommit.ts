import {
  type GroupSize,
  type Micros,
  type PendingWrite as Pending,
  pointsOf,
  queuedWrite,
  queuedWriteDirect,
  type StorageFailure,
  StorageUnavailable,
  type StreamWrite,
  takeGroup,
  type WriteDone,
  type WriteError,
  type WriteObserver
} from "@dashstream/core"
import type { Effect } from "effect"
import type pg from "pg"
import { toStorageFailure } from "./errors.js"
import { runTransaction } from "./groupTransaction.js"
import { GuessBackOff, LastTsGuesses } from "./lastTsGuesses.js"
import { channelName } from "./notify.js"

export type { WriteError } from "@dashstream/core"

/**
 * How large one group may grow, how many groups may run at once and how long a call may wait for a group.
 * `maxCalls` counts `write` calls; `maxEntries` counts the writes of those calls, a `Put` counting one per entry (a
 * single call larger than `maxEntries` still forms a group of its own). `maxInFlight` groups run at the same time,
 * each on its own pooled connection. A call still queued after `maxWaitMs` milliseconds (all groups busy, e.g.
 * stuck on a lock or on a server that stopped answering) fails with `StorageUnavailable` and is withdrawn, as a
 * call waiting for a pooled connection would (the store passes the pool's `connect_timeout_ms`).
 */
export interface GroupLimits extends GroupSize {
  readonly maxInFlight: number
  readonly maxWaitMs: number
}

/** The default {@link GroupLimits}: 1,000 calls or 20,000 entries a group, 2 groups at once, 5 s of waiting. */
export const defaultGroupLimits: GroupLimits = { maxCalls: 1000, maxEntries: 20_000, maxInFlight: 2, maxWaitMs: 5_000 }

const closed = new StorageUnavailable({ cause: new Error("the PostgreSQL stream store is closed") })

/**
 * Group commit of `StreamStore.write` calls on a `pg` pool.
 *
 * A call is queued and a flush is scheduled with `setImmediate`, so every call made while the current I/O phase
 * runs (all the requests parsed in it) joins the same group; calls arriving while {@link GroupLimits.maxInFlight}
 * groups are running wait and form the next group. A group runs in one transaction on one pooled connection:
 * `BEGIN`, `SELECT ... FOR UPDATE` of every stream row of the group in ascending id and the latest points the group
 * needs (one round trip); each call planned in memory in arrival order by the core's `WritePlan`; one statement
 * storing the net change (entries, `last_ts`, `cleared_ts`) and notifying `channel` once per changed stream (see
 * `notify.ts`: PostgreSQL delivers the notifications on COMMIT, never for a rolled-back group) and `COMMIT` (a second
 * round trip). When no write needs a latest entry and the streams' `last_ts` are known from earlier groups
 * ({@link LastTsGuesses}), the group is planned first and stored by one prepared statement that checks those
 * `last_ts` under the row locks (one round trip, see `runTransaction`); after wrong guesses, the next 2, 4, ... 64
 * groups read the rows. A call whose writes do not fit (`InvalidPoint`) or whose widget was deleted
 * (`StreamNotFound`) is left out of the plan and fails alone; the calls after it see the state without it. Every
 * call is resumed only after the `COMMIT` succeeded, so an acknowledged write is committed; when any statement or
 * the `COMMIT` fails, the transaction is rolled back (the connection is discarded) and every call of the group
 * fails with `StorageError` or `StorageUnavailable`.
 */
export class GroupCommit {
  private queue: Array<Pending> = []
  private scheduled: NodeJS.Immediate | undefined = undefined
  private isClosed = false
  private inFlight = 0
  private groupCount = 0
  private callCount = 0
  private drained: Array<() => void> = []
  private readonly guesses = new LastTsGuesses()
  private guessedCount = 0
  private staleCount = 0
  private readonly backOff = new GuessBackOff()
  private sweeper: NodeJS.Timeout | undefined = undefined
  private readonly flushNow = (): void => this.flush()
  private readonly sweepNow = (): void => this.sweep()

  constructor(
    private readonly pool: pg.Pool,
    private readonly limits: GroupLimits = defaultGroupLimits,
    private readonly channel: string = channelName("public"),
    private readonly observer: WriteObserver | undefined = undefined
  ) {}

  /** Groups run so far, committed or failed (calls / groups is the mean group size). */
  get groups(): number {
    return this.groupCount
  }

  /** Calls run in those groups (withdrawn calls excluded). */
  get calls(): number {
    return this.callCount
  }

  /** Groups planned on the guessed `last_ts` and committed in one round trip (see `runTransaction`). */
  get guessedGroups(): number {
    return this.guessedCount
  }

  /** Groups planned on guesses that the guard found wrong, then planned again on the rows. */
  get staleGroups(): number {
    return this.staleCount
  }

  /**
   * Queues `writes` (applied in order, all or nothing, see `StreamStore.write`) and succeeds once the group they
   * joined is committed. Fails with the call's own `InvalidPoint` or `StreamNotFound`, with `StorageError` or
   * `StorageUnavailable` when the group's transaction failed, and with `StorageUnavailable` after {@link close}.
   * Interrupting the fiber before its group starts withdraws the call (nothing stored).
   */
  write(writes: ReadonlyArray<StreamWrite>, now: Micros): Effect.Effect<void, WriteError> {
    return queuedWrite(writes, now, this.refusal, this.enqueue)
  }

  /**
   * {@link write} without an effect (see `StreamStore.writeDirect`): `done` is called once, with `undefined` once the
   * group the call joined is committed, else with the error {@link write} would fail with. Cannot be withdrawn.
   */
  writeDirect(writes: ReadonlyArray<StreamWrite>, now: Micros, done: WriteDone): Pending | undefined {
    return queuedWriteDirect(writes, now, this.refusal, this.enqueue, done)
  }

  private readonly refusal = (): WriteError | undefined => (this.isClosed ? closed : undefined)

  private readonly enqueue = (pending: Pending): void => {
    this.queue.push(pending)
    this.schedule()
    if (this.sweeper === undefined) {
      this.sweeper = setInterval(this.sweepNow, Math.max(10, this.limits.maxWaitMs / 4))
      this.sweeper.unref()
    }
  }

  /**
   * Stops accepting calls (later ones fail with `StorageUnavailable`) and resolves once every queued and running
   * group has finished, so no call is left unanswered. Call it before ending the pool.
   */
  close(): Promise<void> {
    this.isClosed = true
    if (this.scheduled !== undefined) {
      clearImmediate(this.scheduled)
      this.scheduled = undefined
    }
    this.flush()
    return new Promise((resolve) => {
      if (this.inFlight === 0 && this.queue.length === 0) resolve()
      else this.drained.push(resolve)
    })
  }

  // Fails the calls that have waited longer than `maxWaitMs` (checked every quarter of it while calls are queued).
  private sweep(): void {
    if (this.queue.length === 0) {
      clearInterval(this.sweeper)
      this.sweeper = undefined
      return
    }
    const deadline = performance.now() - this.limits.maxWaitMs
    if (this.queue[0]!.queuedAt > deadline) return
    const waited = new StorageUnavailable({
      cause: new Error(`no PostgreSQL transaction was free for ${this.limits.maxWaitMs} ms`)
    })
    const kept: Array<Pending> = []
    for (const pending of this.queue) {
      if (pending.cancelled) continue
      if (pending.queuedAt <= deadline) pending.resume(waited)
      else kept.push(pending)
    }
    this.queue = kept
  }

  private schedule(): void {
    if (this.scheduled === undefined && this.queue.length > 0 && this.inFlight < this.limits.maxInFlight) {
      this.scheduled = setImmediate(this.flushNow)
    }
  }

  private flush(): void {
    this.scheduled = undefined
    while (this.inFlight < this.limits.maxInFlight && this.queue.length > 0) {
      const group = this.take()
      if (group.length === 0) continue
      this.inFlight++
      void this.runGroup(group).finally(() => {
        this.inFlight--
        if (this.isClosed) this.flush()
        else this.schedule()
        if (this.inFlight === 0 && this.queue.length === 0) {
          for (const resolve of this.drained.splice(0)) resolve()
        }
      })
    }
  }

  // Takes the next group off the queue: calls in arrival order up to the limits, at least one; drops cancelled ones.
  private take(): Array<Pending> {
    const [group, rest] = takeGroup(this.queue, this.limits)
    this.queue = rest
    return group
  }

  private async runGroup(group: ReadonlyArray<Pending>): Promise<void> {
    let outcome: ReadonlyArray<WriteError | undefined> | StorageFailure
    try {
      outcome = await this.attempt(group)
    } catch (cause) {
      outcome = toStorageFailure(cause)
    }
    this.groupCount++
    this.callCount += group.length
    let points = 0
    for (let i = 0; i < group.length; i++) {
      const error = Array.isArray(outcome) ? (outcome[i] as WriteError | undefined) : (outcome as StorageFailure)
      group[i]!.resume(error)
      if (error === undefined && this.observer !== undefined) points += pointsOf(group[i]!.writes)
    }
    this.observer?.groupCommitted(group.length, points)
  }

  private async attempt(group: ReadonlyArray<Pending>): Promise<ReadonlyArray<WriteError | undefined>> {
    const client = await this.pool.connect()
    try {
      const number = this.groupCount
      const outcome = await runTransaction(client, group, this.channel, this.guesses, this.backOff.allows(number))
      client.release()
      if (outcome.planned === "guessed") this.guessedCount++
      else if (outcome.planned === "stale") this.staleCount++
      this.backOff.record(number, outcome.planned)
      return outcome.errors
    } catch (error) {
      // Released with the error, the client is discarded: the server rolls back a transaction whose connection
      // closes, so nothing of the group is stored.
      client.release(error instanceof Error ? error : new Error(String(error)))
      throw error
    }
  }
}
