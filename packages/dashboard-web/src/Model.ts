import type { TileOptionsData } from "@dashstream/core/tileStatus"
import type { WidgetType } from "./WidgetType.js"

/** One tile of a dashboard as the page draws it (docs/api.md section 11); grid units, 12 columns wide. */
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
  /** The tile's options as stored (docs/api.md section 15: thresholds, min/max, staleAfter), validated by the server. */
  readonly options?: TileOptionsData | undefined
}

/** What the server passes to `pageHtml` for `GET /d/<viewToken>` (docs/api.md section 11). */
export interface DashboardModel {
  readonly name: string
  readonly tiles: ReadonlyArray<TileModel>
  /**
   * URL of the dashboard's event stream, relative to the page (`../d/<viewToken>/events`) or a path
   * (`/d/<viewToken>/events`).
   */
  readonly eventsPath: string
  readonly theme: "dark" | "light"
  /**
   * The path from the page back to the served root (docs/api.md section 16), which the page's asset and map outline
   * URLs start with: `../` for `/d/<viewToken>` makes them relative to where the page was served, so it works under
   * any base path or proxy prefix. Absent: `/` (absolute paths).
   */
  readonly root?: string | undefined
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

/** One dashboard of a rotation as the rotation page draws it (docs/api.md section 15). */
export interface RotationDashboardModel {
  readonly id: string
  readonly name: string
  readonly tiles: ReadonlyArray<TileModel>
}

/** What the server passes to `rotationPageHtml` for `GET /r/<viewToken>` (docs/api.md section 15). */
export interface RotationModel {
  /** The rotation's name (the page's title while it has no dashboards). */
  readonly name: string
  /** Seconds each dashboard is shown. */
  readonly intervalSeconds: number
  /** The dashboards shown in turn, by id, in order (an id may repeat). */
  readonly dashboardIds: ReadonlyArray<string>
  /** Each distinct dashboard of `dashboardIds`. */
  readonly dashboards: ReadonlyArray<RotationDashboardModel>
  /** Path of the rotation's one event stream, relative to the page (`../r/<viewToken>/events`) or absolute. */
  readonly eventsPath: string
  /** The path from the page back to the served root (`../` from `/r/<viewToken>`); `/` (absolute URLs) when absent. */
  readonly root?: string | undefined
  readonly theme: "dark" | "light"
}

/** The JSON embedded in the rotation page (`<script type="application/json" id="ds-rotation">`). */
export interface RotationPageConfig extends RotationModel {
  readonly maps: { readonly world: string; readonly usa: string }
}
