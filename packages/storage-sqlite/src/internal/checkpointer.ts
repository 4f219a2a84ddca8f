import { createRequire } from "node:module"
import { Worker } from "node:worker_threads"
import type Database from "better-sqlite3"

/** How often the checkpointer thread runs a checkpoint, in milliseconds, by default. */
export const defaultCheckpointIntervalMs = 100

/** SQLite's own default `wal_autocheckpoint` (pages), put back on the connection when the thread fails. */
const sqliteAutoCheckpoint = 1000

// The thread's code, run with `eval` (CommonJS) for the same reason as the page reader's (it must survive the
// command's bundle): one connection to the file, a PASSIVE checkpoint every `intervalMs`. PASSIVE never waits for
// readers or writers: it copies what it can and leaves the rest for the next round. A busy checkpoint (another
// process's checkpointer running) is not an error; anything else ends the thread, which the owner sees.
const threadSource = `
const { parentPort, workerData } = require("node:worker_threads")
const Database = require(workerData.driver)
const db = new Database(workerData.filename, { fileMustExist: true, timeout: 0 })
const checkpoint = () => {
  try {
    db.pragma("wal_checkpoint(PASSIVE)")
  } catch (error) {
    if (!error || (error.code !== "SQLITE_BUSY" && error.code !== "SQLITE_LOCKED")) throw error
  }
  parentPort.postMessage("checkpointed")
}
setInterval(checkpoint, workerData.intervalMs)
parentPort.postMessage("ready")
`

/**
 * Runs the WAL checkpoints of a database file on a thread of its own, so that no group commit pays for one (issue
 * 12). SQLite's default runs a checkpoint inside the COMMIT that takes the WAL past 1,000 pages, on the event loop:
 * it copies the pages into the database file and syncs both, about 18% of the COMMIT time under a single-point load,
 * and far more when the pages are scattered over a large file: pushes to random streams among 1,000,000 had a p99 of
 * 20-25 ms with it, 14-17 ms without it (same runs otherwise; throughput unchanged). While readers pin the WAL (a
 * large streamed read) SQLite's own checkpoint is tried again at every COMMIT. With a checkpointer the
 * writing connection's `wal_autocheckpoint` is 0 and the thread runs a PASSIVE checkpoint every `intervalMs` with a
 * connection of its own; the writer still resets the WAL to its start once everything was copied, as before.
 *
 * Started by {@link start} (the store's first write: a command that writes nothing starts no thread). A thread that
 * fails (cannot open the file, or dies) puts SQLite's own checkpoints back on the writing connection and is told to
 * `onFailure` once; nothing is lost either way, checkpoints only move pages from the WAL into the file. {@link close}
 * ends the thread (the connection's close still folds the WAL back into the file).
 */
export class Checkpointer {
  private worker: Worker | undefined = undefined
  private failed = false
  private closed = false
  private rounds = 0

  /**
   * `db`: the writing connection (a file in WAL mode); `onFailure`: told once when the thread fails; `intervalMs`:
   * how often the thread checkpoints.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly onFailure: (error: Error) => void,
    private readonly intervalMs: number = defaultCheckpointIntervalMs
  ) {}

  /** Checkpoints the thread has run so far (for tests). */
  get checkpoints(): number {
    return this.rounds
  }

  /** Whether the thread failed (SQLite's own checkpoints are back on the connection). */
  get failure(): boolean {
    return this.failed
  }

  /** Starts the thread unless started, failed or closed: cheap to call on every write. */
  start(): void {
    if (this.worker !== undefined || this.failed || this.closed) return
    const driver = createRequire(import.meta.url).resolve("better-sqlite3")
    const worker = new Worker(threadSource, {
      eval: true,
      workerData: { driver, filename: this.db.name, intervalMs: this.intervalMs }
    })
    this.worker = worker
    // The thread never keeps the process alive on its own.
    worker.unref()
    // SQLite's checkpoints come off the writing connection only once the thread has opened the file.
    worker.on("message", (message: string) => {
      if (message === "ready") {
        if (!this.failed && !this.closed && this.db.open) this.db.pragma("wal_autocheckpoint = 0")
      } else this.rounds++
    })
    worker.on("error", (error) => this.fail(error))
    worker.on("exit", (code) => this.fail(new Error(`the SQLite checkpointer thread exited with code ${code}`)))
  }

  private fail(error: Error): void {
    if (this.closed || this.failed) return
    this.failed = true
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${sqliteAutoCheckpoint}`)
    this.onFailure(error)
  }

  /** Ends the thread. Idempotent. */
  close(): Promise<void> {
    this.closed = true
    const worker = this.worker
    this.worker = undefined
    return worker === undefined ? Promise.resolve() : worker.terminate().then(() => undefined)
  }
}
