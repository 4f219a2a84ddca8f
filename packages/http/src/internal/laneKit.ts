import type { IncomingMessage } from "node:http"
import { type Cause, Effect } from "effect"
import { type ErrorReply, internalReply, type RateLimited, rateLimited, replyOf, replyOfCause } from "../HttpErrors.js"
import { causeText } from "./causeText.js"
import { clientInfo } from "./clientInfo.js"
import { type RateLimiter, whenTaken } from "./rateLimiter.js"
import { redactPath, requestLine } from "./redact.js"

/**
 * What every lane (push, read, live, page, and the HttpApi lane) does around a request, written once: the request's
 * log line, the log of an answer 500 with its cause, the reply of an error, the rate limit.
 */

/**
 * The request's log line (`METHOD /path status 1.2ms from <client>`, the path's secrets redacted, see `requestLine`);
 * `start` from `performance.now()`, `client` the client address of `clientInfo`.
 */
export const requestLog = (
  method: string,
  url: string,
  status: number,
  start: number,
  client: string
): Effect.Effect<void> => Effect.logInfo(requestLine(method, url, status, performance.now() - start, client))

/**
 * The log of a request answered 500 `internal`: its method and path (secrets redacted) and its cause, with `secret`
 * (the request's access key or view token) kept out of the text even where an error message quotes it.
 */
export const internalErrorLog = (
  method: string,
  url: string,
  cause: Cause.Cause<unknown>,
  secret: string | undefined
): Effect.Effect<void> =>
  Effect.logError(`internal error answering ${method} ${redactPath(url)}\n${causeText(cause, secret)}`)

/** The reply of an error: its entry in the error table (`HttpErrors.ts`), else 500 `internal`. */
export const replyOfError = (error: unknown): ErrorReply => replyOf(error) ?? internalReply

/**
 * Takes one of `key`'s tokens (contract section 5, `serve --rate-limit`) and calls `then` once: with `undefined` when
 * the request may go on (at once without a limiter), else with the `RateLimited` refusal (its `Retry-After`).
 */
export const takeToken = (
  limiter: RateLimiter | undefined,
  key: string,
  then: (refusal: RateLimited | undefined) => void
): void => {
  if (limiter === undefined) return then(undefined)
  whenTaken(limiter.take(key), (wait) => then(wait > 0 ? rateLimited(wait) : undefined))
}

/** The logs of a callback lane, forked on its runtime. */
export interface LaneLogs {
  /** {@link requestLog} of `req` (its client address from `clientInfo`), when request logging is on. */
  readonly request: (req: IncomingMessage, method: string, url: string, status: number, start: number) => void
  /**
   * The reply to a request that failed with `cause` (`replyOfCause`: the error table, 503 for an interruption, 500
   * for a defect), logging it with {@link internalErrorLog} when it is a 500.
   */
  readonly replyOfCause: (
    method: string,
    url: string,
    cause: Cause.Cause<unknown>,
    secret: string | undefined
  ) => ErrorReply
  /** {@link internalErrorLog}. */
  readonly internalError: (method: string, url: string, cause: Cause.Cause<unknown>, secret: string | undefined) => void
}

/** {@link LaneLogs} forking on `runFork`; request lines only when `logRequests`. */
export const laneLogs = (runFork: (effect: Effect.Effect<void>) => unknown, logRequests: boolean): LaneLogs => ({
  request: (req, method, url, status, start) => {
    if (logRequests) runFork(requestLog(method, url, status, start, clientInfo(req).address))
  },
  replyOfCause: (method, url, cause, secret) => {
    const reply = replyOfCause(cause)
    if (reply.status === 500) runFork(internalErrorLog(method, url, cause, secret))
    return reply
  },
  internalError: (method, url, cause, secret) => void runFork(internalErrorLog(method, url, cause, secret))
})

/**
 * A path segment percent-decoded as the router decodes it, or `undefined` for a malformed escape (`%ZZ`): the router
 * matches no route through one, so a lane answers it 404 `route_not_found`.
 */
export const decodePathSegment = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}
