import { Either } from "effect"
import { InvalidPoint } from "./Errors.js"
import type { LeaderboardItem, PointOp, StoredPoint } from "./Point.js"
import { type Micros, nextServerTs } from "./Time.js"
import { type WidgetKind, type WidgetType, widgetKind } from "./WidgetType.js"

/**
 * What an adapter knows about a stream before applying a write, read inside the write transaction:
 * `lastTs` is the highest `ts` ever assigned in the stream (kept across clears, so `ts` never goes back),
 * `latest` the point of the entry with the highest `ts` still stored (`null` when the stream is empty or when
 * the operation does not need it, see {@link needsLatest}).
 */
export interface StreamState {
  readonly lastTs: Micros | null
  readonly latest: StoredPoint | null
}

/**
 * One entry to store. `ts` in microseconds; an existing entry with the same `ts` is replaced (docs/api.md section 3,
 * "replace on equal ts"). `json` is `point` serialised; `value` is the number decimation ranks by (`number`, or `y`
 * for xy-graph; `null` for other types).
 */
export interface EntryWrite {
  readonly ts: Micros
  readonly point: StoredPoint
  readonly json: string
  readonly value: number | null
}

/**
 * The effect of one write on one stream: when `clear`, delete every entry first and record `clearedAt` as the
 * stream's last clear; then upsert `entries` by `ts`; then set the stream's highest assigned `ts` to `lastTs`.
 *
 * A clear takes a `ts` of its own, assigned as a server `ts` is (`clearedAt`, microseconds): it is greater than every
 * `ts` it cleared and smaller than every server `ts` assigned after it, so it can serve as the `id` of the clear event
 * of a live event stream (docs/api.md section 10) and a client resuming from an older id learns that it missed it.
 */
export interface Mutation {
  readonly clear: boolean
  /** The `ts` of the clear (microseconds) when `clear`, else `null`. */
  readonly clearedAt: Micros | null
  readonly entries: ReadonlyArray<EntryWrite>
  readonly lastTs: Micros | null
}

/** True when applying `op` needs the stream's latest point (delta and the add-one-item operations). */
export const needsLatest = (op: PointOp): boolean =>
  op._tag === "Delta" || op._tag === "LeaderboardItem" || op._tag === "ListItem" || op._tag === "TableRow"

// `decimationValue` with the type's kind already known (a `Put` of many entries looks it up once).
const rankedValue = (kind: WidgetKind, type: WidgetType, point: StoredPoint): number | null => {
  if (kind === "numeric" || kind === "series") return "number" in point ? point.number : null
  if (type === "xy-graph") return "y" in point ? point.y : null
  return null
}

/** The number decimation ranks an entry by (docs/api.md section 9): `number` for numeric types, `y` for xy-graph. */
export const decimationValue = (type: WidgetType, point: StoredPoint): number | null =>
  rankedValue(widgetKind(type), type, point)

/**
 * `point` as JSON, as `JSON.stringify` writes it. A point of only a `number` (every numeric and series point without
 * prefix or suffix, the bulk of what is pushed) is written directly: `JSON.stringify` writes a finite number as
 * `String` does, and that is about half the cost of the generic serialiser on the push path.
 */
export const pointJson = (point: StoredPoint): string => {
  if ("number" in point) {
    const keys = Object.keys(point)
    if (keys.length === 1 && keys[0] === "number") return '{"number":' + point.number + "}"
  }
  return JSON.stringify(point)
}

/**
 * The {@link EntryWrite} of `point` at `ts` in a stream of type `type`, whose kind is `kind`; `json` is `point`
 * serialised when the decoder gave it (a `Put` entry's `json`).
 */
const entryWrite = (
  kind: WidgetKind,
  type: WidgetType,
  point: StoredPoint,
  ts: Micros,
  json: string | undefined
): EntryWrite => ({
  ts,
  point,
  json: json ?? pointJson(point),
  value: rankedValue(kind, type, point)
})

/** An entry of a `Put` (`PointOp`), as a decoder gave it. */
type GivenEntry = Extract<PointOp, { readonly _tag: "Put" }>["entries"][number]

/**
 * The {@link EntryWrite} of an entry of a `Put` of several, at `ts`: its JSON is taken (or serialised) at once, as
 * every adapter reads it, but its point and ranked value are read from the entry when asked, which the adapters do
 * once per entry at most (`value` when it is stored, `point` for the stream's latest). A line protocol body's entries
 * wait for their group commit and then for the transaction's round trip: an `EntryWrite` of four fields with its
 * point, two boxed numbers (`ts` and `value`) and its JSON was six objects per entry that young-generation
 * collections copied; this is three (itself, its boxed `ts` and its JSON).
 */
class PutEntryWrite implements EntryWrite {
  readonly json: string

  constructor(
    readonly ts: Micros,
    private readonly entry: GivenEntry,
    private readonly type: WidgetType
  ) {
    this.json = entry.json ?? pointJson(entry.point)
  }

  get point(): StoredPoint {
    return this.entry.point
  }

  get value(): number | null {
    return rankedValue(widgetKind(this.type), this.type, this.entry.point)
  }
}

/**
 * The mutation of an operation that stores one `point` (`clientTs`: the client's `ts`, else a server `ts` is
 * assigned) to a stream whose highest `ts` is `lastTs`.
 */
const putOne = (
  type: WidgetType,
  point: StoredPoint,
  clientTs: Micros | undefined,
  lastTs: Micros | null,
  now: Micros,
  json?: string
): Mutation => {
  const ts = clientTs ?? nextServerTs(lastTs, now)
  return {
    clear: false,
    clearedAt: null,
    entries: [entryWrite(widgetKind(type), type, point, ts, json)],
    lastTs: lastTs === null || ts > lastTs ? ts : lastTs
  }
}

/**
 * Applies a decoded operation to a stream's state (docs/api.md sections 3 and 4). Pure: the same inputs give the
 * same mutation. Server-assigned `ts` are `now` or, if the stream already reached it, one microsecond past the
 * stream's highest `ts`. Fails with `InvalidPoint` (at `path`) when the operation does not fit the stored state:
 * a table row whose width differs from the header row, or a delta whose sum is not a finite number (`1e308 + 1e308`).
 */
export const applyOp = (
  type: WidgetType,
  op: PointOp,
  state: StreamState,
  now: Micros,
  path: string
): Either.Either<Mutation, InvalidPoint> => {
  // No closure per call: this runs once per write on the push path (a helper closure was 3-7 % of its CPU).
  const lastTs = state.lastTs
  const latest = state.latest
  switch (op._tag) {
    case "Clear": {
      const clearedAt = nextServerTs(lastTs, now)
      return Either.right({ clear: true, clearedAt, entries: [], lastTs: clearedAt })
    }
    case "Put": {
      const given = op.entries
      if (given.length === 1) {
        const e = given[0]!
        return Either.right(putOne(type, e.point, e.ts, lastTs, now, e.json))
      }
      const entries: Array<EntryWrite> = new Array(given.length)
      let top = lastTs
      for (let i = 0; i < given.length; i++) {
        const e = given[i]!
        const ts = e.ts ?? nextServerTs(top, now)
        if (top === null || ts > top) top = ts
        entries[i] = new PutEntryWrite(ts, e, type)
      }
      return Either.right({ clear: false, clearedAt: null, entries, lastTs: top })
    }
    case "Delta": {
      const base = latest !== null && "number" in latest ? latest : undefined
      const prefix = op.prefix ?? base?.prefix
      const suffix = op.suffix ?? base?.suffix
      const number = (base?.number ?? 0) + op.delta
      // A stored number is always finite (docs/api.md section 3): JSON would turn Infinity into null.
      if (!Number.isFinite(number)) {
        return Either.left(
          new InvalidPoint({
            message: `the delta ${op.delta} added to the latest number ${base?.number ?? 0} is not a finite number`,
            path: `${path}.delta`
          })
        )
      }
      const point = {
        number,
        ...(prefix !== undefined ? { prefix } : {}),
        ...(suffix !== undefined ? { suffix } : {})
      }
      return Either.right(putOne(type, point, op.ts, lastTs, now))
    }
    case "LeaderboardItem": {
      const current = latest !== null && "leaderboard" in latest ? latest.leaderboard : []
      let found = false
      const board: Array<LeaderboardItem> = current.map((i) => {
        if (i.name !== op.item.name) return i
        found = true
        return op.item
      })
      if (!found) board.push(op.item)
      // Array.prototype.sort is stable, so equal values keep their order (docs/api.md section 3).
      board.sort((a, b) => b.value - a.value)
      return Either.right(putOne(type, { leaderboard: board }, undefined, lastTs, now))
    }
    case "ListItem": {
      const list = latest !== null && "list" in latest ? latest.list : []
      return Either.right(putOne(type, { list: [{ listItem: op.listItem }, ...list] }, undefined, lastTs, now))
    }
    case "TableRow": {
      const table = latest !== null && "table" in latest ? latest.table : []
      // No table yet: the row becomes the table's first row, as listItem/leaderboardItem start a new collection.
      if (table.length === 0) return Either.right(putOne(type, { table: [op.row] }, undefined, lastTs, now))
      const header = table[0]!
      if (header.length !== op.row.length) {
        return Either.left(
          new InvalidPoint({
            message: `table row has ${op.row.length} cells but the header row has ${header.length}`,
            path: `${path}.tableRow`
          })
        )
      }
      return Either.right(putOne(type, { table: [header, op.row, ...table.slice(1)] }, undefined, lastTs, now))
    }
  }
}
