import { type ViewKind, viewKinds } from "@dashstream/core"
import { Schema } from "effect"

/**
 * The path parameters the endpoints share, declared once: a stream's (`:accessKey`, `:streamName`) and a shared view's
 * (`:viewToken`). Strings as the router gives them (percent-decoded); core decodes and checks them.
 */

const streamName = Schema.String.annotations({ description: "The stream name, URL-encoded" })

/** The path of a stream endpoint whose access key is in the body: Smashing's push (docs/api.md section 13.2). */
export const StreamNamePath = Schema.Struct({ streamName })

/**
 * The path of a keyed stream endpoint, `/api/v2/:accessKey/datastream/:streamName...`: the export read (docs/api.md
 * section 6) and the live event stream (section 10).
 */
export const StreamPath = Schema.Struct({
  accessKey: Schema.String.annotations({ description: "The account access key (never logged)" }),
  streamName
})

const makeViewTokenPath = (kind: ViewKind) =>
  Schema.Struct({
    viewToken: Schema.String.annotations({ description: `The ${kind}'s view token (never logged)` })
  })

/** The schema of a shared view's path: `{"viewToken"}`. */
export type ViewTokenPath = ReturnType<typeof makeViewTokenPath>

const viewTokenPaths = Object.fromEntries(viewKinds.map((kind) => [kind, makeViewTokenPath(kind)])) as Record<
  ViewKind,
  ViewTokenPath
>

/**
 * The path of a shared view's endpoints, `/d/:viewToken...` or `/r/:viewToken...` (docs/api.md sections 6.1, 11 and
 * 15): the same `viewToken` parameter for every kind, described as the kind's. One schema per kind, made once.
 */
export const viewTokenPath = (kind: ViewKind): ViewTokenPath => viewTokenPaths[kind]
