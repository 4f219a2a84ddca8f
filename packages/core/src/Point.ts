import type * as Contract from "@dashstream/contract"
import type { GalleryPoint, HtmlPoint, ImagePoint, LabelPoint, MatrixPoint, TextFeedPoint } from "@dashstream/contract"
import type { Micros } from "./Time.js"

/**
 * Stored point shapes (docs/api.md section 3, column "Stored point"), as `@dashstream/contract` writes them once for
 * core, the client and the dashboard page. These are what the export API returns in `data[].point`; unknown fields a
 * client sent are not part of them.
 */

/** Number, bar and dial widgets, sparkline and line-graph entries. */
export type NumberPoint = Contract.StoredNumber

export type { MapColor } from "@dashstream/contract"

/** One usa-map or world-map event. `latitude` in [-90, 90], `longitude` in [-180, 180]. */
export type MapPoint = Contract.StoredMapPoint

export type { GalleryPoint, HtmlPoint, ImagePoint, LabelPoint, MatrixPoint, TextFeedPoint }

/** One xy-graph point. */
export type XyPoint = Contract.StoredXyPoint

/** One leaderboard (or pie-chart) item. */
export type LeaderboardItem = Contract.LeaderboardItem<number>

/** A whole leaderboard or pie chart. */
export type LeaderboardPoint = Contract.LeaderboardPoint<number>

/** One bar-chart bar; `color` is any string (e.g. yellow, blue, red). */
export type ChartItem = Contract.ChartItem<number>

/** A whole bar chart. */
export type ChartPoint = Contract.ChartPoint<number>

/** A whole list, top item first. */
export type ListPoint = Contract.ListPoint<string>

/** A whole table: the first row holds the headers; every cell a string. */
export type TablePoint = Contract.TablePoint<string>

/** Any stored point. */
export type StoredPoint =
  | NumberPoint
  | MapPoint
  | TextFeedPoint
  | GalleryPoint
  | XyPoint
  | LeaderboardPoint
  | ChartPoint
  | ListPoint
  | TablePoint
  | ImagePoint
  | LabelPoint
  | HtmlPoint
  | MatrixPoint

/**
 * What one validated push asks of one stream: the result of decoding a pushed `point` (or `command`) against the
 * stream's widget type, before it meets the stream's current state.
 *
 * - `Put`: store these entries (one per element of an array push, in order). `ts` is the client's `timestamp` in
 *   microseconds where the widget type allows it; entries without one get server-assigned `ts`. `json`, when a
 *   decoder has it at hand (line protocol), is `point` serialised exactly as `JSON.stringify` writes it, which the
 *   store then does not serialise again.
 * - `Delta`: store latest `number` + `delta`; prefix/suffix carry over unless given.
 * - `LeaderboardItem`, `ListItem`, `TableRow`: store the latest collection with the item added.
 * - `Clear`: delete every entry (the clear command, or an empty point; docs/api.md section 4).
 */
export type PointOp =
  | {
      readonly _tag: "Put"
      readonly entries: ReadonlyArray<{
        readonly point: StoredPoint
        readonly ts?: Micros | undefined
        readonly json?: string | undefined
      }>
    }
  | {
      readonly _tag: "Delta"
      readonly delta: number
      readonly prefix?: string
      readonly suffix?: string
      readonly ts?: Micros
    }
  | { readonly _tag: "LeaderboardItem"; readonly item: LeaderboardItem }
  | { readonly _tag: "ListItem"; readonly listItem: string }
  | { readonly _tag: "TableRow"; readonly row: ReadonlyArray<string> }
  | { readonly _tag: "Clear" }
