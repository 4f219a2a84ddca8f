/**
 * Which pushes may be sent twice without changing the result (docs/api.md sections 3 and 4). A retry after an ambiguous
 * failure (the request may have been stored) is allowed only for these; the rest are reported as
 * `OutcomeUnknownError`, so a retry can never double-count.
 */

import { collectionKeys } from "@dashstream/contract"

const isObject = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The point clears the stream (docs/api.md section 4): `null`, `""`, `{}`, `[]`, or an empty collection. */
const isEmptyPoint = (point: unknown): boolean => {
  if (point === null || point === "") return true
  if (Array.isArray(point)) return point.length === 0
  if (!isObject(point)) return false
  const keys = Object.keys(point).filter((k) => point[k] !== undefined)
  if (keys.length === 0) return true
  return (
    keys.length === 1 &&
    collectionKeys.includes(keys[0]!) &&
    Array.isArray(point[keys[0]!]) &&
    (point[keys[0]!] as Array<unknown>).length === 0
  )
}

const hasTimestamp = (o: Record<string, unknown>): boolean => o["timestamp"] !== undefined && o["timestamp"] !== null

/**
 * True when storing `point` twice leaves the stream as storing it once: a point with a client `timestamp` (the second
 * replaces the first, same `ts`) that is not a delta, an array whose every element has one, or an empty point (a
 * clear). False for a delta, `leaderboardItem`, `listItem`, `tableRow`, and every point without `timestamp` (each
 * push of those adds an entry).
 */
export const isRetrySafePoint = (point: unknown): boolean => {
  if (isEmptyPoint(point)) return true
  if (Array.isArray(point)) return point.every((e) => isObject(e) && e["delta"] === undefined && hasTimestamp(e))
  if (!isObject(point)) return false
  if (point["delta"] !== undefined) return false
  return hasTimestamp(point)
}

/** One stream's part of a push body: a point, or the clear command (idempotent: a stream cleared twice is empty). */
export type Part = { readonly point: unknown } | { readonly command: "clear" }

/** True when the part may be sent again after an ambiguous failure (see {@link isRetrySafePoint}). */
export const isRetrySafe = (part: Part): boolean => ("command" in part ? true : isRetrySafePoint(part.point))
