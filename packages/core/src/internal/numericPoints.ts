import type { Limits } from "../Limits.js"
import type { NumberPoint, PointOp, StoredPoint } from "../Point.js"
import { formatTs, type Micros } from "../Time.js"
import type { WidgetType } from "../WidgetType.js"
import {
  at,
  checkLength,
  invalid,
  isRecord,
  type Json,
  type Mutable,
  numberField,
  optionalString,
  put1,
  show,
  timestampField,
  toNumber,
  wrongShape
} from "./pointFields.js"

type DeltaOp = Extract<PointOp, { readonly _tag: "Delta" }>

/**
 * A point of the numeric widget kinds (number, bars, dial; `series` false) or the series kinds (sparkline,
 * line-graph; `series` true, which also take an array of timestamped numbers): a number, a numeric string, or an
 * object with `number` or `delta`.
 */
export const numeric = (type: WidgetType, point: unknown, path: string, limits: Limits, series: boolean): PointOp => {
  if (typeof point === "number" || typeof point === "string") {
    const n = toNumber(point)
    if (n === undefined) {
      throw invalid(path, `point must be a finite number, a numeric string or an object, got ${show(point)}`)
    }
    return put1({ number: n })
  }
  if (Array.isArray(point)) {
    if (!series) throw invalid(path, `a ${type} point is a single number or object, not an array`)
    return seriesArray(point, path, limits)
  }
  if (!isRecord(point)) throw wrongShape(type, point, path)
  const hasNumber = point["number"] !== undefined
  const hasDelta = point["delta"] !== undefined
  if (hasNumber && hasDelta) {
    throw invalid(at(path, -1, "delta"), "a point carries either number or delta, not both")
  }
  if (!hasDelta) {
    if (!hasNumber) throw invalid(at(path, -1, "number"), "number (or delta) is required")
    const p = numberPoint(point, path, -1)
    const ts = timestampField(point, path, -1)
    return { _tag: "Put", entries: [ts === undefined ? { point: p } : { point: p, ts }] }
  }
  const op: Mutable<DeltaOp> = { _tag: "Delta", delta: numberField(point, "delta", path, -1) }
  const prefix = optionalString(point, "prefix", path, -1)
  if (prefix !== undefined) op.prefix = prefix
  const suffix = optionalString(point, "suffix", path, -1)
  if (suffix !== undefined) op.suffix = suffix
  const ts = timestampField(point, path, -1)
  if (ts !== undefined) op.ts = ts
  return op
}

const numberPoint = (o: Json, path: string, index: number): NumberPoint => {
  const p: Mutable<NumberPoint> = { number: numberField(o, "number", path, index) }
  const prefix = optionalString(o, "prefix", path, index)
  if (prefix !== undefined) p.prefix = prefix
  const suffix = optionalString(o, "suffix", path, index)
  if (suffix !== undefined) p.suffix = suffix
  return p
}

const seriesArray = (array: ReadonlyArray<unknown>, path: string, limits: Limits): PointOp => {
  checkLength(array, path, limits)
  const entries: Array<{ readonly point: StoredPoint; readonly ts: Micros }> = new Array(array.length)
  let previous = -1
  for (let i = 0; i < array.length; i++) {
    const e = array[i]
    if (!isRecord(e)) {
      throw invalid(
        at(path, i),
        `each element of an array must be an object {"number": n, "timestamp": seconds}, got ${show(e)}`
      )
    }
    if (e["delta"] !== undefined) {
      throw invalid(at(path, i, "delta"), "delta is not accepted inside an array: give number and timestamp")
    }
    const point = numberPoint(e, path, i)
    const ts = timestampField(e, path, i)
    if (ts === undefined) {
      throw invalid(at(path, i, "timestamp"), "each element of an array needs its own timestamp (UNIX seconds)")
    }
    if (ts <= previous) {
      throw invalid(
        at(path, i, "timestamp"),
        `timestamps in an array must be strictly increasing: ${formatTs(ts)} does not come after ${formatTs(previous as Micros)}`
      )
    }
    previous = ts
    entries[i] = { point, ts }
  }
  return { _tag: "Put", entries }
}
