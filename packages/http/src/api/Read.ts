import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { errors } from "../HttpErrors.js"
import { StreamPath } from "./PathParams.js"
import { Cors, Lane } from "./Routing.js"

/** One stored entry of a read: `ts` in UNIX seconds (microsecond precision) and the stored point. */
export const ReadEntry = Schema.Struct({
  ts: Schema.Number.annotations({ description: "UNIX seconds with up to 6 decimals; usable as the next `since`" }),
  point: Schema.Unknown.annotations({ description: "The stored point; its shape depends on the widget type" })
}).annotations({ identifier: "ReadEntry" })

/** The 200 body of an export read (docs/api.md section 6). */
export const ReadResponse = Schema.Struct({
  message: Schema.Literal("Success!"),
  data: Schema.Array(ReadEntry)
}).annotations({ identifier: "ReadResponse" })

/**
 * The query of an export read (docs/api.md section 6): `since` and `limit`, and for a range read (section 6.1) `from`,
 * `to` and `points`; all strings, decoded by core.
 */
export const ReadUrlParams = Schema.Struct({
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

/** `GET /api/v2/:accessKey/datastream/:streamName` (docs/api.md section 6). */
export class ReadGroup extends HttpApiGroup.make("read", { topLevel: true })
  .add(
    HttpApiEndpoint.get("read", "/api/v2/:accessKey/datastream/:streamName")
      .setPath(StreamPath)
      .setUrlParams(ReadUrlParams)
      .addSuccess(ReadResponse)
      .addError(errors("InvalidSince", "InvalidRequest"))
      .addError(errors("Forbidden"))
      .addError(errors("StreamNotFound"))
      .addError(errors("RateLimited"))
      .annotate(OpenApi.Summary, "Read a stream")
      .annotate(
        OpenApi.Description,
        "Entries in ascending ts, answered with Cache-Control: no-store (spec section 4.1, docs/api.md section 6). " +
          "More than 1,000 entries are streamed (chunked transfer encoding), 1,000 at a time. With any of from, to " +
          "or points it is a range read: the stored entries of the time window, unchanged, reduced to at most 4 " +
          "per bucket with points; a bad bound, points or limit is 400 invalid_request whose path names the parameter"
      )
  )
  .annotate(Lane, "read")
  .annotate(Cors, true)
  .annotate(OpenApi.Title, "Export") {}
