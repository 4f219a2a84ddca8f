import type { IncomingMessage } from "node:http"
import { type Cause, Effect } from "effect"
import { type ErrorReply, internalReply, type RateLimited, rateLimited, replyOf, replyOfCause } from "../HttpErrors.js"
import { causeLine, causeText } from "./causeText.js"
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

/** How long a lane stays silent about 503s whose cause does not change (then it logs the count; milliseconds). */
export const unavailableReminderMs = 60_000

/**
 * The log of a lane's answers 503 `unavailable` (the storage is unreachable): `POST /customSend answered 503
 * unavailable: connect ECONNREFUSED 127.0.0.1:5432`, the cause in one line (`causeLine`, `secret` scrubbed out), no
 * stack. One line when the cause changes (the first 503, or another reason), not one per request: during an outage
 * every request fails alike. A cause that lasts is logged again after {@link unavailableReminderMs}; a line says how
 * many 503s went unlogged since the previous one. Returns the effect to run, or `undefined` when this 503 is not
 * logged. `route` names the request without its secrets (a route template).
 */
export const makeUnavailableLog = (now: () => number = () => performance.now()) => {
  let lastLine: string | undefined
  let lastAt = Number.NEGATIVE_INFINITY
  let unlogged = 0
  return (
    method: string,
    route: string,
    cause: Cause.Cause<unknown>,
    secret: string | undefined
  ): Effect.Effect<void> | undefined => {
    const line = causeLine(cause, secret)
    const at = now()
    if (line === lastLine && at - lastAt < unavailableReminderMs) {
      unlogged++
      return undefined
    }
    const more = unlogged === 0 ? "" : ` (${unlogged} more 503 answers since the previous line)`
    lastLine = line
    lastAt = at
    unlogged = 0
    return Effect.logWarning(`${method} ${route} answered 503 unavailable: ${line}${more}`)
  }
}

/** The reply of an error: its entry in the error table (`HttpErrors.ts`), else 500 `internal`. */
export const replyOfError = (error: unknown): ErrorReply => replyOf(error) ?? internalReply

/**
 * Takes one of `key`'s tokens (docs/api.md section 5, `serve --rate-limit`) and calls `then` once: with `undefined` when
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
   * for a defect), logging it with {@link internalErrorLog} when it is a 500, with {@link unavailable} (its path
   * redacted) when it is a 503.
   */
  readonly replyOfCause: (
    method: string,
    url: string,
    cause: Cause.Cause<unknown>,
    secret: string | undefined
  ) => ErrorReply
  /** {@link internalErrorLog}. */
  readonly internalError: (method: string, url: string, cause: Cause.Cause<unknown>, secret: string | undefined) => void
  /**
   * The log of a request answered 503 `unavailable` (the lane's own {@link makeUnavailableLog}: one line per change of
   * cause); `route` names the request without secrets (a route template, or a redacted path).
   */
  readonly unavailable: (method: string, route: string, cause: Cause.Cause<unknown>, secret: string | undefined) => void
}

/** {@link LaneLogs} forking on `runFork`; request lines only when `logRequests`. */
export const laneLogs = (runFork: (effect: Effect.Effect<void>) => unknown, logRequests: boolean): LaneLogs => {
  const unavailableLog = makeUnavailableLog()
  const unavailable: LaneLogs["unavailable"] = (method, route, cause, secret) => {
    const log = unavailableLog(method, route, cause, secret)
    if (log !== undefined) runFork(log)
  }
  return {
    request: (req, method, url, status, start) => {
      if (logRequests) runFork(requestLog(method, url, status, start, clientInfo(req).address))
    },
    replyOfCause: (method, url, cause, secret) => {
      const reply = replyOfCause(cause)
      if (reply.status === 500) runFork(internalErrorLog(method, url, cause, secret))
      else if (reply.status === 503) unavailable(method, redactPath(url), cause, secret)
      return reply
    },
    internalError: (method, url, cause, secret) => void runFork(internalErrorLog(method, url, cause, secret)),
    unavailable
  }
}

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
