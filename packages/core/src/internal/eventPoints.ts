import type { Limits } from "../Limits.js"
import type { GalleryPoint, MapColor, MapPoint, PointOp, StoredPoint, TextFeedPoint, XyPoint } from "../Point.js"
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
  record,
  show,
  stringField,
  urlField,
  wrongShape
} from "./pointFields.js"

// Points of the events widget kinds: maps, text feed, xy-graph (one or an array of them) and gallery (one).

type Decode1 = (o: unknown, path: string, index: number) => StoredPoint

/** One event point, or an array of them, each decoded by `one`. */
export const events = (type: WidgetType, point: unknown, path: string, limits: Limits, one: Decode1): PointOp => {
  if (!Array.isArray(point)) {
    if (!isRecord(point)) throw wrongShape(type, point, path)
    return put1(one(point, path, -1))
  }
  checkLength(point, path, limits)
  const entries: Array<{ readonly point: StoredPoint }> = new Array(point.length)
  for (let i = 0; i < point.length; i++) entries[i] = { point: one(point[i], path, i) }
  return { _tag: "Put", entries }
}

const mapColors: ReadonlySet<string> = new Set<MapColor>(["red", "blue", "green", "purple", "yellow"])

export const mapPoint = (u: unknown, path: string, index: number): MapPoint => {
  const o = record(u, path, index, `{"latitude", "longitude"}`)
  const latitude = numberField(o, "latitude", path, index)
  if (latitude < -90 || latitude > 90) {
    throw invalid(at(path, index, "latitude"), `latitude must be between -90 and 90, got ${latitude}`)
  }
  const longitude = numberField(o, "longitude", path, index)
  if (longitude < -180 || longitude > 180) {
    throw invalid(at(path, index, "longitude"), `longitude must be between -180 and 180, got ${longitude}`)
  }
  const p: Mutable<MapPoint> = { latitude, longitude }
  // As in the original service, an unknown colour (or null) is stored without one and displays as the default.
  const color = o["color"]
  if (typeof color === "string" && mapColors.has(color)) p.color = color as MapColor
  const title = optionalString(o, "title", path, index)
  if (title !== undefined) p.title = title
  const body = optionalString(o, "body", path, index)
  if (body !== undefined) p.body = body
  return p
}

export const textFeedPoint = (u: unknown, path: string, index: number): TextFeedPoint => {
  const o = record(u, path, index, `{"title", "msg"}`)
  const p: Mutable<TextFeedPoint> = {
    title: stringField(o, "title", path, index),
    msg: stringField(o, "msg", path, index)
  }
  const imgUrl = urlField(o, "imgUrl", path, index, true)
  if (imgUrl !== undefined) p.imgUrl = imgUrl
  const date = o["date"]
  if (typeof date === "string" || (typeof date === "number" && Number.isFinite(date))) p.date = date
  else if (date !== undefined && date !== null) {
    throw invalid(at(path, index, "date"), `date must be a string or a number, got ${show(date)}`)
  }
  return p
}

export const galleryPoint = (o: Json, path: string, index: number): GalleryPoint => {
  const title = stringField(o, "title", path, index)
  const msg = optionalString(o, "msg", path, index)
  const imgUrl = urlField(o, "imgUrl", path, index, false)!
  return msg === undefined ? { title, imgUrl } : { title, msg, imgUrl }
}

export const xyPoint = (u: unknown, path: string, index: number): XyPoint => {
  const o = record(u, path, index, `{"x", "y"}`)
  return { x: numberField(o, "x", path, index), y: numberField(o, "y", path, index) }
}
