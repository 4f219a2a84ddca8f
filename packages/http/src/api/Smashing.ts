import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { errors } from "../HttpErrors.js"
import { StreamNamePath } from "./PathParams.js"
import { Cors, Lane } from "./Routing.js"

/** A Smashing push body (docs/api.md section 13.2): `auth_token` and the widget data, as Smashing jobs send it. */
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
    "without auth_token is the point (docs/api.md section 3). Other fields (moreinfo, updatedAt, ...) are ignored"
})

/** The 401 of a Smashing push: the text `Invalid API key`, as Smashing answers. */
const InvalidApiKey = Schema.Literal("Invalid API key")
  .pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain" }))
  .annotations({ description: "Missing or unknown auth_token (checked before the stream)" })

/** `POST /widgets/:streamName` (docs/api.md section 13.2); served by the ingest lane. */
export class SmashingGroup extends HttpApiGroup.make("smashing", { topLevel: true })
  .add(
    HttpApiEndpoint.post("smashing", "/widgets/:streamName")
      .setPath(StreamNamePath)
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
        "Smashing's push API (docs/api.md section 13.2): point a Smashing job's URL at Dashstream and use an access key " +
          "as auth_token. 204 with an empty body once stored."
      )
  )
  .annotate(Lane, "ingest")
  .annotate(Cors, true)
  .annotate(OpenApi.Title, "Smashing") {}
