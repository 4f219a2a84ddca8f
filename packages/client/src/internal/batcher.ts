import { DashstreamError, OutcomeUnknownError } from "../Errors.js"

/**
 * Gathers pushes into multi-stream requests (`{accessKey, streams: [...]}`, docs/api.md section 5). One request is in
 * flight at a time, so pushes to a stream are stored in the order they were made; pushes made while a request is in
 * flight go out in the next one as soon as it returns.
 *
 * A multi-stream push is all or nothing, so one push must not fail its neighbours: when the server rejects the
 * request for a reason it attributes to one stream (`path` = `streams[i]...`), that push fails alone and the rest are
 * sent again (nothing was stored); an unattributed 400/404/413 sends each push on its own. After an ambiguous failure
 * the pushes that are not safe to repeat fail with `OutcomeUnknownError` and the others are sent again.
 */

/** One queued push. `json` is its `{"streamName", "point"|"command"}` object, already serialised. */
export interface BatchItem {
  readonly streamName: string
  readonly json: string
  readonly retrySafe: boolean
  readonly resolve: () => void
  readonly reject: (error: unknown) => void
}

/** Batching bounds. */
export interface BatchLimits {
  readonly maxDelayMs: number
  readonly maxStreams: number
  readonly maxBytes: number
}

export class Batcher {
  private pending: Array<BatchItem> = []
  private bytes = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private draining: Promise<void> | undefined

  constructor(
    /** Sends the items as one request (a single-stream push for one item); throws what the transport throws. */
    private readonly send: (items: ReadonlyArray<BatchItem>) => Promise<void>,
    private readonly limits: BatchLimits
  ) {}

  /** Queues a push; resolves once it is stored, rejects with its own error. */
  add(item: Omit<BatchItem, "resolve" | "reject">): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.pending.push({ ...item, resolve, reject })
      this.bytes += item.json.length
      if (this.pending.length >= this.limits.maxStreams || this.bytes >= this.limits.maxBytes) this.kick()
      else if (this.timer === undefined && this.draining === undefined) {
        this.timer = setTimeout(() => this.kick(), this.limits.maxDelayMs)
      }
    })
  }

  /** Sends everything queued and resolves once every queued push is answered. */
  async flush(): Promise<void> {
    while (this.pending.length > 0 || this.draining !== undefined) {
      this.kick()
      await this.draining
    }
  }

  private kick(): void {
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.draining !== undefined) return
    this.draining = this.drain().finally(() => {
      this.draining = undefined
      // Pushes queued after the loop's last check wait for the timer like any first push.
      if (this.pending.length > 0 && this.timer === undefined) {
        this.timer = setTimeout(() => this.kick(), this.limits.maxDelayMs)
      }
    })
  }

  private async drain(): Promise<void> {
    while (this.pending.length > 0) {
      let size = 0
      let n = 0
      while (
        n < this.pending.length &&
        n < this.limits.maxStreams &&
        (n === 0 || size + this.pending[n]!.json.length <= this.limits.maxBytes)
      ) {
        size += this.pending[n]!.json.length
        n++
      }
      const chunk = this.pending.splice(0, n)
      this.bytes -= size
      await this.deliver(chunk)
    }
  }

  private async deliver(items: ReadonlyArray<BatchItem>): Promise<void> {
    if (items.length === 0) return
    try {
      await this.send(items)
    } catch (error) {
      if (items.length > 1 && error instanceof OutcomeUnknownError) {
        for (const item of items) {
          if (!item.retrySafe) {
            item.reject(
              new OutcomeUnknownError(
                `the push to ${JSON.stringify(item.streamName)} may or may not have been stored (it was part of a ` +
                  `multi-stream push that failed ambiguously); it was not retried because a repeat could store it twice`,
                [item.streamName],
                { cause: error.cause }
              )
            )
          }
        }
        return this.deliver(items.filter((item) => item.retrySafe))
      }
      if (items.length > 1 && error instanceof DashstreamError && [400, 404, 413].includes(error.status)) {
        const match = error.path === undefined ? null : /^streams\[(\d+)\]\.?(.*)$/.exec(error.path)
        const index = match === null ? -1 : Number(match[1])
        if (match !== null && index < items.length) {
          const path = match[2] === "" ? undefined : match[2]
          items[index]!.reject(new DashstreamError(error.status, error.code, error.message, path, error.retryAfter))
          return this.deliver(items.filter((_, i) => i !== index))
        }
        for (const item of items) await this.deliver([item])
        return
      }
      for (const item of items) item.reject(error)
      return
    }
    for (const item of items) item.resolve()
  }
}
