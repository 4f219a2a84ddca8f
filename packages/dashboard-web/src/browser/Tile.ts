import type { Entry, TileModel } from "../Model.js"
import { heldEntries } from "../WidgetType.js"
import { serverNow } from "./clock.js"
import { el } from "./dom.js"
import { formatAge, tileTitle } from "./format.js"
import { renderers } from "./renderers/index.js"
import type { RenderContext, TileBody } from "./renderers/Renderer.js"
import { addEntry, snapshotEntries } from "./TileData.js"
import { isLive, sameWindow, type TimeWindow } from "./timeWindow.js"
import { WindowedEntries } from "./WindowedEntries.js"

/** What a tile needs of its page besides what its renderer does. */
export interface TileContext extends RenderContext {
  /**
   * The path of the page's range read (`/d/<viewToken>/range`, docs/api.md section 6.1), which a tile showing a
   * window of time reads; absent where there is none (the console's layout editor): no window is shown there.
   */
  readonly rangePath?: string | undefined
}

const noOptions = {}

/** What a tile frame shows: data, the empty state, or the "stream deleted" state. */
export type TileState = "data" | "empty" | "deleted"

/**
 * The shared tile frame (title, empty state, "stream deleted" state, stale warning) around one renderer. Holds the
 * tile's entries (see `TileData.ts`); redraws only when asked (`draw`), so bursts of events cost one draw per frame.
 *
 * Staleness (docs/api.md section 15): a tile with a `staleAfter` option whose newest entry is older than that many
 * seconds is marked `data-stale="true"` (dimmed by the stylesheet) and says "No data for <age>"; a one-second timer
 * counts the age up, and an entry clears it. An empty tile is never stale. The age is the server's clock (`clock.ts`:
 * the browser's, corrected by the snapshot's `now`) minus the entry's `ts` (the server's clock, or the pusher's
 * timestamp), so a screen whose own clock is off still shows the right age.
 *
 * A window of time (docs/api.md section 15.1: the tile's `range`, or the page's time picker, set by the page with
 * {@link Tile.setWindow}) makes a number, sparkline or line-graph tile show the entries of that window
 * (`WindowedEntries.ts`) instead of the recent ones it holds; the recent ones are still kept, so the tile shows them
 * again when the window is taken away ("Live"). For tests and wall-screen scripts the tile then carries
 * `data-window-from` and `data-window-to` (the window's bounds as drawn, whole seconds), `data-window-ready` once the
 * window's read has answered (with a `ds-window-ready` performance mark), and `data-first-ts`, `data-last-ts` and
 * `data-count` of the entries drawn.
 */
export class Tile {
  readonly element: HTMLElement
  private readonly body: HTMLElement
  private readonly placeholder: HTMLElement
  private readonly title: HTMLElement
  private readonly stale: HTMLElement
  private staleTimer: ReturnType<typeof setInterval> | undefined
  private readonly renderer: TileBody
  private readonly keep: number
  private entries: ReadonlyArray<Entry> = []
  private deleted: boolean
  private placed: TileModel
  private windowed: WindowedEntries | undefined
  /** What the window was last drawn with: a draw that would change nothing by a pixel is skipped. */
  private windowDrawn:
    { entries: ReadonlyArray<Entry>; options: object; from: number; to: number; drawn: boolean } | undefined

  constructor(
    model: TileModel,
    private readonly ctx: TileContext
  ) {
    this.placed = model
    this.keep = heldEntries(model.type)
    this.deleted = model.deleted
    this.element = el("section", `ds-tile ds-type-${model.type}`)
    this.element.dataset["stream"] = model.streamName
    this.element.dataset["type"] = model.type
    this.title = el("h2", "ds-tile-title")
    this.body = el("div", "ds-tile-body")
    this.placeholder = el("div", "ds-placeholder")
    this.stale = el("div", "ds-stale")
    this.stale.setAttribute("role", "status")
    this.element.append(this.title, this.body, this.placeholder, this.stale)
    this.renderer = renderers[model.type].create(this.body, ctx)
    this.place(model)
  }

  /** The tile as the layout places it now. */
  get model(): TileModel {
    return this.placed
  }

  /** Moves and resizes the tile, and sets its title (a layout change, docs/api.md section 14): same stream and type. */
  place(model: TileModel): void {
    const redraw = this.placed !== model && JSON.stringify(this.placed.options) !== JSON.stringify(model.options)
    this.placed = model
    const s = this.element.style
    s.setProperty("--x", String(model.x + 1))
    s.setProperty("--y", String(model.y + 1))
    s.setProperty("--w", String(model.w))
    s.setProperty("--h", String(model.h))
    this.title.textContent = tileTitle(model.streamName, model.title)
    this.title.title = model.title ?? model.streamName
    const staleAfter = model.options?.staleAfter
    if (staleAfter === undefined && this.staleTimer !== undefined) {
      clearInterval(this.staleTimer)
      this.staleTimer = undefined
    } else if (staleAfter !== undefined && this.staleTimer === undefined) {
      this.staleTimer = setInterval(() => this.checkStale(), 1000)
    }
    if (redraw) this.draw()
    else this.checkStale()
  }

  /** Marks the tile stale (or not) for the newest held entry's age now, and writes the age (docs/api.md section 15). */
  private checkStale(): void {
    const staleAfter = this.placed.options?.staleAfter
    const newest = this.entries[this.entries.length - 1]
    const age = newest === undefined ? 0 : serverNow() - newest.ts
    const stale = staleAfter !== undefined && newest !== undefined && !this.deleted && age > staleAfter
    if (stale) {
      this.element.dataset["stale"] = "true"
      this.stale.textContent = `No data for ${formatAge(age)}`
    } else if (this.element.dataset["stale"] !== undefined) {
      delete this.element.dataset["stale"]
      this.stale.textContent = ""
    }
  }

  /** The window of time the tile shows, `undefined` when it shows what it holds live. */
  get window(): TimeWindow | undefined {
    return this.windowed?.window
  }

  /**
   * Shows `window` (docs/api.md section 15.1), or the recent entries again for `undefined`; the same window again
   * changes nothing. Ignored without a range read (`TileContext.rangePath`). The tile draws at once.
   */
  setWindow(window: TimeWindow | undefined): void {
    const rangePath = this.ctx.rangePath
    if (sameWindow(window, this.windowed?.window) || rangePath === undefined) return
    this.windowed?.dispose()
    this.windowDrawn = undefined
    this.windowed =
      window === undefined
        ? undefined
        : new WindowedEntries(
            window,
            {
              streamName: this.placed.streamName,
              type: this.placed.type,
              rangePath,
              width: () => this.body.clientWidth || this.element.clientWidth || 300,
              redraw: () => this.draw()
            },
            this.entries
          )
    // A new window is not ready until its own read has answered.
    for (const key of ["windowFrom", "windowTo", "windowReady", "firstTs", "lastTs", "count"]) {
      delete this.element.dataset[key]
    }
    this.draw()
  }

  /** Removes the tile from the page and lets its renderer go. */
  dispose(): void {
    this.windowed?.dispose()
    this.windowDrawn = undefined
    this.windowed = undefined
    if (this.staleTimer !== undefined) clearInterval(this.staleTimer)
    this.staleTimer = undefined
    this.renderer.dispose()
    this.element.remove()
  }

  /** Replaces the held entries (a snapshot, which also says that the stream exists). */
  setEntries(entries: ReadonlyArray<Entry>): void {
    this.entries = snapshotEntries(entries, this.keep)
    this.deleted = false
    this.windowed?.snapshot(entries)
  }

  /** Adds one entry (same `ts` replaces); an entry also means the stream exists again. */
  addEntry(entry: Entry): void {
    this.entries = addEntry(this.entries, entry, this.keep)
    this.deleted = false
    this.windowed?.add(entry)
  }

  /** Empties the tile (a clear). */
  clear(): void {
    this.entries = []
    this.windowed?.clear()
  }

  /** Shows "stream deleted" (the widget was deleted). */
  markDeleted(): void {
    this.entries = []
    this.deleted = true
    this.windowed?.clear()
  }

  /** Redraws the tile from its held entries. */
  draw(): void {
    let state: TileState
    if (this.deleted) {
      this.renderer.dispose()
      this.windowDrawn = undefined
      state = "deleted"
    } else {
      let drawn = false
      try {
        drawn = this.render()
      } catch (error) {
        console.warn(`dashstream: tile ${this.model.streamName} could not draw`, error)
        this.renderer.dispose()
        this.windowDrawn = undefined
      }
      state = drawn ? "data" : "empty"
    }
    this.element.dataset["state"] = state
    this.placeholder.textContent = state === "deleted" ? "stream deleted" : state === "empty" ? this.emptyText() : ""
    this.checkStale()
  }

  // Draws the held entries, or the window's with its bounds now; true when there was something to draw.
  private render(): boolean {
    const options = this.placed.options ?? noOptions
    const windowed = this.windowed
    if (windowed === undefined) return this.renderer.render(this.entries, options)
    let bounds = windowed.bounds()
    // A chart draws its window once read: the recent entries alone would be a sliver at its right edge.
    let entries = windowed.ready || this.placed.type === "number" ? windowed.entries : []
    // An entry stamped by the server a moment ago may lie ahead of the page's estimate of the server's clock (it
    // lags by the event stream's latency): a live window reaches to it.
    const newest = entries[entries.length - 1]
    if (newest !== undefined && newest.ts > bounds.to && isLive(windowed.window)) {
      bounds = { from: bounds.from, to: newest.ts, span: newest.ts - bounds.from }
    }
    // A number tile shows the latest value even when no entry is within a live window (without a change).
    if (entries.length === 0 && this.placed.type === "number" && isLive(windowed.window)) {
      entries = this.entries.slice(-1)
    }
    windowed.drawn()
    const d = this.element.dataset
    d["windowFrom"] = String(Math.round(bounds.from))
    d["windowTo"] = String(Math.round(bounds.to))
    d["count"] = String(windowed.entries.length)
    d["firstTs"] = String(windowed.entries[0]?.ts ?? "")
    d["lastTs"] = String(windowed.entries[windowed.entries.length - 1]?.ts ?? "")
    const last = this.windowDrawn
    const pixel = bounds.span / Math.max(1, this.body.clientWidth)
    if (
      last !== undefined &&
      last.entries === entries &&
      last.options === options &&
      Math.abs(last.from - bounds.from) < pixel &&
      Math.abs(last.to - bounds.to) < pixel
    ) {
      return last.drawn
    }
    const drawn = this.renderer.render(entries, options, bounds)
    this.windowDrawn = { entries, options, from: bounds.from, to: bounds.to, drawn }
    if (windowed.ready && d["windowReady"] === undefined) {
      d["windowReady"] = "true"
      performance.mark("ds-window-ready", { detail: this.placed.streamName })
    }
    return drawn
  }

  // The empty state's text: a window not read yet, a window without entries, or a stream without any.
  private emptyText(): string {
    if (this.windowed === undefined) return "No data yet"
    return this.windowed.ready ? "No data in this time range" : "Loading\u2026"
  }
}
