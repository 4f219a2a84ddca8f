/**
 * The rotation page (docs/api.md section 15): reads the rotation from `#ds-rotation`, shows each of its dashboards
 * full-screen in turn (its name as the page title) for `intervalSeconds`, then the next, in order, looping, with a
 * small progress indicator, the turns kept by the server's clock (see the timer below); all of them live over the rotation's ONE event stream (`rotation`, `snapshot`, `entry`,
 * `clear`, `deleted`). The entries of every stream are held by the page whichever dashboard is shown, so a dashboard
 * comes up with its data at once; only the shown dashboard's tiles exist (drawn by the dashboard page's `Tile`).
 *
 * For tests and wall-screen scripts: `<html data-rotation-index data-dashboard-id>` name the dashboard shown,
 * `data-rendered` is set once the first snapshot is drawn, `data-connection` as on the dashboard page.
 *
 * Time tiles show their `range`, or the page's window of time (`?range=`, `?from=&to=`, the picker), as on the
 * dashboard page (docs/api.md section 11.6), read through `/r/<viewToken>/range`.
 */
import type { Entry, RotationDashboardModel, RotationPageConfig, TileModel } from "../Model.js"
import { heldEntries } from "../WidgetType.js"
import { connect, type ConnectionState } from "./Connection.js"
import { serverNow, syncServerClock } from "./clock.js"
import { el } from "./dom.js"
import { Tile } from "./Tile.js"
import { setFiring, showFiring } from "./firing.js"
import { addEntry, parseObject, snapshotEntries, toTileModel } from "./TileData.js"
import { timeControl } from "./timePicker.js"
import { rangePathOf } from "./timeWindow.js"
import { applyStreamEvent, frameDrawer, pageHeader, pageTheme, placeTiles, setWindows } from "./viewPage.js"

/** The rotation as its page follows it: the `#ds-rotation` block at first, then each `rotation` event. */
interface Shown {
  name: string
  intervalSeconds: number
  dashboardIds: ReadonlyArray<string>
  dashboards: Map<string, RotationDashboardModel>
}

/** Decodes a `rotation` event's data (docs/api.md section 15); `undefined` when malformed (ignored). */
const decodeRotation = (data: string): Shown | undefined => {
  const raw = parseObject(data)
  if (raw === undefined) return undefined
  const { rotation, dashboards } = raw
  if (typeof rotation !== "object" || rotation === null || !Array.isArray(dashboards)) return undefined
  const { name, intervalSeconds, dashboardIds } = rotation as Record<string, unknown>
  if (typeof name !== "string" || typeof intervalSeconds !== "number" || !Array.isArray(dashboardIds)) return undefined
  const byId = new Map<string, RotationDashboardModel>()
  for (const d of dashboards as Array<Record<string, unknown>>) {
    if (typeof d?.["id"] !== "string" || typeof d["name"] !== "string" || !Array.isArray(d["tiles"])) return undefined
    const tiles = (d["tiles"] as Array<unknown>).map(toTileModel)
    if (!tiles.every((t): t is TileModel => t !== undefined)) return undefined
    byId.set(d["id"], { id: d["id"], name: d["name"], tiles })
  }
  return {
    name,
    intervalSeconds: Math.max(1, intervalSeconds),
    dashboardIds: dashboardIds.filter((id): id is string => typeof id === "string" && byId.has(id)),
    dashboards: byId
  }
}

/** Starts the rotation page on the document (called by `main.ts` when the page carries `#ds-rotation`). */
export const startRotation = (config: RotationPageConfig): void => {
  const root = document.documentElement
  const theme = pageTheme(config.theme)
  let tiles = new Map<string, Array<Tile>>()
  const time = timeControl(() => setWindows(tiles, time))
  const ctx = { theme, maps: config.maps, rangePath: rangePathOf(location.pathname), zoom: time.zoom }

  const name = el("h1", "ds-name")
  const position = el("span", "ds-rotation-position")
  const titles = el("div", "ds-rotation-titles")
  titles.append(name, position)
  const { header, setState: showState } = pageHeader(titles, time, "rotation")
  // The progress indicator: a thin bar that fills over each dashboard's interval.
  const progress = el("div", "ds-rotation-progress")
  const bar = el("div", "ds-rotation-progress-bar")
  progress.append(bar)
  progress.setAttribute("role", "progressbar")
  progress.setAttribute("aria-label", "Time until the next dashboard")
  const grid = el("main", "ds-grid")
  document.body.replaceChildren(header, progress, grid)

  let shown: Shown = {
    name: config.name,
    intervalSeconds: config.intervalSeconds,
    dashboardIds: config.dashboardIds,
    dashboards: new Map(config.dashboards.map((d) => [d.id, d]))
  }
  // The entries of every stream of the rotation, whichever dashboard is shown (at most what its tiles hold).
  const held = new Map<string, ReadonlyArray<Entry>>()
  const deleted = new Set<string>()
  const keepOf = (streamName: string): number => {
    let keep = 1
    for (const d of shown.dashboards.values()) {
      for (const t of d.tiles) if (t.streamName === streamName) keep = Math.max(keep, heldEntries(t.type))
    }
    return keep
  }

  let index = 0

  let snapshotSeen = false
  const frames = frameDrawer(() => snapshotSeen)

  const fill = (tile: Tile) => {
    if (deleted.has(tile.model.streamName)) tile.markDeleted()
    else tile.setEntries(held.get(tile.model.streamName) ?? [])
    frames.touch(tile)
  }

  // Shows the dashboard at `index` of the rotation (its tiles made anew from what the page holds).
  const show = () => {
    frames.dispose(tiles)
    tiles = new Map()
    const ids = shown.dashboardIds
    if (ids.length === 0) {
      name.textContent = shown.name
      position.textContent = ""
      document.title = shown.name
      delete root.dataset["dashboardId"]
      root.dataset["rotationIndex"] = "-1"
      grid.style.setProperty("--rows", "1")
      grid.replaceChildren(el("p", "ds-no-tiles", "This rotation has no dashboards"))
      return
    }
    index = index % ids.length
    const dashboard = shown.dashboards.get(ids[index]!)!
    name.textContent = dashboard.name
    position.textContent = ids.length > 1 ? `${index + 1} / ${ids.length}` : ""
    document.title = dashboard.name
    root.dataset["dashboardId"] = dashboard.id
    root.dataset["rotationIndex"] = String(index)
    tiles = placeTiles(grid, dashboard.tiles, (model) => {
      const tile = new Tile(model, ctx)
      fill(tile)
      return tile
    })
    showFiring()
    setWindows(tiles, time)
  }

  // The timer, on the server's clock: time is cut into turns of `intervalSeconds` counted from the UNIX epoch, and turn
  // `k` shows dashboard `k mod n`. Every screen showing the rotation then shows the same dashboard at the same moment
  // and switches together, also one whose own clock is minutes off (the offset comes with each snapshot). The bar
  // fills over what is left of the turn (restarted by a CSS transition).
  let timer: ReturnType<typeof setTimeout> | undefined
  const turnIndex = (now: number): number =>
    Math.floor(now / shown.intervalSeconds) % Math.max(1, shown.dashboardIds.length)
  const restartBar = (elapsed: number) => {
    const interval = shown.intervalSeconds
    bar.style.transition = "none"
    bar.style.transform = `scaleX(${(elapsed / interval).toFixed(4)})`
    void bar.offsetWidth
    if (shown.dashboardIds.length > 1) {
      bar.style.transition = `transform ${(interval - elapsed).toFixed(2)}s linear`
      bar.style.transform = "scaleX(1)"
    }
    progress.hidden = shown.dashboardIds.length <= 1
  }
  /** Shows the dashboard whose turn it is (if another is shown) and sets the timer for the end of the turn. */
  const schedule = () => {
    clearTimeout(timer)
    const now = serverNow()
    if (shown.dashboardIds.length > 1 && turnIndex(now) !== index) {
      index = turnIndex(now)
      show()
    }
    const elapsed = now % shown.intervalSeconds
    restartBar(elapsed)
    if (shown.dashboardIds.length <= 1) return
    // A few milliseconds past the turn's end, so that the clock read then is in the next turn.
    timer = setTimeout(schedule, (shown.intervalSeconds - elapsed) * 1000 + 5)
  }

  index = turnIndex(serverNow())
  show()
  schedule()

  const setState = (state: ConnectionState) => {
    showState(state)
    if (state === "gone") clearTimeout(timer)
  }

  connect(
    config.eventsPath,
    (event) => {
      if (event.kind === "alerts") return setFiring(event.firing)
      if (event.kind === "snapshot") {
        snapshotSeen = true
        setFiring(event.firing)
        performance.mark("ds-snapshot")
        if (event.now !== undefined) {
          syncServerClock(event.now)
          // The offset may have changed (the first snapshot, a reconnect): back in step with the server's turns.
          schedule()
        }
        for (const [streamName, entries] of event.tiles) {
          held.set(streamName, snapshotEntries(entries, keepOf(streamName)))
          deleted.delete(streamName)
        }
        for (const streamName of event.deleted) {
          held.delete(streamName)
          deleted.add(streamName)
        }
        for (const [streamName, list] of tiles) {
          if (event.tiles.has(streamName) || event.deleted.has(streamName)) for (const tile of list) fill(tile)
        }
        frames.frame()
        return
      }
      if (event.kind === "layout") return
      const streamName = event.streamName
      if (event.kind === "entry") {
        held.set(streamName, addEntry(held.get(streamName) ?? [], event.entry, keepOf(streamName)))
        deleted.delete(streamName)
      } else if (event.kind === "clear") held.set(streamName, [])
      else {
        held.delete(streamName)
        deleted.add(streamName)
      }
      applyStreamEvent(tiles, event, frames.touch)
    },
    setState,
    {
      // The rotation or one of its dashboards changed (or the page reconnected): show the same dashboard if it is
      // still in the rotation, else start again from the first; the snapshot that follows fills new tiles.
      rotation: (data) => {
        const next = decodeRotation(data)
        if (next === undefined) return
        // The turn decides which dashboard is shown, so every screen stays in step after an edit too.
        shown = next
        index = turnIndex(serverNow())
        show()
        schedule()
      }
    }
  )
}
