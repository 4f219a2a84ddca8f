import {
  HttpApi,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity,
  OpenApi
} from "@effect/platform"
import {
  CreateDashboardBody,
  RotationBody,
  Tile,
  UpdateDashboardBody,
  widgetTypes,
  withBoundedIssues
} from "@dashstream/core"
import { Schema } from "effect"
import { errors } from "./HttpErrors.js"
import { cleanDecodeErrors } from "./internal/openApiCleanup.js"

/**
 * The HTTP contract of Dashstream (contract sections 1, 5, 6, 7, 11, 14) as an `HttpApi`: paths, parameters, bodies and
 * every error response. The OpenAPI document (`/openapi.json`, `/docs`) is generated from it; handlers live in
 * `internal/`.
 */

// ---------------------------------------------------------------------------------------------------------------
// Shared bodies
// ---------------------------------------------------------------------------------------------------------------

/** `{"message": "Success!"}`: the 200 body of a push (contract section 5). */
export const PushSuccess = Schema.Struct({ message: Schema.Literal("Success!") }).annotations({
  identifier: "PushSuccess"
})

const StreamPart = Schema.Struct({
  streamName: Schema.String,
  point: Schema.optional(
    Schema.Unknown.annotations({ description: "The point; its shape depends on the widget type" })
  ),
  command: Schema.optional(Schema.Literal("clear"))
}).annotations({ identifier: "StreamPart" })

/**
 * A push body (spec sections 4.2-4.4) as documentation: one stream (`streamName` with `point` or `command`) or
 * several (`streams`). The server reads the raw body whatever its `Content-Type` and validates it in core.
 */
export const PushRequest = Schema.Struct({
  accessKey: Schema.String.annotations({ description: "The account access key" }),
  streamName: Schema.optional(Schema.String),
  point: Schema.optional(
    Schema.Unknown.annotations({ description: "The point (contract section 3); an empty point clears the stream" })
  ),
  command: Schema.optional(Schema.Literal("clear")),
  streams: Schema.optional(Schema.Array(StreamPart).annotations({ description: "A multi-stream push (at most 256)" }))
}).annotations({
  identifier: "PushRequest",
  description:
    "Raw JSON. Accepted whatever the Content-Type says (application/json, application/x-www-form-urlencoded, none)"
})

/** One stored entry of a read: `ts` in UNIX seconds (microsecond precision) and the stored point. */
export const ReadEntry = Schema.Struct({
  ts: Schema.Number.annotations({ description: "UNIX seconds with up to 6 decimals; usable as the next `since`" }),
  point: Schema.Unknown.annotations({ description: "The stored point; its shape depends on the widget type" })
}).annotations({ identifier: "ReadEntry" })

/** The 200 body of an export read (contract section 6). */
export const ReadResponse = Schema.Struct({
  message: Schema.Literal("Success!"),
  data: Schema.Array(ReadEntry)
}).annotations({ identifier: "ReadResponse" })

/** `{"status": "ok"}`. */
export const HealthStatus = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "HealthStatus" })

const WidgetTypeName = Schema.String.annotations({
  description: "A widget type identifier (contract section 2)",
  jsonSchema: { type: "string", enum: [...widgetTypes] }
})

const IsoTime = Schema.String.annotations({ description: "ISO 8601 time, UTC" })

/** A widget as the admin API shows it. */
export const WidgetView = Schema.Struct({
  streamName: Schema.String,
  type: WidgetTypeName,
  createdAt: IsoTime
}).annotations({ identifier: "Widget" })

const viewTokenNote =
  "Shown only in the answers of create (POST .../dashboards) and rotate (POST .../view-token); null in every other " +
  "answer: the server keeps only a SHA-256 digest of the token (as it does for access keys), so it cannot show it " +
  "again. Rotate to get a new one."

/**
 * A dashboard as the admin API shows it (contract section 11). Deviation from the contract, which lists `viewToken`
 * and `url` on every answer: they are set only by create and rotate, `null` otherwise (the token is stored as a
 * digest).
 */
export const DashboardView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  tiles: Schema.Array(Tile),
  viewToken: Schema.NullOr(Schema.String).annotations({ description: `The view token. ${viewTokenNote}` }),
  url: Schema.NullOr(Schema.String).annotations({
    description: `The dashboard page's path, /d/<viewToken>, relative to the server. ${viewTokenNote}`
  }),
  createdAt: IsoTime
}).annotations({ identifier: "Dashboard" })

/**
 * A rotation as the admin API shows it (contract section 15). As for dashboards, `viewToken` and `url` are set only by
 * create and rotate, `null` otherwise (the token is stored as a digest).
 */
export const RotationView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  dashboardIds: Schema.Array(Schema.String).annotations({
    description: "The dashboards shown in turn, in order; a deleted dashboard leaves this list"
  }),
  intervalSeconds: Schema.Number.annotations({ description: "Seconds each dashboard is shown (5 to 3600)" }),
  viewToken: Schema.NullOr(Schema.String).annotations({ description: `The view token. ${viewTokenNote}` }),
  url: Schema.NullOr(Schema.String).annotations({
    description: `The rotation page's path, /r/<viewToken>, relative to the server. ${viewTokenNote}`
  }),
  createdAt: IsoTime
}).annotations({ identifier: "Rotation" })

// ---------------------------------------------------------------------------------------------------------------
// Push
// ---------------------------------------------------------------------------------------------------------------

const pushDescription =
  "Push a point, clear a stream (`command: clear`) or push to several streams at once (spec sections 4.2-4.4). " +
  "The body is read raw and parsed as JSON whatever its Content-Type. `/customSend` and `/customSend/` are the same."

const pushEndpoint = <const Name extends string, const Path extends "/customSend" | "/customSend/">(
  name: Name,
  path: Path
) =>
  HttpApiEndpoint.post(name, path)
    .setPayload(PushRequest)
    .addSuccess(PushSuccess)
    .addError(errors("InvalidJson", "InvalidRequest", "InvalidPoint", "UnsupportedCommand"))
    .addError(errors("Forbidden"))
    .addError(errors("StreamNotFound"))
    .addError(errors("PayloadTooLarge"))
    .addError(errors("RateLimited"))
    .annotate(OpenApi.Description, pushDescription)

/** `POST /customSend` and `POST /customSend/` (contract section 1). */
export class PushGroup extends HttpApiGroup.make("push", { topLevel: true })
  .add(pushEndpoint("push", "/customSend").annotate(OpenApi.Summary, "Push, clear or multi-stream push"))
  .add(pushEndpoint("pushTrailingSlash", "/customSend/").annotate(OpenApi.Summary, "Same as POST /customSend"))
  .annotate(OpenApi.Title, "Push") {}

// ---------------------------------------------------------------------------------------------------------------
// InfluxDB line protocol
// ---------------------------------------------------------------------------------------------------------------

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
  "401 for a missing or unknown access key (contract section 13.1)"

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
 * `POST /write` and `POST /api/v2/write` (InfluxDB 1.x and 2.x writes), `/ping` and `/query` (contract section 13.1).
 * Served by the ingest lane and a small probe answer in `Server.ts`; described here for the OpenAPI document.
 */
export class InfluxGroup extends HttpApiGroup.make("influx", { topLevel: true })
  .add(
    HttpApiEndpoint.post("influxWriteV1", "/write")
      .setPayload(lineProtocolBody)
      .setUrlParams(
        Schema.Struct({
          db: ignored,
          rp: ignored,
          consistency: ignored,
          u: ignored,
          p: Schema.optional(Schema.String.annotations({ description: "The access key" })),
          precision: precisionParam("n, ns, u, us, ms, s, m or h")
        })
      )
      .addSuccess(writeSuccess)
      .addError(withStatus(V1Error, 400))
      .addError(withStatus(V1Error, 401))
      .addError(withStatus(V1Error, 413))
      .addError(withStatus(V1Error, 429))
      .addError(withStatus(V1Error, 503))
      .annotate(OpenApi.Summary, "Write line protocol (InfluxDB 1.x API)")
      .annotate(
        OpenApi.Description,
        writeDescription(
          "the query's `p`, or the password of HTTP Basic credentials (any user), or `Authorization: Token <key>`",
          '`{"error": "<message>"}`'
        )
      )
  )
  .add(
    HttpApiEndpoint.post("influxWriteV2", "/api/v2/write")
      .setPayload(lineProtocolBody)
      .setUrlParams(
        Schema.Struct({ org: ignored, orgID: ignored, bucket: ignored, precision: precisionParam("ns, us, ms or s") })
      )
      .addSuccess(writeSuccess)
      .addError(withStatus(V2Error, 400))
      .addError(withStatus(V2Error, 401))
      .addError(withStatus(V2Error, 413))
      .addError(withStatus(V2Error, 429))
      .addError(withStatus(V2Error, 503))
      .annotate(OpenApi.Summary, "Write line protocol (InfluxDB 2.x API)")
      .annotate(
        OpenApi.Description,
        writeDescription(
          "`Authorization: Token <key>` (or `Bearer <key>`)",
          '`{"code": "invalid" | "unauthorized" | "request too large" | "too many requests" | "unavailable", ' +
            '"message"}`'
        )
      )
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
  .annotate(OpenApi.Title, "InfluxDB line protocol") {}

// ---------------------------------------------------------------------------------------------------------------
// Other pushers: Smashing
// ---------------------------------------------------------------------------------------------------------------

/** A Smashing push body (contract section 13.2): `auth_token` and the widget data, as Smashing jobs send it. */
export const SmashingPush = Schema.Struct(
  { auth_token: Schema.String.annotations({ description: "The account access key" }) },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
).annotations({
  identifier: "SmashingPush",
  description:
    "Raw JSON, accepted whatever the Content-Type says. Besides auth_token, the widget data, mapped by the " +
    "stream's widget type: number and bars {current, prefix?, suffix?}; dial {value} (or {current}); sparkline and " +
    "line-graph {points: [{x, y}]} (x in UNIX seconds: one timestamped entry per point, a stored x is replaced) or " +
    "{current}; leaderboard and pie-chart {items: [{label, value}]}; list {items: [{label, value?}]}; label {text}; " +
    "text-feed {comments: [{name, body, avatar?}]} or {text, title?}; image {image}; any other type: the body " +
    "without auth_token is the point (contract section 3). Other fields (moreinfo, updatedAt, ...) are ignored"
})

/** The 401 of a Smashing push: the text `Invalid API key`, as Smashing answers. */
const InvalidApiKey = Schema.Literal("Invalid API key")
  .pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain" }))
  .annotations({ description: "Missing or unknown auth_token (checked before the stream)" })

/** `POST /widgets/:streamName` (contract section 13.2); served by the ingest lane. */
export class SmashingGroup extends HttpApiGroup.make("smashing", { topLevel: true })
  .add(
    HttpApiEndpoint.post("smashing", "/widgets/:streamName")
      .setPath(
        Schema.Struct({ streamName: Schema.String.annotations({ description: "The stream name, URL-encoded" }) })
      )
      .setPayload(SmashingPush)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(errors("InvalidJson", "InvalidRequest", "InvalidPoint"))
      .addError(InvalidApiKey, { status: 401 })
      .addError(errors("StreamNotFound"))
      .addError(errors("PayloadTooLarge"))
      .addError(errors("RateLimited"))
      .annotate(OpenApi.Summary, "Push widget data as Smashing (Dashing) jobs do")
      .annotate(
        OpenApi.Description,
        "Smashing's push API (contract section 13.2): point a Smashing job's URL at Dashstream and use an access key " +
          "as auth_token. 204 with an empty body once stored."
      )
  )
  .annotate(OpenApi.Title, "Smashing") {}

// ---------------------------------------------------------------------------------------------------------------
// Export read
// ---------------------------------------------------------------------------------------------------------------

/** `GET /api/v2/:accessKey/datastream/:streamName` (contract section 6). */
export class ReadGroup extends HttpApiGroup.make("read", { topLevel: true })
  .add(
    HttpApiEndpoint.get("read", "/api/v2/:accessKey/datastream/:streamName")
      .setPath(
        Schema.Struct({
          accessKey: Schema.String.annotations({ description: "The account access key (never logged)" }),
          streamName: Schema.String.annotations({ description: "The stream name, URL-encoded" })
        })
      )
      .setUrlParams(
        Schema.Struct({
          since: Schema.optional(
            Schema.String.annotations({
              description: "UNIX seconds: entries with ts > since. 0 = every entry. Absent = the latest entry only"
            })
          ),
          limit: Schema.optional(
            Schema.String.annotations({
              description: "1..100000: at most this many entries, the oldest first. Not with points"
            })
          ),
          from: Schema.optional(
            Schema.String.annotations({
              description:
                "UNIX seconds, 0 to 4294967295 (decimal, no exponent): a range read of the entries with ts >= from. " +
                "Not with since"
            })
          ),
          to: Schema.optional(
            Schema.String.annotations({
              description:
                "UNIX seconds, 0 to 4294967295 (decimal, no exponent): a range read of the entries with ts <= to; " +
                "not before from"
            })
          ),
          points: Schema.optional(
            Schema.String.annotations({
              description:
                "2..10000: a range read reduced to this many time buckets over [from, to] (the oldest and newest ts " +
                "when a bound is absent); each bucket keeps its first, last, lowest and highest entry (by number, " +
                "by y for xy-graph; earliest on ties), other widget types its last entry"
            })
          )
        })
      )
      .addSuccess(ReadResponse)
      .addError(errors("InvalidSince", "InvalidRequest"))
      .addError(errors("Forbidden"))
      .addError(errors("StreamNotFound"))
      .addError(errors("RateLimited"))
      .annotate(OpenApi.Summary, "Read a stream")
      .annotate(
        OpenApi.Description,
        "Entries in ascending ts, answered with Cache-Control: no-store (spec section 4.1, contract section 6). " +
          "More than 1,000 entries are streamed (chunked transfer encoding), 1,000 at a time. With any of from, to " +
          "or points it is a range read: the stored entries of the time window, unchanged, reduced to at most 4 " +
          "per bucket with points; a bad bound, points or limit is 400 invalid_request whose path names the parameter"
      )
  )
  .annotate(OpenApi.Title, "Export") {}

// ---------------------------------------------------------------------------------------------------------------
// Live updates
// ---------------------------------------------------------------------------------------------------------------

const liveDescription =
  "Follow a stream live over Server-Sent Events (contract section 10). Errors are decided before the stream starts " +
  "and answered as JSON error bodies. Then `text/event-stream`: a `retry:` line at once; the backlog (entries with ts > " +
  "the `Last-Event-ID` header, else > `since`; with neither, the latest entry), then every new entry as it is stored: " +
  '`event: entry`, `id: <ts>`, `data: {"ts","point"}`. A clear sends `event: clear` (`data: {}`, an id above every ' +
  "cleared ts); a client resuming from an id older than the last clear gets `clear` first. Deleting the widget sends " +
  "`event: deleted` and ends the stream. `: ping` every 15 s without an event. A client more than 1 MiB behind is " +
  "disconnected (it resumes with Last-Event-ID and loses nothing). At most 100 open event streams per access key."

/** `GET /api/v2/:accessKey/datastream/:streamName/events` (contract section 10); served by the live lane. */
export class LiveGroup extends HttpApiGroup.make("live", { topLevel: true })
  .add(
    HttpApiEndpoint.get("events", "/api/v2/:accessKey/datastream/:streamName/events")
      .setPath(
        Schema.Struct({
          accessKey: Schema.String.annotations({ description: "The account access key (never logged)" }),
          streamName: Schema.String.annotations({ description: "The stream name, URL-encoded" })
        })
      )
      .setUrlParams(
        Schema.Struct({
          since: Schema.optional(
            Schema.String.annotations({
              description: "UNIX seconds: start with the entries with ts > since (ignored with a Last-Event-ID header)"
            })
          )
        })
      )
      .setHeaders(
        Schema.Struct({
          "last-event-id": Schema.optional(
            Schema.String.annotations({ description: "The id of the last event received: resume after it" })
          )
        })
      )
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .addError(errors("InvalidSince"))
      .addError(errors("Forbidden"))
      .addError(errors("StreamNotFound"))
      .addError(errors("RateLimited"))
      .annotate(OpenApi.Summary, "Follow a stream live (Server-Sent Events)")
      .annotate(OpenApi.Description, liveDescription)
  )
  .annotate(OpenApi.Title, "Live updates") {}

// ---------------------------------------------------------------------------------------------------------------
// Dashboard page
// ---------------------------------------------------------------------------------------------------------------

const ViewTokenPath = Schema.Struct({
  viewToken: Schema.String.annotations({ description: "The dashboard's view token (never logged)" })
})

const RotationTokenPath = Schema.Struct({
  viewToken: Schema.String.annotations({ description: "The rotation's view token (never logged)" })
})

/**
 * `GET /d/:viewToken`, `GET /d/:viewToken/events` and `GET /assets/:file` (contract section 11), and a rotation's
 * `GET /r/:viewToken` and `GET /r/:viewToken/events` (section 15); served by the page and live lanes.
 */
export class ViewGroup extends HttpApiGroup.make("view", { topLevel: true })
  .add(
    HttpApiEndpoint.get("page", "/d/:viewToken")
      .setPath(ViewTokenPath)
      .setUrlParams(
        Schema.Struct({
          theme: Schema.optional(Schema.Literal("dark", "light").annotations({ description: "Colour theme (dark)" }))
        })
      )
      .addSuccess(HttpApiSchema.Text({ contentType: "text/html" }))
      .addError(errors("DashboardNotFound"))
      .annotate(OpenApi.Summary, "The dashboard page")
      .annotate(
        OpenApi.Description,
        "The live dashboard of this view token, as an HTML page with a Content-Security-Policy; it draws every tile " +
          "and follows `/d/<viewToken>/events`. An unknown or rotated token answers 404."
      )
  )
  .add(
    HttpApiEndpoint.get("dashboardEvents", "/d/:viewToken/events")
      .setPath(ViewTokenPath)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .addError(errors("DashboardNotFound"))
      .addError(errors("RateLimited"))
      .annotate(OpenApi.Summary, "The dashboard's event stream (Server-Sent Events)")
      .annotate(
        OpenApi.Description,
        'One event stream for the whole page: `event: snapshot` with data `{"tiles": {"<streamName>": [entries...]}}` ' +
          "(the latest entry of state tiles, the latest 2 of number tiles, up to 1,000 recent entries of series and " +
          'events tiles), then `event: entry` `{"streamName","ts","point"}`, `event: clear` `{"streamName"}` and ' +
          '`event: deleted` `{"streamName"}` as they happen. A reconnect gets a fresh snapshot; a rotated token ends it.'
      )
  )
  .add(
    HttpApiEndpoint.get("rotationPage", "/r/:viewToken")
      .setPath(RotationTokenPath)
      .setUrlParams(
        Schema.Struct({
          theme: Schema.optional(Schema.Literal("dark", "light").annotations({ description: "Colour theme (dark)" }))
        })
      )
      .addSuccess(HttpApiSchema.Text({ contentType: "text/html" }))
      .addError(errors("RotationNotFound"))
      .annotate(OpenApi.Summary, "The rotation page")
      .annotate(
        OpenApi.Description,
        "Each dashboard of the rotation full-screen in turn, its name as the page title, for intervalSeconds, " +
          "looping, with a small progress indicator (contract section 15); all live over `/r/<viewToken>/events`. " +
          "The same headers as the dashboard page. An unknown, rotated or deleted token answers 404."
      )
  )
  .add(
    HttpApiEndpoint.get("rotationEvents", "/r/:viewToken/events")
      .setPath(RotationTokenPath)
      .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
      .addError(errors("RotationNotFound"))
      .addError(errors("RateLimited"))
      .annotate(OpenApi.Summary, "The rotation's one event stream (Server-Sent Events)")
      .annotate(
        OpenApi.Description,
        'First `event: rotation` with data `{"rotation": {"id","name","dashboardIds","intervalSeconds","viewToken",' +
          '"url","createdAt"}, "dashboards": [{"id","name","tiles": [{...tile, "type"}]}]}`, then one `event: ' +
          "snapshot` for the union of the dashboards' tiles (as a dashboard's), then `event: entry` " +
          '`{"streamName","dashboardId","dashboardIds","ts","point"}`, `event: clear` and `event: deleted` ' +
          '`{"streamName","dashboardId","dashboardIds"}` (the dashboards showing the stream; one subscription per ' +
          "stream however many show it). A change of the rotation or of one of its dashboards sends a new `event: " +
          "rotation`, then a snapshot of the tiles it did not show before. A rotated or deleted token ends it."
      )
  )
  .add(
    HttpApiEndpoint.get("asset", "/assets/:file")
      .setPath(Schema.Struct({ file: Schema.String }))
      .addSuccess(HttpApiSchema.Text({ contentType: "application/octet-stream" }))
      .annotate(OpenApi.Summary, "A file of the dashboard page (content-hashed name, cached for a year)")
  )
  .annotate(OpenApi.Title, "Dashboard page") {}

// ---------------------------------------------------------------------------------------------------------------
// Health
// ---------------------------------------------------------------------------------------------------------------

/** `GET /healthz` and `GET /readyz` (contract section 1). */
export class HealthGroup extends HttpApiGroup.make("health", { topLevel: true })
  .add(
    HttpApiEndpoint.get("healthz", "/healthz").addSuccess(HealthStatus).annotate(OpenApi.Summary, "The process is up")
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(HealthStatus)
      .annotate(OpenApi.Summary, "The storage answers (503 unavailable otherwise)")
  )
  .annotate(OpenApi.Title, "Health") {}

// ---------------------------------------------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------------------------------------------

/** The Prometheus text exposition format, as `GET /metrics` answers it. */
export const MetricsText = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain; version=0.0.4; charset=utf-8" })
).annotations({ identifier: "MetricsText", description: "Prometheus text exposition format 0.0.4" })

/** `GET /metrics` (contract section 12). */
export class MetricsGroup extends HttpApiGroup.make("metrics", { topLevel: true })
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(MetricsText)
      .annotate(OpenApi.Summary, "Prometheus metrics")
      .annotate(
        OpenApi.Description,
        "Request counts and durations by route template and status, points stored, push errors by code, " +
          "group-commit sizes, open event streams and events sent, decimation pass results, and the process's own " +
          "metrics (contract section 12). No label carries an access key, a view token, or a stream or account name"
      )
  )
  .annotate(OpenApi.Title, "Metrics") {}

// ---------------------------------------------------------------------------------------------------------------
// Admin
// ---------------------------------------------------------------------------------------------------------------

/** The name of the console's session cookie (contract section 14). */
export const sessionCookieName = "dashstream_session"

/** The header a cookie-authenticated change must carry (contract section 14), and its only accepted value. */
export const consoleHeader = { name: "X-Dashstream-Console", value: "1" } as const

/**
 * The console session cookie as a security scheme (contract section 14). `apiKey` in a cookie is how OpenAPI
 * describes it; the value is a signed session, not a key.
 */
const sessionCookie = HttpApiSecurity.apiKey({ in: "cookie", key: sessionCookieName }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The console session set by POST /console/session (HttpOnly, SameSite=Strict, 12 hours). A request that changes " +
      `anything (any method but GET and HEAD) must also carry \`${consoleHeader.name}: ${consoleHeader.value}\`, ` +
      "otherwise 403 forbidden and nothing changes. An invalid, tampered, expired or signed-out session is 401"
  )
)

/**
 * The admin API's credentials (contract sections 7 and 14): `Authorization: Bearer <admin token>`, or the console's
 * session cookie. A request with an `Authorization` header is judged by it alone.
 */
export class AdminAuth extends HttpApiMiddleware.Tag<AdminAuth>()("AdminAuth", {
  // The storage errors: the session's sign-out check reads the storage (500, 503).
  failure: Schema.Union(
    errors("Unauthorized"),
    errors("Forbidden"),
    errors("StorageError"),
    errors("StorageUnavailable")
  ),
  security: {
    adminToken: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "The admin token (DASHSTREAM_ADMIN_TOKEN)")
    ),
    consoleSession: sessionCookie
  }
}) {}

const AccountIdParam = Schema.Struct({ id: Schema.String.annotations({ description: "The account id" }) })

const RotationIdParam = Schema.Struct({
  id: Schema.String.annotations({ description: "The account id" }),
  rotationId: Schema.String.annotations({ description: "The rotation id" })
})

const DashboardIdParam = Schema.Struct({
  id: Schema.String.annotations({ description: "The account id" }),
  dashboardId: Schema.String.annotations({ description: "The dashboard id" })
})

/** An account as the admin API lists it (contract section 14): never a key. */
export const AccountView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  createdAt: IsoTime
}).annotations({ identifier: "Account" })

/** A widget as `GET .../widgets` lists it: with the latest entry of its stream (contract section 14). */
export const WidgetWithLatestView = Schema.Struct({
  ...WidgetView.fields,
  latest: Schema.NullOr(ReadEntry).annotations({
    description: "The latest entry of the stream, as a read without since gives it; null when the stream is empty"
  })
}).annotations({ identifier: "WidgetWithLatest" })

/**
 * Accounts, widgets (contract sections 7 and 14), dashboards (section 11) and rotations (section 15); mounted only
 * when the admin API is on
 * (an admin token configured, or generated for the run).
 */
export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.get("listAccounts", "/admin/accounts")
      .addSuccess(Schema.Struct({ accounts: Schema.Array(AccountView) }).annotations({ identifier: "AccountList" }))
      .annotate(OpenApi.Summary, "List every account, oldest first (never an access key)")
  )
  .add(
    HttpApiEndpoint.post("createAccount", "/admin/accounts")
      .setPayload(withBoundedIssues(Schema.Struct({ name: Schema.optional(Schema.String) })))
      .addSuccess(
        Schema.Struct({
          id: Schema.String,
          name: Schema.String,
          accessKey: Schema.String.annotations({ description: "Shown only here" })
        }).annotations({ identifier: "CreatedAccount" }),
        { status: 201 }
      )
      .addError(errors("InvalidJson", "InvalidRequest"))
      .annotate(OpenApi.Summary, "Create an account and its first access key")
  )
  .add(
    HttpApiEndpoint.post("addAccessKey", "/admin/accounts/:id/access-keys")
      .setPath(AccountIdParam)
      .setUrlParams(
        Schema.Struct({
          revokeOthers: Schema.optional(
            Schema.BooleanFromString.annotations({ description: "true revokes every older key of the account" })
          )
        })
      )
      .addSuccess(Schema.Struct({ accessKey: Schema.String }).annotations({ identifier: "NewAccessKey" }), {
        status: 201
      })
      .addError(errors("InvalidRequest"))
      .addError(errors("AccountNotFound"))
      .annotate(OpenApi.Summary, "Add an access key")
  )
  .add(
    HttpApiEndpoint.get("listWidgets", "/admin/accounts/:id/widgets")
      .setPath(AccountIdParam)
      .addSuccess(
        Schema.Struct({ widgets: Schema.Array(WidgetWithLatestView) }).annotations({ identifier: "WidgetList" })
      )
      .addError(errors("AccountNotFound"))
      .annotate(OpenApi.Summary, "List the account's widgets, by stream name, each with its latest entry")
  )
  .add(
    HttpApiEndpoint.post("createWidget", "/admin/accounts/:id/widgets")
      .setPath(AccountIdParam)
      .setPayload(
        withBoundedIssues(
          Schema.Struct({
            streamName: Schema.String.annotations({ description: "1 to 255 characters, no control characters, no /" }),
            type: WidgetTypeName
          })
        )
      )
      .addSuccess(WidgetView, { status: 201 })
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("AccountNotFound"))
      .addError(errors("Conflict"))
      .annotate(OpenApi.Summary, "Declare a widget (its stream and widget type)")
  )
  .add(
    HttpApiEndpoint.del("deleteWidget", "/admin/accounts/:id/widgets/:stream")
      .setPath(Schema.Struct({ id: Schema.String, stream: Schema.String }))
      .addSuccess(Schema.Void, { status: 204 })
      .addError(errors("AccountNotFound", "StreamNotFound"))
      .annotate(OpenApi.Summary, "Delete a widget and its stream's data")
  )
  .add(
    HttpApiEndpoint.post("pushPoint", "/admin/accounts/:id/widgets/:stream/points")
      .setPath(
        Schema.Struct({
          id: Schema.String.annotations({ description: "The account id" }),
          stream: Schema.String.annotations({ description: "The stream name, URL-encoded" })
        })
      )
      .setPayload(
        Schema.Unknown.annotations({
          identifier: "PointBody",
          description: "A point, exactly as a push's `point` (contract section 3); an empty point clears the stream"
        })
      )
      .addSuccess(PushSuccess)
      .addError(errors("InvalidJson", "InvalidRequest", "InvalidPoint", "UnsupportedCommand"))
      .addError(errors("AccountNotFound", "StreamNotFound"))
      .addError(errors("PayloadTooLarge"))
      .annotate(OpenApi.Summary, "Push a point to a widget's stream, as a push with the account's key would")
      .annotate(
        OpenApi.Description,
        "Stored exactly as `POST /customSend` with `{accessKey: <a key of this account>, streamName, point: <body>}` " +
          "stores it (contract section 3: the widget type's rules, live updates, durability), and answered as that " +
          "push is: 200 `{message: Success!}`, or its error (paths start at `point`)"
      )
  )
  .add(
    HttpApiEndpoint.post("createDashboard", "/admin/accounts/:id/dashboards")
      .setPath(AccountIdParam)
      .setPayload(withBoundedIssues(CreateDashboardBody))
      .addSuccess(DashboardView, { status: 201 })
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("AccountNotFound"))
      .annotate(OpenApi.Summary, "Create a dashboard and its view token")
      .annotate(
        OpenApi.Description,
        "Without tiles: one tile per widget of the account, in creation order, laid out to fill a 16:9 screen. " +
          "Tiles lie on a grid 12 columns wide (0 <= x, x + w <= 12, w, h >= 1, y >= 0, integers, no overlap) and " +
          "each names a widget of the account; otherwise 400 invalid_request with path (tiles[2].streamName). At " +
          "most 100 tiles; name 1 to 200 characters. A tile may carry options (contract section 15, TileOptions): " +
          "thresholds [{above|below: n, color}] on number, horizontal-bar, vertical-bar, dial, sparkline and " +
          "line-graph tiles; min and max (min < max) on horizontal-bar, vertical-bar and dial tiles; staleAfter " +
          "(whole seconds, 10 to 31536000) on any tile; unknown keys, or an option the tile's widget type does not " +
          "take, are 400 invalid_request with path (tiles[1].options.thresholds[0].color). The answer is the only one besides rotate that shows the view " +
          "token and url"
      )
  )
  .add(
    HttpApiEndpoint.get("listDashboards", "/admin/accounts/:id/dashboards")
      .setPath(AccountIdParam)
      .addSuccess(
        Schema.Struct({ dashboards: Schema.Array(DashboardView) }).annotations({ identifier: "DashboardList" })
      )
      .addError(errors("AccountNotFound"))
      .annotate(OpenApi.Summary, "List the account's dashboards, oldest first (viewToken and url are null)")
  )
  .add(
    HttpApiEndpoint.get("getDashboard", "/admin/accounts/:id/dashboards/:dashboardId")
      .setPath(DashboardIdParam)
      .addSuccess(DashboardView)
      .addError(errors("AccountNotFound", "DashboardNotFound"))
      .annotate(OpenApi.Summary, "One dashboard (viewToken and url are null)")
  )
  .add(
    HttpApiEndpoint.put("updateDashboard", "/admin/accounts/:id/dashboards/:dashboardId")
      .setPath(DashboardIdParam)
      .setPayload(withBoundedIssues(UpdateDashboardBody))
      .addSuccess(DashboardView)
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("AccountNotFound", "DashboardNotFound"))
      .annotate(OpenApi.Summary, "Replace a dashboard's name and tiles; its view URL keeps working")
      .annotate(OpenApi.Description, "The same tile rules as create; answers the new version (viewToken and url null)")
  )
  .add(
    HttpApiEndpoint.del("deleteDashboard", "/admin/accounts/:id/dashboards/:dashboardId")
      .setPath(DashboardIdParam)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(errors("AccountNotFound", "DashboardNotFound"))
      .annotate(OpenApi.Summary, "Delete a dashboard; its view URL stops working")
  )
  .add(
    HttpApiEndpoint.post("rotateViewToken", "/admin/accounts/:id/dashboards/:dashboardId/view-token")
      .setPath(DashboardIdParam)
      .addSuccess(DashboardView, { status: 201 })
      .addError(errors("AccountNotFound", "DashboardNotFound"))
      .annotate(OpenApi.Summary, "Give a dashboard a new view token; the old view URL stops working at once")
  )
  .add(
    HttpApiEndpoint.post("createRotation", "/admin/accounts/:id/rotations")
      .setPath(AccountIdParam)
      .setPayload(withBoundedIssues(RotationBody))
      .addSuccess(RotationView, { status: 201 })
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("AccountNotFound"))
      .annotate(OpenApi.Summary, "Create a rotation and its view token")
      .annotate(
        OpenApi.Description,
        "Several dashboards of the account shown in turn on one screen (contract section 15). intervalSeconds a " +
          "whole number 5 to 3600; dashboardIds at most 50 of the account's dashboards (may be empty; one may repeat); " +
          "name 1 to 200 characters. Otherwise 400 invalid_request with path (dashboardIds[1]). The answer is the only " +
          "one besides rotate that shows the view token and url"
      )
  )
  .add(
    HttpApiEndpoint.get("listRotations", "/admin/accounts/:id/rotations")
      .setPath(AccountIdParam)
      .addSuccess(Schema.Struct({ rotations: Schema.Array(RotationView) }).annotations({ identifier: "RotationList" }))
      .addError(errors("AccountNotFound"))
      .annotate(OpenApi.Summary, "List the account's rotations, oldest first (viewToken and url are null)")
  )
  .add(
    HttpApiEndpoint.get("getRotation", "/admin/accounts/:id/rotations/:rotationId")
      .setPath(RotationIdParam)
      .addSuccess(RotationView)
      .addError(errors("AccountNotFound", "RotationNotFound"))
      .annotate(OpenApi.Summary, "One rotation (viewToken and url are null)")
  )
  .add(
    HttpApiEndpoint.put("updateRotation", "/admin/accounts/:id/rotations/:rotationId")
      .setPath(RotationIdParam)
      .setPayload(withBoundedIssues(RotationBody))
      .addSuccess(RotationView)
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("AccountNotFound", "RotationNotFound"))
      .annotate(OpenApi.Summary, "Replace a rotation's name, dashboards and interval; its view URL keeps working")
      .annotate(
        OpenApi.Description,
        "The same rules as create; answers the new version (viewToken and url null). Open rotation pages follow it"
      )
  )
  .add(
    HttpApiEndpoint.del("deleteRotation", "/admin/accounts/:id/rotations/:rotationId")
      .setPath(RotationIdParam)
      .addSuccess(Schema.Void, { status: 204 })
      .addError(errors("AccountNotFound", "RotationNotFound"))
      .annotate(OpenApi.Summary, "Delete a rotation; its view URL stops working")
  )
  .add(
    HttpApiEndpoint.post("rotateRotationViewToken", "/admin/accounts/:id/rotations/:rotationId/view-token")
      .setPath(RotationIdParam)
      .addSuccess(RotationView, { status: 201 })
      .addError(errors("AccountNotFound", "RotationNotFound"))
      .annotate(OpenApi.Summary, "Give a rotation a new view token; the old view URL stops working at once")
  )
  .middleware(AdminAuth)
  .annotate(OpenApi.Title, "Admin") {}

// ---------------------------------------------------------------------------------------------------------------
// Console
// ---------------------------------------------------------------------------------------------------------------

/** `GET /console/session`: the session the cookie names. */
export const SessionView = Schema.Struct({
  expiresAt: IsoTime.annotations({ description: "When the session ends (12 hours after sign-in)" })
}).annotations({ identifier: "ConsoleSession" })

/**
 * `GET /console` and `GET /console/assets/:file` (contract section 14); served by the page lane, only when the admin
 * API is on (otherwise 404).
 */
export class ConsolePageGroup extends HttpApiGroup.make("consolePage", { topLevel: true })
  .add(
    HttpApiEndpoint.get("consolePage", "/console")
      .addSuccess(HttpApiSchema.Text({ contentType: "text/html" }))
      .annotate(OpenApi.Summary, "The console page")
      .annotate(
        OpenApi.Description,
        "The web page from which an operator runs the service, with a Content-Security-Policy and " +
          "Referrer-Policy: no-referrer. Opening `/console#token=<admin token>` signs in (the page posts the " +
          "fragment to POST /console/session; a fragment never reaches the server)"
      )
  )
  .add(
    HttpApiEndpoint.get("consoleAsset", "/console/assets/:file")
      .setPath(Schema.Struct({ file: Schema.String }))
      .addSuccess(HttpApiSchema.Text({ contentType: "application/octet-stream" }))
      .annotate(OpenApi.Summary, "A file of the console page (content-hashed name, cached for a year)")
  )
  .annotate(OpenApi.Title, "Console") {}

/**
 * The console's sign-in and sign-out (contract section 14). Mounted only when the admin API is on; otherwise every
 * path of it answers 404.
 */
export class ConsoleGroup extends HttpApiGroup.make("console", { topLevel: true })
  .add(
    HttpApiEndpoint.post("signIn", "/console/session")
      .setPayload(Schema.Struct({ token: Schema.String.annotations({ description: "The admin token" }) }))
      .addSuccess(Schema.Void, { status: 204 })
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("Unauthorized"))
      .addError(errors("RateLimited"))
      .annotate(OpenApi.Summary, "Sign in with the admin token: sets the session cookie")
      .annotate(
        OpenApi.Description,
        `204 and \`Set-Cookie: ${sessionCookieName}=<signed session>; Path=/; Max-Age=43200; HttpOnly; ` +
          "SameSite=Strict` (plus `Secure` over HTTPS); the cookie never holds the token. A wrong token is 401. The " +
          "sixth failed sign-in from one address within a minute, and every sign-in from it for the rest of that " +
          "minute, is 429 with Retry-After. The session lasts 12 hours, works on every process of the deployment, " +
          "and ends when the admin token changes"
      )
  )
  .add(
    HttpApiEndpoint.get("getSession", "/console/session")
      .addSuccess(SessionView)
      .addError(errors("Unauthorized"))
      .annotate(OpenApi.Summary, "The session of the cookie: 200 while signed in, 401 otherwise")
  )
  .add(
    HttpApiEndpoint.del("signOut", "/console/session")
      .addSuccess(Schema.Void, { status: 204 })
      .addError(errors("Forbidden"))
      .annotate(OpenApi.Summary, "Sign out: clears the cookie; the session is refused from then on, also replayed")
      .annotate(
        OpenApi.Description,
        `Needs \`${consoleHeader.name}: ${consoleHeader.value}\` (403 forbidden without it, and nothing changes). ` +
          "The session of the cookie, if any, is recorded as signed out, so every process refuses it from then on; " +
          "the answer clears the cookie"
      )
  )
  .annotate(OpenApi.Title, "Console") {}

// ---------------------------------------------------------------------------------------------------------------
// The API
// ---------------------------------------------------------------------------------------------------------------

const base = HttpApi.make("dashstream")
  .addError(errors("StorageError"))
  .addError(errors("StorageUnavailable"))
  .annotate(OpenApi.Title, "Dashstream")
  .annotate(OpenApi.Version, "2")
  .annotate(
    OpenApi.Description,
    "Push points into dashboard widget streams and read them back (export API v2). " +
      'Every error answers a non-2xx status and {"error": {"code", "message", "path"?}}.'
  )
  .annotate(OpenApi.Transform, cleanDecodeErrors)

/** The API without the admin and console groups: what is served when the admin API is off. */
export const publicApi = base
  .add(PushGroup)
  .add(InfluxGroup)
  .add(SmashingGroup)
  .add(ReadGroup)
  .add(LiveGroup)
  .add(ViewGroup)
  .add(HealthGroup)
  .add(MetricsGroup)

/** The whole API, admin and console included (contract sections 1, 5, 6, 7, 11, 14). */
export const api = publicApi.add(AdminGroup).add(ConsolePageGroup).add(ConsoleGroup)
