import { DashstreamError, type ErrorCode, NetworkError, OutcomeUnknownError } from "../Errors.js"
import { fullJitter, parseRetryAfter, type RetryPolicy, sleep } from "./backoff.js"

/**
 * One HTTP call with a timeout and retries (docs/api.md section 5). The rule that keeps retries from double-counting
 * lives here: after an ambiguous failure (the request may have reached the server: a timeout, a connection reset or
 * closed after sending, a gateway's 502/504), only a call marked `retrySafe` is sent again; any other becomes an
 * `OutcomeUnknownError`. A 429 or 503 means nothing was stored, so every call is retried after `Retry-After`.
 */

/** How the client talks HTTP. */
export interface TransportConfig {
  readonly fetch: typeof globalThis.fetch
  /** Per attempt, until the whole answer is read. */
  readonly timeoutMs: number
  readonly retry: RetryPolicy
}

/** One call. */
export interface Call {
  readonly method: "GET" | "POST"
  readonly url: string
  readonly body?: string
  /** True when sending it twice changes nothing (a read, a clear, a timestamped point). */
  readonly retrySafe: boolean
  /** The streams a push concerns, for `OutcomeUnknownError`. */
  readonly streams: ReadonlyArray<string>
  readonly signal?: AbortSignal | undefined
}

type Attempt =
  | { readonly _tag: "ok"; readonly text: string }
  | { readonly _tag: "answer"; readonly error: DashstreamError }
  | { readonly _tag: "failed"; readonly ambiguous: boolean; readonly cause: unknown }

// Errors of the TCP connect (or name lookup) step: the request was certainly not sent.
const connectCodes = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "EADDRNOTAVAIL",
  "UND_ERR_CONNECT_TIMEOUT"
])

const codesOf = (error: unknown, depth = 0): Array<string> => {
  if (typeof error !== "object" || error === null || depth > 4) return []
  const e = error as { code?: unknown; cause?: unknown; errors?: unknown }
  const own = typeof e.code === "string" ? [e.code] : []
  const nested = Array.isArray(e.errors) ? e.errors.flatMap((x) => codesOf(x, depth + 1)) : []
  return [...own, ...nested, ...codesOf(e.cause, depth + 1)]
}

/**
 * True when a failed `fetch` certainly sent nothing: every error code in its cause chain is a connect or lookup
 * failure (Node's fetch reports them as `cause.code`). A browser's `TypeError("Failed to fetch")` carries no code,
 * so it counts as ambiguous: the safe side.
 */
export const certainlyNotSent = (error: unknown): boolean => {
  const codes = codesOf(error)
  return codes.length > 0 && codes.every((code) => connectCodes.has(code))
}

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The `DashstreamError` of an error answer: the contract's body if it has one, else `http_error`. */
export const errorOf = (status: number, text: string, headers: Headers): DashstreamError => {
  const retryAfterMs = parseRetryAfter(headers.get("retry-after"))
  const retryAfter = retryAfterMs === undefined ? undefined : retryAfterMs / 1000
  try {
    const body: unknown = JSON.parse(text)
    const error = isObject(body) ? body["error"] : undefined
    if (isObject(error) && typeof error["code"] === "string") {
      const message = typeof error["message"] === "string" ? error["message"] : `HTTP ${status}`
      const path = typeof error["path"] === "string" ? error["path"] : undefined
      return new DashstreamError(status, error["code"] as ErrorCode, message, path, retryAfter)
    }
  } catch {
    // not a Dashstream error body
  }
  const snippet = text.trim().slice(0, 200)
  return new DashstreamError(
    status,
    "http_error",
    `HTTP ${status}${snippet === "" ? "" : `: ${snippet}`}`,
    undefined,
    retryAfter
  )
}

const once = async (config: TransportConfig, call: Call): Promise<Attempt> => {
  const signal = call.signal
  if (signal?.aborted) throw signal.reason
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort(new Error(`no answer within ${config.timeoutMs} ms`))
  }, config.timeoutMs)
  const onAbort = () => controller.abort(signal!.reason)
  signal?.addEventListener("abort", onAbort, { once: true })
  try {
    let response: Response
    try {
      response = await config.fetch(call.url, {
        method: call.method,
        signal: controller.signal,
        ...(call.body === undefined
          ? { headers: { accept: "application/json" } }
          : { headers: { accept: "application/json", "content-type": "application/json" }, body: call.body })
      })
    } catch (cause) {
      if (signal?.aborted) throw signal.reason
      const reason = timedOut ? new Error(`no answer within ${config.timeoutMs} ms`, { cause }) : cause
      return { _tag: "failed", ambiguous: timedOut || !certainlyNotSent(cause), cause: reason }
    }
    let text: string
    try {
      text = await response.text()
    } catch (cause) {
      if (signal?.aborted) throw signal.reason
      // The status is known: a 200 to a push means stored (docs/api.md section 5), an error status means what it says.
      if (response.ok && call.method === "POST") return { _tag: "ok", text: "" }
      if (!response.ok) return { _tag: "answer", error: errorOf(response.status, "", response.headers) }
      return { _tag: "failed", ambiguous: true, cause }
    }
    return response.ok
      ? { _tag: "ok", text }
      : { _tag: "answer", error: errorOf(response.status, text, response.headers) }
  } finally {
    clearTimeout(timer)
    signal?.removeEventListener("abort", onAbort)
  }
}

const describeCause = (cause: unknown): string => {
  if (!(cause instanceof Error)) return String(cause)
  const inner = cause.cause instanceof Error ? `: ${cause.cause.message}` : ""
  return `${cause.message}${inner}`
}

const unknownOutcome = (call: Call, cause: unknown): OutcomeUnknownError =>
  new OutcomeUnknownError(
    `the push to ${call.streams.map((s) => JSON.stringify(s)).join(", ")} may or may not have been stored ` +
      `(${describeCause(cause)}); it was not retried because a repeat could store it twice`,
    call.streams,
    { cause }
  )

/**
 * Sends `call`, retrying as the module comment says, and returns the body text of its 2xx answer. Throws
 * `DashstreamError` (an error answer, or a 429/503 once the retries are used up), `NetworkError`,
 * `OutcomeUnknownError`, or the abort reason of `call.signal`.
 */
export const send = async (config: TransportConfig, call: Call): Promise<string> => {
  const policy = config.retry
  for (let attempt = 0; ; attempt++) {
    const result = await once(config, call)
    const retriesLeft = attempt < policy.retries
    if (result._tag === "ok") return result.text
    if (result._tag === "answer") {
      const error = result.error
      if (error.status === 429 || error.status === 503) {
        // Nothing was stored (docs/api.md section 5): safe for every call.
        const after = error.retryAfter === undefined ? undefined : error.retryAfter * 1000
        if (!retriesLeft || (after !== undefined && after > policy.maxRetryAfterMs)) throw error
        await sleep(Math.max(after ?? 0, fullJitter(policy, attempt)), call.signal)
        continue
      }
      if (error.status === 502 || error.status === 504) {
        // A gateway's answer: the request may have reached Dashstream.
        if (!call.retrySafe) throw unknownOutcome(call, error)
        if (!retriesLeft) throw error
        await sleep(fullJitter(policy, attempt), call.signal)
        continue
      }
      throw error
    }
    if (result.ambiguous && !call.retrySafe) throw unknownOutcome(call, result.cause)
    if (!retriesLeft) {
      throw new NetworkError(
        `${call.method} ${redactUrl(call.url)} failed after ${attempt + 1} attempt(s): ${describeCause(result.cause)}`,
        attempt + 1,
        { cause: result.cause }
      )
    }
    await sleep(fullJitter(policy, attempt), call.signal)
  }
}

/** A URL with the access key segment of an export path replaced by `***`, for error messages. */
export const redactUrl = (url: string): string => url.replace(/(\/api\/v2\/)[^/]+/, "$1***")
