import { Either } from "effect"
import { InvalidPoint } from "./Errors.js"
import type { LeaderboardItem, PointOp, StoredPoint } from "./Point.js"
import { type Micros, nextServerTs } from "./Time.js"
import { type WidgetType, widgetKind } from "./WidgetType.js"

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
 * One entry to store. `ts` in microseconds; an existing entry with the same `ts` is replaced (contract section 3,
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
 * of a live event stream (contract section 10) and a client resuming from an older id learns that it missed it.
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

/** The number decimation ranks an entry by (contract section 9): `number` for numeric types, `y` for xy-graph. */
export const decimationValue = (type: WidgetType, point: StoredPoint): number | null => {
  const kind = widgetKind(type)
  if (kind === "numeric" || kind === "series") return "number" in point ? point.number : null
  if (type === "xy-graph") return "y" in point ? point.y : null
  return null
}

/**
 * Applies a decoded operation to a stream's state (contract sections 3 and 4). Pure: the same inputs give the
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
  let lastTs = state.lastTs
  const entries: Array<EntryWrite> = []
  const add = (point: StoredPoint, clientTs: Micros | undefined) => {
    const ts = clientTs ?? nextServerTs(lastTs, now)
    if (lastTs === null || ts > lastTs) lastTs = ts
    entries.push({ ts, point, json: JSON.stringify(point), value: decimationValue(type, point) })
  }
  const latest = state.latest
  switch (op._tag) {
    case "Clear": {
      const clearedAt = nextServerTs(lastTs, now)
      return Either.right({ clear: true, clearedAt, entries, lastTs: clearedAt })
    }
    case "Put":
      for (const e of op.entries) add(e.point, e.ts)
      break
    case "Delta": {
      const base = latest !== null && "number" in latest ? latest : undefined
      const prefix = op.prefix ?? base?.prefix
      const suffix = op.suffix ?? base?.suffix
      const number = (base?.number ?? 0) + op.delta
      // A stored number is always finite (contract section 3): JSON would turn Infinity into null.
      if (!Number.isFinite(number)) {
        return Either.left(
          new InvalidPoint({
            message: `the delta ${op.delta} added to the latest number ${base?.number ?? 0} is not a finite number`,
            path: `${path}.delta`
          })
        )
      }
      add(
        {
          number,
          ...(prefix !== undefined ? { prefix } : {}),
          ...(suffix !== undefined ? { suffix } : {})
        },
        op.ts
      )
      break
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
      // Array.prototype.sort is stable, so equal values keep their order (contract section 3).
      board.sort((a, b) => b.value - a.value)
      add({ leaderboard: board }, undefined)
      break
    }
    case "ListItem": {
      const list = latest !== null && "list" in latest ? latest.list : []
      add({ list: [{ listItem: op.listItem }, ...list] }, undefined)
      break
    }
    case "TableRow": {
      const table = latest !== null && "table" in latest ? latest.table : []
      if (table.length === 0) {
        // No table yet: the row becomes the table's first row, as listItem/leaderboardItem start a new collection.
        add({ table: [op.row] }, undefined)
        break
      }
      const header = table[0]!
      if (header.length !== op.row.length) {
        return Either.left(
          new InvalidPoint({
            message: `table row has ${op.row.length} cells but the header row has ${header.length}`,
            path: `${path}.tableRow`
          })
        )
      }
      add({ table: [header, op.row, ...table.slice(1)] }, undefined)
      break
    }
  }
  return Either.right({ clear: false, clearedAt: null, entries, lastTs })
}
