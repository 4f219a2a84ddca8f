import { Either } from "effect"
import { InvalidPoint, PayloadTooLarge } from "../Errors.js"
import type { IngestRequest, PartRejection } from "../Ingest.js"
import type { Limits } from "../Limits.js"
import type { PointOp } from "../Point.js"
import { decodePoint } from "../PointDecoder.js"
import type { WidgetType } from "../WidgetType.js"

/**
 * Smashing (Dashing) widget pushes (docs/api.md section 13.2) as a parser into the protocol-neutral
 * {@link IngestRequest}: `POST /widgets/<stream name>` with `{"auth_token": "<access key>", ...widget data}`, the
 * widget data mapped by the stream's widget type to a point of docs/api.md section 3, then decoded as a push's point
 * (so every rule of section 3 applies: numeric strings, URLs, limits). Errors name Smashing's fields (`current`,
 * `points[2].x`, `items[0].label`), not the point's.
 */

/** A Smashing push's one part: the body (widget data and `auth_token`) and the stream it is for. */
export interface SmashingPart {
  readonly streamName: string
  readonly body: unknown
}

type Json = Readonly<Record<string, unknown>>

const isRecord = (u: unknown): u is Json => typeof u === "object" && u !== null && !Array.isArray(u)

const invalid = (path: string, message: string) => new InvalidPoint({ message, path })

const show = (u: unknown): string => {
  if (u === undefined) return "nothing"
  if (Array.isArray(u)) return "an array"
  if (isRecord(u)) return "an object"
  const s = String(JSON.stringify(u))
  return s.length > 40 ? `${s.slice(0, 37)}...` : s
}

/**
 * How a point's error is told in Smashing's terms: `path` and the message's leading field name rewritten from the
 * point's names to the widget data's (`number` to `current`, `[2].timestamp` to `points[2].x`).
 */
type Rename = (pointPath: string) => string

const renamed = (
  result: Either.Either<PointOp, InvalidPoint | PayloadTooLarge>,
  rename: Rename,
  fields: Readonly<Record<string, string>>
): Either.Either<PointOp, PartRejection> => {
  if (Either.isRight(result)) return result
  const error = result.left
  const space = error.message.indexOf(" ")
  const lead = space === -1 ? "" : error.message.slice(0, space)
  const field = fields[lead]
  const message = field === undefined ? error.message : field + error.message.slice(space)
  const path = rename(error.path ?? "")
  return Either.left(
    error._tag === "InvalidPoint" ? new InvalidPoint({ message, path }) : new PayloadTooLarge({ message, path })
  )
}

/** Renames the first path segment (`number` to `current`). */
const field =
  (from: string, to: string): Rename =>
  (path) =>
    path === from || path.startsWith(`${from}.`) || path.startsWith(`${from}[`) ? to + path.slice(from.length) : path

/** Renames the element fields of an array (`leaderboard[2].name` to `items[2].label`). */
const elements =
  (from: string, to: string, keys: Readonly<Record<string, string>>): Rename =>
  (path) => {
    const rest = field(from, to)(path)
    const dot = rest.lastIndexOf(".")
    if (dot === -1 || !rest.startsWith(`${to}[`)) return rest
    const key = keys[rest.slice(dot + 1)]
    return key === undefined ? rest : `${rest.slice(0, dot + 1)}${key}`
  }

const required = (o: Json, key: string, example: string): Either.Either<unknown, InvalidPoint> => {
  const u = o[key]
  return u === undefined || u === null
    ? Either.left(invalid(key, `${key} is required (Smashing widget data: ${example})`))
    : Either.right(u)
}

const arrayOf = (o: Json, key: string, example: string): Either.Either<ReadonlyArray<unknown>, InvalidPoint> => {
  const u = o[key]
  if (Array.isArray(u)) return Either.right(u)
  return Either.left(
    invalid(
      key,
      u === undefined || u === null
        ? `${key} is required (Smashing widget data: ${example})`
        : `${key} must be an array, got ${show(u)}`
    )
  )
}

const elementsOf = (
  array: ReadonlyArray<unknown>,
  key: string,
  shape: string
): Either.Either<ReadonlyArray<Json>, InvalidPoint> => {
  for (let i = 0; i < array.length; i++) {
    if (!isRecord(array[i])) {
      return Either.left(
        invalid(`${key}[${i}]`, `each element of ${key} must be an object ${shape}, got ${show(array[i])}`)
      )
    }
  }
  return Either.right(array as ReadonlyArray<Json>)
}

/** The stored form of an optional field: copied when present and not null. */
const copy = (to: Record<string, unknown>, key: string, from: Json, as = key): void => {
  const u = from[key]
  if (u !== undefined && u !== null) to[as] = u
}

const numberExample = `{"current": 42}`

/** Number (`{current, prefix?, suffix?}`) to `{number, prefix?, suffix?}`: number and bar widgets. */
const numberData = (type: WidgetType, o: Json, limits: Limits) =>
  Either.flatMap(required(o, "current", numberExample), (current) => {
    const point: Record<string, unknown> = { number: current }
    copy(point, "prefix", o)
    copy(point, "suffix", o)
    return renamed(decodePoint(type, point, "", limits), field("number", "current"), { number: "current" })
  })

/** Meter (`{value, min?, max?}`, or `{current}`) to `{number}`: dial widgets. */
const meterData = (type: WidgetType, o: Json, limits: Limits) => {
  const key = o["value"] === undefined && o["current"] !== undefined ? "current" : "value"
  return Either.flatMap(required(o, key, `{"value": 42}`), (value) =>
    renamed(decodePoint(type, { number: value }, "", limits), field("number", key), { number: key })
  )
}

const graphExample = `{"points": [{"x": 1732000000, "y": 42}]} or {"current": 42}`

/**
 * Graph (`{points: [{x, y}]}`, x in UNIX seconds) to one timestamped entry per point, or `{current}` to one entry:
 * sparkline and line-graph widgets. The whole window comes each time: a point whose `x` is stored replaces it.
 */
const graphData = (type: WidgetType, o: Json, limits: Limits) => {
  if (o["points"] === undefined && o["current"] !== undefined) {
    return renamed(decodePoint(type, { number: o["current"] }, "", limits), field("number", "current"), {
      number: "current"
    })
  }
  return Either.flatMap(arrayOf(o, "points", graphExample), (array) =>
    Either.flatMap(elementsOf(array, "points", `{"x", "y"}`), (points) => {
      const series = new Array<{ number: unknown; timestamp: unknown }>(points.length)
      for (let i = 0; i < points.length; i++) {
        const p = points[i]!
        if (p["x"] === undefined || p["x"] === null) return Either.left(invalid(`points[${i}].x`, "x is required"))
        if (p["y"] === undefined || p["y"] === null) return Either.left(invalid(`points[${i}].y`, "y is required"))
        series[i] = { number: p["y"], timestamp: p["x"] }
      }
      return renamed(decodePoint(type, series, "", limits), elements("", "points", { number: "y", timestamp: "x" }), {
        number: "y",
        timestamp: "x",
        timestamps: "x values"
      })
    })
  )
}

const listExample = `{"items": [{"label": "...", "value": 1}]}`

/** List (`{items: [{label, value}]}`, numeric values) to `{leaderboard: [{name, value}]}`: leaderboard, pie-chart. */
const boardData = (type: WidgetType, o: Json, limits: Limits) =>
  Either.flatMap(arrayOf(o, "items", listExample), (array) =>
    Either.flatMap(elementsOf(array, "items", `{"label", "value"}`), (items) => {
      const leaderboard = items.map((item) => ({ name: item["label"], value: item["value"] }))
      return renamed(
        decodePoint(type, { leaderboard }, "", limits),
        elements("leaderboard", "items", { name: "label" }),
        { name: "label", leaderboard: "items" }
      )
    })
  )

/** List (`{items: [{label, value?}]}`) to `{list: [{listItem}]}`, `label + " " + value` with a value: list widgets. */
const listData = (type: WidgetType, o: Json, limits: Limits) =>
  Either.flatMap(arrayOf(o, "items", listExample), (array) =>
    Either.flatMap(elementsOf(array, "items", `{"label", "value"?}`), (items) => {
      const list = new Array<{ listItem: unknown }>(items.length)
      for (let i = 0; i < items.length; i++) {
        const label = items[i]!["label"]
        const value = items[i]!["value"]
        if (typeof label !== "string" && typeof label !== "number") {
          return Either.left(
            invalid(
              `items[${i}].label`,
              label === undefined || label === null ? "label is required" : `label must be a string, got ${show(label)}`
            )
          )
        }
        if (value !== undefined && value !== null && typeof value !== "string" && typeof value !== "number") {
          return Either.left(invalid(`items[${i}].value`, `value must be a string or a number, got ${show(value)}`))
        }
        list[i] = { listItem: value === undefined || value === null ? label : `${label} ${value}` }
      }
      return renamed(decodePoint(type, { list }, "", limits), elements("list", "items", { listItem: "label" }), {
        listItem: "label",
        list: "items"
      })
    })
  )

/** Text (`{text}`) to `{label}`: label widgets. */
const labelData = (type: WidgetType, o: Json, limits: Limits) =>
  Either.flatMap(required(o, "text", `{"text": "..."}`), (text) =>
    renamed(decodePoint(type, { label: text }, "", limits), field("label", "text"), { label: "text" })
  )

/**
 * Comments (`{comments: [{name, body, avatar?}]}`) to one entry per comment, in order, or Text (`{text, title?}`)
 * to `{title: title or the stream name, msg: text}`: text-feed widgets.
 */
const feedData = (type: WidgetType, o: Json, streamName: string, limits: Limits) => {
  if (o["comments"] === undefined && o["text"] !== undefined) {
    const point: Record<string, unknown> = { title: o["title"] ?? streamName, msg: o["text"] }
    return renamed(decodePoint(type, point, "", limits), field("msg", "text"), { msg: "text" })
  }
  return Either.flatMap(
    arrayOf(o, "comments", `{"comments": [{"name": "...", "body": "..."}]} or {"text": "..."}`),
    (array) =>
      Either.flatMap(elementsOf(array, "comments", `{"name", "body", "avatar"?}`), (comments) => {
        const feed = comments.map((c) => {
          const point: Record<string, unknown> = { title: c["name"], msg: c["body"] }
          copy(point, "avatar", c, "imgUrl")
          return point
        })
        return renamed(
          decodePoint(type, feed, "", limits),
          elements("", "comments", { title: "name", msg: "body", imgUrl: "avatar" }),
          { title: "name", msg: "body", imgUrl: "avatar" }
        )
      })
  )
}

/** Image (`{image}`) to `{imgUrl}`: image widgets. */
const imageData = (type: WidgetType, o: Json, limits: Limits) =>
  Either.flatMap(required(o, "image", `{"image": "https://..."}`), (image) =>
    renamed(decodePoint(type, { imgUrl: image }, "", limits), field("imgUrl", "image"), { imgUrl: "image" })
  )

/** Every other widget type: the body without `auth_token` is the point (docs/api.md section 3). */
const pointData = (type: WidgetType, o: Json, limits: Limits) => {
  const { auth_token: _, ...point } = o
  return decodePoint(type, point, "", limits)
}

/**
 * The {@link IngestRequest.decode} of a Smashing push: the widget data mapped by the stream's widget type (contract
 * 13.2's table), then decoded as a push's point. Fails with `InvalidPoint` (400 `invalid_point`) for data that does
 * not fit, its `path` naming the widget data's field (`current`, `points[2].x`, `items[0].value`), or
 * `PayloadTooLarge` for an array over `limits.maxArrayElements`.
 */
export const decodeSmashing = (
  type: WidgetType,
  part: SmashingPart,
  _path: string,
  limits: Limits
): Either.Either<PointOp, PartRejection> => {
  const o = part.body
  if (!isRecord(o)) return Either.left(invalid("", `the widget data must be a JSON object, got ${show(o)}`))
  switch (type) {
    case "number":
    case "horizontal-bar":
    case "vertical-bar":
      return numberData(type, o, limits)
    case "dial":
      return meterData(type, o, limits)
    case "sparkline":
    case "line-graph":
      return graphData(type, o, limits)
    case "leaderboard":
    case "pie-chart":
      return boardData(type, o, limits)
    case "list":
      return listData(type, o, limits)
    case "label":
      return labelData(type, o, limits)
    case "text-feed":
      return feedData(type, o, part.streamName, limits)
    case "image":
      return imageData(type, o, limits)
    // No `default`: a new widget type fails to compile here until its Smashing mapping is chosen.
    case "usa-map":
    case "world-map":
    case "gallery":
    case "xy-graph":
    case "bar-chart":
    case "table":
    case "html":
    case "multi-bar-graph":
      return pointData(type, o, limits)
  }
}

/**
 * A Smashing push (docs/api.md section 13.2) as an {@link IngestRequest}: `streamName` from the path
 * (`/widgets/<stream name>`, URL-decoded), `body` the parsed JSON body. The access key is its `auth_token` (`""`
 * when absent or not a string, so the push is refused as `Forbidden`, before the stream is looked at); an
 * undeclared stream is refused (`StreamNotFound`, without `path`: the name came from the URL).
 */
export const smashingRequest = (streamName: string, body: unknown): IngestRequest<SmashingPart> => {
  const token = isRecord(body) ? body["auth_token"] : undefined
  return {
    accessKey: typeof token === "string" ? token : "",
    parts: [{ streamName, path: "", value: { streamName, body } }],
    undeclared: "reject",
    decode: decodeSmashing
  }
}
