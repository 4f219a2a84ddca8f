import type { Micros } from "./Time.js"

/**
 * Stored point shapes (contract section 3, column "Stored point"). These are what the export API returns in
 * `data[].point`; unknown fields a client sent are not part of them.
 */

/** Number, bar and dial widgets, sparkline and line-graph entries. */
export interface NumberPoint {
  readonly number: number
  readonly prefix?: string
  readonly suffix?: string
}

/** The five colours a map point may carry; any other value is stored without a colour (contract section 3). */
export type MapColor = "red" | "blue" | "green" | "purple" | "yellow"

/** One usa-map or world-map event. `latitude` in [-90, 90], `longitude` in [-180, 180]. */
export interface MapPoint {
  readonly latitude: number
  readonly longitude: number
  readonly color?: MapColor
  readonly title?: string
  readonly body?: string
}

/** One text-feed item. `imgUrl` is an absolute http(s) URL; `date` is stored as given. */
export interface TextFeedPoint {
  readonly title: string
  readonly msg: string
  readonly imgUrl?: string
  readonly date?: string | number
}

/** One gallery item. */
export interface GalleryPoint {
  readonly title: string
  readonly msg?: string
  readonly imgUrl: string
}

/** One xy-graph point. */
export interface XyPoint {
  readonly x: number
  readonly y: number
}

/** One leaderboard (or pie-chart) item. */
export interface LeaderboardItem {
  readonly name: string
  readonly value: number
  readonly prefix?: string
  readonly suffix?: string
}

/** A whole leaderboard or pie chart. */
export interface LeaderboardPoint {
  readonly leaderboard: ReadonlyArray<LeaderboardItem>
}

/** One bar-chart bar; `color` is any string (e.g. yellow, blue, red). */
export interface ChartItem {
  readonly name: string
  readonly value: number
  readonly color?: string
}

/** A whole bar chart. */
export interface ChartPoint {
  readonly chart: ReadonlyArray<ChartItem>
}

/** A whole list, top item first. */
export interface ListPoint {
  readonly list: ReadonlyArray<{ readonly listItem: string }>
}

/** A whole table: the first row holds the headers; every cell a string. */
export interface TablePoint {
  readonly table: ReadonlyArray<ReadonlyArray<string>>
}

/** An image widget's picture. */
export interface ImagePoint {
  readonly imgUrl: string
}

/** A label widget's text. */
export interface LabelPoint {
  readonly label: string
}

/** An html widget's markup, stored as given. */
export interface HtmlPoint {
  readonly html: string
}

/**
 * A multi-bar graph: the first row is `[corner, ...seriesNames]`, each later row `[categoryLabel, ...numbers]`
 * with one number per series.
 */
export interface MatrixPoint {
  readonly matrix: ReadonlyArray<ReadonlyArray<string | number>>
}

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
 *   microseconds where the widget type allows it; entries without one get server-assigned `ts`.
 * - `Delta`: store latest `number` + `delta`; prefix/suffix carry over unless given.
 * - `LeaderboardItem`, `ListItem`, `TableRow`: store the latest collection with the item added.
 * - `Clear`: delete every entry (the clear command, or an empty point; contract section 4).
 */
export type PointOp =
  | { readonly _tag: "Put"; readonly entries: ReadonlyArray<{ readonly point: StoredPoint; readonly ts?: Micros }> }
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
