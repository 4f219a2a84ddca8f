/**
 * Sends a batch of requests as one query and answers each of them; calls `settled` once, after the answers, whether the
 * query succeeded or failed. Must not throw: a failed query answers the requests of `batch` alone (with the failure).
 */
export type SendBatch<R> = (batch: ReadonlyArray<R>, settled: () => void) => void

/** How a {@link Batcher} groups requests. */
export interface BatcherOptions {
  /** At most this many requests in one batch; the rest form the next batches (a whole number, at least 1). */
  readonly maxBatch: number
  /**
   * At most this many batches in flight (sent, not yet settled): `1` makes requests asked while a query runs wait and
   * go together in the next one; `Infinity` sends every batch at the end of the turn its requests were asked in.
   */
  readonly maxInFlight: number
}

/**
 * Requests batched per turn of the event loop: the requests asked in one turn (and, while `maxInFlight` batches are in
 * flight, until one of them settles) go together to `send`, in the order they were asked, at most `maxBatch` a batch.
 * A request asked while fewer than `maxInFlight` batches are in flight is sent at the end of the turn (`setImmediate`)
 * with the others asked in that turn; once a batch settles, the waiting requests are sent at once. Under load most of
 * the cost of a read on PostgreSQL is sending its query (a socket write that wakes the server's backend), so one query
 * for many requests saves most of it. Used by the latest-entry reads, the change feed's reads and the widget lookups.
 */
export class Batcher<R> {
  private queue: Array<R> = []
  private inFlight = 0
  private scheduled: NodeJS.Immediate | undefined = undefined
  private batchCount = 0
  private readonly flushNow = (): void => this.flush()
  private readonly settle = (): void => {
    this.inFlight--
    // A pending `setImmediate` sends the waiting requests itself, with those still to be asked in its turn.
    if (this.scheduled === undefined) this.flush()
  }

  constructor(
    private readonly send: SendBatch<R>,
    private readonly options: BatcherOptions
  ) {}

  /** Batches sent so far (requests / batches is the mean batch). */
  get batches(): number {
    return this.batchCount
  }

  /** Queues `request` for the next batch; its answer comes through `send` (see the class). */
  add(request: R): void {
    this.queue.push(request)
    if (this.inFlight < this.options.maxInFlight && this.scheduled === undefined) {
      this.scheduled = setImmediate(this.flushNow)
    }
  }

  private flush(): void {
    this.scheduled = undefined
    const max = this.options.maxBatch
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.queue.length <= max ? this.queue : this.queue.slice(0, max)
      this.queue = this.queue.length <= max ? [] : this.queue.slice(max)
      this.inFlight++
      this.batchCount++
      this.send(batch, this.settle)
    }
  }
}
