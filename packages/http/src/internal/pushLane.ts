import type { IncomingMessage, ServerResponse } from "node:http"
import { AccountStore, type Limits, StreamStore, UseCases } from "@dashstream/core"
import { Cause, Context, Effect, Exit, Runtime } from "effect"
import { type ErrorReply, errorReply, internalReply, rateLimited, replyOf, replyOfCause } from "../HttpErrors.js"
import type { Metrics } from "../Metrics.js"
import { type RateLimiter, whenTaken } from "./rateLimiter.js"
import { causeText } from "./causeText.js"
import { requestLine } from "./redact.js"
import { bodyTooLarge, drainLimit, refuseDeclaredLength, writeErrorReply, writePushSuccess } from "./replies.js"
import type { WritePressure } from "./readHandlers.js"

/**
 * The push path (`POST /customSend` and `/customSend/`), served straight from Node's request listener. It is the
 * hot path: the generic `HttpApi` pipeline (request wrapper, router, scope, payload decoding by Content-Type,
 * response conversion) costs several times what a push needs, and it decodes bodies by Content-Type while the
 * original clients label raw JSON as form data or not at all. So this lane reads the raw bytes itself (counting
 * them against the limit), parses JSON whatever the Content-Type, and runs only `UseCases.push` as an effect. The
 * `HttpApi` definition still describes the endpoint for the OpenAPI document.
 */

/** True for the requests this lane serves; everything else goes to the `HttpApi` lane. */
export const isPush = (method: string | undefined, url: string | undefined): boolean => {
  if (method !== "POST" || url === undefined || !url.startsWith("/customSend")) return false
  const rest = url.length === 11 ? "" : url.charAt(11) === "/" ? url.slice(12) : url.slice(11)
  return rest === "" || rest.charAt(0) === "?"
}

const ignore = () => {}

const invalidJson = (message: string): ErrorReply => errorReply(400, "invalid_json", message)

const accessKeyOf = (body: unknown): string | undefined => {
  if (typeof body !== "object" || body === null) return undefined
  const key = (body as { accessKey?: unknown }).accessKey
  return typeof key === "string" ? key : undefined
}

/** The shortest time between two log lines about pushes answered 503 (storage unreachable). */
const unavailableLogIntervalMs = 1000

/**
 * Logs a push answered 503 `unavailable` (storage unreachable) with its cause, at most once per
 * {@link unavailableLogIntervalMs}: during an outage every push fails, and one line per push would flood the log.
 * Each line says how many 503s went unlogged since the previous one. Returns the effect to run, or `undefined` when
 * this one is not logged.
 */
const makeUnavailableLog = () => {
  let lastAt = Number.NEGATIVE_INFINITY
  let unlogged = 0
  return (cause: Cause.Cause<unknown>, accessKey: string | undefined): Effect.Effect<void> | undefined => {
    const now = performance.now()
    if (now - lastAt < unavailableLogIntervalMs) {
      unlogged++
      return undefined
    }
    const more = unlogged === 0 ? "" : ` (${unlogged} more 503 answers since the previous line)`
    lastAt = now
    unlogged = 0
    return Effect.logWarning(
      `push answered 503 unavailable: storage unreachable, nothing stored${more}\n${causeText(cause, accessKey)}`
    )
  }
}

/** What the push lane needs from the server. */
export interface PushLaneOptions {
  readonly limits: Limits
  readonly limiter: RateLimiter | undefined
  readonly logRequests: boolean
  /** Where each answered push is counted (status, duration, error code). */
  readonly metrics: Metrics
  /** Counts the pushes between a received body and a written answer (streamed reads yield to them). */
  readonly pressure?: WritePressure
}

/** The push lane's request listener, running pushes on `runtime`. */
export const makePushLane = (
  runtime: Runtime.Runtime<AccountStore | StreamStore>,
  options: PushLaneOptions
): ((req: IncomingMessage, res: ServerResponse) => void) => {
  const { limiter, limits, logRequests, metrics } = options
  const pressure = options.pressure ?? { inFlight: 0 }
  const maxBodyBytes = limits.maxBodyBytes
  const runCallback = Runtime.runCallback(runtime)
  const runFork = Runtime.runFork(runtime)
  const drainBytes = drainLimit(maxBodyBytes)
  const logUnavailable = makeUnavailableLog()

  const logLine = (req: IncomingMessage, status: number, start: number) => {
    runFork(
      Effect.logInfo(requestLine(req.method ?? "POST", req.url ?? "/customSend", status, performance.now() - start))
    )
  }

  const finish = (req: IncomingMessage, res: ServerResponse, start: number, reply: ErrorReply | undefined) => {
    if (reply === undefined) {
      if (!res.headersSent && !res.destroyed) writePushSuccess(res)
    } else {
      writeErrorReply(res, reply)
    }
    const status = reply === undefined ? 200 : reply.status
    metrics.push(status, (performance.now() - start) / 1000, reply?.code)
    if (logRequests) logLine(req, status, start)
  }

  /** Answers a push counted in `pressure` (from its body on: see `push`), counting it down. */
  const answer = (req: IncomingMessage, res: ServerResponse, start: number, reply: ErrorReply | undefined) => {
    pressure.inFlight--
    finish(req, res, start, reply)
  }

  const push = (req: IncomingMessage, res: ServerResponse, start: number, text: string) => {
    pressure.inFlight++
    let body: unknown
    try {
      // A UTF-8 byte order mark is not JSON, but some clients send one.
      body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
    } catch {
      return answer(
        req,
        res,
        start,
        invalidJson(text.trim() === "" ? "the request body is empty" : "the request body is not valid JSON")
      )
    }
    const accessKey = accessKeyOf(body)
    if (limiter === undefined || accessKey === undefined) return store(req, res, start, body, accessKey)
    whenTaken(limiter.take(accessKey), (wait) =>
      wait > 0
        ? answer(req, res, start, replyOf(rateLimited(wait)) ?? internalReply)
        : store(req, res, start, body, accessKey)
    )
  }

  const accounts = Context.get(runtime.context, AccountStore)
  const streams = Context.get(runtime.context, StreamStore)

  // How a stored or refused push is answered, whichever path ran it. 500s and 503s carry a cause for the log.
  const answerCause = (
    req: IncomingMessage,
    res: ServerResponse,
    start: number,
    cause: Cause.Cause<unknown>,
    accessKey: string | undefined
  ) => {
    const reply = replyOfCause(cause)
    if (reply.status === 500) {
      // The push body carries the access key: keep it out of the log even if an error message quotes it.
      runFork(Effect.logError(`internal error answering POST /customSend\n${causeText(cause, accessKey)}`))
    } else if (reply.status === 503) {
      const log = logUnavailable(cause, accessKey)
      if (log !== undefined) runFork(log)
    }
    answer(req, res, start, reply)
  }

  const store = (
    req: IncomingMessage,
    res: ServerResponse,
    start: number,
    body: unknown,
    accessKey: string | undefined
  ) => {
    // The direct path first: no fiber when the account, the widgets and a direct write are at hand (the common
    // case); otherwise the effect, which looks up what is missing.
    let direct: boolean
    try {
      direct = UseCases.pushDirect(body, limits, accounts, streams, (error) => {
        if (error === undefined) answer(req, res, start, undefined)
        else answerCause(req, res, start, Cause.fail(error), accessKey)
      })
    } catch (defect) {
      return answerCause(req, res, start, Cause.die(defect), accessKey)
    }
    if (direct) return
    runCallback(UseCases.push(body, limits), {
      onExit: (exit) =>
        Exit.isSuccess(exit) ? answer(req, res, start, undefined) : answerCause(req, res, start, exit.cause, accessKey)
    })
  }

  return (req, res) => {
    const start = performance.now()
    // A request error (client gone mid-body) only ends the request; without a listener it would crash the process.
    req.on("error", ignore)
    const refusal = refuseDeclaredLength(req, maxBodyBytes)
    // Refused before reading; Node drains the rest of the body so the connection stays usable.
    if (refusal !== undefined) return finish(req, res, start, refusal)
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
        return finish(req, res, start, bodyTooLarge(maxBodyBytes))
      }
      chunks.push(chunk)
    })
    req.on("end", () => {
      if (refused) return
      const text = chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks, size).toString("utf8")
      push(req, res, start, text)
    })
  }
}
