import * as Fs from "node:fs"

/** Called once the commits it waited for are on disk (`undefined`), or with the error that keeps that unknown. */
export type Synced = (error: Error | undefined) => void

/**
 * Makes commits durable after the fact: a group commit runs its transaction with `synchronous=NORMAL` (no sync
 * while the event loop is blocked) and asks this for the sync before it acknowledges anything.
 */
export interface Durability {
  /**
   * Calls `done` once everything committed before this call is on disk. Callers are answered in the order they
   * asked. Once a sync has failed, every later call gets that error at once (see {@link WalSync}).
   */
  readonly afterCommit: (done: Synced) => void
  /** The error of a failed sync, after which nothing may be acknowledged; `undefined` while all is well. */
  readonly failure: Error | undefined
  /** Syncs now, blocking, and answers every waiting caller (used when the store closes). */
  readonly flushSync: () => void
  /**
   * Optional: while a sync is running, takes `run` to call once it has ended (after its callers are answered, before
   * the next sync starts) and returns `true`; returns `false` (and never calls `run`) when no sync is running. A
   * group commit uses it to let the calls arriving during a sync join one group instead of committing groups that
   * would wait for the next sync anyway.
   */
  readonly deferWhileSyncing?: (run: () => void) => boolean
}

const ignore = () => {}

const closeQuietly = (fd: number): void => {
  try {
    Fs.closeSync(fd)
  } catch {
    // Already gone: nothing to release.
  }
}

const toError = (u: unknown): Error => (u instanceof Error ? u : new Error(String(u)))

const fsyncFileSync = (path: string): Error | undefined => {
  try {
    const fd = Fs.openSync(path, "r")
    try {
      Fs.fsyncSync(fd)
    } finally {
      Fs.closeSync(fd)
    }
    return undefined
  } catch (error) {
    return toError(error)
  }
}

/**
 * The {@link Durability} of a WAL-mode SQLite file: `fsync` of its `-wal` file on libuv's thread pool, so the
 * event loop goes on parsing requests and committing the next group while the disk works. A sync covers the whole
 * file, so every commit made before it started is durable when it ends: callers that ask while a sync is running
 * share the next one (one sync in flight at a time, as many groups per sync as arrived meanwhile).
 *
 * This is what `synchronous=FULL` does in WAL mode (sync the WAL after each commit), moved off the event loop:
 * an acknowledged write is still on disk. Checkpoints keep SQLite's own syncs (with `NORMAL` it syncs the WAL
 * before a checkpoint and the database file after it). The `-wal` file is opened at the first sync and kept open
 * until {@link WalSync.flushSync}: SQLite deletes it only when the last connection to the file closes, and the
 * connection whose commits this syncs is open, so the file stays the same one. (Opening and closing it for every
 * sync were two more trips to the thread pool per group commit: with single-point pushes, about 5 % of the
 * server's CPU went to handing those over.)
 *
 * A failed `fsync` leaves it unknown what reached the disk (the kernel may have dropped the dirty pages), so the
 * failure is sticky: the callers of that sync and every later one get the error, and the store stops acknowledging
 * writes until it is reopened, as PostgreSQL stops on a failed `fsync`.
 */
export class WalSync implements Durability {
  private waiting: Array<Synced> = []
  private inFlight: Array<Synced> | undefined = undefined
  private failed: Error | undefined = undefined
  private idle: Array<() => void> = []
  // The -wal file's descriptor, open from the first sync until `flushSync`.
  private fd: number | undefined = undefined
  // A descriptor `flushSync` let go of while a sync still used it: closed when that sync returns.
  private closeAfterSync: number | undefined = undefined

  /** `walPath` is the database file's name with `-wal` appended. */
  constructor(private readonly walPath: string) {}

  get failure(): Error | undefined {
    return this.failed
  }

  afterCommit(done: Synced): void {
    if (this.failed !== undefined) return done(this.failed)
    this.waiting.push(done)
    if (this.inFlight === undefined) this.start()
  }

  flushSync(): void {
    const batch = [...(this.inFlight ?? []), ...this.waiting]
    if (this.fd !== undefined) {
      if (this.inFlight === undefined) closeQuietly(this.fd)
      else this.closeAfterSync = this.fd
      this.fd = undefined
    }
    this.inFlight = undefined
    this.waiting = []
    if (batch.length > 0) this.finish(batch, this.failed ?? fsyncFileSync(this.walPath))
    this.runIdle()
  }

  deferWhileSyncing(run: () => void): boolean {
    if (this.inFlight === undefined) return false
    this.idle.push(run)
    return true
  }

  private runIdle(): void {
    if (this.idle.length === 0) return
    const idle = this.idle
    this.idle = []
    for (let i = 0; i < idle.length; i++) idle[i]!()
  }

  private start(): void {
    const batch = this.waiting
    this.waiting = []
    this.inFlight = batch
    this.sync(batch, (error) => {
      // flushSync has answered this batch already.
      if (this.inFlight !== batch) return this.closeLetGo()
      this.inFlight = undefined
      this.finish(batch, error)
      // Deferred group commits run now: what they commit joins the next sync, started below.
      this.runIdle()
      if (this.waiting.length > 0) {
        if (this.failed !== undefined) this.finish(this.waiting.splice(0), this.failed)
        else this.start()
      }
    })
  }

  // fsync of the -wal file on the thread pool for `batch`, opening the file first when it is not open yet.
  private sync(batch: ReadonlyArray<Synced>, done: (error: Error | undefined) => void): void {
    const fd = this.fd
    if (fd !== undefined) return Fs.fsync(fd, (error) => done(error ?? undefined))
    Fs.open(this.walPath, "r", (error, opened) => {
      if (error !== null) return done(error)
      if (this.inFlight !== batch) {
        // flushSync ran meanwhile (and synced `batch`): this descriptor is no longer wanted.
        Fs.close(opened, ignore)
        return done(undefined)
      }
      this.fd = opened
      Fs.fsync(opened, (syncError) => done(syncError ?? undefined))
    })
  }

  // Closes the descriptor flushSync let go of while a sync used it.
  private closeLetGo(): void {
    const fd = this.closeAfterSync
    if (fd === undefined) return
    this.closeAfterSync = undefined
    Fs.close(fd, ignore)
  }

  private finish(batch: ReadonlyArray<Synced>, error: Error | undefined): void {
    if (error !== undefined && this.failed === undefined) this.failed = error
    for (let i = 0; i < batch.length; i++) batch[i]!(error)
  }
}
