/**
 * The dashboard page (docs/api.md section 11): reads the layout from `#ds-dashboard`, draws the tile grid, and follows
 * the dashboard's event stream (`snapshot`, `entry`, `clear`, `deleted`, and `layout`, which re-lays the grid out
 * without a reload, docs/api.md section 14). Performance marks: `ds-snapshot` when the
 * first snapshot arrives, `ds-first-render` when it is drawn (`<html data-rendered>` is set then too).
 *
 * Time tiles (number, sparkline, line-graph) show the window of time of their `range` option, or the page's own
 * (`?range=`, `?from=&to=`, the picker, a drag across a line graph: `timePicker.ts`), read through the view token's
 * range read, `<page>/range` (docs/api.md sections 6.1, 11.6 and 15.1).
 */
import type { PageConfig, RotationPageConfig, TileModel } from "../Model.js"
import { connect, type ConnectionState } from "./Connection.js"
import { syncServerClock } from "./clock.js"
import { el } from "./dom.js"
import { startRotation } from "./rotation.js"
import { Tile } from "./Tile.js"
import { setFiring, showFiring } from "./firing.js"
import { onScreenOrder } from "./TileData.js"
import { timeControl } from "./timePicker.js"
import { rangePathOf, tileWindow } from "./timeWindow.js"

const stateText: Record<ConnectionState, string> = {
  connecting: "Connecting\u2026",
  live: "Live",
  reconnecting: "Connection lost \u2014 reconnecting\u2026",
  gone: "This dashboard link is no longer valid"
}

const start = (): void => {
  // The same bundle serves a rotation's page (docs/api.md section 15), which carries `#ds-rotation` instead.
  const rotation = document.getElementById("ds-rotation")
  if (rotation !== null) return startRotation(JSON.parse(rotation.textContent ?? "{}") as RotationPageConfig)
  const config = JSON.parse(document.getElementById("ds-dashboard")!.textContent ?? "{}") as PageConfig
  const root = document.documentElement
  const themeParam = new URLSearchParams(location.search).get("theme")
  const theme = themeParam === "light" || themeParam === "dark" ? themeParam : config.theme
  root.dataset["theme"] = theme

  const header = el("header", "ds-header")
  const status = el("div", "ds-status")
  const dot = el("span", "ds-status-dot")
  const statusText = el("span", "ds-status-text")
  status.append(dot, statusText)
  status.setAttribute("role", "status")
  const name = el("h1", "ds-name", config.name)
  let tiles = new Map<string, Array<Tile>>()
  // Every time tile shows the page's window, else its own range (docs/api.md sections 11.6 and 15.1).
  const applyWindows = () => {
    for (const list of tiles.values()) {
      for (const tile of list) tile.setWindow(tileWindow(tile.model.type, tile.model.options?.range, time.current()))
    }
  }
  const time = timeControl(applyWindows)
  header.append(name, time.element, status)

  const grid = el("main", "ds-grid")
  const ctx = { theme, maps: config.maps, rangePath: rangePathOf(location.pathname), zoom: time.zoom }
  document.body.replaceChildren(header, grid)

  // Draw at most once per frame whatever the event rate.
  const dirty = new Set<Tile>()
  let scheduled = false
  let firstDrawn = false
  const flush = () => {
    scheduled = false
    for (const tile of dirty) tile.draw()
    dirty.clear()
    if (!firstDrawn) {
      firstDrawn = true
      performance.mark("ds-first-render")
      root.dataset["rendered"] = "true"
    }
  }
  const touch = (tile: Tile) => {
    dirty.add(tile)
    if (!scheduled) {
      scheduled = true
      requestAnimationFrame(flush)
    }
  }

  // Lays the grid out from `models` (the page's own at first, then each `layout` event, docs/api.md section 14): a tile
  // of a stream and type the page showed before is moved there with what it holds; the others are made anew, and the
  // snapshot that follows a layout event fills them.
  const layout = (models: ReadonlyArray<TileModel>) => {
    const previous = tiles
    tiles = new Map()
    const elements: Array<HTMLElement> = []
    for (const model of onScreenOrder(models)) {
      const same = previous.get(model.streamName)
      const at = same?.findIndex((t) => t.model.type === model.type && !model.deleted) ?? -1
      let tile: Tile
      if (at === -1) {
        tile = new Tile(model, ctx)
        tile.draw()
      } else {
        tile = same!.splice(at, 1)[0]!
        tile.place(model)
      }
      elements.push(tile.element)
      const list = tiles.get(model.streamName)
      if (list === undefined) tiles.set(model.streamName, [tile])
      else list.push(tile)
    }
    for (const list of previous.values()) {
      for (const tile of list) {
        dirty.delete(tile)
        tile.dispose()
      }
    }
    grid.style.setProperty("--rows", String(Math.max(1, ...models.map((t) => t.y + t.h))))
    if (models.length === 0) elements.push(el("p", "ds-no-tiles", "This dashboard has no tiles yet."))
    grid.replaceChildren(...elements)
    // After the tiles are on the grid: a window's read asks for as many points as its chart is wide.
    applyWindows()
    showFiring()
  }
  layout(config.tiles)

  const setState = (state: ConnectionState) => {
    root.dataset["connection"] = state
    statusText.textContent = stateText[state]
  }
  connect(
    config.eventsPath,
    (event) => {
      if (event.kind === "layout") {
        name.textContent = event.name
        document.title = `${event.name} \u00b7 Dashstream`
        layout(event.tiles)
        return
      }
      if (event.kind === "alerts") return setFiring(event.firing)
      if (event.kind === "snapshot") {
        performance.mark("ds-snapshot")
        setFiring(event.firing)
        if (event.now !== undefined) syncServerClock(event.now)
        // A tile named in `deleted` shows "stream deleted"; one in `tiles` shows its entries; one it does not name
        // keeps what it holds (the snapshot after a layout event names only the tiles new to the page).
        for (const [streamName, list] of tiles) {
          const entries = event.tiles.get(streamName)
          for (const tile of list) {
            if (event.deleted.has(streamName)) tile.markDeleted()
            else if (entries !== undefined) tile.setEntries(entries)
            else continue
            touch(tile)
          }
        }
        return
      }
      for (const tile of tiles.get(event.streamName) ?? []) {
        if (event.kind === "entry") tile.addEntry(event.entry)
        else if (event.kind === "clear") tile.clear()
        else tile.markDeleted()
        touch(tile)
      }
    },
    setState
  )
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start)
else start()
