import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Cors, Lane } from "./Routing.js"

const lineProtocolBody = HttpApiSchema.Text({ contentType: "text/plain" }).annotations({
  description:
    "InfluxDB line protocol, `measurement[,tag=value...] field=value[,field=value...] [timestamp]` per line, as " +
    "InfluxDB documents it (escapes, `#` comments, blank lines). `Content-Encoding: gzip` is accepted. At most 10 MiB " +
    "after decompression and 100,000 field values"
})

const writeDescription = (credentials: string, errorShape: string) =>
  "Each field of each line is one write, to the stream `<measurement>.<field key>`, or " +
  "`<measurement>.<field key>{<tag key>=<tag value>,...}` with the tags in byte order of their keys " +
  "(`cpu,host=web1,cpu=cpu0 usage_idle=97.5` writes stream `cpu.usage_idle{cpu=cpu0,host=web1}`). A field whose " +
  "stream is not a widget of the key's account is skipped and counted in the `X-Dashstream-Skipped` header of " +
  "the 204. number, bar, dial, sparkline and line-graph streams store `{number}` at the line's timestamp (a retried " +
  "batch replaces, never duplicates); label stores `{label}`, text-feed `{title: field key, msg}`; a string on a " +
  "numeric stream, or any other widget type, is 400. All or nothing: one bad line stores nothing. " +
  `Credentials: ${credentials}. Errors: ${errorShape}, the message naming the line (\`line N\`); ` +
  "401 for a missing or unknown access key (docs/api.md section 13.1)"

const V1Error = Schema.Struct({ error: Schema.String }).annotations({
  identifier: "InfluxV1Error",
  description: "An InfluxDB 1.x error body"
})
const V2Error = Schema.Struct({
  code: Schema.Literal("invalid", "unauthorized", "request too large", "too many requests", "unavailable"),
  message: Schema.String
}).annotations({ identifier: "InfluxV2Error", description: "An InfluxDB 2.x error body" })

const statusDescriptions: Readonly<Record<number, string>> = {
  400: "Bad line protocol (the message says `line N`), a field its widget type refuses, a bad precision or encoding",
  401: "Missing or unknown access key",
  413: "Over 10 MiB after decompression, or over 100,000 field values",
  429: "Rate limited (serve --rate-limit); Retry-After in seconds",
  503: "Storage unreachable; nothing was stored"
}

/** An influx error body (the 1.x or 2.x shape) for one status. */
const withStatus = <A, I>(schema: Schema.Schema<A, I>, status: number) =>
  schema.annotations({ ...HttpApiSchema.annotations({ status }), description: statusDescriptions[status] })

const writeSuccess = HttpApiSchema.NoContent.annotations({
  description: "Stored; the X-Dashstream-Skipped header counts the skipped field values"
})

const precisionParam = (units: string) =>
  Schema.optional(Schema.String.annotations({ description: `Timestamp unit: ${units}; absent or empty: ns` }))

const ignored = Schema.optional(Schema.String.annotations({ description: "Accepted and ignored" }))

/**
 * One InfluxDB write endpoint (docs/api.md section 13.1): a line protocol body, 204 once stored, the query `urlParams`,
 * and the errors 400, 401, 413, 429 and 503 in the API version's body shape `error`. `credentials` and `errorShape`
 * say, for its description, where the access key goes and what an error body looks like.
 */
const writeEndpoint = <const Name extends string, const Path extends `/${string}`, Params, A, I>(
  name: Name,
  path: Path,
  version: string,
  options: {
    readonly urlParams: Schema.Schema<Params, Readonly<Record<string, string | undefined>>>
    readonly error: Schema.Schema<A, I>
    readonly credentials: string
    readonly errorShape: string
  }
) =>
  HttpApiEndpoint.post(name, path)
    .setPayload(lineProtocolBody)
    .setUrlParams(options.urlParams)
    .addSuccess(writeSuccess)
    .addError(withStatus(options.error, 400))
    .addError(withStatus(options.error, 401))
    .addError(withStatus(options.error, 413))
    .addError(withStatus(options.error, 429))
    .addError(withStatus(options.error, 503))
    .annotate(Lane, "ingest")
    .annotate(Cors, true)
    .annotate(OpenApi.Summary, `Write line protocol (InfluxDB ${version} API)`)
    .annotate(OpenApi.Description, writeDescription(options.credentials, options.errorShape))

/**
 * `POST /write` and `POST /api/v2/write` (InfluxDB 1.x and 2.x writes), `/ping` and `/query` (docs/api.md section 13.1).
 * Served by the ingest lane and a small probe answer in `Server.ts`; described here for the OpenAPI document.
 */
export class InfluxGroup extends HttpApiGroup.make("influx", { topLevel: true })
  .add(
    writeEndpoint("influxWriteV1", "/write", "1.x", {
      urlParams: Schema.Struct({
        db: ignored,
        rp: ignored,
        consistency: ignored,
        u: ignored,
        p: Schema.optional(Schema.String.annotations({ description: "The access key" })),
        precision: precisionParam("n, ns, u, us, ms, s, m or h")
      }),
      error: V1Error,
      credentials:
        "the query's `p`, or the password of HTTP Basic credentials (any user), or `Authorization: Token <key>`",
      errorShape: '`{"error": "<message>"}`'
    })
  )
  .add(
    writeEndpoint("influxWriteV2", "/api/v2/write", "2.x", {
      urlParams: Schema.Struct({
        org: ignored,
        orgID: ignored,
        bucket: ignored,
        precision: precisionParam("ns, us, ms or s")
      }),
      error: V2Error,
      credentials: "`Authorization: Token <key>` (or `Bearer <key>`)",
      errorShape:
        '`{"code": "invalid" | "unauthorized" | "request too large" | "too many requests" | "unavailable", ' +
        '"message"}`'
    })
  )
  .add(
    HttpApiEndpoint.get("influxPing", "/ping")
      .addSuccess(HttpApiSchema.NoContent.annotations({ description: "Up; the X-Influxdb-Version header says 1.8.10" }))
      .annotate(OpenApi.Summary, "InfluxDB ping (also HEAD)")
      .annotate(OpenApi.Description, "For InfluxDB clients and Telegraf: 204 with X-Influxdb-Version, no credentials")
  )
  .add(
    HttpApiEndpoint.get("influxQuery", "/query")
      .addSuccess(Schema.Struct({ results: Schema.Array(Schema.Struct({ statement_id: Schema.Number })) }))
      .annotate(OpenApi.Summary, "InfluxDB query (answered, not run)")
      .annotate(
        OpenApi.Description,
        'Always 200 {"results":[{"statement_id":0}]}: Telegraf sends CREATE DATABASE here before writing; ' +
          "nothing is stored or read"
      )
  )
  .add(
    HttpApiEndpoint.post("influxQueryPost", "/query")
      .addSuccess(Schema.Struct({ results: Schema.Array(Schema.Struct({ statement_id: Schema.Number })) }))
      .annotate(OpenApi.Summary, "Same as GET /query")
  )
  .annotate(Lane, "probe")
  .annotate(OpenApi.Title, "InfluxDB line protocol") {}
