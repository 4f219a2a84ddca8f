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
import { connect } from "./Connection.js"
import { syncServerClock } from "./clock.js"
import { el } from "./dom.js"
import { startRotation } from "./rotation.js"
import { Tile } from "./Tile.js"
import { setFiring, showFiring } from "./firing.js"
import { timeControl } from "./timePicker.js"
import { rangePathOf } from "./timeWindow.js"
import { applyStreamEvent, frameDrawer, pageHeader, pageTheme, placeTiles, setWindows } from "./viewPage.js"

const start = (): void => {
  // The same bundle serves a rotation's page (docs/api.md section 15), which carries `#ds-rotation` instead.
  const rotation = document.getElementById("ds-rotation")
  if (rotation !== null) return startRotation(JSON.parse(rotation.textContent ?? "{}") as RotationPageConfig)
  const config = JSON.parse(document.getElementById("ds-dashboard")!.textContent ?? "{}") as PageConfig
  const theme = pageTheme(config.theme)
  const name = el("h1", "ds-name", config.name)
  let tiles = new Map<string, Array<Tile>>()
  const time = timeControl(() => setWindows(tiles, time))
  const { header, setState } = pageHeader(name, time, "dashboard")

  const grid = el("main", "ds-grid")
  const ctx = { theme, maps: config.maps, rangePath: rangePathOf(location.pathname), zoom: time.zoom }
  document.body.replaceChildren(header, grid)
  const frames = frameDrawer(() => true)

  // Lays the grid out from `models` (the page's own at first, then each `layout` event, docs/api.md section 14): a tile
  // of a stream and type the page showed before is moved there with what it holds; the others are made anew, and the
  // snapshot that follows a layout event fills them.
  const layout = (models: ReadonlyArray<TileModel>) => {
    const previous = tiles
    tiles = placeTiles(
      grid,
      models,
      (model) => {
        const same = previous.get(model.streamName)
        const at = same?.findIndex((t) => t.model.type === model.type && !model.deleted) ?? -1
        if (at !== -1) {
          const tile = same!.splice(at, 1)[0]!
          tile.place(model)
          return tile
        }
        const tile = new Tile(model, ctx)
        tile.draw()
        return tile
      },
      () => frames.dispose(previous)
    )
    // After the tiles are on the grid: a window's read asks for as many points as its chart is wide.
    setWindows(tiles, time)
    showFiring()
  }
  layout(config.tiles)

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
            frames.touch(tile)
          }
        }
        return
      }
      applyStreamEvent(tiles, event, frames.touch)
    },
    setState
  )
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start)
else start()
