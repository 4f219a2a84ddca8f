import { Worker } from "node:worker_threads"
import { type Micros, type RenderedPage, renderedTs, type StorageFailure, StorageUnavailable } from "@dashstream/core"
import { Effect } from "effect"
import { storageFailure } from "./errors.js"
import type { PageReply, PageRequest, ThreadData } from "./pageReaderThread.js"
import { Sql } from "./statements.js"

// The thread's module, beside this one in the sources, in dist/ and in the command's bundle.
const threadFile = new URL("./pageReaderThread.js", import.meta.url)

/**
 * Reads the pages of streamed reads (`StreamStore.readPage`) on a worker thread with its own read-only connection
 * to the database file (a large read must not hold the server). The query and the rendering of
 * a page (~1,000 entries, about 40 KB of JSON) run there; the event loop only sends the request and receives one
 * string, so pushes go on while 8 clients read a large stream. WAL mode lets the thread read while the event loop
 * writes; each page is its own read transaction, so it sees every write acknowledged before it started, as a page
 * read on the event loop's connection does.
 *
 * Pages are answered in the order asked. A thread that fails (it could not open the file, or it died) fails the
 * pages waiting on it with `StorageUnavailable`, and every later page is read with `fallback` on the event loop
 * (logged once), so reads go on. `close` ends the thread; pages asked after it fail with `StorageUnavailable`.
 */
export class PageReader {
  private worker: Worker | undefined = undefined
  private readonly waiting = new Map<number, (result: Effect.Effect<RenderedPage, StorageFailure>) => void>()
  private nextId = 0
  private failed: Error | undefined = undefined
  private logged = false
  private closed = false

  /**
   * `filename`: the database file (not `:memory:`); `busyTimeoutMillis`: the connection's busy timeout;
   * `fallback`: the page read on the event loop's connection, used once the thread has failed. The thread starts with the first page asked
   * (a command that reads no page, `accounts create` say, starts none).
   */
  constructor(
    private readonly filename: string,
    private readonly busyTimeoutMillis: number,
    private readonly fallback: (
      stream: number,
      after: Micros,
      limit: number
    ) => Effect.Effect<RenderedPage, StorageFailure>
  ) {}

  private start(): Worker {
    const workerData: ThreadData = {
      filename: this.filename,
      busyTimeoutMillis: this.busyTimeoutMillis,
      sql: Sql.blocksFrom
    }
    const worker = new Worker(threadFile, { workerData })
    // A reader thread never keeps the process alive on its own: pages in flight belong to requests, which do.
    worker.unref()
    worker.on("message", (reply: PageReply) => {
      const done = this.waiting.get(reply.id)
      if (done === undefined) return
      this.waiting.delete(reply.id)
      if (reply.error !== undefined) {
        done(Effect.fail(storageFailure(Object.assign(new Error(reply.error.message), { code: reply.error.code }))))
      } else {
        const last = reply.last ?? null
        done(
          Effect.succeed({ text: reply.text!, count: reply.count!, lastTs: last === null ? null : renderedTs(last) })
        )
      }
    })
    worker.on("error", (error) => this.fail(error))
    worker.on("exit", (code) => this.fail(new Error(`the SQLite page reader thread exited with code ${code}`)))
    return worker
  }

  /** Whether the thread has failed (pages are then read on the event loop). */
  get failure(): Error | undefined {
    return this.failed
  }

  /** One page: entries of `stream` with `ts` > `after` (microseconds), at most `limit`, rendered for the wire. */
  readPage(stream: number, after: Micros, limit: number): Effect.Effect<RenderedPage, StorageFailure> {
    return Effect.suspend(() => {
      if (this.closed) return Effect.fail(new StorageUnavailable({ cause: new Error("the SQLite store is closed") }))
      if (this.failed !== undefined) return this.onEventLoop(this.failed, stream, after, limit)
      const worker = (this.worker ??= this.start())
      return Effect.async<RenderedPage, StorageFailure>((resume) => {
        const id = this.nextId++
        this.waiting.set(id, resume)
        const request: PageRequest = { id, stream, after, limit }
        worker.postMessage(request)
        // An interrupted read (the client went away) only stops waiting; the thread answers into the void.
        return Effect.sync(() => void this.waiting.set(id, () => {}))
      })
    })
  }

  // The page read with `fallback` on the event loop, once the thread has failed; the first such read logs why.
  private onEventLoop(failure: Error, stream: number, after: Micros, limit: number) {
    const read = this.fallback(stream, after, limit)
    if (this.logged) return read
    this.logged = true
    return Effect.zipRight(
      Effect.logWarning(`streamed reads go on on the event loop: the SQLite page reader failed: ${failure.message}`),
      read
    )
  }

  /** Ends the thread; waiting pages fail with `StorageUnavailable`. */
  close(): Promise<void> {
    this.closed = true
    this.failWaiting(new Error("the SQLite store is closed"))
    return this.worker === undefined ? Promise.resolve() : this.worker.terminate().then(() => undefined)
  }

  private fail(error: Error): void {
    if (this.closed || this.failed !== undefined) return
    this.failed = error
    this.failWaiting(error)
  }

  private failWaiting(error: Error): void {
    const waiting = [...this.waiting.values()]
    this.waiting.clear()
    for (const done of waiting) done(Effect.fail(new StorageUnavailable({ cause: error })))
  }
}
