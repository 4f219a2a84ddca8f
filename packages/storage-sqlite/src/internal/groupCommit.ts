import type Database from "better-sqlite3"
import {
  type ChangeSink,
  type GroupEnd,
  type GroupSize,
  type GroupTurn,
  type Micros,
  type PendingChange,
  type PendingWrite as Pending,
  retryGroup,
  type StorageFailure,
  StorageUnavailable,
  type StreamWrite,
  type WriteError,
  type WriteDone,
  type WriteObserver,
  type WritePlan,
  WriteQueue
} from "@dashstream/core"
import type { Effect } from "effect"
import { isBusy, storageFailure } from "./errors.js"
import type { Durability } from "./walSync.js"
import { Sql } from "./statements.js"
import { applyWrites, makeWritePath, type WritePath, type WriteStatements, writePlan } from "./writePath.js"

export type { WriteError } from "@dashstream/core"

/** How large one group may grow before the rest waits for the next commit (see `GroupSize` of the core). */
export type GroupLimits = GroupSize

/** The default {@link GroupLimits}: 1,000 calls or 20,000 entries, some 10-30 ms of work per group on our machines. */
export const defaultGroupLimits: GroupLimits = { maxCalls: 1000, maxEntries: 20_000 }

// Returned by a group's first attempt to ask for a second one with a savepoint for every call.
const replay: unique symbol = Symbol("replay")

// Returned by an attempt whose `BEGIN IMMEDIATE` found the write lock taken by another process (event-loop waits only).
const busy: unique symbol = Symbol("busy")

/**
 * How a group waits for the write lock while another process (another `serve` worker on the same file) holds it:
 * `"busyHandler"` lets SQLite's busy handler sleep in `BEGIN IMMEDIATE`, blocking the event loop, up to the
 * connection's `busy_timeout`; `"eventLoop"` tries `BEGIN IMMEDIATE` with no busy handler and, when the lock is
 * taken, puts the group back at the head of the queue and tries again from the event loop (at once, then after 1 ms
 * timers), so requests go on being read and grouped meanwhile. After `maxWaitMs` of failed tries the group fails
 * with `StorageUnavailable`, as a busy timeout would.
 */
export type LockWait = { readonly _tag: "busyHandler" } | { readonly _tag: "eventLoop"; readonly maxWaitMs: number }

/** SQLite's busy handler: the default. */
export const busyHandler: LockWait = { _tag: "busyHandler" }

const closed = new StorageUnavailable({ cause: new Error("the SQLite stream store is closed") })

/**
 * Group commit of `StreamStore.write` calls over one better-sqlite3 connection: the core's `WriteQueue` (queueing,
 * scheduling, close and drain, counters, answers) with this connection's transaction as its `GroupRunner`.
 *
 * A call is queued and joins every call made while the current I/O phase runs (all the requests parsed in it). A
 * group runs synchronously, start to finish: `BEGIN IMMEDIATE`, each call's writes in its own `SAVEPOINT`, one
 * `COMMIT` (with `synchronous=FULL`, one WAL sync). A call that fails with a domain error (`InvalidPoint`,
 * `StreamNotFound`) or a failed statement rolls back to its savepoint and fails alone; the others stay in the group.
 * (A group is first run without savepoints, a call having nothing to roll back on a domain error, and the entries of
 * all its calls are stored together before `COMMIT`; if a statement fails, the group is rolled back and run again with
 * every call in a savepoint, each call's entries stored before its savepoint is released.) Every call is resumed
 * only after the `COMMIT` returned, so an acknowledged write is on disk. When `BEGIN` or `COMMIT` fails, or the
 * transaction is lost midway, the group is rolled back and every call in it fails with `StorageError` or
 * `StorageUnavailable`: nothing of the group is acknowledged.
 *
 * With a {@link Durability} (the default store's: `WalSync`), the group's transaction runs with
 * `synchronous=NORMAL`, so its `COMMIT` does not sync while the event loop is blocked, and its calls are resumed
 * only once the durability reports the WAL synced (off the event loop): still acknowledged only when on disk, while
 * the next group forms. When the durability can defer (`deferWhileSyncing`, as `WalSync` does), the next group
 * commits once the running sync ended rather than during it (the runner's `defer`): its calls would wait for the
 * next sync either way, and everything that arrived during the sync joins it (fewer, larger transactions: 100-stream
 * pushes 1.2-1.5x, single points 1.1-1.35x in A/B runs). Calls that failed alone are answered at once. A failed sync
 * fails the calls it covered (`StorageError`), and every later call without running it.
 *
 * Since better-sqlite3 blocks the event loop for the whole group, calls arriving meanwhile queue up and form the
 * next group, run on a later turn so I/O is served between groups; a queue longer than the {@link GroupLimits} is
 * split over several turns. Serialising through one connection keeps read-modify-write (delta, add item, `ts`
 * assignment) atomic, and a read sees every acknowledged write.
 */
export class GroupCommit {
  private readonly queue: WriteQueue
  private isClosed = false
  private readonly begin: Database.Statement
  private readonly commit: Database.Statement
  private readonly rollback: Database.Statement
  private readonly savepoint: Database.Statement
  private readonly rollbackToSavepoint: Database.Statement
  private readonly releaseSavepoint: Database.Statement
  // Pragma statements, run with `db.exec` each time: SQLite applies a pragma that sets a value when it is prepared,
  // not when it runs, so a prepared `PRAGMA synchronous = NORMAL` run later would change nothing. (`db.exec` rather
  // than `db.pragma`, which also prepares a statement and reads its rows: 1 µs a pair against 6.)
  private readonly relaxSync: string | undefined
  private readonly restoreSync: string | undefined
  private readonly noBusyWait: string | undefined
  private readonly restoreBusyWait: string | undefined
  private readonly nextSeq: Database.Statement<[], number> | undefined
  // The changes of each call of the group being attempted (undefined: nobody follows, or the call failed).
  private changes: Array<Array<PendingChange> | undefined> = []
  // The commit sequence number the group being attempted took (sequenced sinks only).
  private seq: number | undefined = undefined
  private readonly followed = (stream: number): boolean => this.sink!.has(stream as never)
  // The writer's memory across groups (each stream's last ts, validated in every transaction) and its entry batch.
  private readonly path: WritePath
  private readonly plan: WritePlan

  /**
   * Prepares the transaction-control statements. With `durability`, groups commit with `synchronous=NORMAL` (the
   * connection's own level is restored after each) and are acknowledged when `durability` says the WAL is synced.
   * With `sink`, the changes of a group's stored calls are published to it once they are acknowledged (durable), in
   * commit order (with their commit sequence number when the sink is sequenced). With `observer`, it is told of every
   * group once its calls are answered. `lockWait` says how a group waits for a write lock another process holds.
   * Throws when the connection is closed.
   */
  constructor(
    private readonly db: Database.Database,
    statements: WriteStatements,
    limits: GroupLimits = defaultGroupLimits,
    private readonly durability: Durability | undefined = undefined,
    private readonly sink: ChangeSink | undefined = undefined,
    observer: WriteObserver | undefined = undefined,
    private readonly lockWait: LockWait = busyHandler
  ) {
    this.path = makeWritePath(statements)
    this.plan = writePlan(this.path)
    this.begin = db.prepare("BEGIN IMMEDIATE")
    this.commit = db.prepare("COMMIT")
    this.rollback = db.prepare("ROLLBACK")
    this.savepoint = db.prepare("SAVEPOINT write_call")
    this.rollbackToSavepoint = db.prepare("ROLLBACK TO write_call")
    this.releaseSavepoint = db.prepare("RELEASE write_call")
    if (durability !== undefined) {
      const level = db.pragma("synchronous", { simple: true }) as number
      this.relaxSync = "PRAGMA synchronous = NORMAL"
      this.restoreSync = `PRAGMA synchronous = ${level}`
    }
    if (lockWait._tag === "eventLoop") {
      const timeout = db.pragma("busy_timeout", { simple: true }) as number
      this.noBusyWait = "PRAGMA busy_timeout = 0"
      this.restoreBusyWait = `PRAGMA busy_timeout = ${timeout}`
    }
    if (sink?.sequenced === true) this.nextSeq = db.prepare<[], number>(Sql.nextSeq).pluck()
    const deferWhileSyncing = durability?.deferWhileSyncing?.bind(durability)
    this.queue = new WriteQueue(
      deferWhileSyncing === undefined
        ? { run: (group, turn, end) => this.runGroup(group, turn, end) }
        : { run: (group, turn, end) => this.runGroup(group, turn, end), defer: deferWhileSyncing },
      limits,
      { closed },
      observer
    )
  }

  /** Groups run so far, committed or failed (for tests and benchmarks: calls / groups is the mean group size). */
  get groups(): number {
    return this.queue.groups
  }

  /** Calls run in those groups (withdrawn calls excluded). */
  get calls(): number {
    return this.queue.calls
  }

  /** Times `BEGIN IMMEDIATE` found the write lock taken and the group was retried from the event loop. */
  get busyRetries(): number {
    return this.queue.retries
  }

  /** Calls queued and not yet run (withdrawn ones included until a group forms past them). */
  get pending(): number {
    return this.queue.pending
  }

  /**
   * Queues `writes` (applied in order, all or nothing, see `StreamStore.write`) and succeeds once the group they
   * joined is committed. Fails with the call's own `InvalidPoint` or `StreamNotFound`, with `StorageError` or
   * `StorageUnavailable` when the group's transaction failed, and with `StorageUnavailable` after {@link close}.
   * Interrupting the fiber before the group runs withdraws the call (nothing stored).
   */
  write(writes: ReadonlyArray<StreamWrite>, now: Micros): Effect.Effect<void, WriteError> {
    return this.queue.write(writes, now)
  }

  /**
   * {@link write} without an effect (see `StreamStore.writeDirect`): `done` is called once, with `undefined` once the
   * group the call joined is committed (durable), else with the error {@link write} would fail with. Returns the
   * queued call (see `Withdrawable`), or `undefined` when refused at once.
   */
  writeDirect(writes: ReadonlyArray<StreamWrite>, now: Micros, done: WriteDone): Pending | undefined {
    return this.queue.writeDirect(writes, now, done)
  }

  /**
   * Stops accepting calls (later ones fail with `StorageUnavailable`) and runs every queued call before returning,
   * so none is left unanswered: each is committed and acknowledged, or failed. Idempotent. Call it before closing
   * the connection.
   */
  close(): void {
    if (this.isClosed) return
    this.isClosed = true
    // The queue runs the last groups back to back before `close` returns (they end synchronously); they wait for the
    // lock in SQLite's busy handler, there being no event loop left to wait on (`turn.closing`).
    void this.queue.close()
    this.durability?.flushSync()
  }

  // The queue's runner: runs a group and ends it, or returns `retryGroup` when `BEGIN IMMEDIATE` found the lock taken
  // (`eventLoop` lock waits only, not while closing) and the lock wait has not yet lasted `maxWaitMs`.
  private runGroup(group: ReadonlyArray<Pending>, turn: GroupTurn, end: GroupEnd): void | typeof retryGroup {
    const durability = this.durability
    const waitOnLoop = !turn.closing && this.lockWait._tag === "eventLoop"
    let outcome =
      durability === undefined
        ? this.attemptTwice(group, waitOnLoop)
        : durability.failure !== undefined
          ? storageFailure(durability.failure)
          : this.withRelaxedSync(group, waitOnLoop)
    if (outcome === busy) {
      const waited = turn.retryingMs
      if (this.lockWait._tag === "eventLoop" && (waited === undefined || waited < this.lockWait.maxWaitMs)) {
        return retryGroup
      }
      outcome = new StorageUnavailable({
        cause: new Error(`the database is locked by another process (waited ${Math.round(waited ?? 0)} ms)`)
      })
    }
    const seq = this.seq
    this.seq = undefined
    if (!Array.isArray(outcome)) {
      this.changes = []
      return end(outcome as StorageFailure)
    }
    const errors = outcome as ReadonlyArray<WriteError | undefined>
    let changes: Array<PendingChange> | undefined
    for (let i = 0; i < group.length; i++) {
      const own = this.changes[i]
      if (errors[i] === undefined && own !== undefined && own.length > 0) {
        // Appended in place (the calls' arrays are dropped below): a concat per call was quadratic in the group.
        if (changes === undefined) changes = own
        else for (let k = 0; k < own.length; k++) changes.push(own[k]!)
      }
    }
    this.changes = []
    if (durability === undefined) {
      end(errors)
      this.publish(changes, seq)
      return
    }
    // The queue asks for the sync only when a call was stored (no change and no sequence number otherwise).
    end(errors, (acknowledge) =>
      durability.afterCommit((error) => {
        acknowledge(error === undefined ? undefined : storageFailure(error))
        if (error === undefined) this.publish(changes, seq)
        else if (seq !== undefined) this.sink!.skipped(seq)
      })
    )
  }

  // Publishes the changes of acknowledged calls, in the order they were applied.
  private publish(changes: ReadonlyArray<PendingChange> | undefined, seq: number | undefined): void {
    if (changes !== undefined) this.sink!.committed(changes, seq)
    else if (seq !== undefined) this.sink!.skipped(seq)
  }

  private attemptTwice(
    group: ReadonlyArray<Pending>,
    waitOnLoop: boolean
  ): ReadonlyArray<WriteError | undefined> | StorageFailure | typeof busy {
    const outcome = this.attempt(group, false, waitOnLoop)
    return outcome === replay
      ? (this.attempt(group, true, waitOnLoop) as ReadonlyArray<WriteError | undefined> | StorageFailure | typeof busy)
      : outcome
  }

  // Runs the group with `synchronous=NORMAL`, restoring the connection's level after it, so that writes made outside
  // groups (accounts, widgets, decimation) keep syncing on commit.
  private withRelaxedSync(
    group: ReadonlyArray<Pending>,
    waitOnLoop: boolean
  ): ReadonlyArray<WriteError | undefined> | StorageFailure | typeof busy {
    try {
      this.db.exec(this.relaxSync!)
    } catch (cause) {
      return storageFailure(cause)
    }
    try {
      return this.attemptTwice(group, waitOnLoop)
    } finally {
      try {
        this.db.exec(this.restoreSync!)
      } catch {
        // Only fails on a closed connection, which the next BEGIN reports.
      }
    }
  }

  // Runs the group in one transaction and commits it. Returns each call's error (`undefined`: stored), the group's
  // failure when the transaction could not be begun or committed (rolled back, nothing stored), or `replay` when a
  // call without a savepoint failed a statement midway (rolled back; run again with a savepoint for every call).
  //
  // A savepoint costs about as much as a small write, so the first attempt runs every call without one: a call's
  // domain errors are all found by its plan before its first statement (see `applyWrites`), which leaves nothing to
  // roll back; only a failed statement does, and that replays the group with a savepoint for every call. (Savepoints
  // on calls of several writes were 2-4 % of a 100-stream push's CPU.)
  //
  // With `waitOnLoop`, `BEGIN IMMEDIATE` runs without a busy handler and a lock held by another process returns `busy`.
  private attempt(
    group: ReadonlyArray<Pending>,
    savepointEach: boolean,
    waitOnLoop: boolean
  ): ReadonlyArray<WriteError | undefined> | StorageFailure | typeof replay | typeof busy {
    const errors: Array<WriteError | undefined> = new Array(group.length)
    const collect = this.sink !== undefined && this.sink.active
    this.changes = collect ? new Array(group.length) : []
    this.seq = undefined
    try {
      if (waitOnLoop) {
        this.db.exec(this.noBusyWait!)
        try {
          this.begin.run()
        } finally {
          this.db.exec(this.restoreBusyWait!)
        }
      } else this.begin.run()
    } catch (cause) {
      this.path.lastTs.reset()
      return waitOnLoop && isBusy(cause) ? busy : storageFailure(cause)
    }
    try {
      this.path.lastTs.validate()
      for (let i = 0; i < group.length; i++) {
        const pending = group[i]!
        if (savepointEach) {
          const own = collect ? [] : undefined
          errors[i] = this.applyInSavepoint(pending, own)
          if (errors[i] === undefined) this.changes[i] = own
          continue
        }
        try {
          const own = collect ? (this.changes[i] = []) : undefined
          errors[i] = applyWrites(this.path, this.plan, pending.writes, pending.now, this.followed, own)
          if (errors[i] !== undefined) this.changes[i] = undefined
        } catch (cause) {
          if (!this.db.inTransaction) throw cause
          this.abort()
          return replay
        }
      }
      // Every call's entries at once: a stream several calls wrote is one upsert row (see `EntryBatch`).
      try {
        this.path.entries.flush()
      } catch (cause) {
        if (!this.db.inTransaction) throw cause
        this.abort()
        return replay
      }
      this.path.lastTs.flush()
      if (this.nextSeq !== undefined && collect && this.collected(errors)) this.seq = this.nextSeq.get()!
      this.path.lastTs.seal()
      this.commit.run()
      this.path.lastTs.committed()
      return errors
    } catch (cause) {
      this.abort()
      return storageFailure(cause)
    }
  }

  // True when a call that succeeded collected a change (the group then takes a commit sequence number).
  private collected(errors: ReadonlyArray<WriteError | undefined>): boolean {
    for (let i = 0; i < errors.length; i++) {
      const own = this.changes[i]
      if (errors[i] === undefined && own !== undefined && own.length > 0) return true
    }
    return false
  }

  // Runs one call in its own savepoint. Its domain error, or a failed statement that left the transaction open,
  // rolls back this call only and is returned. Throws when the transaction itself is gone (SQLite rolls back the
  // whole transaction on some errors, e.g. disk full), which fails the group.
  private applyInSavepoint(pending: Pending, changes: Array<PendingChange> | undefined): WriteError | undefined {
    this.savepoint.run()
    this.path.lastTs.mark()
    let error: WriteError | undefined
    try {
      error = applyWrites(this.path, this.plan, pending.writes, pending.now, this.followed, changes)
      if (error === undefined) this.path.entries.flush()
    } catch (cause) {
      if (!this.db.inTransaction) throw cause
      error = storageFailure(cause)
    }
    if (error !== undefined) {
      this.path.entries.discard()
      this.rollbackToSavepoint.run()
      this.path.lastTs.rollback()
    } else this.path.lastTs.release()
    this.releaseSavepoint.run()
    return error
  }

  // Rolls back whatever is left of the group's transaction. A failure here means the connection is unusable; the
  // next BEGIN reports that to its own group.
  private abort(): void {
    this.seq = undefined
    this.path.entries.discard()
    this.path.lastTs.reset()
    if (!this.db.open || !this.db.inTransaction) return
    try {
      this.rollback.run()
    } catch {
      // Reported by the next BEGIN, see above.
    }
  }
}
