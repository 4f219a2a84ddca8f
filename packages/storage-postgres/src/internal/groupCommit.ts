import {
  type GroupEnd,
  type GroupSize,
  type GroupTurn,
  type Micros,
  type PendingWrite as Pending,
  StorageUnavailable,
  type StreamWrite,
  type WriteDone,
  type WriteError,
  type WriteObserver,
  WriteQueue
} from "@dashstream/core"
import type { Effect } from "effect"
import type pg from "pg"
import { toStorageFailure } from "./errors.js"
import { runTransaction } from "./groupTransaction.js"
import { GuessBackOff, LastTsGuesses } from "./lastTsGuesses.js"
import { channelName } from "./notify.js"
import type { OwnNotices } from "./ownNotices.js"

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
 * Group commit of `StreamStore.write` calls on a `pg` pool: the core's `WriteQueue` (queueing, scheduling, close and
 * drain, counters, answers, the `maxWaitMs` limit) with this pool's transaction as its `GroupRunner`.
 *
 * A call is queued and joins every call made while the current I/O phase runs (all the requests parsed in it); calls
 * arriving while {@link GroupLimits.maxInFlight} groups are running wait and form the next group. A group runs in one
 * transaction on one pooled connection (`runTransaction` in `groupTransaction.ts`): `BEGIN`, `SELECT ... FOR UPDATE`
 * of every stream row of the group in ascending id and the latest points the group needs (one round trip); each call
 * planned in memory in arrival order by the core's `WritePlan`; one statement storing the net change (entries,
 * `last_ts`, `cleared_ts`) and notifying `channel` once per changed stream (see `notify.ts`: PostgreSQL delivers the
 * notifications on COMMIT, never for a rolled-back group) and `COMMIT` (a second round trip). When no write needs a
 * latest entry and the streams' `last_ts` are known from earlier groups ({@link LastTsGuesses}), the group is
 * planned first and stored by one prepared statement that checks those `last_ts` under the row locks (one round
 * trip); after wrong guesses, the next 2, 4, ... 64 groups started read the rows. A call whose writes do not fit
 * (`InvalidPoint`) or whose widget was deleted (`StreamNotFound`) is left out of the plan and fails alone; the calls
 * after it see the state without it. Every call is resumed only after the `COMMIT` succeeded, so an acknowledged
 * write is committed; a group the server aborts as a deadlock's victim (40P01) runs again, at most 3 times; when
 * any other statement or the `COMMIT` fails, the transaction is rolled back (the connection is
 * discarded) and every call of the group fails with `StorageError` or `StorageUnavailable`.
 */
export class GroupCommit {
  private readonly queue: WriteQueue
  private readonly guesses = new LastTsGuesses()
  private guessedCount = 0
  private staleCount = 0
  private readonly backOff = new GuessBackOff()

  constructor(
    private readonly pool: pg.Pool,
    limits: GroupLimits = defaultGroupLimits,
    private readonly channel: string = channelName("public"),
    observer: WriteObserver | undefined = undefined,
    private readonly own: OwnNotices | undefined = undefined
  ) {
    this.queue = new WriteQueue(
      { run: (group, turn, end) => this.runGroup(group, turn, end) },
      limits,
      {
        closed,
        waited: (ms) => new StorageUnavailable({ cause: new Error(`no PostgreSQL transaction was free for ${ms} ms`) })
      },
      observer
    )
  }

  /** Groups run so far, committed or failed (calls / groups is the mean group size). */
  get groups(): number {
    return this.queue.groups
  }

  /** Calls run in those groups (withdrawn calls excluded). */
  get calls(): number {
    return this.queue.calls
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
   * `StorageUnavailable` when the group's transaction failed, and with `StorageUnavailable` after {@link close} or
   * after `maxWaitMs` in the queue. Interrupting the fiber before its group starts withdraws the call (nothing
   * stored).
   */
  write(writes: ReadonlyArray<StreamWrite>, now: Micros): Effect.Effect<void, WriteError> {
    return this.queue.write(writes, now)
  }

  /**
   * {@link write} without an effect (see `StreamStore.writeDirect`): `done` is called once, with `undefined` once the
   * group the call joined is committed, else with the error {@link write} would fail with. Returns the queued call (see `Withdrawable`), or `undefined`
   * when refused at once.
   */
  writeDirect(writes: ReadonlyArray<StreamWrite>, now: Micros, done: WriteDone): Pending | undefined {
    return this.queue.writeDirect(writes, now, done)
  }

  /**
   * Stops accepting calls (later ones fail with `StorageUnavailable`) and resolves once every queued and running
   * group has finished, so no call is left unanswered. Call it before ending the pool.
   */
  close(): Promise<void> {
    return this.queue.close()
  }

  // The queue's runner: the group's transaction on a pooled connection, ended once it committed or failed.
  private runGroup(group: ReadonlyArray<Pending>, turn: GroupTurn, end: GroupEnd): void {
    void this.attempt(group, turn.number).then(end, (cause) => end(toStorageFailure(cause)))
  }

  private async attempt(group: ReadonlyArray<Pending>, number: number): Promise<ReadonlyArray<WriteError | undefined>> {
    const client = await this.pool.connect()
    try {
      const outcome = await runTransaction(
        client,
        group,
        this.channel,
        this.guesses,
        this.backOff.allows(number),
        this.own
      )
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
