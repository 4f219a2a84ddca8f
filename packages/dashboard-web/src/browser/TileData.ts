import type { TileOptionsData } from "@dashstream/core/tileStatus"
import type { Entry, TileModel } from "../Model.js"
import { type WidgetType, widgetTypes } from "../WidgetType.js"

/**
 * Pure rules for the entries a tile holds (docs/api.md section 11): entries stay ascending by `ts`; an entry with the
 * `ts` of a held one replaces it (a timestamped push that replaces an entry is sent again); only the latest `keep`
 * entries are held (1 for state tiles). Returns a new array; never mutates its input.
 */
export const addEntry = (held: ReadonlyArray<Entry>, entry: Entry, keep: number): ReadonlyArray<Entry> => {
  let i = held.length
  while (i > 0 && held[i - 1]!.ts > entry.ts) i--
  const next = held.slice()
  if (i > 0 && held[i - 1]!.ts === entry.ts) next[i - 1] = entry
  else next.splice(i, 0, entry)
  return next.length > keep ? next.slice(next.length - keep) : next
}

/**
 * Pure: two ascending runs of entries as one, ascending, in one pass; where both hold an entry of the same `ts`, the
 * one of `later` is kept (it is the newer word on that instant). Returns `earlier` itself when `later` is empty.
 */
export const mergeEntries = (earlier: ReadonlyArray<Entry>, later: ReadonlyArray<Entry>): ReadonlyArray<Entry> => {
  if (later.length === 0) return earlier
  const out: Array<Entry> = []
  let i = 0
  let j = 0
  while (i < earlier.length || j < later.length) {
    const a = earlier[i]
    const b = later[j]
    if (b === undefined || (a !== undefined && a.ts < b.ts)) {
      out.push(a!)
      i++
    } else {
      if (a !== undefined && a.ts === b.ts) i++
      out.push(b)
      j++
    }
  }
  return out
}

/** The entries a snapshot gives a tile: sorted ascending by `ts`, same-`ts` duplicates collapsed, the latest `keep`. */
export const snapshotEntries = (entries: ReadonlyArray<Entry>, keep: number): ReadonlyArray<Entry> =>
  entries.reduce<ReadonlyArray<Entry>>((held, e) => addEntry(held, e, keep), [])

/**
 * The tiles in the order a reader sees them on screen: by row (`y`), then column (`x`); the saved array's order does
 * not matter. The page puts its tiles in the document in this order, so a phone, where the tiles stack in one column
 * (docs/live-and-dashboards.md, Dashboards), shows them top to bottom and left to right as the wide grid does.
 */
export const onScreenOrder = <T extends Pick<TileModel, "x" | "y">>(tiles: ReadonlyArray<T>): Array<T> =>
  [...tiles].sort((a, b) => a.y - b.y || a.x - b.x)

/** Decodes one entry of an event's data; `undefined` when it has no finite `ts`. */
export const toEntry = (raw: unknown): Entry | undefined => {
  if (typeof raw !== "object" || raw === null) return undefined
  const { ts, point } = raw as { ts?: unknown; point?: unknown }
  return typeof ts === "number" && Number.isFinite(ts) ? { ts, point } : undefined
}

/** A decoded section-11 event of the page's event stream. */
export type DashboardEvent =
  | {
      readonly kind: "snapshot"
      readonly tiles: ReadonlyMap<string, ReadonlyArray<Entry>>
      /** The streams whose widget no longer exists (the snapshot's `deleted` member; absent from older servers). */
      readonly deleted: ReadonlySet<string>
      /** The server's clock as it sent the snapshot, in seconds (`now`; absent from older servers). */
      readonly now?: number
      /** The firing alert rules of the tiles' streams (`firing`, see `firing.ts`; absent from older servers). */
      readonly firing?: unknown
    }
  | { readonly kind: "alerts"; readonly firing: unknown }
  | StreamEvent
  | { readonly kind: "layout"; readonly name: string; readonly tiles: ReadonlyArray<TileModel> }

/** An event of one stream: a new entry, the stream cleared, or its widget deleted. */
export type StreamEvent =
  | { readonly kind: "entry"; readonly streamName: string; readonly entry: Entry }
  | { readonly kind: "clear"; readonly streamName: string }
  | { readonly kind: "deleted"; readonly streamName: string }

const knownTypes: ReadonlySet<string> = new Set(widgetTypes)
const cell = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0

/**
 * A tile of a `layout` event (docs/api.md section 14): `{"streamName","title"?,"x","y","w","h","options"?,"type"}`, `type` `null`
 * when its widget no longer exists (then it shows "stream deleted", drawn as a label would be); `undefined` when
 * malformed.
 */
export const toTileModel = (raw: unknown): TileModel | undefined => {
  if (typeof raw !== "object" || raw === null) return undefined
  const { streamName, title, x, y, w, h, type, options } = raw as Record<string, unknown>
  if (typeof streamName !== "string" || !cell(x) || !cell(y) || !cell(w) || !cell(h) || w < 1 || h < 1) return undefined
  if (title !== undefined && typeof title !== "string") return undefined
  const known = typeof type === "string" && knownTypes.has(type)
  if (!known && type !== null) return undefined
  return {
    streamName,
    ...(title === undefined ? {} : { title }),
    type: known ? (type as WidgetType) : "label",
    x,
    y,
    w,
    h,
    deleted: !known,
    // Validated by the server (docs/api.md section 15); anything but an object is ignored.
    ...(typeof options === "object" && options !== null && !Array.isArray(options)
      ? { options: options as TileOptionsData }
      : {})
  }
}

/** An event's `data` parsed as a JSON object; `undefined` when it is not JSON or not an object (the page ignores it). */
export const parseObject = (data: string): Record<string, unknown> | undefined => {
  try {
    const raw: unknown = JSON.parse(data)
    return typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/**
 * Decodes the `data` of a `snapshot`, `entry`, `clear` or `deleted` event (docs/api.md section 11), or of a `layout`
 * event (section 14); `undefined` for malformed data, which the page ignores.
 */
export const decodeEvent = (type: string, data: string): DashboardEvent | undefined => {
  const obj = parseObject(data)
  if (obj === undefined) return undefined
  switch (type) {
    case "snapshot": {
      const tiles = new Map<string, ReadonlyArray<Entry>>()
      const rawTiles = obj["tiles"]
      if (typeof rawTiles !== "object" || rawTiles === null) return undefined
      for (const [name, list] of Object.entries(rawTiles)) {
        if (!Array.isArray(list)) continue
        tiles.set(
          name,
          list.map(toEntry).filter((e): e is Entry => e !== undefined)
        )
      }
      const rawDeleted = obj["deleted"]
      const deleted = new Set(
        Array.isArray(rawDeleted) ? rawDeleted.filter((d): d is string => typeof d === "string") : []
      )
      const now = obj["now"]
      const firing = "firing" in obj ? { firing: obj["firing"] } : {}
      return typeof now === "number" && Number.isFinite(now)
        ? { kind: "snapshot", tiles, deleted, now, ...firing }
        : { kind: "snapshot", tiles, deleted, ...firing }
    }
    case "alerts":
      return { kind: "alerts", firing: obj["firing"] }
    case "entry": {
      const entry = toEntry(obj)
      const streamName = obj["streamName"]
      return entry !== undefined && typeof streamName === "string" ? { kind: "entry", streamName, entry } : undefined
    }
    case "layout": {
      const name = obj["name"]
      const rawTiles = obj["tiles"]
      if (typeof name !== "string" || !Array.isArray(rawTiles)) return undefined
      const tiles = rawTiles.map(toTileModel)
      return tiles.every((t): t is TileModel => t !== undefined) ? { kind: "layout", name, tiles } : undefined
    }
    case "clear":
    case "deleted": {
      const streamName = obj["streamName"]
      return typeof streamName === "string" ? { kind: type, streamName } : undefined
    }
    default:
      return undefined
  }
}
