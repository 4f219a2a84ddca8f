import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { errors } from "../HttpErrors.js"
import { StreamPath } from "./PathParams.js"
import { Cors, Lane } from "./Routing.js"

const liveDescription =
  "Follow a stream live over Server-Sent Events (docs/api.md section 10). Errors are decided before the stream starts " +
  "and answered as JSON error bodies. Then `text/event-stream`: a `retry:` line at once; the backlog (entries with ts > " +
  "the `Last-Event-ID` header, else > `since`; with neither, the latest entry), then every new entry as it is stored: " +
  '`event: entry`, `id: <ts>`, `data: {"ts","point"}`. A clear sends `event: clear` (`data: {}`, an id above every ' +
  "cleared ts); a client resuming from an id older than the last clear gets `clear` first. Deleting the widget sends " +
  "`event: deleted` and ends the stream. `: ping` every 15 s without an event. A client more than 1 MiB behind is " +
  "disconnected (it resumes with Last-Event-ID and loses nothing). At most 100 open event streams per access key."

/** `GET /api/v2/:accessKey/datastream/:streamName/events` (docs/api.md section 10); served by the live lane. */
export class LiveGroup extends HttpApiGroup.make("live", { topLevel: true })
  .add(
    HttpApiEndpoint.get("events", "/api/v2/:accessKey/datastream/:streamName/events")
      .setPath(StreamPath)
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
  .annotate(Lane, "live")
  .annotate(Cors, true)
  .annotate(OpenApi.Title, "Live updates") {}
