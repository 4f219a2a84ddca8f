import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { type ViewKind, viewKinds, viewSegment } from "@dashstream/core"
import { errors, type KnownErrorTag } from "../HttpErrors.js"
import { viewTokenPath } from "./PathParams.js"
import { ReadResponse, ReadUrlParams } from "./Read.js"
import { Cors, Lane } from "./Routing.js"

/**
 * What the page and the event stream of each kind of shared view say and answer beyond what they share: the endpoint
 * names (as the OpenAPI document lists them), the not-found error, the summaries and descriptions.
 */
const viewPageOf = {
  dashboard: {
    notFound: "DashboardNotFound",
    page: "page",
    pageSummary: "The dashboard page",
    pageDescription:
      "The live dashboard of this view token, as an HTML page with a Content-Security-Policy; it draws every tile " +
      "and follows `/d/<viewToken>/events`. An unknown or rotated token answers 404.",
    events: "dashboardEvents",
    eventsSummary: "The dashboard's event stream (Server-Sent Events)",
    eventsDescription:
      'One event stream for the whole page: `event: snapshot` with data `{"tiles": {"<streamName>": [entries...]}}` ' +
      "(the latest entry of state tiles, the latest 2 of number tiles, up to 1,000 recent entries of series and " +
      'events tiles), then `event: entry` `{"streamName","ts","point"}`, `event: clear` `{"streamName"}` and ' +
      '`event: deleted` `{"streamName"}` as they happen. A reconnect gets a fresh snapshot; a rotated token ends it.'
  },
  rotation: {
    notFound: "RotationNotFound",
    page: "rotationPage",
    pageSummary: "The rotation page",
    pageDescription:
      "Each dashboard of the rotation full-screen in turn, its name as the page title, for intervalSeconds, " +
      "looping, with a small progress indicator (docs/api.md section 15); all live over `/r/<viewToken>/events`. " +
      "The same headers as the dashboard page. An unknown, rotated or deleted token answers 404.",
    events: "rotationEvents",
    eventsSummary: "The rotation's one event stream (Server-Sent Events)",
    eventsDescription:
      'First `event: rotation` with data `{"rotation": {"id","name","dashboardIds","intervalSeconds","viewToken",' +
      '"url","createdAt"}, "dashboards": [{"id","name","tiles": [{...tile, "type"}]}]}`, then one `event: ' +
      "snapshot` for the union of the dashboards' tiles (as a dashboard's), then `event: entry` " +
      '`{"streamName","dashboardId","dashboardIds","ts","point"}`, `event: clear` and `event: deleted` ' +
      '`{"streamName","dashboardId","dashboardIds"}` (the dashboards showing the stream; one subscription per ' +
      "stream however many show it). A change of the rotation or of one of its dashboards sends a new `event: " +
      "rotation`, then a snapshot of the tiles it did not show before. A rotated or deleted token ends it."
  }
} as const satisfies {
  readonly [K in ViewKind]: {
    readonly notFound: KnownErrorTag
    readonly page: string
    readonly pageSummary: string
    readonly pageDescription: string
    readonly events: string
    readonly eventsSummary: string
    readonly eventsDescription: string
  }
}

/**
 * The page of one kind of shared view, `GET /<segment>/:viewToken` (docs/api.md sections 11 and 15): HTML, `theme`
 * `dark` (the default) or `light`; 404 with the kind's not-found error for an unknown or rotated token.
 */
const pageEndpoint = <K extends ViewKind>(kind: K) =>
  HttpApiEndpoint.get(viewPageOf[kind].page, `/${viewSegment[kind]}/:viewToken`)
    .setPath(viewTokenPath(kind))
    .setUrlParams(
      Schema.Struct({
        theme: Schema.optional(Schema.Literal("dark", "light").annotations({ description: "Colour theme (dark)" }))
      })
    )
    .addSuccess(HttpApiSchema.Text({ contentType: "text/html" }))
    .addError(errors(viewPageOf[kind].notFound))
    .annotate(OpenApi.Summary, viewPageOf[kind].pageSummary)
    .annotate(OpenApi.Description, viewPageOf[kind].pageDescription)

/**
 * The event stream of one kind of shared view, `GET /<segment>/:viewToken/events` (docs/api.md sections 11 and 15),
 * served by the live lane; 404 with the kind's not-found error, 429 when the token has too many open.
 */
const eventsEndpoint = <K extends ViewKind>(kind: K) =>
  HttpApiEndpoint.get(viewPageOf[kind].events, `/${viewSegment[kind]}/:viewToken/events`)
    .setPath(viewTokenPath(kind))
    .addSuccess(HttpApiSchema.Text({ contentType: "text/event-stream" }))
    .addError(errors(viewPageOf[kind].notFound))
    .addError(errors("RateLimited"))
    .annotate(Lane, "live")
    .annotate(Cors, true)
    .annotate(OpenApi.Summary, viewPageOf[kind].eventsSummary)
    .annotate(OpenApi.Description, viewPageOf[kind].eventsDescription)

type ViewEndpoint = {
  readonly [K in ViewKind]: ReturnType<typeof pageEndpoint<K>> | ReturnType<typeof eventsEndpoint<K>>
}[ViewKind]

/**
 * `GET /d/:viewToken`, `GET /d/:viewToken/events` and `GET /assets/:file` (docs/api.md section 11), and a rotation's
 * `GET /r/:viewToken` and `GET /r/:viewToken/events` (section 15); served by the page and live lanes. A page and an
 * event stream per kind of {@link viewKinds}, in that order.
 */
export class ViewGroup extends viewKinds
  .reduce<HttpApiGroup.HttpApiGroup<"view", ViewEndpoint, never, never, true>>(
    // Each kind's endpoints have that kind's names and errors; the list's element type only knows the union of kinds.
    (group, kind) => group.add(pageEndpoint(kind) as ViewEndpoint).add(eventsEndpoint(kind) as ViewEndpoint),
    HttpApiGroup.make("view", { topLevel: true })
  )
  .add(
    HttpApiEndpoint.get("asset", "/assets/:file")
      .setPath(Schema.Struct({ file: Schema.String }))
      .addSuccess(HttpApiSchema.Text({ contentType: "application/octet-stream" }))
      .annotate(OpenApi.Summary, "A file of the dashboard page (content-hashed name, cached for a year)")
  )
  .add(
    HttpApiEndpoint.get("favicon", "/favicon.ico")
      .addSuccess(HttpApiSchema.Text({ contentType: "image/svg+xml" }))
      .annotate(OpenApi.Exclude, true)
  )
  .annotate(Lane, "page")
  .annotate(OpenApi.Title, "Dashboard page") {}

const ViewReadUrlParams = Schema.Struct({
  stream: Schema.optional(Schema.String.annotations({ description: "The stream name to read (required)" })),
  ...ReadUrlParams.fields
})

const viewReadNote =
  "The export read of `GET /api/v2/<KEY>/datastream/<STREAM>` (range reads included: from, to, points; since and " +
  "limit as there) for a stream this view token shows, with the same body, streaming and errors (docs/api.md " +
  "section 6.1). `stream` missing: 400 invalid_request with path `stream`; a stream no tile shows: 404 " +
  "stream_not_found; an unknown or rotated token: 404 as for the page. Rate limited by the view token."

/** What the range read of each kind of shared view says and answers beyond what they share. */
const rangeOf = {
  dashboard: { notFound: "DashboardNotFound", shows: "the dashboard shows" },
  rotation: { notFound: "RotationNotFound", shows: "one of the rotation's dashboards shows" }
} as const satisfies { readonly [K in ViewKind]: { readonly notFound: KnownErrorTag; readonly shows: string } }

/**
 * The range read of one kind of shared view, `GET /<segment>/:viewToken/range` named `<kind>Range` (docs/api.md
 * section 6.1): the export read of a stream the view shows, authorised by its view token; 404 with the kind's
 * not-found error for an unknown or rotated token.
 */
const rangeEndpoint = <K extends ViewKind>(kind: K) =>
  HttpApiEndpoint.get(`${kind}Range`, `/${viewSegment[kind]}/:viewToken/range`)
    .setPath(viewTokenPath(kind))
    .setUrlParams(ViewReadUrlParams)
    .addSuccess(ReadResponse)
    .addError(errors("InvalidSince", "InvalidRequest"))
    .addError(errors(rangeOf[kind].notFound, "StreamNotFound"))
    .addError(errors("RateLimited"))
    .annotate(OpenApi.Summary, `Read a stream ${rangeOf[kind].shows}`)
    .annotate(OpenApi.Description, viewReadNote)

type RangeEndpoint = { readonly [K in ViewKind]: ReturnType<typeof rangeEndpoint<K>> }[ViewKind]

/**
 * `GET /d/:viewToken/range` and `GET /r/:viewToken/range` (docs/api.md section 6.1): the export read of a stream the
 * dashboard, or one of the rotation's dashboards, shows, authorised by its view token; served by the `HttpApi` lane.
 * One {@link rangeEndpoint} per kind of {@link viewKinds}, in that order.
 */
export class ViewReadGroup extends viewKinds
  .reduce<HttpApiGroup.HttpApiGroup<"viewRead", RangeEndpoint, never, never, true>>(
    // Each kind's endpoint has that kind's name and errors; the list's element type only knows the union of kinds.
    (group, kind) => group.add(rangeEndpoint(kind) as RangeEndpoint),
    HttpApiGroup.make("viewRead", { topLevel: true })
  )
  .annotate(Cors, true)
  .annotate(OpenApi.Title, "Dashboard page") {}
