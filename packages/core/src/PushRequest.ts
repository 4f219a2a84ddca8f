import { Either } from "effect"
import { InvalidRequest, PayloadTooLarge, quoted, UnsupportedCommand } from "./Errors.js"
import type { IngestPart, IngestRequest, PartRejection } from "./Ingest.js"
import type { Limits } from "./Limits.js"
import type { PointOp } from "./Point.js"
import { decodePoint } from "./PointDecoder.js"
import { supportsClearCommand, type WidgetType } from "./WidgetType.js"

/**
 * The original service's push body (spec sections 4.2-4.4) as one parser into the protocol-neutral
 * {@link IngestRequest}: a single-stream push and a multi-stream push both become a list of parts.
 */

/**
 * One stream's part of a push body: the JSON object naming the stream (the body itself for a single-stream push, an
 * element of `streams` otherwise), whose `point` or `command` (exactly one, checked by {@link decodePushRequest}) is
 * decoded against the widget type by {@link decodeJsonPart}.
 */
export type JsonPart = Readonly<Record<string, unknown>>

/**
 * A push body with its shape checked (spec sections 4.2 to 4.4) but its points not yet decoded: they need the
 * widget types, which need the account. Each part's `path` is where its point stands: `point`, `streams[3].point`.
 */
export type PushRequest = IngestRequest<JsonPart>

/**
 * Decodes a `command` against a widget type (spec section 4.3, docs/api.md section 4): `"clear"` on sparkline,
 * line-graph, maps, text feed and xy-graph. `path` is where the command stands (`command`, `streams[3].command`).
 * Fails with `UnsupportedCommand` for any other command, or for `clear` on a type that is cleared by an empty point
 * instead (the message says so).
 */
export const decodeCommand = (
  type: WidgetType,
  command: unknown,
  path: string
): Either.Either<PointOp, UnsupportedCommand> => {
  if (command !== "clear") {
    return Either.left(
      new UnsupportedCommand({
        message: `unknown command ${typeof command === "string" ? quoted(command) : JSON.stringify(command)}: the only command is "clear"`,
        path
      })
    )
  }
  if (!supportsClearCommand(type)) {
    return Either.left(
      new UnsupportedCommand({
        message: `the clear command is not supported for ${type} widgets: push an empty point (for example {}) to clear it`,
        path
      })
    )
  }
  return Either.right(CLEAR)
}

const CLEAR: PointOp = Object.freeze({ _tag: "Clear" })

/** `streams[3].point` to `streams[3].<key>` (and `point` to `<key>`): a sibling of a part's point. */
const besidePoint = (pointPath: string, key: string): string => pointPath.slice(0, -5) + key

/**
 * The {@link IngestRequest.decode} of a push body's parts: the part's `command` through {@link decodeCommand}, else
 * its `point` through `decodePoint` (docs/api.md sections 3 and 4). `path` is the point's path.
 */
export const decodeJsonPart = (
  type: WidgetType,
  part: JsonPart,
  path: string,
  limits: Limits
): Either.Either<PointOp, PartRejection> => {
  const command = part["command"]
  return command !== undefined
    ? decodeCommand(type, command, besidePoint(path, "command"))
    : decodePoint(type, part["point"], path, limits)
}

const streamNamePath = (pointPath: string): string => besidePoint(pointPath, "streamName")

const single = (accessKey: string, part: IngestPart<JsonPart>): PushRequest => ({
  accessKey,
  parts: [part],
  undeclared: "reject",
  decode: decodeJsonPart,
  streamNamePath
})

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The path of `key` in the stream object at `index` of `streams` (`streams[3].key`), or in the body (`index` -1). */
const at = (index: number, key: string) => (index < 0 ? key : `streams[${index}].${key}`)

/**
 * The part of `o`, the body (`index` -1) or the stream object at `index` of `streams`, with its shape checked; the
 * refusal otherwise (returned, not wrapped: this runs once per stream of a push, and paths are only built for errors).
 */
const part = (o: Record<string, unknown>, index: number): IngestPart<JsonPart> | InvalidRequest => {
  const streamName = o["streamName"]
  if (typeof streamName !== "string") {
    return new InvalidRequest({
      message: streamName === undefined ? "streamName is required" : "streamName must be a string",
      path: at(index, "streamName")
    })
  }
  if ("epoint" in o) {
    return new InvalidRequest({
      message: "encrypted points (epoint) are not supported: send the point unencrypted in `point` over HTTPS",
      path: at(index, "epoint")
    })
  }
  const hasPoint = "point" in o
  const hasCommand = "command" in o && o["command"] !== undefined
  if (hasPoint && hasCommand) {
    return new InvalidRequest({ message: "give either point or command, not both", path: at(index, "command") })
  }
  if (!hasPoint && !hasCommand) {
    return new InvalidRequest({ message: "point (or command) is required", path: at(index, "point") })
  }
  return { streamName, path: at(index, "point"), value: o }
}

/**
 * Checks the shape of a parsed push body (spec sections 4.2-4.4, docs/api.md section 5): an object with a string
 * `accessKey` and either `streamName` with `point` or `command`, or `streams` = array of `{streamName, point}`
 * (or `{streamName, command}`). The result is an {@link IngestRequest} whose parts are decoded by
 * {@link decodeJsonPart}, refusing undeclared streams with `StreamNotFound` at `streamName` (`streams[3].streamName`). Fails with `InvalidRequest` (with `path`) for a wrong shape, an `epoint`, or both
 * `point` and `command`; with `PayloadTooLarge` for more streams than `limits.maxStreams`.
 */
export const decodePushRequest = (
  body: unknown,
  limits: Limits
): Either.Either<PushRequest, InvalidRequest | PayloadTooLarge> => {
  if (!isRecord(body)) return Either.left(new InvalidRequest({ message: "the push body must be a JSON object" }))
  const accessKey = body["accessKey"]
  if (typeof accessKey !== "string") {
    return Either.left(
      new InvalidRequest({
        message: accessKey === undefined ? "accessKey is required" : "accessKey must be a string",
        path: "accessKey"
      })
    )
  }
  const streams = body["streams"]
  if (streams === undefined) {
    const p = part(body, -1)
    return p instanceof InvalidRequest ? Either.left(p) : Either.right(single(accessKey, p))
  }
  if ("streamName" in body || "point" in body || "command" in body) {
    return Either.left(new InvalidRequest({ message: "give either streams or streamName, not both", path: "streams" }))
  }
  if (!Array.isArray(streams)) {
    return Either.left(new InvalidRequest({ message: "streams must be an array", path: "streams" }))
  }
  if (streams.length > limits.maxStreams) {
    return Either.left(
      new PayloadTooLarge({
        message: `a multi-stream push may carry at most ${limits.maxStreams} streams, this one has ${streams.length}`,
        path: "streams"
      })
    )
  }
  const parts: Array<IngestPart<JsonPart>> = new Array(streams.length)
  for (let i = 0; i < streams.length; i++) {
    const s: unknown = streams[i]
    if (!isRecord(s)) {
      return Either.left(new InvalidRequest({ message: "each stream must be an object", path: `streams[${i}]` }))
    }
    const p = part(s, i)
    if (p instanceof InvalidRequest) return Either.left(p)
    parts[i] = p
  }
  return Either.right({ accessKey, parts, undeclared: "reject", decode: decodeJsonPart, streamNamePath })
}
