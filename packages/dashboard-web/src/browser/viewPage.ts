/**
 * What the two view pages, a dashboard's (`main.ts`, docs/api.md section 11) and a rotation's (`rotation.ts`,
 * section 15), share around their tiles: the theme, the header with its connection status, drawing at most once per
 * frame, laying tiles out on the grid, the page's window of time, and an `entry`, `clear` or `deleted` event applied
 * to the tiles of its stream.
 */
import type { TileModel } from "../Model.js"
import type { ConnectionState } from "./Connection.js"
import { el } from "./dom.js"
import type { StreamEvent } from "./TileData.js"
import { Tile } from "./Tile.js"
import type { TimeControl } from "./timePicker.js"
import { onScreenOrder } from "./TileData.js"
import { tileWindow } from "./timeWindow.js"

/** The tiles a page shows, by stream name (a stream may be shown by several tiles). */
export type TilesByStream = Map<string, Array<Tile>>

/** The page's theme (`?theme=light|dark`, else `configured`), set as `<html data-theme>`. */
export const pageTheme = (configured: "dark" | "light"): "dark" | "light" => {
  const param = new URLSearchParams(location.search).get("theme")
  const theme = param === "light" || param === "dark" ? param : configured
  document.documentElement.dataset["theme"] = theme
  return theme
}

/**
 * The page's header: `title` (the page's name), the time picker and the connection status; `setState` shows a state
 * of the event stream (`<html data-connection>` and its text; `gone` names the page's `noun`).
 */
export const pageHeader = (title: HTMLElement, time: TimeControl, noun: string) => {
  const header = el("header", "ds-header")
  const status = el("div", "ds-status")
  const text = el("span", "ds-status-text")
  status.append(el("span", "ds-status-dot"), text)
  status.setAttribute("role", "status")
  header.append(title, time.element, status)
  const stateText: Record<ConnectionState, string> = {
    connecting: "Connecting\u2026",
    live: "Live",
    reconnecting: "Connection lost \u2014 reconnecting\u2026",
    gone: `This ${noun} link is no longer valid`
  }
  const setState = (state: ConnectionState) => {
    document.documentElement.dataset["connection"] = state
    text.textContent = stateText[state]
  }
  return { header, setState }
}

/**
 * Draws touched tiles at most once per frame whatever the event rate. The first frame drawn once `ready()` holds marks
 * `ds-first-render` and sets `<html data-rendered>`. `frame` asks for a frame even when no tile was touched.
 */
export const frameDrawer = (ready: () => boolean) => {
  const root = document.documentElement
  const dirty = new Set<Tile>()
  let scheduled = false
  const flush = () => {
    scheduled = false
    for (const tile of dirty) tile.draw()
    dirty.clear()
    if (ready() && root.dataset["rendered"] === undefined) {
      performance.mark("ds-first-render")
      root.dataset["rendered"] = "true"
    }
  }
  const frame = () => {
    if (!scheduled) {
      scheduled = true
      requestAnimationFrame(flush)
    }
  }
  return {
    frame,
    touch: (tile: Tile) => {
      dirty.add(tile)
      frame()
    },
    /** Disposes of the tiles (they will not be drawn). */
    dispose: (tiles: TilesByStream) => {
      for (const list of tiles.values()) {
        for (const tile of list) {
          dirty.delete(tile)
          tile.dispose()
        }
      }
    }
  }
}

/**
 * Lays `models` out on `grid` in on-screen order, each as the tile `tileOf` gives (a new one or one moved from before),
 * with "This dashboard has no tiles yet." when there are none; returns the tiles by stream name. `before` runs after
 * the tiles are made and before they are put on the grid.
 */
export const placeTiles = (
  grid: HTMLElement,
  models: ReadonlyArray<TileModel>,
  tileOf: (model: TileModel) => Tile,
  before?: () => void
): TilesByStream => {
  const tiles: TilesByStream = new Map()
  const elements: Array<HTMLElement> = []
  for (const model of onScreenOrder(models)) {
    const tile = tileOf(model)
    elements.push(tile.element)
    const list = tiles.get(model.streamName)
    if (list === undefined) tiles.set(model.streamName, [tile])
    else list.push(tile)
  }
  before?.()
  grid.style.setProperty("--rows", String(Math.max(1, ...models.map((t) => t.y + t.h))))
  if (models.length === 0) elements.push(el("p", "ds-no-tiles", "This dashboard has no tiles yet."))
  grid.replaceChildren(...elements)
  return tiles
}

/** Every time tile shows the page's window, else its own range (docs/api.md sections 11.6 and 15.1). */
export const setWindows = (tiles: TilesByStream, time: TimeControl): void => {
  for (const list of tiles.values()) {
    for (const tile of list) tile.setWindow(tileWindow(tile.model.type, tile.model.options?.range, time.current()))
  }
}

/** Applies an `entry`, `clear` or `deleted` event to the tiles of its stream, touching each. */
export const applyStreamEvent = (tiles: TilesByStream, event: StreamEvent, touch: (tile: Tile) => void): void => {
  for (const tile of tiles.get(event.streamName) ?? []) {
    if (event.kind === "entry") tile.addEntry(event.entry)
    else if (event.kind === "clear") tile.clear()
    else tile.markDeleted()
    touch(tile)
  }
}
