import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { errors } from "../HttpErrors.js"
import { Cors, Lane } from "./Routing.js"

/** `{"message": "Success!"}`: the 200 body of a push (docs/api.md section 5). */
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
    Schema.Unknown.annotations({ description: "The point (docs/api.md section 3); an empty point clears the stream" })
  ),
  command: Schema.optional(Schema.Literal("clear")),
  streams: Schema.optional(Schema.Array(StreamPart).annotations({ description: "A multi-stream push (at most 256)" }))
}).annotations({
  identifier: "PushRequest",
  description:
    "Raw JSON. Accepted whatever the Content-Type says (application/json, application/x-www-form-urlencoded, none)"
})

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

/** `POST /customSend` and `POST /customSend/` (docs/api.md section 1). */
export class PushGroup extends HttpApiGroup.make("push", { topLevel: true })
  .add(pushEndpoint("push", "/customSend").annotate(OpenApi.Summary, "Push, clear or multi-stream push"))
  .add(pushEndpoint("pushTrailingSlash", "/customSend/").annotate(OpenApi.Summary, "Same as POST /customSend"))
  .annotate(Lane, "ingest")
  .annotate(Cors, true)
  .annotate(OpenApi.Title, "Push") {}
