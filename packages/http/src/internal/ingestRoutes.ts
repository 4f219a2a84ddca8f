import { decodePushRequest, InvalidJson, smashingRequest } from "@dashstream/core"
import { Either } from "effect"
import type { AnyIngestRoute, IngestRoute } from "./ingestLane.js"
import { decodePathSegment } from "./laneKit.js"
import { v1WriteRoute, v2WriteRoute } from "./lineProtocolRoutes.js"
import { writeErrorReply, writePushSuccess } from "./replies.js"

/**
 * The push protocols the ingest lane serves, one entry each (issue 23): the original `POST /customSend`,
 * Smashing's `POST /widgets/<stream name>`, InfluxDB's `POST /write` and `POST /api/v2/write` (line protocol,
 * contract 13.1). A new
 * protocol is its parser in core plus an entry here (and its description in `Api.ts` for the OpenAPI document).
 */

/** True for `/customSend` and `/customSend/`, with or without a query (contract section 1). */
const isCustomSend = (url: string): boolean => {
  if (!url.startsWith("/customSend")) return false
  const rest = url.length === 11 ? "" : url.charAt(11) === "/" ? url.slice(12) : url.slice(11)
  return rest === "" || rest.charAt(0) === "?"
}

const emptyBody = Either.left(new InvalidJson({ message: "the request body is empty" }))
const notJson = Either.left(new InvalidJson({ message: "the request body is not valid JSON" }))

/**
 * The body parsed as JSON whatever its `Content-Type` says (contract section 1: the original clients label raw JSON
 * as form data, or not at all), a UTF-8 byte order mark skipped; `InvalidJson` (400 `invalid_json`) otherwise.
 */
export const jsonBody = (bytes: Buffer): Either.Either<unknown, InvalidJson> => {
  const text = bytes.toString("utf8")
  try {
    // A UTF-8 byte order mark is not JSON, but some clients send one.
    return Either.right(JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text))
  } catch {
    return text.trim() === "" ? emptyBody : notJson
  }
}

/** A string field of a JSON object body, or `undefined`. */
export const stringFieldOf = (body: unknown, key: string): string | undefined => {
  if (typeof body !== "object" || body === null) return undefined
  const value = (body as Record<string, unknown>)[key]
  return typeof value === "string" ? value : undefined
}

/**
 * `POST /customSend[/]` (spec sections 4.2-4.4, contract sections 1 and 5): the original JSON body with `accessKey`,
 * 200 `{"message":"Success!"}` once stored, errors as `{"error": {"code", "message", "path"?}}`.
 */
export const customSendRoute: IngestRoute<unknown> = {
  template: "/customSend",
  method: "POST",
  matches: isCustomSend,
  cors: true,
  maxBodyBytes: (limits) => limits.maxBodyBytes,
  body: jsonBody,
  accessKey: (body) => stringFieldOf(body, "accessKey"),
  parse: (body, _req, limits) => decodePushRequest(body, limits),
  successStatus: 200,
  writeSuccess: writePushSuccess,
  writeError: (res, reply) => {
    writeErrorReply(res, reply)
    return reply.status
  }
}

const widgetsPrefix = "/widgets/"

/**
 * The stream name of a Smashing push's path, `/widgets/<stream name>` (one segment, URL-decoded; one trailing slash
 * and the query ignored), or `undefined` for any other path, also for a malformed percent escape (then the path is
 * no route: 404 `not_found`, as the router answers).
 */
export const smashingStreamOf = (url: string): string | undefined => {
  if (!url.startsWith(widgetsPrefix)) return undefined
  const q = url.indexOf("?")
  let end = q === -1 ? url.length : q
  if (end > widgetsPrefix.length + 1 && url.charCodeAt(end - 1) === 47) end--
  const segment = url.slice(widgetsPrefix.length, end)
  if (segment === "" || segment.includes("/")) return undefined
  return decodePathSegment(segment)
}

const invalidApiKey = "Invalid API key"
const invalidApiKeyHeaders = {
  "content-type": "text/plain; charset=utf-8",
  "content-length": String(Buffer.byteLength(invalidApiKey))
}

/**
 * `POST /widgets/<stream name>` (contract section 13.2): Smashing's push API, `auth_token` in the JSON body. 204
 * once stored; a missing or unknown `auth_token` is 401 with the text body `Invalid API key`, as Smashing answers;
 * every other error in the contract's JSON shape (section 5).
 */
export const smashingRoute: IngestRoute<unknown> = {
  template: "/widgets/:streamName",
  method: "POST",
  matches: (url) => smashingStreamOf(url) !== undefined,
  cors: true,
  maxBodyBytes: (limits) => limits.maxBodyBytes,
  body: jsonBody,
  accessKey: (body) => stringFieldOf(body, "auth_token"),
  parse: (body, req) => Either.right(smashingRequest(smashingStreamOf(req.url ?? "")!, body)),
  successStatus: 204,
  writeSuccess: (res) => {
    res.writeHead(204)
    res.end()
  },
  writeError: (res, reply) => {
    if (reply.code !== "forbidden") {
      writeErrorReply(res, reply)
      return reply.status
    }
    if (!res.headersSent && !res.destroyed) {
      res.writeHead(401, invalidApiKeyHeaders)
      res.end(invalidApiKey)
    }
    return 401
  }
}

/** Every ingest route, in the order they are tried. */
export const ingestRoutes: ReadonlyArray<AnyIngestRoute> = [customSendRoute, smashingRoute, v1WriteRoute, v2WriteRoute]
