import { NetworkError } from "./Errors.js"
import { sleep } from "./internal/backoff.js"
import { SseParser } from "./internal/sse.js"
import { errorOf, redactUrl } from "./internal/transport.js"

/**
 * One event of a followed stream (docs/api.md section 10):
 * - `entry`: a stored entry (`ts` in UNIX seconds, microsecond precision); a timestamped push that replaced an entry
 *   comes again with the same `ts`;
 * - `clear`: the stream was cleared (every earlier entry is gone).
 * `id` is the event id exactly as the server wrote it (for an entry, its `ts` as a read prints it); give it back as
 * `lastEventId` to resume after it.
 */
export type FollowEvent<P> =
  | { readonly type: "entry"; readonly id: string; readonly ts: number; readonly point: P }
  | { readonly type: "clear"; readonly id: string }

/** Where `follow` starts, and how it reconnects. */
export interface FollowOptions {
  /**
   * Start after this time (UNIX seconds): first every stored entry with a greater `ts`, ascending, then the new ones.
   * `0` replays the whole stream. Without `since` or `lastEventId`: the latest entry (if any), then the new ones; a
   * connection that drops before its first event reconnects the same way, from the latest entry (never from the
   * start of the stream), so of the entries stored while it reconnected only the latest arrives. Once an event has
   * arrived, every reconnection resumes after it (`Last-Event-ID`) and misses nothing.
   */
  readonly since?: number
  /** Resume after this event id (the `id` of an event received earlier); wins over `since`. */
  readonly lastEventId?: string
  /** Aborting it ends the iteration: the pending `next()` rejects with the signal's reason. */
  readonly signal?: AbortSignal
  /**
   * The base of the reconnection backoff, in milliseconds. Default: what the server's `retry:` line says (2,000),
   * else 2,000. Consecutive failed attempts double it up to `maxReconnectDelayMs`; each wait is random in
   * `[0, that]` (full jitter).
   */
  readonly reconnectDelayMs?: number
  /** The largest reconnection wait, in milliseconds (30,000). */
  readonly maxReconnectDelayMs?: number
  /**
   * Consecutive connection attempts that fail (no answer, or a 429/502/503/504) before the iteration throws a
   * `NetworkError` or the last `DashstreamError` (default 10). A connection that delivers an event resets the count.
   */
  readonly maxAttempts?: number
  /**
   * A connection silent for this long (no event, no `: ping` comment) is taken as dead and reopened (45,000 ms; the
   * server pings every 15 s).
   */
  readonly idleTimeoutMs?: number
}

/** What `Follow` needs from the client. */
export interface FollowTarget {
  readonly fetch: typeof globalThis.fetch
  /** The stream's events URL, without query. */
  readonly url: string
}

/**
 * A live subscription to one stream: an async iterator of {@link FollowEvent}s over Server-Sent Events
 * (`GET /api/v2/<KEY>/datastream/<STREAM>/events`, docs/api.md section 10).
 *
 * When the connection drops (or the server ends it, e.g. on shutdown), it reconnects with backoff and resumes with
 * `Last-Event-ID` = the last id received, so no entry is missed or repeated (a resume from before a clear gets the
 * `clear` event first); before any event it starts again where it first started (see `FollowOptions.since`). The iteration ends when the widget is deleted (`event: deleted`), or when `return()` /
 * `close()` is called, which closes the connection at once, also while a `next()` is pending. It throws a
 * `DashstreamError` for 403 `forbidden`, 404 `stream_not_found` and 400 `invalid_since` (decided before the stream
 * starts), and a `NetworkError` after `maxAttempts` failed connection attempts in a row.
 */
export class Follow<P> implements AsyncIterableIterator<FollowEvent<P>> {
  private readonly stop = new AbortController()
  private readonly generator: AsyncGenerator<FollowEvent<P>, void, undefined>
  private last: string | undefined

  constructor(
    private readonly target: FollowTarget,
    private readonly options: FollowOptions = {}
  ) {
    this.last = options.lastEventId
    this.generator = this.run()
  }

  /** The id of the last event received (or the `lastEventId` it started from): where a new `follow` would resume. */
  get lastEventId(): string | undefined {
    return this.last
  }

  /** The next event; `done` once the widget was deleted or the follow was closed. */
  next(): Promise<IteratorResult<FollowEvent<P>, void>> {
    return this.generator.next()
  }

  /** Closes the connection and ends the iteration (what `break` in a `for await` loop calls). */
  async return(): Promise<IteratorResult<FollowEvent<P>, void>> {
    this.stop.abort()
    await this.generator.return(undefined)
    return { done: true, value: undefined }
  }

  /** The same as {@link return}. */
  async close(): Promise<void> {
    await this.return()
  }

  [Symbol.asyncIterator](): this {
    return this
  }

  private async *run(): AsyncGenerator<FollowEvent<P>, void, undefined> {
    const { signal } = this.options
    const maxAttempts = this.options.maxAttempts ?? 10
    const maxDelay = this.options.maxReconnectDelayMs ?? 30_000
    const idleMs = this.options.idleTimeoutMs ?? 45_000
    const since = this.options.since
    let serverRetry: number | undefined
    let failures = 0
    const onUserAbort = () => this.stop.abort()
    signal?.addEventListener("abort", onUserAbort, { once: true })
    const stopped = () => {
      if (signal?.aborted) throw signal.reason
      return this.stop.signal.aborted
    }
    const backoff = async (): Promise<void> => {
      const base = this.options.reconnectDelayMs ?? serverRetry ?? 2_000
      const cap = Math.min(maxDelay, base * 2 ** Math.max(0, failures - 1))
      await sleep(Math.random() * cap, this.stop.signal).catch(() => {})
    }
    try {
      for (;;) {
        if (stopped()) return
        const connection = new AbortController()
        const onStop = () => connection.abort()
        this.stop.signal.addEventListener("abort", onStop, { once: true })
        let idle: ReturnType<typeof setTimeout> | undefined
        const touch = () => {
          clearTimeout(idle)
          idle = setTimeout(() => connection.abort(new Error(`no data for ${idleMs} ms`)), idleMs)
        }
        try {
          const query = this.last === undefined && since !== undefined ? `?since=${formatSeconds(since)}` : ""
          const headers: Record<string, string> = { accept: "text/event-stream" }
          if (this.last !== undefined) headers["last-event-id"] = this.last
          let response: Response
          touch()
          try {
            response = await this.target.fetch(this.target.url + query, {
              headers,
              signal: connection.signal
            })
          } catch (cause) {
            if (stopped()) return
            failures++
            if (failures >= maxAttempts) {
              throw new NetworkError(
                `could not open the event stream ${redactUrl(this.target.url)} after ${failures} attempts`,
                failures,
                { cause }
              )
            }
            await backoff()
            continue
          }
          if (!response.ok) {
            const error = errorOf(response.status, await response.text().catch(() => ""), response.headers)
            const transient = [429, 502, 503, 504].includes(response.status)
            failures++
            if (!transient || failures >= maxAttempts) throw error
            const after = (error.retryAfter ?? 0) * 1000
            if (after > 0) await sleep(after, this.stop.signal).catch(() => {})
            else await backoff()
            continue
          }
          if (response.body === null) throw new Error("the event stream answered without a body")
          const reader = response.body.getReader()
          const decoder = new TextDecoder()
          const parser = new SseParser()
          try {
            for (;;) {
              const { done, value } = await reader.read()
              if (done) break
              touch()
              for (const event of parser.feed(decoder.decode(value, { stream: true }))) {
                if (event.event === "deleted") return
                if (event.event === "entry") {
                  const data = parseEntry<P>(event.data)
                  const id = event.id ?? String(data.ts)
                  this.last = id
                  failures = 0
                  yield { type: "entry", id, ts: data.ts, point: data.point }
                } else if (event.event === "clear" && event.id !== undefined) {
                  this.last = event.id
                  failures = 0
                  yield { type: "clear", id: event.id }
                }
              }
            }
          } catch (cause) {
            if (stopped()) return
            if (cause instanceof MalformedEvent) throw cause
            // A dropped connection (reset, idle timeout): reconnect below.
          } finally {
            if (parser.retry !== undefined) serverRetry = parser.retry
            reader.cancel().catch(() => {})
          }
          if (stopped()) return
          // The connection was open: wait one base delay (jittered) before reopening it.
          failures = 0
          await backoff()
        } finally {
          clearTimeout(idle)
          connection.abort()
          this.stop.signal.removeEventListener("abort", onStop)
        }
      }
    } finally {
      signal?.removeEventListener("abort", onUserAbort)
    }
  }
}

/** An `entry` event whose data is not `{ts, point}`: reconnecting would not help, so the iteration throws it. */
export class MalformedEvent extends Error {
  override readonly name = "MalformedEvent"
}

const parseEntry = <P>(data: string): { ts: number; point: P } => {
  try {
    const parsed = JSON.parse(data) as { ts?: unknown; point?: P }
    if (typeof parsed.ts === "number" && "point" in parsed) return parsed as { ts: number; point: P }
  } catch {
    // reported below
  }
  throw new MalformedEvent(`an entry event carried ${JSON.stringify(data.slice(0, 200))}, not {"ts", "point"}`)
}

/** UNIX seconds as query text, exact to the microsecond and never in exponent notation. */
export const formatSeconds = (seconds: number): string =>
  Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(6).replace(/\.?0+$/, "")
