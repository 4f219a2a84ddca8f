/**
 * The dashboard page (contract section 11): reads the layout from `#ds-dashboard`, draws the tile grid, and follows
 * the dashboard's event stream (`snapshot`, `entry`, `clear`, `deleted`). Performance marks: `ds-snapshot` when the
 * first snapshot arrives, `ds-first-render` when it is drawn (`<html data-rendered>` is set then too).
 */
import type { PageConfig } from "../Model.js"
import { connect, type ConnectionState } from "./Connection.js"
import { el } from "./dom.js"
import { Tile } from "./Tile.js"

const stateText: Record<ConnectionState, string> = {
  connecting: "Connecting\u2026",
  live: "Live",
  reconnecting: "Connection lost \u2014 reconnecting\u2026",
  gone: "This dashboard link is no longer valid"
}

const start = (): void => {
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
  header.append(el("h1", "ds-name", config.name), status)

  const grid = el("main", "ds-grid")
  const rows = Math.max(1, ...config.tiles.map((t) => t.y + t.h))
  grid.style.setProperty("--rows", String(rows))
  const ctx = { theme, maps: config.maps }
  const tiles = new Map<string, Array<Tile>>()
  for (const model of config.tiles) {
    const tile = new Tile(model, ctx)
    grid.append(tile.element)
    const same = tiles.get(model.streamName)
    if (same === undefined) tiles.set(model.streamName, [tile])
    else same.push(tile)
  }
  if (config.tiles.length === 0) grid.append(el("p", "ds-no-tiles", "This dashboard has no tiles yet."))
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
  for (const list of tiles.values()) for (const tile of list) tile.draw()

  const setState = (state: ConnectionState) => {
    root.dataset["connection"] = state
    statusText.textContent = stateText[state]
  }
  connect(
    config.eventsPath,
    (event) => {
      if (event.kind === "snapshot") {
        performance.mark("ds-snapshot")
        // A tile named in `deleted` shows "stream deleted"; one in `tiles` shows its entries.
        for (const [name, list] of tiles) {
          for (const tile of list) {
            if (event.deleted.has(name)) tile.markDeleted()
            else tile.setEntries(event.tiles.get(name) ?? [])
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
