import type { IncomingMessage, ServerResponse } from "node:http"
import { AccountStore, type RenderedPage, StreamStore, UseCases } from "@dashstream/core"
import { Cause, Context, Exit, Option, Runtime } from "effect"
import { type ErrorReply, errorReply } from "../HttpErrors.js"
import type { Metrics } from "../Metrics.js"
import { laneLogs, replyOfError, takeToken } from "./laneKit.js"
import type { RateLimiter } from "./rateLimiter.js"
import { readBodyText } from "./readHandlers.js"
import { writeErrorReply } from "./replies.js"

/**
 * The latest-entry read (`GET /api/v2/<KEY>/datastream/<STREAM>` without a query, docs/api.md section 6), served
 * straight from Node's request listener as the push lane serves `/customSend`: dashboards poll it, and the generic
 * `HttpApi` pipeline (request wrapper, router, scope, URL parameter decoding, response conversion) costs several
 * times what the read itself does. The answer is the export read's, byte for byte: the same body, the same headers
 * (`Content-Type`, `Content-Length`, `Cache-Control: no-store`), the same error answers (403, 404, 429 with
 * `Retry-After`, 503, 500), the same rate limit by the path's key, the same request log line and the same request
 * metrics (route template `/api/v2/:accessKey/datastream/:streamName`).
 *
 * Only the plainest URLs take this lane: no query, no `;` or `#`, no percent escape, two non-empty segments of at
 * most 4,096 characters, optionally one trailing slash. Everything else (a `since` or `limit`, an encoded stream
 * name, HEAD) goes to the `HttpApi` lane, whose router decides what it means; the `HttpApi` still describes this
 * endpoint for the OpenAPI document.
 */

/** The route template the read's requests are counted under (the `HttpApi` endpoint's path). */
const readRoute = "/api/v2/:accessKey/datastream/:streamName"

const prefix = "/api/v2/"
const middle = "/datastream/"
/** The router's `maxParamLength`: a longer segment is no route (404), which the `HttpApi` lane answers. */
const maxSegment = 4096

/** The access key and stream name of a latest-entry read, as the router would decode them. */
export interface LatestRead {
  readonly accessKey: string
  readonly streamName: string
}

/** True for a character the direct lane leaves to the router: `%` (escapes), `?`, `;`, `#` (query separators). */
const needsRouter = (url: string): boolean => {
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i)
    if (c === 37 || c === 63 || c === 59 || c === 35) return true
  }
  return false
}

/**
 * The key and stream of a request this lane serves (see the module note), `undefined` for every other request.
 */
export const latestRead = (method: string | undefined, url: string | undefined): LatestRead | undefined => {
  if (method !== "GET" || url === undefined || !url.startsWith(prefix) || needsRouter(url)) return undefined
  const keyEnd = url.indexOf("/", prefix.length)
  if (keyEnd <= prefix.length || !url.startsWith(middle, keyEnd)) return undefined
  const nameStart = keyEnd + middle.length
  let nameEnd = url.length
  // One trailing slash is ignored, as the router ignores it.
  if (url.charCodeAt(nameEnd - 1) === 47) nameEnd--
  if (nameEnd <= nameStart) return undefined
  const slash = url.indexOf("/", nameStart)
  if (slash !== -1 && slash < nameEnd) return undefined
  if (keyEnd - prefix.length > maxSegment || nameEnd - nameStart > maxSegment) return undefined
  return { accessKey: url.slice(prefix.length, keyEnd), streamName: url.slice(nameStart, nameEnd) }
}

const noStoreJson = { "cache-control": "no-store", "content-type": "application/json" } as const

const interrupted = errorReply(503, "unavailable", "the request was interrupted; nothing was stored, retry later")

/** What the read lane needs from the server. */
export interface ReadLaneOptions {
  readonly limiter: RateLimiter | undefined
  readonly logRequests: boolean
  /** Where each answered read is counted (route template, method, status, duration). */
  readonly metrics: Metrics
}

/** The read lane's request listener for a request {@link latestRead} matched, running the read on `runtime`. */
export const makeReadLane = (
  runtime: Runtime.Runtime<AccountStore | StreamStore>,
  options: ReadLaneOptions
): ((req: IncomingMessage, res: ServerResponse, read: LatestRead) => void) => {
  const { limiter, logRequests, metrics } = options
  const runCallback = Runtime.runCallback(runtime)
  const runFork = Runtime.runFork(runtime)
  const noParams = {}
  const logs = laneLogs(runFork, logRequests)

  const finish = (req: IncomingMessage, start: number, status: number) => {
    metrics.request(readRoute, "GET", status, (performance.now() - start) / 1000)
    logs.request(req, "GET", req.url ?? "/", status, start)
  }

  const fail = (req: IncomingMessage, res: ServerResponse, start: number, reply: ErrorReply) => {
    writeErrorReply(res, reply)
    finish(req, start, reply.status)
  }

  const accounts = Context.get(runtime.context, AccountStore)
  const streams = Context.get(runtime.context, StreamStore)

  const succeed = (req: IncomingMessage, res: ServerResponse, start: number, page: RenderedPage) => {
    // Without `since` the read is one entry at most: never more than the first page.
    const body = readBodyText(page.text)
    if (!res.headersSent && !res.destroyed) {
      res.writeHead(200, { ...noStoreJson, "content-length": String(Buffer.byteLength(body)) })
      res.end(body)
    }
    finish(req, start, 200)
  }

  const failCause = (
    req: IncomingMessage,
    res: ServerResponse,
    read: LatestRead,
    start: number,
    cause: Cause.Cause<unknown>
  ) => {
    const failure = Cause.failureOption(cause)
    const error = Option.isSome(failure) ? failure.value : Option.getOrUndefined(Cause.dieOption(cause))
    const reply = error === undefined ? interrupted : replyOfError(error)
    if (reply.status === 500) logs.internalError("GET", req.url ?? "/", cause, read.accessKey)
    else if (reply.status === 503) logs.unavailable("GET", readRoute, cause, read.accessKey)
    fail(req, res, start, reply)
  }

  // The effect's path: every refusal, and whatever the direct path declines.
  const viaEffect = (req: IncomingMessage, res: ServerResponse, read: LatestRead, start: number) =>
    runCallback(UseCases.readPages(read.accessKey, read.streamName, noParams), {
      onExit: (exit) =>
        Exit.isSuccess(exit) ? succeed(req, res, start, exit.value.first) : failCause(req, res, read, start, exit.cause)
    })

  // Only a store with `lookupWidget` (PostgreSQL) can hand a read back to the effect's path once it has taken it.
  const looksUp = accounts.lookupWidget !== undefined

  const serve = (req: IncomingMessage, res: ServerResponse, read: LatestRead, start: number) => {
    // The direct path first: no fiber when the account is cached and the widget cached, read synchronously (SQLite)
    // or looked up without an effect (PostgreSQL's `lookupWidget`).
    let direct: boolean
    try {
      direct = UseCases.readLatestDirect(
        read.accessKey,
        read.streamName,
        accounts,
        streams,
        (error, page) =>
          error === undefined ? succeed(req, res, start, page!) : failCause(req, res, read, start, Cause.fail(error)),
        looksUp ? () => viaEffect(req, res, read, start) : undefined
      )
    } catch (defect) {
      return failCause(req, res, read, start, Cause.die(defect))
    }
    if (!direct) viaEffect(req, res, read, start)
  }

  return (req, res, read) => {
    const start = performance.now()
    if (limiter === undefined) return serve(req, res, read, start)
    takeToken(limiter, read.accessKey, (refusal) =>
      refusal === undefined ? serve(req, res, read, start) : fail(req, res, start, replyOfError(refusal))
    )
  }
}
