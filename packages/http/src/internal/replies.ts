import type { IncomingMessage, ServerResponse } from "node:http"
import { HttpServerResponse } from "@effect/platform"
import { type ErrorReply, errorBodyText, errorReply } from "../HttpErrors.js"
import { redactPath } from "./redact.js"

/** Writing answers: as platform responses (the `HttpApi` lane) and straight to Node (the push lane). */

const jsonType = "application/json"

/** `{"message":"Success!"}`, the 200 body of every push (docs/api.md section 5). */
const pushSuccessText = '{"message":"Success!"}'

const pushSuccessHeaders = {
  "content-type": jsonType,
  "content-length": String(Buffer.byteLength(pushSuccessText))
}

/** The 200 answer to a push, written to Node directly. */
export const writePushSuccess = (res: ServerResponse): void => {
  res.writeHead(200, pushSuccessHeaders)
  res.end(pushSuccessText)
}

/** The longest path a 404 quotes, in UTF-16 units; a longer one is cut and marked with `…`. */
const maxQuotedPath = 120

/**
 * 404 `not_found` for a path no route serves: the path redacted (see `redactPath`), and cut so that a huge one is
 * not echoed whole.
 */
export const routeNotFound = (url: string): ErrorReply => {
  const path = redactPath(url)
  const shown = path.length > maxQuotedPath ? `${path.slice(0, maxQuotedPath)}…` : path
  return errorReply(404, "not_found", `no route matches ${shown}`)
}

/** An error answer written to Node directly (no-op when the socket is already gone or answered). */
export const writeErrorReply = (res: ServerResponse, reply: ErrorReply): void => {
  if (res.headersSent || res.destroyed) return
  const body = errorBodyText(reply)
  res.writeHead(reply.status, {
    ...reply.headers,
    "content-type": jsonType,
    "content-length": String(Buffer.byteLength(body))
  })
  res.end(body)
}

/** An error answer as a platform response. */
export const errorResponse = (reply: ErrorReply): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(errorBodyText(reply), {
    status: reply.status,
    contentType: jsonType,
    ...(reply.headers === undefined ? {} : { headers: reply.headers })
  })

/** A JSON text body as a platform response (the read path builds its JSON by hand). */
export const jsonTextResponse = (
  body: string,
  headers?: Readonly<Record<string, string>>
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(body, { contentType: jsonType, ...(headers === undefined ? {} : { headers }) })

const closeConnection = { connection: "close" } as const

/**
 * 413 `payload_too_large` for a body over `maxBodyBytes`. With `close`, the answer also ends the connection
 * instead of letting Node read (and discard) the rest of the body.
 */
export const bodyTooLarge = (maxBodyBytes: number, close = false): ErrorReply =>
  errorReply(
    413,
    "payload_too_large",
    `the request body is larger than ${maxBodyBytes} bytes`,
    undefined,
    close ? closeConnection : undefined
  )

/**
 * Past this many bytes of a refused body, the connection is closed rather than drained: draining keeps the
 * connection usable (and lets the client read the 413), but not at any cost.
 */
export const drainLimit = (maxBodyBytes: number): number => Math.max(maxBodyBytes * 8, 16 * 1024 * 1024)

/**
 * The 413 answer for a request whose declared `Content-Length` is over `maxBodyBytes` (refused before reading its
 * body), or `undefined` when the request may be read.
 */
export const refuseDeclaredLength = (req: IncomingMessage, maxBodyBytes: number): ErrorReply | undefined => {
  const header = req.headers["content-length"]
  if (header === undefined) return undefined
  const length = Number(header)
  return length > maxBodyBytes ? bodyTooLarge(maxBodyBytes, length > drainLimit(maxBodyBytes)) : undefined
}
