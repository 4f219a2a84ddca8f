import { Either } from "effect"
import { InvalidPoint, PayloadTooLarge } from "./Errors.js"
import { events, galleryPoint, mapPoint, textFeedPoint, xyPoint } from "./internal/eventPoints.js"
import { numeric } from "./internal/numericPoints.js"
import {
  CLEAR,
  EMPTY_PUT,
  invalid,
  isEmptyObject,
  isRecord,
  put1,
  stringField,
  urlField,
  wrongShape
} from "./internal/pointFields.js"
import { board, list, matrix, table } from "./internal/statePoints.js"
import type { Limits } from "./Limits.js"
import type { PointOp } from "./Point.js"
import { MAX_SECONDS } from "./Time.js"
import { supportsClearCommand, type WidgetType } from "./WidgetType.js"

/**
 * Decodes a pushed `point` against the stream's widget type (docs/api.md sections 3 and 4) into the operation it asks
 * for. Pure and synchronous; `path` is where the point stands in the request body (`point`, `streams[3].point`) and
 * prefixes the `path` of every error.
 *
 * - Numbers are finite JSON numbers or numeric strings (decimal, optional sign and exponent, surrounding blanks
 *   ignored: `"42"`, `" -3.5e2 "`); they are stored as numbers. Hex, `"Infinity"`, `"NaN"` and `""` are rejected.
 * - `timestamp` (number, bar, dial, sparkline, line-graph only) is UNIX seconds, number or numeric string, in
 *   [0, {@link MAX_SECONDS}]; on other types it is an unknown field and ignored.
 * - Optional fields given as `null` count as absent; unknown fields are ignored and not stored. Stored points are
 *   built with a fixed key order and only the optional keys that were given.
 * - An empty point (`null`, `""`, `{}`, `[]`, or the type's collection key holding `[]`) is `Clear` for the types
 *   cleared that way; for the six types with the clear command it is rejected, except `[]`, which is an array push
 *   of no elements (`Put` with no entries).
 *
 * Fails with `InvalidPoint` (a sentence and the `path` of the offending value) or `PayloadTooLarge` when an array
 * (events, series, or a leaderboard/chart/list/table/matrix collection, or one table or matrix row) has more than
 * `limits.maxArrayElements` elements.
 */
export const decodePoint = (
  type: WidgetType,
  point: unknown,
  path: string,
  limits: Limits
): Either.Either<PointOp, InvalidPoint | PayloadTooLarge> => {
  try {
    return Either.right(decode(type, point, path, limits))
  } catch (e) {
    if (e instanceof InvalidPoint || e instanceof PayloadTooLarge) return Either.left(e)
    throw e
  }
}

// The decoders of each widget kind are in `internal/`: numeric and series points, events, state collections.

const decode = (type: WidgetType, point: unknown, path: string, limits: Limits): PointOp => {
  if (point === null || point === "") return emptyPoint(type, point, path)
  if (Array.isArray(point)) {
    // `[]` on the clear-command types is an array push of nothing; elsewhere it is the empty point.
    if (point.length === 0) return supportsClearCommand(type) ? EMPTY_PUT : CLEAR
  } else if (typeof point === "object" && isEmptyObject(point)) {
    return emptyPoint(type, point, path)
  }
  switch (type) {
    case "number":
    case "horizontal-bar":
    case "vertical-bar":
    case "dial":
      return numeric(type, point, path, limits, false)
    case "sparkline":
    case "line-graph":
      return numeric(type, point, path, limits, true)
    case "usa-map":
    case "world-map":
      return events(type, point, path, limits, mapPoint)
    case "text-feed":
      return events(type, point, path, limits, textFeedPoint)
    case "xy-graph":
      return events(type, point, path, limits, xyPoint)
    case "gallery":
      if (!isRecord(point)) throw wrongShape(type, point, path)
      return put1(galleryPoint(point, path, -1))
    case "leaderboard":
    case "pie-chart":
    case "bar-chart":
      return board(type, point, path, limits)
    case "list":
      return list(point, path, limits)
    case "table":
      return table(point, path, limits)
    case "multi-bar-graph":
      return matrix(point, path, limits)
    case "image":
      if (!isRecord(point)) throw wrongShape(type, point, path)
      return put1({ imgUrl: urlField(point, "imgUrl", path, -1, false)! })
    case "label":
      if (!isRecord(point)) throw wrongShape(type, point, path)
      return put1({ label: stringField(point, "label", path, -1) })
    case "html":
      if (!isRecord(point)) throw wrongShape(type, point, path)
      return put1({ html: stringField(point, "html", path, -1) })
  }
}

const emptyPoint = (type: WidgetType, point: unknown, path: string): PointOp => {
  if (!supportsClearCommand(type)) return CLEAR
  throw invalid(
    path,
    `the empty point ${JSON.stringify(point)} does not clear a ${type} stream: send {"command": "clear"} instead`
  )
}
