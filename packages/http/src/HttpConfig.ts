import type { Limits, NotificationSender } from "@dashstream/core"
import type { RateLimiter } from "./internal/rateLimiter.js"
import type { StreamSlots } from "./internal/streamSlots.js"
import type { Metrics } from "./Metrics.js"
import type { TrustedProxies } from "./ReverseProxy.js"

/** How the HTTP server runs (docs/api.md sections 1, 5, 7). Built by the composition root from flags and environment. */
export interface HttpConfig extends HandlerConfig {
  /** Interface to bind, e.g. `"127.0.0.1"`. */
  readonly host: string
  /** TCP port; 0 picks a free one (the real port is printed once bound). */
  readonly port: number
  /**
   * Told the server's URL (`http://HOST:PORT`, the real port) once it is bound, instead of the listening line being
   * printed (`serve --workers N`: each worker tells the primary, which prints one line for the server).
   */
  readonly onListening?: ((url: string) => void) | undefined
  /**
   * The most time, in milliseconds, to receive a whole request, headers and body (`serve --request-timeout`,
   * docs/running.md "Command line and cross-origin pages"): past it the request is answered 408 `request_timeout`
   * and its connection closed. Only the request is timed: answers that take longer (event streams, streamed reads)
   * are not cut. Absent: 30,000 (30 s).
   */
  readonly requestTimeoutMs?: number | undefined
}

/**
 * How the HTTP interface answers, wherever it is mounted (`handler`, or `layer`'s own server): admin token, limits,
 * rate limit, logging, live streams, metrics.
 */
export interface HandlerConfig {
  /**
   * The admin API's bearer token, also the key of console sessions (docs/api.md sections 7 and 14); `undefined` disables
   * the admin API and the console (their paths answer 404 `not_found`).
   */
  readonly adminToken: string | undefined
  /**
   * The console page (docs/api.md section 14), served at `GET /console` and `/console/assets/<name>` while the admin
   * API is on; without it those paths answer 404 (the admin API and sign-in still work).
   */
  readonly console?: ConsolePage | undefined
  /**
   * How a receiver's test notification is sent (`POST /admin/accounts/<id>/receivers/<receiverId>/test`, docs/api.md
   * section 18.4): `serve` passes the sender its deliverer uses. Absent: that route answers 502
   * `receiver_unreachable` ("this server sends no notifications").
   */
  readonly notificationSender?: NotificationSender["Type"] | undefined
  /** Body size, streams per push and array elements per point (exceeding one is 413). */
  readonly limits: Limits
  /** Requests per second allowed per access key, with bursts of the same size; `undefined` turns limiting off. */
  readonly rateLimit: number | undefined
  /**
   * The limiter that enforces `rateLimit`, when it is not this process's alone (`serve --workers N`: the server's
   * buckets, held by its primary process); the default holds the buckets in memory. Ignored without `rateLimit`.
   */
  readonly rateLimiter?: RateLimiter | undefined
  /**
   * Where open event streams are counted against `live.maxStreamsPerKey`, when not in this process alone
   * (`serve --workers N`: the server's counts, held by its primary process).
   */
  readonly eventStreamSlots?: StreamSlots | undefined
  /**
   * Origins whose web pages may call the push, export read and event stream routes (`serve --cors-origin`): exact
   * origins (`https://example.com`) or `*` for any. Empty or absent: no CORS (the default). Never applies to the admin
   * API, the console or the dashboard pages.
   */
  readonly corsOrigins?: ReadonlyArray<string> | undefined
  /**
   * The path prefix every route is served under (docs/api.md section 16, `serve --base-path`): `/dashboards` serves
   * `/dashboards/customSend`, `/dashboards/d/<viewToken>`, ..., and answers 404 for every path outside it; the view
   * URLs of the admin API, the OpenAPI server URL and the console cookie's `Path` carry it. Checked by the caller with
   * `parseBasePath` (a leading slash, no trailing one). Absent or `""`: the root.
   */
  readonly basePath?: string | undefined
  /**
   * The reverse proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (docs/api.md section 16,
   * `serve --trust-proxy`, see `parseTrustProxy`): for their requests only, the client address (sign-in throttling,
   * request log) and the scheme (the console cookie's `Secure`) come from those headers. Absent: no peer is trusted.
   */
  readonly trustProxy?: TrustedProxies | undefined
  /** One log line per request (method, redacted path, status, milliseconds, client address). Off by default. */
  readonly logRequests: boolean
  /**
   * Log, at the info level, the stream names line protocol writes skipped (not widgets of the key's account), with
   * the account's id, each distinct name at most once a minute per account (docs/api.md section 13.1), so that an
   * operator sees why a series never appears. On unless `false` (`DASHSTREAM_LOG_SKIPPED=0`).
   */
  readonly logSkipped?: boolean | undefined
  /**
   * The dashboard page's CSP `frame-ancestors` (docs/api.md section 11): a source list such as
   * `'self' https://wiki.example.com`, checked by the caller (it goes into a header as it is); `'self'` when absent.
   */
  readonly frameAncestors?: string | undefined
  /** Bounds and timings of live event streams (docs/api.md section 10); the defaults when absent. */
  readonly live?: Partial<LiveOptions> | undefined
  /** Told when event streams open and close and when events are sent (for metrics); none when absent. */
  readonly eventStreams?: EventStreamObserver | undefined
  /**
   * Where requests are counted and what `GET /metrics` serves (docs/api.md section 12). Pass the instance whose
   * `writeObserver` the storage layer was given and whose `decimationPass` the daily pass reports to, so `/metrics`
   * shows them; when undefined the server makes its own (requests and process metrics only).
   */
  readonly metrics?: Metrics | undefined
}

/** Bounds and timings of live event streams (docs/api.md section 10). */
export interface LiveOptions {
  /** A `: ping` comment after this many milliseconds without a write (15,000). */
  readonly heartbeatMs: number
  /** The reconnection delay the `retry:` line gives clients, in milliseconds (2,000). */
  readonly retryMs: number
  /** A client with more than this many bytes unsent while live is disconnected (1 MiB). */
  readonly maxUnsentBytes: number
  /** Open event streams allowed per access key; one more answers 429 `rate_limited` (100). */
  readonly maxStreamsPerKey: number
}

/** Observes live event streams, for metrics. Every callback is synchronous and must not throw. */
export interface EventStreamObserver {
  /** An event stream opened (its 200 was sent). */
  readonly opened: () => void
  /** An event stream closed, for whatever reason. */
  readonly closed: () => void
  /** `events` events (entry, clear or deleted; not pings) were written. */
  readonly sent: (events: number) => void
}

/**
 * The console page (docs/api.md section 14) as the server serves it, the way it serves the dashboard page: one HTML
 * document and its content-hashed files. Provided by the console's web package; the server adds
 * `Referrer-Policy: no-referrer`, `X-Content-Type-Options: nosniff` and `Cache-Control: no-store` to the page unless
 * `headers` says otherwise.
 */
export interface ConsolePage {
  /**
   * The HTML of `GET /console`; `root` is the path from the page back to the served root, relative (`./` for
   * `/console`, `../` for `/console/`), which the page's own URLs start with so that they work under any base path or
   * proxy prefix. A throw (a bundle not built) is answered 500 and logged.
   */
  readonly html: (root: string) => string
  /** Headers of the page besides `Content-Type`: its Content-Security-Policy above all. */
  readonly headers: Readonly<Record<string, string>>
  /**
   * Every file the page loads, by URL path (`/console/assets/app.3f2a9c1b.js`), answered with
   * `Cache-Control: public, max-age=31536000, immutable` (names carry a content hash) and gzipped when the client
   * accepts it. A throw is answered 500 and logged.
   */
  readonly assets: () => ReadonlyMap<string, { readonly body: Buffer; readonly contentType: string }>
}
