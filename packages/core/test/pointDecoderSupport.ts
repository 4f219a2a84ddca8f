/** What the decodePoint suites (PointDecoder*.test.ts) share: decoding with assertions, and the widget type groups. */
import { assert } from "@effect/vitest"
import { Either } from "effect"
import { InvalidPoint, PayloadTooLarge } from "../src/Errors.js"
import { defaultLimits, type Limits } from "../src/Limits.js"
import type { PointOp, StoredPoint } from "../src/Point.js"
import { decodePoint } from "../src/PointDecoder.js"
import { type Micros, secondsToMicros } from "../src/Time.js"
import { supportsClearCommand, type WidgetType, widgetTypes } from "../src/WidgetType.js"

/** The default limits with arrays of at most 3 elements. */
export const small: Limits = { ...defaultLimits, maxArrayElements: 3 }

/** The op `point` decodes to for `type`; fails the test when it is refused. */
export const decodeOk = (type: WidgetType, point: unknown, limits: Limits = defaultLimits): PointOp => {
  const r = decodePoint(type, point, "point", limits)
  if (Either.isLeft(r)) {
    return assert.fail(`expected ${JSON.stringify(point)} to decode for ${type}, got ${r.left.path}: ${r.left.message}`)
  }
  return r.right
}

/** The error `point` is refused with for `type` (its path based at `path`); fails the test when it decodes. */
export const decodeErr = (type: WidgetType, point: unknown, limits: Limits = defaultLimits, path = "point") => {
  const r = decodePoint(type, point, path, limits)
  if (Either.isRight(r)) {
    return assert.fail(`expected ${JSON.stringify(point)} to be rejected for ${type}, got ${JSON.stringify(r.right)}`)
  }
  assert.isTrue(r.left.message.length > 0)
  return r.left
}

/** Asserts an `InvalidPoint` at `path`, returns its message. */
export const invalidAt = (type: WidgetType, point: unknown, path: string, base = "point"): string => {
  const e = decodeErr(type, point, defaultLimits, base)
  assert.instanceOf(e, InvalidPoint, e.message)
  assert.strictEqual(e.path, path, e.message)
  return e.message
}

/** Asserts a `PayloadTooLarge` at `path` under {@link small} limits. */
export const tooLargeAt = (type: WidgetType, point: unknown, path: string): void => {
  const e = decodeErr(type, point, small)
  assert.instanceOf(e, PayloadTooLarge, e.message)
  assert.strictEqual(e.path, path)
}

/** A `Put` of `points`, without timestamps. */
export const put = (...points: ReadonlyArray<StoredPoint>): PointOp => ({
  _tag: "Put",
  entries: points.map((point) => ({ point }))
})

/** Asserts the decoded op equals `expected`, including the key order of the stored points (their JSON text). */
export const expectOp = (type: WidgetType, point: unknown, expected: PointOp): void => {
  const op = decodeOk(type, point)
  assert.deepStrictEqual(op, expected)
  assert.strictEqual(JSON.stringify(op), JSON.stringify(expected))
}

/** Seconds as microseconds. */
export const ts = (seconds: number): Micros => secondsToMicros(seconds)!

/** The widget types by the points they take; those cleared by the clear command and by an empty point. */
export const numberFamily = ["number", "horizontal-bar", "vertical-bar", "dial"] as const
export const seriesTypes = ["sparkline", "line-graph"] as const
export const numericTypes = [...numberFamily, ...seriesTypes] as const
export const clearCommandTypes = widgetTypes.filter(supportsClearCommand)
export const emptyClearedTypes = widgetTypes.filter((t) => !supportsClearCommand(t))

/** Number points with timestamps, one per `[number, timestamp]` pair. */
export const stamped = (...pairs: ReadonlyArray<readonly [unknown, unknown]>) =>
  pairs.map(([number, timestamp]) => ({ number, timestamp }))
