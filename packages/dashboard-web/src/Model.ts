import type { TileOptionsData } from "@dashstream/core/tileStatus"
import type { WidgetType } from "./WidgetType.js"

/** One tile of a dashboard as the page draws it (contract section 11); grid units, 12 columns wide. */
export interface TileModel {
  /** The stream the tile shows. */
  readonly streamName: string
  /** Shown as the tile's title; the stream name when absent. */
  readonly title?: string | undefined
  readonly type: WidgetType
  /** Column (0-11) and row (0-based) of the top-left cell, width in columns, height in rows. */
  readonly x: number
  readonly y: number
  readonly w: number
  readonly h: number
  /** True when the tile's widget no longer exists: the tile shows "stream deleted". */
  readonly deleted: boolean
  /** The tile's options as stored (contract section 15: thresholds, min/max, staleAfter), validated by the server. */
  readonly options?: TileOptionsData | undefined
}

/** What the server passes to `pageHtml` for `GET /d/<viewToken>` (contract section 11). */
export interface DashboardModel {
  readonly name: string
  readonly tiles: ReadonlyArray<TileModel>
  /** Path of the dashboard's event stream, e.g. `/d/<viewToken>/events`. */
  readonly eventsPath: string
  readonly theme: "dark" | "light"
}

/**
 * The JSON embedded in the page (`<script type="application/json" id="ds-dashboard">`): the model plus the URL
 * paths of the map outlines (TopoJSON, served by `assets()`).
 */
export interface PageConfig extends DashboardModel {
  readonly maps: { readonly world: string; readonly usa: string }
}

/** A stored entry as the event stream sends it: `ts` in UNIX seconds (microsecond precision), the stored point. */
export interface Entry {
  readonly ts: number
  readonly point: unknown
}
