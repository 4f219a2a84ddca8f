import type { WidgetType } from "./WidgetType.js"

/**
 * Point shapes per widget type (docs/api.md section 3): what a push may send (`PushPoints`) and what a read or a live
 * event returns (`StoredPoints`). Times are UNIX seconds as JSON numbers (integer or fractional, microsecond
 * precision), never milliseconds. Numbers may be sent as numeric strings (`"42"`); they are stored as numbers.
 */

/** A number, or a numeric string the server stores as a number. */
export type Numeric = number | string

// ---------------------------------------------------------------------------------------------------------------
// Stored points (docs/api.md section 3, column "Stored point")

/** A stored number, bar, dial, sparkline or line-graph entry. */
export interface StoredNumber {
  readonly number: number
  readonly prefix?: string
  readonly suffix?: string
}

/** The five colours a map point may carry; any other value is stored without a colour (docs/api.md section 3). */
export type MapColor = "red" | "blue" | "green" | "purple" | "yellow"

/** One usa-map or world-map event: `latitude` in [-90, 90], `longitude` in [-180, 180]. */
export interface MapPoint {
  readonly latitude: Numeric
  readonly longitude: Numeric
  readonly color?: MapColor | null
  readonly title?: string
  readonly body?: string
}

/** A map event as stored (numbers as numbers; an unknown colour dropped). */
export interface StoredMapPoint {
  readonly latitude: number
  readonly longitude: number
  readonly color?: MapColor
  readonly title?: string
  readonly body?: string
}

/** One text-feed item; `imgUrl` is an absolute http(s) URL; `date` is stored as given. */
export interface TextFeedPoint {
  readonly title: string
  readonly msg: string
  readonly imgUrl?: string
  readonly date?: string | number
}

/** One gallery item; `imgUrl` is an absolute http(s) URL. */
export interface GalleryPoint {
  readonly title: string
  readonly msg?: string
  readonly imgUrl: string
}

/** One xy-graph point. */
export interface XyPoint {
  readonly x: Numeric
  readonly y: Numeric
}

/** An xy-graph point as stored. */
export interface StoredXyPoint {
  readonly x: number
  readonly y: number
}

/** One leaderboard or pie-chart item. */
export interface LeaderboardItem<N = Numeric> {
  readonly name: string
  readonly value: N
  readonly prefix?: string
  readonly suffix?: string
}

/** A whole leaderboard (stored in the order given) or pie chart. */
export interface LeaderboardPoint<N = Numeric> {
  readonly leaderboard: ReadonlyArray<LeaderboardItem<N>>
}

/** One bar-chart bar (`color` is any colour name, e.g. `yellow`). */
export interface ChartItem<N = Numeric> {
  readonly name: string
  readonly value: N
  readonly color?: string
}

/** A whole bar chart (pie charts accept it too). */
export interface ChartPoint<N = Numeric> {
  readonly chart: ReadonlyArray<ChartItem<N>>
}

/** A whole list, top item first. */
export interface ListPoint<T = string | number> {
  readonly list: ReadonlyArray<{ readonly listItem: T }>
}

/** A whole table: the first row holds the headers; cells are strings (numbers are stored as strings). */
export interface TablePoint<C = string | number> {
  readonly table: ReadonlyArray<ReadonlyArray<C>>
}

/** An image widget's picture (absolute http(s) URL). */
export interface ImagePoint {
  readonly imgUrl: string
}

/** A label widget's text. */
export interface LabelPoint {
  readonly label: string
}

/** An html widget's markup (stored as given; the dashboard never runs script from it). */
export interface HtmlPoint {
  readonly html: string
}

/** A multi-bar graph: first row `[corner, ...seriesNames]`, each later row `[category, ...one number per series]`. */
export interface MatrixPoint {
  readonly matrix: ReadonlyArray<ReadonlyArray<string | number>>
}

// ---------------------------------------------------------------------------------------------------------------
// Push points (docs/api.md section 3, column "Accepted point")

/**
 * A number with an optional client time. With `timestamp` (UNIX seconds), the entry's `ts` is that time and a second
 * push with the same `timestamp` replaces the entry, so such a push is safe to retry.
 */
export interface NumberPoint {
  readonly number: Numeric
  readonly prefix?: string
  readonly suffix?: string
  /** UNIX seconds (not milliseconds), integer or fractional. */
  readonly timestamp?: Numeric
}

/**
 * Adds `delta` to the latest stored number (0 on an empty stream); prefix and suffix carry over unless given. Never
 * retried after an ambiguous failure: a repeat would add it twice.
 */
export interface DeltaPoint {
  readonly delta: Numeric
  readonly prefix?: string
  readonly suffix?: string
  /** UNIX seconds (not milliseconds), integer or fractional. */
  readonly timestamp?: Numeric
}

/** What a number, horizontal-bar, vertical-bar or dial widget accepts: a bare number, a numeric string, or an object. */
export type NumericPush = Numeric | NumberPoint | DeltaPoint

/** One element of a sparkline or line-graph array push: each needs its own `timestamp`, strictly increasing. */
export interface TimedNumber {
  readonly number: Numeric
  /** UNIX seconds (not milliseconds), integer or fractional. */
  readonly timestamp: Numeric
  readonly prefix?: string
  readonly suffix?: string
}

/** Adds one item to the latest leaderboard (replacing the item of that `name`); the result is ordered by value. */
export interface LeaderboardItemPush {
  readonly leaderboardItem: LeaderboardItem
}

/** Puts one item at the top of the latest list. */
export interface ListItemPush {
  readonly listItem: string | number
}

/** Puts one row at the top of the latest table's data rows (under the header row); as many cells as the header. */
export interface TableRowPush {
  readonly tableRow: ReadonlyArray<string | number>
}

/** What a push may send, per widget type (docs/api.md section 3). Arrays store one entry per element, all or nothing. */
export interface PushPoints {
  readonly number: NumericPush
  readonly "horizontal-bar": NumericPush
  readonly "vertical-bar": NumericPush
  readonly dial: NumericPush
  readonly sparkline: NumericPush | ReadonlyArray<TimedNumber>
  readonly "line-graph": NumericPush | ReadonlyArray<TimedNumber>
  readonly "usa-map": MapPoint | ReadonlyArray<MapPoint>
  readonly "world-map": MapPoint | ReadonlyArray<MapPoint>
  readonly "text-feed": TextFeedPoint | ReadonlyArray<TextFeedPoint>
  readonly leaderboard: LeaderboardPoint | LeaderboardItemPush
  readonly "pie-chart": LeaderboardPoint | ChartPoint
  readonly "bar-chart": ChartPoint | LeaderboardPoint
  readonly list: ListPoint | ListItemPush
  readonly image: ImagePoint
  readonly label: LabelPoint
  readonly table: TablePoint | TableRowPush
  readonly gallery: GalleryPoint
  readonly html: HtmlPoint
  readonly "xy-graph": XyPoint | ReadonlyArray<XyPoint>
  readonly "multi-bar-graph": MatrixPoint
}

/** What a read or a live event returns, per widget type (docs/api.md section 3, column "Stored point"). */
export interface StoredPoints {
  readonly number: StoredNumber
  readonly "horizontal-bar": StoredNumber
  readonly "vertical-bar": StoredNumber
  readonly dial: StoredNumber
  readonly sparkline: StoredNumber
  readonly "line-graph": StoredNumber
  readonly "usa-map": StoredMapPoint
  readonly "world-map": StoredMapPoint
  readonly "text-feed": TextFeedPoint
  readonly leaderboard: LeaderboardPoint<number>
  readonly "pie-chart": LeaderboardPoint<number>
  readonly "bar-chart": ChartPoint<number>
  readonly list: ListPoint<string>
  readonly image: ImagePoint
  readonly label: LabelPoint
  readonly table: TablePoint<string>
  readonly gallery: GalleryPoint
  readonly html: HtmlPoint
  readonly "xy-graph": StoredXyPoint
  readonly "multi-bar-graph": MatrixPoint
}

/** The push point of widget type `T` (a union of types gives the union of their points). */
export type PushPointOf<T extends WidgetType> = PushPoints[T]

/** The stored point of widget type `T`. */
export type StoredPointOf<T extends WidgetType> = StoredPoints[T]

/** One stored entry, as the export API returns it (docs/api.md section 6). */
export interface Entry<P = StoredPointOf<WidgetType>> {
  /** UNIX seconds with microsecond precision; strictly increasing within a stream. */
  readonly ts: number
  readonly point: P
}
