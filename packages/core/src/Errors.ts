import { Data, Schema } from "effect"

/**
 * Domain errors. None of them knows about HTTP: the HTTP adapter maps each `_tag` to the status and error code
 * of docs/api.md section 5. `path` points into the request body (for example `streams[3].point.leaderboard[2].value`).
 */

/** The push body is not JSON (docs/api.md section 5: 400 `invalid_json`). */
export class InvalidJson extends Schema.TaggedError<InvalidJson>()("InvalidJson", {
  message: Schema.String
}) {}

/** JSON with the wrong fields: missing `accessKey`, both `point` and `command`, bad `limit`, ... (400 `invalid_request`). */
export class InvalidRequest extends Schema.TaggedError<InvalidRequest>()("InvalidRequest", {
  message: Schema.String,
  path: Schema.optional(Schema.String)
}) {}

/** A point that does not fit the stream's widget type (400 `invalid_point`). */
export class InvalidPoint extends Schema.TaggedError<InvalidPoint>()("InvalidPoint", {
  message: Schema.String,
  path: Schema.optional(Schema.String)
}) {}

/** An unknown command, or `clear` on a widget type that does not support it (400 `unsupported_command`). */
export class UnsupportedCommand extends Schema.TaggedError<UnsupportedCommand>()("UnsupportedCommand", {
  message: Schema.String,
  path: Schema.optional(Schema.String)
}) {}

/** `since` is not a non-negative number (400 `invalid_since`). */
export class InvalidSince extends Schema.TaggedError<InvalidSince>()("InvalidSince", {
  message: Schema.String
}) {}

/** Access key missing or unknown, on reads and pushes alike (403 `forbidden`). */
export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}) {}

/** No widget with that stream name in the key's account (404 `stream_not_found`). */
export class StreamNotFound extends Schema.TaggedError<StreamNotFound>()("StreamNotFound", {
  message: Schema.String,
  path: Schema.optional(Schema.String)
}) {}

/** No account with that id (admin API and CLI; 404 `account_not_found`). */
export class AccountNotFound extends Schema.TaggedError<AccountNotFound>()("AccountNotFound", {
  message: Schema.String
}) {}

/**
 * No dashboard with that id in the account (admin API and CLI; 404 `dashboard_not_found`), or no dashboard with that
 * view token (the page answers 404). The message never contains a view token.
 */
export class DashboardNotFound extends Schema.TaggedError<DashboardNotFound>()("DashboardNotFound", {
  message: Schema.String
}) {}

/**
 * No rotation with that id in the account (admin API and CLI; 404 `rotation_not_found`, docs/api.md section 15), or no
 * rotation with that view token (the page answers 404). The message never contains a view token.
 */
export class RotationNotFound extends Schema.TaggedError<RotationNotFound>()("RotationNotFound", {
  message: Schema.String
}) {}

/** No alert rule with that id in the account (admin API and CLI; 404 `rule_not_found`, docs/api.md section 18). */
export class AlertRuleNotFound extends Schema.TaggedError<AlertRuleNotFound>()("AlertRuleNotFound", {
  message: Schema.String
}) {}

/** No receiver with that id in the account (admin API and CLI; 404 `receiver_not_found`, docs/api.md section 18). */
export class ReceiverNotFound extends Schema.TaggedError<ReceiverNotFound>()("ReceiverNotFound", {
  message: Schema.String
}) {}

/**
 * A receiver's test notification found no answer (admin API: 502 `receiver_unreachable`, docs/api.md section 18): the
 * message gives the reason (`connection refused`, `timed out after 10 s`), never the receiver's URL.
 */
export class ReceiverUnreachable extends Schema.TaggedError<ReceiverUnreachable>()("ReceiverUnreachable", {
  message: Schema.String
}) {}

/**
 * `text` as quoted in an error message: JSON-quoted, cut to its first 100 characters (then `...` and its length),
 * so that an error about a 900 KB name does not echo it whole.
 */
export const quoted = (text: string): string => {
  if (text.length <= 100) return JSON.stringify(text)
  // Not between the two halves of a surrogate pair.
  const end = text.charCodeAt(99) >= 0xd800 && text.charCodeAt(99) <= 0xdbff ? 99 : 100
  return `${JSON.stringify(text.slice(0, end))}... (${text.length} characters)`
}

/** A stream name already taken in the account (admin API: 409 `conflict`). */
export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String
}) {}

/** Body over the size limit, too many streams, or too many array elements (413 `payload_too_large`). */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  message: Schema.String,
  path: Schema.optional(Schema.String)
}) {}

/** Any error a push body can be rejected with before anything is stored. */
export type PushRejection =
  InvalidJson | InvalidRequest | InvalidPoint | UnsupportedCommand | Forbidden | StreamNotFound | PayloadTooLarge

/**
 * Storage failed in a way that is not the client's fault (a bug, a constraint violation, a corrupt file).
 * Maps to 500 `internal`; the cause is logged, never sent to the client.
 */
export class StorageError extends Data.TaggedError("StorageError")<{ readonly cause: unknown }> {}

/**
 * Storage is unreachable (connection refused, pool exhausted, database shutting down). Nothing was stored and
 * the client may retry: 503 `unavailable`.
 */
export class StorageUnavailable extends Data.TaggedError("StorageUnavailable")<{ readonly cause: unknown }> {}

/** Every error a storage port method can fail with besides its domain errors. */
export type StorageFailure = StorageError | StorageUnavailable
