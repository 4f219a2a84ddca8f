import type { IncomingMessage, ServerResponse } from "node:http"
import type { Socket } from "node:net"
import {
  AccountStore,
  type IngestRequest,
  type Limits,
  type PushRejection,
  type SkippedStreams,
  StreamStore,
  UseCases
} from "@dashstream/core"
import { Cause, Context, Either, Exit, Runtime } from "effect"
import { type ErrorReply, replyOfCause } from "../HttpErrors.js"
import type { Metrics } from "../Metrics.js"
import { laneLogs, replyOfError, takeToken } from "./laneKit.js"
import type { RateLimiter } from "./rateLimiter.js"
import type { WritePressure } from "./readHandlers.js"
import { bodyTooLarge, drainLimit, refuseDeclaredLength } from "./replies.js"
import { makeSkippedLog } from "./skippedLog.js"

/**
 * The ingest lane: every push protocol (`POST /customSend`, Smashing's `POST /widgets/<stream>`, InfluxDB line
 * protocol's `POST /write` and `POST /api/v2/write`), served straight from Node's request listener. It is the hot path: the generic `HttpApi`
 * pipeline (request wrapper, router, scope, payload decoding by Content-Type, response conversion) costs several
 * times what a push needs, and decodes bodies by Content-Type while the original clients label raw JSON as form
 * data or not at all. So this lane reads the raw bytes itself (counting them against the route's limit) and runs
 * the route's steps, then core's `ingestDirect` (no fiber) or, when that declines, the `ingest` effect. The
 * `HttpApi` definition still describes the endpoints for the OpenAPI document.
 *
 * A protocol is a parser in core (its body into an `IngestRequest`) plus an {@link IngestRoute} entry here; the
 * lane does the rest the same way for every route: body limit, credentials for the rate limiter (once per
 * request), the write-pressure count, metrics per route, the redacted request log line, logging of 500s and 503s.
 */

/**
 * One push protocol (an entry of `ingestRoutes.ts` under its endpoint's name in `Api.ts`): how its body is read, where
 * its credentials are, how it is parsed into an {@link IngestRequest}, and how its answers look. `B` is the body as
 * {@link IngestProtocol.body} reads it (the JSON value, the text).
 */
export interface IngestProtocol<B> {
  /** The most bytes of body read (413 beyond, in the route's error shape). */
  readonly maxBodyBytes: (limits: Limits) => number
  /**
   * The raw body (every byte, as received) as the protocol reads it, or its refusal (`InvalidJson` for a JSON
   * protocol). The place for content decoding (`Content-Encoding: gzip`, with a bounded inflater).
   */
  readonly body: (bytes: Buffer, req: IncomingMessage) => Either.Either<B, PushRejection>
  /**
   * The access key the request counts against for `--rate-limit` (docs/api.md section 5), from the body, the query or
   * a header; `undefined` when it carries none (then it is not limited, and {@link parse} refuses it). Also
   * scrubbed from the causes logged for the request.
   */
  readonly accessKey: (body: B, req: IncomingMessage) => string | undefined
  /**
   * The body as a protocol-neutral request (the protocol's parser in core), or its refusal. `params` are the route's
   * `:name` path parameters, percent-decoded (`{streamName}` for `/widgets/:streamName`).
   */
  readonly parse: (
    body: B,
    req: IncomingMessage,
    limits: Limits,
    params: Readonly<Record<string, string>>
  ) => Either.Either<IngestRequest, PushRejection>
  /** The status {@link writeSuccess} writes (for metrics and the log). */
  readonly successStatus: number
  /** Writes the answer to a stored request; `skipped` as `IngestResult.skipped`. */
  readonly writeSuccess: (res: ServerResponse, skipped: number) => void
  /**
   * Writes an error answer in the protocol's shape and returns the status it wrote. `reply` is the contract's
   * answer (section 5: status, code, message, path, headers such as `Retry-After`).
   */
  readonly writeError: (res: ServerResponse, reply: ErrorReply) => number
}

/** A push protocol of any body type. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyIngestProtocol = IngestProtocol<any>

/** A push protocol bound to its route of the route table (`routeTable.ts`, which builds it from the `HttpApi`). */
export interface IngestRoute<B> extends IngestProtocol<B> {
  /**
   * The route template, as the `HttpApi` declares it (`/customSend`, `/widgets/:streamName`): the metrics label and
   * the name in log lines; never the URL (it may carry a key).
   */
  readonly template: string
  /** The one method served (`POST`). */
  readonly method: string
  /** The template's path parameters of a URL the route table gave to this route, percent-decoded. */
  readonly params: (url: string) => Readonly<Record<string, string>>
}

/** An ingest route of any body type (the route table holds several). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyIngestRoute = IngestRoute<any>

const ignore = () => {}

/** What the ingest lane needs from the server. */
export interface IngestLaneOptions {
  readonly limits: Limits
  readonly limiter: RateLimiter | undefined
  readonly logRequests: boolean
  /** Where each answered push is counted (route, status, duration, error code, skipped parts). */
  readonly metrics: Metrics
  /** Counts the pushes between a received body and a written answer (streamed reads yield to them). */
  readonly pressure?: WritePressure
  /** Log skipped stream names, each at most once a minute per account (docs/api.md section 13.1); on unless `false`. */
  readonly logSkipped?: boolean | undefined
}

/**
 * The ingest lane's request listener for a request the route table (`routeTable.ts`) gave to `route`, running pushes on
 * `runtime`.
 */
export const makeIngestLane = (
  runtime: Runtime.Runtime<AccountStore | StreamStore>,
  options: IngestLaneOptions
): ((req: IncomingMessage, res: ServerResponse, route: AnyIngestRoute) => void) => {
  const { limiter, limits, logRequests, metrics } = options
  const pressure = options.pressure ?? { inFlight: 0 }
  const runCallback = Runtime.runCallback(runtime)
  const runFork = Runtime.runFork(runtime)
  const logSkipped = options.logSkipped === false ? undefined : makeSkippedLog()
  const accounts = Context.get(runtime.context, AccountStore)
  const streams = Context.get(runtime.context, StreamStore)

  const logs = laneLogs(runFork, logRequests)

  // Pushes pipelined on one connection (HTTP/1.1 lets a client send the next request before the answer) are stored
  // one after the other, in the order sent: two pushes that miss the account cache would otherwise look up the key on
  // the pool concurrently and could be stored in either order. `waiting` holds, per connection with a push in
  // flight, the pushes read after it; `holding` the requests that hold their connection's turn.
  const waiting = new WeakMap<Socket, Array<() => void>>()
  const holding = new WeakSet<IncomingMessage>()

  /** Runs `push` now when no push of its connection is in flight, else after the ones before it. */
  const inTurn = (req: IncomingMessage, push: () => void) => {
    const queue = waiting.get(req.socket)
    if (queue !== undefined) return void queue.push(() => (holding.add(req), push()))
    waiting.set(req.socket, [])
    holding.add(req)
    push()
  }

  /** Gives the turn of `req`'s connection to the next push read on it, if `req` held it. */
  const release = (req: IncomingMessage) => {
    if (!holding.delete(req)) return
    const queue = waiting.get(req.socket)
    const next = queue?.shift()
    if (next === undefined) waiting.delete(req.socket)
    else next()
  }

  /** Writes the answer (success when `reply` is undefined), then counts and logs it. */
  const finish = (
    req: IncomingMessage,
    res: ServerResponse,
    route: AnyIngestRoute,
    start: number,
    reply: ErrorReply | undefined,
    skipped: number,
    skippedStreams?: () => SkippedStreams
  ) => {
    let status: number
    if (reply === undefined) {
      if (!res.headersSent && !res.destroyed) route.writeSuccess(res, skipped)
      status = route.successStatus
      if (logSkipped !== undefined && skippedStreams !== undefined) {
        const log = logSkipped(route.template, skippedStreams())
        if (log !== undefined) runFork(log)
      }
    } else {
      status = route.writeError(res, reply)
    }
    metrics.ingest(route.template, status, (performance.now() - start) / 1000, reply?.code, skipped)
    logs.request(req, req.method ?? route.method, req.url ?? route.template, status, start)
    release(req)
  }

  /** Answers a push counted in `pressure` (from its body on: see `received`), counting it down. */
  const answer = (
    req: IncomingMessage,
    res: ServerResponse,
    route: AnyIngestRoute,
    start: number,
    reply: ErrorReply | undefined,
    skipped = 0,
    skippedStreams?: () => SkippedStreams
  ) => {
    pressure.inFlight--
    finish(req, res, route, start, reply, skipped, skippedStreams)
  }

  // How a stored or refused push is answered, whichever path ran it. 500s and 503s carry a cause for the log.
  const answerCause = (
    req: IncomingMessage,
    res: ServerResponse,
    route: AnyIngestRoute,
    start: number,
    cause: Cause.Cause<unknown>,
    accessKey: string | undefined
  ) => {
    const reply = replyOfCause(cause)
    if (reply.status === 500) {
      // The request carries the access key: keep it out of the log even if an error message quotes it.
      logs.internalError(route.method, route.template, cause, accessKey)
    } else if (reply.status === 503) {
      logs.unavailable(route.method, route.template, cause, accessKey)
    }
    answer(req, res, route, start, reply)
  }

  const refuse = (
    req: IncomingMessage,
    res: ServerResponse,
    route: AnyIngestRoute,
    start: number,
    error: PushRejection
  ) => answer(req, res, route, start, replyOfError(error))

  const store = (
    req: IncomingMessage,
    res: ServerResponse,
    route: AnyIngestRoute,
    start: number,
    body: unknown,
    accessKey: string | undefined
  ) => {
    let request: IngestRequest
    // The direct path first: no fiber when the account, the widgets and a direct write are at hand (the common
    // case); otherwise the effect, which looks up what is missing.
    let direct: boolean
    try {
      const parsed = route.parse(body, req, limits, route.params(req.url ?? "/"))
      if (Either.isLeft(parsed)) return refuse(req, res, route, start, parsed.left)
      request = parsed.right
      direct = UseCases.ingestDirect(request, limits, accounts, streams, (error, skipped, skippedStreams) => {
        if (error === undefined) answer(req, res, route, start, undefined, skipped, skippedStreams)
        else answerCause(req, res, route, start, Cause.fail(error), accessKey)
      })
    } catch (defect) {
      return answerCause(req, res, route, start, Cause.die(defect), accessKey)
    }
    if (direct) return
    runCallback(UseCases.ingest(request, limits), {
      onExit: (exit) =>
        Exit.isSuccess(exit)
          ? answer(req, res, route, start, undefined, exit.value.skipped, exit.value.skippedStreams)
          : answerCause(req, res, route, start, exit.cause, accessKey)
    })
  }

  /** A body read whole: the route's steps, the rate limit, then the store. */
  const received = (req: IncomingMessage, res: ServerResponse, route: AnyIngestRoute, start: number, bytes: Buffer) => {
    pressure.inFlight++
    let body: unknown
    let accessKey: string | undefined
    try {
      const read = route.body(bytes, req)
      if (Either.isLeft(read)) return refuse(req, res, route, start, read.left)
      body = read.right
      accessKey = route.accessKey(body, req)
    } catch (defect) {
      return answerCause(req, res, route, start, Cause.die(defect), undefined)
    }
    if (limiter === undefined || accessKey === undefined) return store(req, res, route, start, body, accessKey)
    takeToken(limiter, accessKey, (refusal) =>
      refusal === undefined
        ? store(req, res, route, start, body, accessKey)
        : answer(req, res, route, start, replyOfError(refusal))
    )
  }

  return (req, res, route) => {
    const start = performance.now()
    // A request error (client gone mid-body) only ends the request; without a listener it would crash the process.
    req.on("error", ignore)
    const maxBodyBytes = route.maxBodyBytes(limits)
    const refusal = refuseDeclaredLength(req, maxBodyBytes)
    // Refused before reading; Node drains the rest of the body so the connection stays usable.
    if (refusal !== undefined) return finish(req, res, route, start, refusal, 0)
    const drainBytes = drainLimit(maxBodyBytes)
    const chunks: Array<Buffer> = []
    let size = 0
    let refused = false
    req.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (refused) {
        if (size > drainBytes) req.destroy()
        return
      }
      if (size > maxBodyBytes) {
        refused = true
        chunks.length = 0
        return finish(req, res, route, start, bodyTooLarge(maxBodyBytes), 0)
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      if (refused) return
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)
      inTurn(req, () => received(req, res, route, start, bytes))
    })
  }
}
