/**
 * What a Dashstream call can fail with:
 * - {@link DashstreamError}: the server answered with an error (docs/api.md section 5), discriminated by `code`;
 * - {@link NetworkError}: no answer (connection refused or cut, timeout) and retrying did not help; when this is
 *   thrown for a push, the push was one that is safe to repeat, or it certainly was not sent;
 * - {@link OutcomeUnknownError}: a push that is not safe to repeat may or may not have been stored, so it was not
 *   retried (a repeat could count a delta twice). Check the stream (`latest`/`read`) before pushing it again.
 * All three extend {@link DashstreamClientError}.
 */

/**
 * The error codes of docs/api.md section 5 and the admin API, plus `http_error` for an answer that does not carry a
 * Dashstream error body (a proxy's 502, say).
 */
export type ErrorCode =
  | "invalid_json"
  | "invalid_request"
  | "invalid_point"
  | "unsupported_command"
  | "invalid_since"
  | "unauthorized"
  | "forbidden"
  | "stream_not_found"
  | "account_not_found"
  | "dashboard_not_found"
  | "rotation_not_found"
  | "not_found"
  | "method_not_allowed"
  | "conflict"
  | "request_timeout"
  | "payload_too_large"
  | "rate_limited"
  | "internal"
  | "unavailable"
  | "http_error"

/** The base class of every error this client throws (not of an abort reason the caller's signal gives). */
export abstract class DashstreamClientError extends Error {
  abstract readonly kind: "response" | "network" | "outcome_unknown"
}

/**
 * The server answered a non-2xx status with `{"error": {"code", "message", "path"?}}` (docs/api.md section 5). `path`
 * points into the request body for validation errors (`point.leaderboard[2].value`; in a multi-stream push
 * `streams[3].point...`). For 429 and 503 it is thrown once the retries are used up.
 */
export class DashstreamError extends DashstreamClientError {
  override readonly name = "DashstreamError"
  readonly kind = "response" as const
  constructor(
    /** HTTP status (400, 403, 404, 413, 429, 500, 503, ...). */
    readonly status: number,
    /** The contract's stable snake_case code. */
    readonly code: ErrorCode,
    message: string,
    /** Where in the request body the problem is, for validation errors. */
    readonly path?: string | undefined,
    /** The `Retry-After` header in seconds (429, 503), when the server sent one. */
    readonly retryAfter?: number | undefined
  ) {
    super(message)
  }
}

/**
 * The request got no answer: the connection was refused, reset or closed, or it timed out (`timeoutMs`). Thrown
 * after the retries are used up, and only for a request that was safe to repeat or certainly not sent; `cause` is the
 * last underlying error.
 */
export class NetworkError extends DashstreamClientError {
  override readonly name = "NetworkError"
  readonly kind = "network" as const
  constructor(
    message: string,
    /** How many attempts were made. */
    readonly attempts: number,
    options?: { readonly cause?: unknown }
  ) {
    super(message, options)
  }
}

/**
 * A push that is not safe to repeat (a `delta`, `leaderboardItem`, `listItem`, `tableRow`, or any point without a
 * `timestamp`) failed after it may have reached the server (timeout, connection reset after sending, a gateway's
 * 502/504). It may or may not be stored, so it was NOT retried. `streams` names the streams concerned. Check them
 * (`latest`, `read`) before pushing again.
 */
export class OutcomeUnknownError extends DashstreamClientError {
  override readonly name = "OutcomeUnknownError"
  readonly kind = "outcome_unknown" as const
  constructor(
    message: string,
    /** The streams whose push may or may not have been stored. */
    readonly streams: ReadonlyArray<string>,
    options?: { readonly cause?: unknown }
  ) {
    super(message, options)
  }
}
