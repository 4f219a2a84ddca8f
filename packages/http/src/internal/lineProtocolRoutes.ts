import type { IncomingMessage, ServerResponse } from "node:http"
import {
  decodeLineProtocol,
  type InvalidRequest,
  type LineProtocolApi,
  lineProtocolLimits,
  type PayloadTooLarge,
  parsePrecision
} from "@dashstream/core"
import { Either } from "effect"
import type { ErrorReply } from "../HttpErrors.js"
import type { IngestProtocol } from "./ingestLane.js"
import { authorizationKey, basicPassword, decodedBody, queryOf } from "./ingestRequest.js"

/**
 * The InfluxDB write APIs (docs/api.md section 13.1) as ingest routes: `POST /write` (1.x) and `POST /api/v2/write`
 * (2.x, and the v2 API of InfluxDB 3 clients), so that Telegraf and the InfluxDB client libraries feed Dashstream by
 * changing a URL and a token. Both read InfluxDB line protocol (core's `decodeLineProtocol`), plain or gzip; they
 * differ in where the access key is and in the shape of their errors.
 */

/** The InfluxDB version the influx endpoints announce (`X-Influxdb-Version`): the 1.x API they serve. */
export const influxVersion = "1.8.10"

/** Headers of every influx answer, so clients that print or check the server version find one. */
export const influxHeaders = { "x-influxdb-version": influxVersion, "x-influxdb-build": "Dashstream" } as const

/**
 * The access key of a 1.x write (docs/api.md section 13.1): the query's `p`, else the password of HTTP Basic credentials (any
 * user), else `Authorization: Token <key>`. `undefined` when the request carries none.
 */
export const v1AccessKey = (req: IncomingMessage): string | undefined => {
  const p = queryOf(req.url).get("p")
  if (p !== null && p !== "") return p
  const header = req.headers.authorization
  const password = basicPassword(header)
  if (password !== undefined) return password ?? undefined
  return authorizationKey(header, ["token"])
}

/** The access key of a 2.x write (docs/api.md section 13.1): `Authorization: Token <key>` or `Bearer <key>`. */
export const v2AccessKey = (req: IncomingMessage): string | undefined =>
  authorizationKey(req.headers.authorization, ["token", "bearer"])

/**
 * A line protocol body as read: its text, and the bytes it was decoded from (byte order mark removed), which the
 * parser scans when the body is ASCII (see core's `LineProtocolOptions.bytes`).
 */
interface LineProtocolBody {
  readonly text: string
  readonly bytes: Buffer
}

/**
 * The body as text: inflated first when `Content-Encoding: gzip` (bounded: 10 MiB, then 413), decoded as UTF-8
 * (a byte order mark skipped). Another content encoding is 400.
 */
const lineProtocolText = (
  bytes: Buffer,
  req: IncomingMessage
): Either.Either<LineProtocolBody, InvalidRequest | PayloadTooLarge> =>
  Either.map(decodedBody(bytes, req, lineProtocolLimits.maxBytes), (raw) =>
    // The UTF-8 byte order mark, EF BB BF.
    raw.length >= 3 && raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf
      ? { text: raw.toString("utf8", 3), bytes: raw.subarray(3) }
      : { text: raw.toString("utf8"), bytes: raw }
  )

/** The reply's status as the influx APIs answer it: a missing or unknown key is 401 there, not 403 (docs/api.md section 13.1). */
const influxStatus = (reply: ErrorReply): number => (reply.status === 403 ? 401 : reply.status)

/** The `code` of a 2.x error body for a status (docs/api.md section 13.1, as InfluxDB 2.x names them). */
const v2Code = (status: number): string => {
  switch (status) {
    case 401:
      return "unauthorized"
    case 413:
      return "request too large"
    case 429:
      return "too many requests"
    case 503:
      return "unavailable"
    case 500:
      return "internal error"
    default:
      return "invalid"
  }
}

const writeJson = (res: ServerResponse, status: number, reply: ErrorReply, body: string): number => {
  if (res.headersSent || res.destroyed) return status
  res.writeHead(status, {
    ...reply.headers,
    ...influxHeaders,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body))
  })
  res.end(body)
  return status
}

/** A 204 with the number of skipped field values (docs/api.md section 13.1, `X-Dashstream-Skipped`). */
const writeNoContent = (res: ServerResponse, skipped: number): void => {
  res.writeHead(204, { ...influxHeaders, "x-dashstream-skipped": String(skipped) })
  res.end()
}

const route = (
  api: LineProtocolApi,
  accessKey: (req: IncomingMessage) => string | undefined,
  writeError: (res: ServerResponse, reply: ErrorReply) => number
): IngestProtocol<LineProtocolBody> => ({
  maxBodyBytes: () => lineProtocolLimits.maxBytes,
  body: lineProtocolText,
  accessKey: (_body, req) => accessKey(req),
  parse: (body, req) =>
    Either.flatMap(parsePrecision(queryOf(req.url).get("precision"), api), (precision) =>
      decodeLineProtocol(body.text, accessKey(req) ?? "", precision, body.bytes)
    ),
  successStatus: 204,
  writeSuccess: writeNoContent,
  writeError
})

/** `POST /write` (InfluxDB 1.x): errors as `{"error": "<message>"}`. */
export const v1WriteRoute: IngestProtocol<LineProtocolBody> = route("v1", v1AccessKey, (res, reply) => {
  const status = influxStatus(reply)
  return writeJson(res, status, reply, JSON.stringify({ error: reply.message }))
})

/** `POST /api/v2/write` (InfluxDB 2.x): errors as `{"code": "invalid" | ..., "message": "<message>"}`. */
export const v2WriteRoute: IngestProtocol<LineProtocolBody> = route("v2", v2AccessKey, (res, reply) => {
  const status = influxStatus(reply)
  return writeJson(res, status, reply, JSON.stringify({ code: v2Code(status), message: reply.message }))
})

const queryResult = '{"results":[{"statement_id":0}]}'

/**
 * Answers InfluxDB's probes (docs/api.md section 13.1), `GET`/`HEAD /ping` and `GET`/`HEAD`/`POST /query` (routes of the route
 * table, `routeTable.ts`), without storage or credentials: `/ping` 204 with `X-Influxdb-Version` (200 `{"version"}` with
 * `verbose=true`, as InfluxDB 1.x), `/query` 200 `{"results":[{"statement_id":0}]}` (Telegraf sends
 * `CREATE DATABASE` there first; nothing is stored, a database is not a Dashstream notion). A request body is
 * drained unread.
 */
export const answerInfluxProbe = (req: IncomingMessage, res: ServerResponse, probe: "ping" | "query"): void => {
  req.resume()
  if (probe === "ping") {
    const verbose = queryOf(req.url).get("verbose")
    if (verbose === "true") {
      const body = JSON.stringify({ version: influxVersion })
      res.writeHead(200, {
        ...influxHeaders,
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body))
      })
      res.end(req.method === "HEAD" ? undefined : body)
      return
    }
    res.writeHead(204, influxHeaders)
    res.end()
    return
  }
  res.writeHead(200, {
    ...influxHeaders,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(queryResult))
  })
  res.end(req.method === "HEAD" ? undefined : queryResult)
}
