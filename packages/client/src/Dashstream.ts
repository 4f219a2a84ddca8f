import { DashstreamError } from "./Errors.js"
import { Follow, type FollowOptions, formatSeconds } from "./Follow.js"
import { type BatchItem, Batcher } from "./internal/batcher.js"
import type { RetryPolicy } from "./internal/backoff.js"
import { isRetrySafe, type Part } from "./internal/retrySafe.js"
import { send, type TransportConfig } from "./internal/transport.js"
import type { Entry, PushPointOf, StoredPointOf } from "./Point.js"
import { clearCommandTypes, type WidgetType, type Widgets } from "./WidgetType.js"

/** How calls are retried. Every field is optional in {@link DashstreamOptions.retry}. */
export interface RetryOptions {
  /** Retries after the first attempt (4). `0` turns retrying off. */
  readonly retries: number
  /** The first retry waits a random time in `[0, baseDelayMs]`; the bound doubles with each retry (200 ms). */
  readonly baseDelayMs: number
  /** The largest bound of a retry's wait (10,000 ms). */
  readonly maxDelayMs: number
  /**
   * A 429 or 503 is retried after its `Retry-After` (at least); when that is longer than this, the error is thrown
   * instead of waiting (60,000 ms).
   */
  readonly maxRetryAfterMs: number
}

/** Batching of pushes into multi-stream requests (see {@link Dashstream.push}). */
export interface BatchOptions {
  /** How long the first push of a batch waits for others, in milliseconds (20). */
  readonly maxDelayMs?: number
  /** Pushes per request, at most the server's limit of 256 (256). */
  readonly maxStreams?: number
  /** Serialised bytes of points per request, under the server's 1 MiB body limit (512 KiB). */
  readonly maxBytes?: number
}

/** The options of a {@link Dashstream} client. */
export interface DashstreamOptions<W extends Widgets> {
  /** The server's address, e.g. `http://127.0.0.1:8080` (a path prefix is kept: `https://host/dashstream`). */
  readonly baseUrl: string | URL
  /** The account's access key (it goes in push bodies and in read paths). */
  readonly accessKey: string
  /**
   * The streams and their widget types, e.g. `{ revenue: "number", visits: "sparkline" }`: types every call's points
   * and lets {@link Dashstream.clear} pick the request without a round trip. Without it any stream name is accepted
   * with the points of every widget type.
   */
  readonly widgets?: W
  /** Aborts an attempt without an answer after this many milliseconds (30,000); an ambiguous failure for a push. */
  readonly timeoutMs?: number
  /** Retry settings, or `false` for none. */
  readonly retry?: Partial<RetryOptions> | false
  /** Gather `push` and `clear` calls into multi-stream requests; off when absent. */
  readonly batch?: BatchOptions
  /** The `fetch` to use (default: the global one). */
  readonly fetch?: typeof globalThis.fetch
}

/** Options of a single call. */
export interface CallOptions {
  /** Aborts the call; it rejects with the signal's reason. Not used for batched pushes. */
  readonly signal?: AbortSignal
}

/** Options of {@link Dashstream.read}. */
export interface ReadOptions extends CallOptions {
  /** Entries with `ts` strictly greater than this (UNIX seconds); `0`, the default, reads every entry. */
  readonly since?: number
  /** Entries per request, 1 to 100,000 (1,000). */
  readonly limit?: number
}

/**
 * Options of {@link Dashstream.range} (README, "Range reads"): a time window in UNIX seconds, whole or reduced to
 * `points` buckets. Every field is optional; the server checks them and answers 400 `invalid_request` with `path`
 * naming the one at fault.
 */
export interface RangeOptions extends CallOptions {
  /** The window's inclusive lower bound, UNIX seconds (none: from the oldest entry). Not together with `since`. */
  readonly from?: number
  /** The window's inclusive upper bound, UNIX seconds (none: up to the newest entry). */
  readonly to?: number
  /**
   * Reduces the window to this many buckets (2 to 10,000), each keeping what decimation keeps of a bucket (first,
   * last, lowest and highest for numeric widgets, the last for others): at most 4 entries a bucket, one request.
   */
  readonly points?: number
  /** The exclusive form of `from` (entries with `ts` strictly greater), to resume after the last `ts` read. */
  readonly since?: number
  /** Without `points`: entries per request, 1 to 100,000 (1,000). Not together with `points`. */
  readonly limit?: number
}

/** The names of the streams of `W`. */
export type StreamOf<W extends Widgets> = keyof W & string

/** One stream's part of {@link Dashstream.pushMany}: a point for it, or the clear command. */
export type StreamPush<W extends Widgets> = {
  readonly [S in StreamOf<W>]:
    | { readonly streamName: S; readonly point: PushPointOf<W[S]> }
    | { readonly streamName: S; readonly command: "clear" }
}[StreamOf<W>]

const defaultRetry: RetryOptions = { retries: 4, baseDelayMs: 200, maxDelayMs: 10_000, maxRetryAfterMs: 60_000 }

/**
 * A client of one Dashstream account (docs/api.md sections 3-6 and 10), for Node >= 20 and browsers: `fetch` only, no
 * dependency. Times are UNIX seconds as numbers (microsecond precision), never milliseconds.
 *
 * ```ts
 * const ds = new Dashstream({ baseUrl: "http://127.0.0.1:8080", accessKey })
 * await ds.push("revenue", { number: 42, prefix: "$" })
 * for await (const { ts, point } of ds.read("revenue", { since: 0 })) console.log(ts, point)
 * ```
 *
 * Failures (see `Errors.ts`): `DashstreamError` for an error answer (`code` after docs/api.md section 5),
 * `NetworkError` when no answer came and retrying did not help, `OutcomeUnknownError` for a push that may have been
 * stored and is not safe to repeat. Retries use exponential backoff with full jitter and honour `Retry-After` on 429
 * and 503; a push is repeated after an ambiguous failure (timeout, connection cut after sending) only when repeating
 * it cannot store it twice (a clear, or a point with `timestamp` that is not a delta).
 */
export class Dashstream<const W extends Widgets = Widgets> {
  private readonly base: string
  private readonly accessKey: string
  private readonly widgets: W | undefined
  private readonly transport: TransportConfig
  private readonly batcher: Batcher | undefined
  private closed = false

  constructor(options: DashstreamOptions<W>) {
    this.base = String(options.baseUrl).replace(/\/+$/, "")
    this.accessKey = options.accessKey
    this.widgets = options.widgets
    const retry: RetryPolicy =
      options.retry === false ? { ...defaultRetry, retries: 0 } : { ...defaultRetry, ...options.retry }
    const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis)
    this.transport = { fetch: fetchImpl, timeoutMs: options.timeoutMs ?? 30_000, retry }
    const batch = options.batch
    this.batcher =
      batch === undefined
        ? undefined
        : new Batcher((items) => this.sendItems(items), {
            maxDelayMs: batch.maxDelayMs ?? 20,
            maxStreams: Math.max(1, Math.min(256, batch.maxStreams ?? 256)),
            maxBytes: batch.maxBytes ?? 512 * 1024
          })
  }

  /**
   * Pushes one point to a stream (`POST /customSend`, docs/api.md section 3) and resolves once the server answered 200,
   * i.e. the point is durably stored. With `batch`, the push joins the next multi-stream request and resolves when
   * that request stored it; its errors are still its own.
   *
   * `point` is what the stream's widget type accepts: `42`, `{ number: 42, prefix: "$", timestamp }`, `{ delta: 1 }`,
   * `{ leaderboardItem: { name, value } }`, `[{ number, timestamp }, ...]`, ... (`PushPoints`). To empty a stream,
   * use {@link clear}.
   * Throws `DashstreamError` (400 `invalid_point` with `path`, 403, 404 `stream_not_found`, ...), `NetworkError`,
   * or `OutcomeUnknownError`.
   */
  push<S extends StreamOf<W>>(stream: S, point: PushPointOf<W[S]>, options?: CallOptions): Promise<void> {
    return this.pushPart(stream, { point }, options)
  }

  /**
   * Pushes to several streams in ONE request (`{accessKey, streams: [...]}`, docs/api.md section 5): validated whole and
   * stored in one transaction, so either every part is stored or none. A stream may appear more than once; its parts
   * apply in order. Validation errors carry `path` = `streams[i]...`. Never batched. Retried after an ambiguous
   * failure only if every part is safe to repeat.
   */
  async pushMany(streams: ReadonlyArray<StreamPush<W>>, options?: CallOptions): Promise<void> {
    this.assertOpen()
    const parts = streams as ReadonlyArray<{ readonly streamName: string } & Part>
    await send(this.transport, {
      method: "POST",
      url: `${this.base}/customSend`,
      body: JSON.stringify({ accessKey: this.accessKey, streams: parts }),
      retrySafe: parts.every(isRetrySafe),
      streams: [...new Set(parts.map((p) => p.streamName))],
      signal: options?.signal
    })
  }

  /**
   * Deletes every stored entry of a stream (docs/api.md section 4). Sparkline, line-graph, the maps, text-feed and
   * xy-graph take `{"command": "clear"}`; every other type is cleared by an empty point (`null`). The widget type
   * picks the request: from `type`, else from the `widgets` option, else the command is tried and, on 400
   * `unsupported_command`, the empty point is pushed. Safe to retry.
   */
  async clear<S extends StreamOf<W>>(stream: S, type?: W[S], options?: CallOptions): Promise<void> {
    const known: WidgetType | undefined = type ?? this.widgets?.[stream]
    if (known !== undefined) {
      return this.pushPart(stream, clearCommandTypes.includes(known) ? { command: "clear" } : { point: null }, options)
    }
    try {
      await this.pushPart(stream, { command: "clear" }, options)
    } catch (error) {
      if (!(error instanceof DashstreamError && error.code === "unsupported_command")) throw error
      await this.pushPart(stream, { point: null }, options)
    }
  }

  /**
   * Reads a stream's entries in ascending `ts` (`GET /api/v2/<KEY>/datastream/<STREAM>?since=&limit=`, docs/api.md
   * section 6), one page of `limit` entries per request, each page starting after the last `ts` of the previous one,
   * so nothing is missed or repeated. Entries pushed while it pages are included. Throws `DashstreamError` (403,
   * 404 `stream_not_found`, 400 `invalid_since`) or `NetworkError`.
   */
  async *read<S extends StreamOf<W>>(
    stream: S,
    options: ReadOptions = {}
  ): AsyncGenerator<Entry<StoredPointOf<W[S]>>, void, undefined> {
    const limit = options.limit ?? 1000
    let since = options.since ?? 0
    for (;;) {
      const page = await this.get<StoredPointOf<W[S]>>(
        stream,
        `?since=${formatSeconds(since)}&limit=${limit}`,
        options.signal
      )
      yield* page
      if (page.length < limit) return
      since = page[page.length - 1]!.ts
    }
  }

  /**
   * Reads a time window of a stream (`GET /api/v2/<KEY>/datastream/<STREAM>?from=&to=&points=`, README "Range
   * reads"): its stored entries with `from <= ts <= to` (or `ts > since`), ascending, typed as {@link read}'s.
   * Without `points`, one page of `limit` entries per request, each page starting after the last `ts` of the previous
   * one (`since`), up to `to`; with `points`, one request whose answer holds at most 4 entries a bucket, stored
   * entries unchanged. With no bound and no `points`, the whole stream (`from=0`). Bad options are the server's to
   * judge: `DashstreamError` 400 `invalid_request` with `path` `"from"`, `"to"`, `"points"`, `"since"` or `"limit"`
   * (403, 404 `stream_not_found` as for {@link read}), or `NetworkError`.
   *
   * ```ts
   * const now = Date.now() / 1000
   * for await (const { ts, point } of ds.range("revenue", { from: now - 30 * 86400, to: now, points: 1000 })) draw(ts, point)
   * ```
   */
  async *range<S extends StreamOf<W>>(
    stream: S,
    options: RangeOptions = {}
  ): AsyncGenerator<Entry<StoredPointOf<W[S]>>, void, undefined> {
    const { from, to, points, since, limit } = options
    const unbounded = from === undefined && to === undefined && points === undefined && since === undefined
    const query = (params: Record<string, number | undefined>) =>
      "?" +
      Object.entries(params)
        .flatMap(([name, value]) => (value === undefined ? [] : [`${name}=${formatSeconds(value)}`]))
        .join("&")
    if (points !== undefined) {
      yield* await this.get<StoredPointOf<W[S]>>(stream, query({ from, since, to, points, limit }), options.signal)
      return
    }
    const pageSize = limit ?? 1000
    let page = await this.get<StoredPointOf<W[S]>>(
      stream,
      query({ from: unbounded ? 0 : from, since, to, limit: pageSize }),
      options.signal
    )
    for (;;) {
      yield* page
      if (page.length < pageSize) return
      const after = page[page.length - 1]!.ts
      page = await this.get<StoredPointOf<W[S]>>(stream, query({ since: after, to, limit: pageSize }), options.signal)
    }
  }

  /** The most recent entry of a stream, or `undefined` when it is empty (a read without `since`, docs/api.md section 6). */
  async latest<S extends StreamOf<W>>(
    stream: S,
    options?: CallOptions
  ): Promise<Entry<StoredPointOf<W[S]>> | undefined> {
    const data = await this.get<StoredPointOf<W[S]>>(stream, "", options?.signal)
    return data[data.length - 1]
  }

  /**
   * Follows a stream live over Server-Sent Events (docs/api.md section 10): an async iterator of `entry` and `clear`
   * events that reconnects by itself and resumes with `Last-Event-ID`, ends when the widget is deleted, and closes
   * its connection on `break` (see {@link Follow}). Nothing is sent before the first `next()`.
   *
   * ```ts
   * for await (const event of ds.follow("revenue", { since: 0 })) {
   *   if (event.type === "entry") console.log(event.ts, event.point)
   * }
   * ```
   */
  follow<S extends StreamOf<W>>(stream: S, options?: FollowOptions): Follow<StoredPointOf<W[S]>> {
    return new Follow({ fetch: this.transport.fetch, url: `${this.streamUrl(stream)}/events` }, options)
  }

  /** Sends the pushes waiting in the batch now and resolves once they are answered (nothing to do without `batch`). */
  async flush(): Promise<void> {
    await this.batcher?.flush()
  }

  /** Flushes the batch and refuses further pushes. Follows and reads already started are not affected. */
  async close(): Promise<void> {
    this.closed = true
    await this.flush()
  }

  private assertOpen(): void {
    if (this.closed) throw new Error("this Dashstream client is closed")
  }

  private streamUrl(stream: string): string {
    return `${this.base}/api/v2/${encodeURIComponent(this.accessKey)}/datastream/${encodeURIComponent(stream)}`
  }

  private async get<P>(stream: string, query: string, signal: AbortSignal | undefined): Promise<Array<Entry<P>>> {
    const text = await send(this.transport, {
      method: "GET",
      url: this.streamUrl(stream) + query,
      retrySafe: true,
      streams: [stream],
      signal
    })
    return (JSON.parse(text) as { data: Array<Entry<P>> }).data
  }

  private async pushPart(stream: string, part: Part, options: CallOptions | undefined): Promise<void> {
    this.assertOpen()
    if (this.batcher !== undefined) {
      return this.batcher.add({
        streamName: stream,
        json: JSON.stringify({ streamName: stream, ...part }),
        retrySafe: isRetrySafe(part)
      })
    }
    await send(this.transport, {
      method: "POST",
      url: `${this.base}/customSend`,
      body: JSON.stringify({ accessKey: this.accessKey, streamName: stream, ...part }),
      retrySafe: isRetrySafe(part),
      streams: [stream],
      signal: options?.signal
    })
  }

  private async sendItems(items: ReadonlyArray<BatchItem>): Promise<void> {
    const key = JSON.stringify(this.accessKey)
    const body =
      items.length === 1
        ? `{"accessKey":${key},${items[0]!.json.slice(1)}`
        : `{"accessKey":${key},"streams":[${items.map((i) => i.json).join(",")}]}`
    await send(this.transport, {
      method: "POST",
      url: `${this.base}/customSend`,
      body,
      retrySafe: items.every((i) => i.retrySafe),
      streams: [...new Set(items.map((i) => i.streamName))],
      signal: undefined
    })
  }
}
