import { decodePushRequest, InvalidJson, smashingRequest } from "@dashstream/core"
import { Either } from "effect"
import type { AnyIngestProtocol, IngestProtocol } from "./ingestLane.js"
import { v1WriteRoute, v2WriteRoute } from "./lineProtocolRoutes.js"
import { writeErrorReply, writePushSuccess } from "./replies.js"

/**
 * The push protocols the ingest lane serves, one entry each: the original `POST /customSend`, Smashing's
 * `POST /widgets/<stream name>`, InfluxDB's `POST /write` and `POST /api/v2/write` (line protocol). A new protocol is
 * its parser in core, its endpoint in `Api.ts` (path, method, `Lane` `ingest`, its description for the OpenAPI
 * document) and an entry here under the endpoint's name (the route table, `routeTable.ts`, binds the two).
 */

const emptyBody = Either.left(new InvalidJson({ message: "the request body is empty" }))
const notJson = Either.left(new InvalidJson({ message: "the request body is not valid JSON" }))

/**
 * The body parsed as JSON whatever its `Content-Type` says (docs/api.md section 1: the original clients label raw JSON
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
 * `POST /customSend[/]` (spec sections 4.2-4.4, docs/api.md sections 1 and 5): the original JSON body with `accessKey`,
 * 200 `{"message":"Success!"}` once stored, errors as `{"error": {"code", "message", "path"?}}`.
 */
export const customSendRoute: IngestProtocol<unknown> = {
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

const invalidApiKey = "Invalid API key"
const invalidApiKeyHeaders = {
  "content-type": "text/plain; charset=utf-8",
  "content-length": String(Buffer.byteLength(invalidApiKey))
}

/**
 * `POST /widgets/<stream name>` (docs/api.md section 13.2): Smashing's push API, `auth_token` in the JSON body. 204
 * once stored; a missing or unknown `auth_token` is 401 with the text body `Invalid API key`, as Smashing answers;
 * every other error in the contract's JSON shape (section 5).
 */
export const smashingRoute: IngestProtocol<unknown> = {
  maxBodyBytes: (limits) => limits.maxBodyBytes,
  body: jsonBody,
  accessKey: (body) => stringFieldOf(body, "auth_token"),
  // The route's one parameter: the matcher took only a non-empty segment that percent-decodes.
  parse: (body, _req, _limits, params) => Either.right(smashingRequest(params.streamName!, body)),
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

/** Every push protocol, by the name of its endpoint in `Api.ts` (whose `Lane` annotation is `ingest`). */
export const ingestRoutes: Readonly<Record<string, AnyIngestProtocol>> = {
  push: customSendRoute,
  smashing: smashingRoute,
  influxWriteV1: v1WriteRoute,
  influxWriteV2: v2WriteRoute
}
