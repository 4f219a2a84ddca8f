import type { Limits } from "@dashstream/core"
import type { Metrics } from "./Metrics.js"

/** How the HTTP server runs (contract sections 1, 5, 7). Built by the composition root from flags and environment. */
export interface HttpConfig {
  /** Interface to bind, e.g. `"127.0.0.1"`. */
  readonly host: string
  /** TCP port; 0 picks a free one (the real port is printed once bound). */
  readonly port: number
  /** The admin API's bearer token; `undefined` disables the admin API (its paths answer 404 `not_found`). */
  readonly adminToken: string | undefined
  /** Body size, streams per push and array elements per point (exceeding one is 413). */
  readonly limits: Limits
  /** Requests per second allowed per access key, with bursts of the same size; `undefined` turns limiting off. */
  readonly rateLimit: number | undefined
  /** One log line per request (method, redacted path, status, milliseconds). Off by default for speed. */
  readonly logRequests: boolean
  /**
   * Where requests are counted and what `GET /metrics` serves (contract section 12). Pass the instance whose
   * `writeObserver` the storage layer was given and whose `decimationPass` the daily pass reports to, so `/metrics`
   * shows them; when undefined the server makes its own (requests and process metrics only).
   */
  readonly metrics?: Metrics | undefined
}
