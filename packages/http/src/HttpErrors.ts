import { HttpApiSchema } from "@effect/platform"
import {
  AccountNotFound,
  AlertRuleNotFound,
  Conflict,
  DashboardNotFound,
  Forbidden,
  InvalidJson,
  InvalidPoint,
  InvalidRequest,
  InvalidSince,
  PayloadTooLarge,
  ReceiverNotFound,
  ReceiverUnreachable,
  RotationNotFound,
  StorageError,
  StorageUnavailable,
  StreamNotFound,
  UnsupportedCommand
} from "@dashstream/core"
import { Cause, Option, ParseResult, Schema } from "effect"

/**
 * The HTTP adapter is the one place that maps errors to status codes and to the error body of docs/api.md section 5:
 * `{"error": {"code", "message", "path"?}}`. This module holds that table, the two errors that exist only at the
 * HTTP edge (`Unauthorized`, `RateLimited`), and the schemas that document each error response in the OpenAPI
 * document.
 */

/** A wrong or missing `Authorization: Bearer <admin token>` on the admin API (docs/api.md section 7: 401 `unauthorized`). */
export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", {
  message: Schema.String
}) {}

/**
 * The access key used up its request budget (docs/api.md section 5: 429 `rate_limited`). `retryAfter` is the
 * `Retry-After` header value in whole seconds (at least 1).
 */
export class RateLimited extends Schema.TaggedError<RateLimited>()("RateLimited", {
  message: Schema.String,
  retryAfter: Schema.Number
}) {}

/** `RateLimited` for a key that must wait `retryAfter` whole seconds. */
export const rateLimited = (retryAfter: number): RateLimited =>
  new RateLimited({ message: `too many requests for this access key; retry in ${retryAfter} s`, retryAfter })

/** The error body of every non-2xx response (docs/api.md section 5). */
export const ErrorResponse = Schema.Struct({
  error: Schema.Struct({
    code: Schema.String.annotations({
      description: "Stable snake_case code (docs/api.md section 5), e.g. invalid_json, forbidden, stream_not_found"
    }),
    message: Schema.String.annotations({ description: "A human sentence; never a stack trace, SQL or a secret" }),
    path: Schema.optional(
      Schema.String.annotations({
        description: "Where in the request the problem is, e.g. streams[3].point.leaderboard[2].value"
      })
    )
  })
}).annotations({ identifier: "ErrorResponse", description: "Every error answer: a non-2xx status and this body" })

/** The encoded error body. */
export type ErrorResponse = typeof ErrorResponse.Type

/** The errors the HTTP adapter knows by name, with the type of each. */
export interface KnownErrors {
  readonly InvalidJson: InvalidJson
  readonly InvalidRequest: InvalidRequest
  readonly InvalidPoint: InvalidPoint
  readonly UnsupportedCommand: UnsupportedCommand
  readonly InvalidSince: InvalidSince
  readonly Unauthorized: Unauthorized
  readonly Forbidden: Forbidden
  readonly StreamNotFound: StreamNotFound
  readonly AccountNotFound: AccountNotFound
  readonly DashboardNotFound: DashboardNotFound
  readonly RotationNotFound: RotationNotFound
  readonly AlertRuleNotFound: AlertRuleNotFound
  readonly ReceiverNotFound: ReceiverNotFound
  readonly ReceiverUnreachable: ReceiverUnreachable
  readonly Conflict: Conflict
  readonly PayloadTooLarge: PayloadTooLarge
  readonly RateLimited: RateLimited
  readonly StorageError: StorageError
  readonly StorageUnavailable: StorageUnavailable
}

/** The name (`_tag`) of a known error. */
export type KnownErrorTag = keyof KnownErrors

interface Mapping {
  readonly status: number
  readonly code: string
  readonly is: (u: unknown) => boolean
}

const internalMessage = "internal server error"
const unavailableMessage = "storage is unavailable; nothing was stored, retry later"

/** docs/api.md section 5's table (plus the admin API's codes of sections 7, 11, 15 and 18), by error tag. */
const mappings: { readonly [K in KnownErrorTag]: Mapping } = {
  InvalidJson: { status: 400, code: "invalid_json", is: (u) => u instanceof InvalidJson },
  InvalidRequest: { status: 400, code: "invalid_request", is: (u) => u instanceof InvalidRequest },
  InvalidPoint: { status: 400, code: "invalid_point", is: (u) => u instanceof InvalidPoint },
  UnsupportedCommand: { status: 400, code: "unsupported_command", is: (u) => u instanceof UnsupportedCommand },
  InvalidSince: { status: 400, code: "invalid_since", is: (u) => u instanceof InvalidSince },
  Unauthorized: { status: 401, code: "unauthorized", is: (u) => u instanceof Unauthorized },
  Forbidden: { status: 403, code: "forbidden", is: (u) => u instanceof Forbidden },
  StreamNotFound: { status: 404, code: "stream_not_found", is: (u) => u instanceof StreamNotFound },
  AccountNotFound: { status: 404, code: "account_not_found", is: (u) => u instanceof AccountNotFound },
  DashboardNotFound: { status: 404, code: "dashboard_not_found", is: (u) => u instanceof DashboardNotFound },
  RotationNotFound: { status: 404, code: "rotation_not_found", is: (u) => u instanceof RotationNotFound },
  AlertRuleNotFound: { status: 404, code: "rule_not_found", is: (u) => u instanceof AlertRuleNotFound },
  ReceiverNotFound: { status: 404, code: "receiver_not_found", is: (u) => u instanceof ReceiverNotFound },
  ReceiverUnreachable: { status: 502, code: "receiver_unreachable", is: (u) => u instanceof ReceiverUnreachable },
  Conflict: { status: 409, code: "conflict", is: (u) => u instanceof Conflict },
  PayloadTooLarge: { status: 413, code: "payload_too_large", is: (u) => u instanceof PayloadTooLarge },
  RateLimited: { status: 429, code: "rate_limited", is: (u) => u instanceof RateLimited },
  StorageError: { status: 500, code: "internal", is: (u) => u instanceof StorageError },
  StorageUnavailable: { status: 503, code: "unavailable", is: (u) => u instanceof StorageUnavailable }
}

/**
 * An error answer: status, the fields of the error body, and extra headers (`Retry-After` on 429,
 * `WWW-Authenticate` on 401, `Allow` on 405).
 */
export interface ErrorReply {
  readonly status: number
  readonly code: string
  readonly message: string
  readonly path?: string | undefined
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/** Builds an {@link ErrorReply}. */
export const errorReply = (
  status: number,
  code: string,
  message: string,
  path?: string,
  headers?: Readonly<Record<string, string>>
): ErrorReply => ({ status, code, message, path, headers })

/** 500 `internal` with the generic message: what every defect and `StorageError` answers. */
export const internalReply: ErrorReply = errorReply(500, "internal", internalMessage)

const unauthorizedHeaders = { "www-authenticate": 'Bearer realm="dashstream-admin"' }

const isTagged = (u: unknown): u is { readonly _tag: string } =>
  typeof u === "object" && u !== null && typeof (u as { _tag?: unknown })._tag === "string"

const stringField = (u: object, key: string): string | undefined => {
  const value = (u as Record<string, unknown>)[key]
  return typeof value === "string" ? value : undefined
}

/**
 * The answer to a known error (a domain error, `Unauthorized`, `RateLimited`, a storage failure), or `undefined`
 * for anything else, which the caller treats as a defect (500, logged). Storage failures never expose their cause.
 */
export const replyOf = (error: unknown): ErrorReply | undefined => {
  if (!isTagged(error) || !Object.prototype.hasOwnProperty.call(mappings, error._tag)) return undefined
  const mapping = mappings[error._tag as KnownErrorTag]
  if (!mapping.is(error)) return undefined
  switch (error._tag) {
    case "StorageError":
      return internalReply
    case "StorageUnavailable":
      return errorReply(503, "unavailable", unavailableMessage)
    case "RateLimited":
      return errorReply(429, mapping.code, (error as RateLimited).message, undefined, {
        "retry-after": String((error as RateLimited).retryAfter)
      })
    case "Unauthorized":
      return errorReply(401, mapping.code, (error as Unauthorized).message, undefined, unauthorizedHeaders)
  }
  return errorReply(mapping.status, mapping.code, stringField(error, "message") ?? "", stringField(error, "path"))
}

/**
 * The answer to a failed effect of a direct lane: {@link replyOf} its failure, or 500 `internal` for a defect or an
 * unknown error (the caller logs those).
 */
export const replyOfCause = (cause: Cause.Cause<unknown>): ErrorReply => {
  const failure = Cause.failureOption(cause)
  return (Option.isSome(failure) ? replyOf(failure.value) : undefined) ?? internalReply
}

/** The error body of a reply. */
const errorBody = (reply: ErrorReply): ErrorResponse => ({
  error:
    reply.path === undefined
      ? { code: reply.code, message: reply.message }
      : { code: reply.code, message: reply.message, path: reply.path }
})

/** The JSON text of an error body. */
export const errorBodyText = (reply: ErrorReply): string => JSON.stringify(errorBody(reply))

/**
 * The OpenAPI description of an error response carrying any of `tags` (all of one status): decodes nothing
 * (the server only encodes), encodes an instance of one of the errors to {@link ErrorResponse}. Used in the
 * `HttpApi` definition, so handlers may fail with exactly these errors and the document shows their real body.
 * Throws at module load if the tags do not share one status.
 */
export const errors = <const Tags extends ReadonlyArray<KnownErrorTag>>(
  ...tags: Tags
): Schema.Schema<KnownErrors[Tags[number]], ErrorResponse> => {
  const status = mappings[tags[0]!].status
  for (const tag of tags) {
    if (mappings[tag].status !== status) throw new Error(`errors(): ${tag} is not a ${status} error`)
  }
  const codes = [...new Set(tags.map((tag) => mappings[tag].code))]
  const is = (u: unknown): u is KnownErrors[Tags[number]] => tags.some((tag) => mappings[tag].is(u))
  return Schema.transformOrFail(ErrorResponse, Schema.declare(is), {
    strict: true,
    decode: (body, _, ast) => ParseResult.fail(new ParseResult.Forbidden(ast, body, "error responses are encode-only")),
    encode: (error, _, ast) => {
      const reply = replyOf(error)
      return reply === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, error, "not a known error"))
        : ParseResult.succeed(errorBody(reply))
    }
  }).annotations({
    ...HttpApiSchema.annotations({ status }),
    description: codes.join(", ")
  })
}
