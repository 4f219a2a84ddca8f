/**
 * `@dashstream/http`: the HTTP interface of Dashstream on `@effect/platform` (docs/api.md sections 1, 5, 6, 7).
 */

/**
 * The `HttpApi` definition of every route (admin included), from which the OpenAPI document and the server's route
 * table are derived; `openApiDocument()` is that document (`GET /openapi.json` with the admin API on).
 */
export { api, openApiDocument } from "./Api.js"

/**
 * What the composition root passes to {@link layer} (bind address, admin token, limits, rate limit, logging), and to
 * {@link handler} (the same without the bind address).
 */
export type { ConsolePage, HandlerConfig, HttpConfig } from "./HttpConfig.js"

/**
 * What a server whose processes share the limits passes in `HandlerConfig.rateLimiter` and `eventStreamSlots`
 * (`serve --workers N`): the per-key rate limit (docs/api.md section 5) and the bound on open event streams per key
 * (section 10), enforced per server rather than per process.
 */
export type { RateLimiter } from "./internal/rateLimiter.js"
export type { StreamSlots } from "./internal/streamSlots.js"

/**
 * `layer(config)` serves the HTTP interface on Node until its scope closes; prints
 * `Dashstream listening on http://HOST:PORT` once bound and shuts down gracefully. `handler(config)` is the same
 * interface as Node request listeners, to mount in a server of your own (see the README, "Embedding").
 */
export { type Handler, handler, layer, type Stores } from "./Server.js"

/**
 * `new Metrics()`: the registry of Prometheus metrics served at `GET /metrics` (docs/api.md section 12), with the
 * functions that record them (`writeObserver` for the storage adapters, `decimationPass`, and `eventStreamOpened`,
 * `eventStreamClosed`, `eventsSent` for live event streams).
 */
export {
  type DecimationPassFigures,
  Metrics,
  type MetricJson,
  type MetricJsonValue,
  type MetricsSnapshot,
  type OtherProcesses
} from "./Metrics.js"

/**
 * Behind a reverse proxy (docs/api.md section 16): `parseBasePath` checks `serve --base-path`, `parseTrustProxy` reads
 * `serve --trust-proxy` into the `TrustedProxies` a `HandlerConfig` takes, `forwardedClient` is the client address a
 * trusted proxy's `X-Forwarded-For` gives, `pathUnder` a request target under the base path.
 */
export {
  clientAddress,
  forwardedClient,
  forwardedHttps,
  parseBasePath,
  parseTrustProxy,
  pathUnder,
  type TrustedProxies
} from "./ReverseProxy.js"
