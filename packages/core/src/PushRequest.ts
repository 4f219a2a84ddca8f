import { Either } from "effect"
import { InvalidRequest, PayloadTooLarge } from "./Errors.js"
import type { Limits } from "./Limits.js"

/**
 * One stream's part of a push body: a `point` to decode against the widget type, or a `command`.
 * `path` is where it stands in the body (`""` for a single-stream push, `streams[3]` in a multi-stream push).
 */
export interface StreamPart {
  readonly streamName: string
  readonly path: string
  readonly body:
    { readonly _tag: "Point"; readonly point: unknown } | { readonly _tag: "Command"; readonly command: unknown }
}

/**
 * A push body with its shape checked (spec sections 4.2 to 4.4) but its points not yet decoded: they need the
 * widget types, which need the account. A single-stream push and a multi-stream push both become a list of parts.
 */
export interface PushRequest {
  readonly accessKey: string
  readonly parts: ReadonlyArray<StreamPart>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const at = (prefix: string, key: string) => (prefix === "" ? key : `${prefix}.${key}`)

const part = (o: Record<string, unknown>, path: string): Either.Either<StreamPart, InvalidRequest> => {
  const streamName = o["streamName"]
  if (typeof streamName !== "string") {
    return Either.left(
      new InvalidRequest({
        message: streamName === undefined ? "streamName is required" : "streamName must be a string",
        path: at(path, "streamName")
      })
    )
  }
  if ("epoint" in o) {
    return Either.left(
      new InvalidRequest({
        message: "encrypted points (epoint) are not supported: send the point unencrypted in `point` over HTTPS",
        path: at(path, "epoint")
      })
    )
  }
  const hasPoint = "point" in o
  const hasCommand = "command" in o && o["command"] !== undefined
  if (hasPoint && hasCommand) {
    return Either.left(
      new InvalidRequest({ message: "give either point or command, not both", path: at(path, "command") })
    )
  }
  if (hasCommand) return Either.right({ streamName, path, body: { _tag: "Command", command: o["command"] } })
  if (!hasPoint) {
    return Either.left(new InvalidRequest({ message: "point (or command) is required", path: at(path, "point") }))
  }
  return Either.right({ streamName, path, body: { _tag: "Point", point: o["point"] } })
}

/**
 * Checks the shape of a parsed push body (spec sections 4.2-4.4, contract section 5): an object with a string
 * `accessKey` and either `streamName` with `point` or `command`, or `streams` = array of `{streamName, point}`
 * (or `{streamName, command}`). Fails with `InvalidRequest` (with `path`) for a wrong shape, an `epoint`, or both
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
    return Either.map(part(body, ""), (p) => ({ accessKey, parts: [p] }))
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
  const parts: Array<StreamPart> = []
  for (let i = 0; i < streams.length; i++) {
    const s: unknown = streams[i]
    const path = `streams[${i}]`
    if (!isRecord(s)) return Either.left(new InvalidRequest({ message: "each stream must be an object", path }))
    const p = part(s, path)
    if (Either.isLeft(p)) return Either.left(p.left)
    parts.push(p.right)
  }
  return Either.right({ accessKey, parts })
}
