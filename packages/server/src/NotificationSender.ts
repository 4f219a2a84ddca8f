import { ATTEMPT_TIMEOUT_MS, type AttemptResult, type NotificationRequest, NotificationSender } from "@dashstream/core"
import { Effect, Layer } from "effect"

/**
 * The HTTP adapter of alert delivery (core's `NotificationSender`, docs/api.md section 18): one `POST` with Node's
 * built-in `fetch`, no redirect followed (a 3xx is an answer like any other non-2xx), at most
 * {@link ATTEMPT_TIMEOUT_MS} for the answer's status line and headers. The answer's body is not read.
 *
 * An attempt without an answer is `Unreachable` with a reason worded here from the error's code (`connection
 * refused`, `timed out after 10 s`, `host not found`, ...), never from the error's message, which may quote the URL:
 * receiver URLs can carry credentials (a Slack webhook's path is its secret) and never reach a log line.
 */

const reasons: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host name lookup failed",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  UND_ERR_CONNECT_TIMEOUT: "connection timed out",
  UND_ERR_SOCKET: "connection closed by the receiver",
  UND_ERR_HEADERS_OVERFLOW: "answer headers too large",
  CERT_HAS_EXPIRED: "TLS certificate expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "TLS certificate not trusted",
  SELF_SIGNED_CERT_IN_CHAIN: "TLS certificate not trusted",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS certificate not trusted",
  ERR_TLS_CERT_ALTNAME_INVALID: "TLS certificate does not match the host"
}

/** The reason of a failed `fetch`, from the codes in its `cause` chain; never the error's own message. */
export const unreachableReason = (error: unknown): string => {
  for (let current = error, depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    const named = current as { name?: unknown; code?: unknown; cause?: unknown }
    if (named.name === "TimeoutError") return `timed out after ${ATTEMPT_TIMEOUT_MS / 1000} s`
    if (typeof named.code === "string" && named.code in reasons) return reasons[named.code]!
    current = named.cause
  }
  return "network error"
}

/** Sends one notification (see the module comment). Never fails. */
export const send = (request: NotificationRequest): Effect.Effect<AttemptResult> =>
  Effect.promise(async (): Promise<AttemptResult> => {
    try {
      const response = await fetch(request.url, {
        method: "POST",
        headers: request.headers,
        body: request.body,
        redirect: "manual",
        signal: AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)
      })
      await response.body?.cancel().catch(() => undefined)
      return { _tag: "Answered", status: response.status }
    } catch (error) {
      return { _tag: "Unreachable", reason: unreachableReason(error) }
    }
  })

/** The sender as a layer. */
export const layer: Layer.Layer<NotificationSender> = Layer.succeed(NotificationSender, { send })
