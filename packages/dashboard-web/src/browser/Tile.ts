import type { Entry, TileModel } from "../Model.js"
import { heldEntries } from "../WidgetType.js"
import { serverNow } from "./clock.js"
import { el } from "./dom.js"
import { formatAge, tileTitle } from "./format.js"
import { renderers } from "./renderers/index.js"
import type { RenderContext, TileBody } from "./renderers/Renderer.js"
import { addEntry, snapshotEntries } from "./TileData.js"

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

  constructor(model: TileModel, ctx: RenderContext) {
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

  /** Removes the tile from the page and lets its renderer go. */
  dispose(): void {
    if (this.staleTimer !== undefined) clearInterval(this.staleTimer)
    this.staleTimer = undefined
    this.renderer.dispose()
    this.element.remove()
  }

  /** Replaces the held entries (a snapshot, which also says that the stream exists). */
  setEntries(entries: ReadonlyArray<Entry>): void {
    this.entries = snapshotEntries(entries, this.keep)
    this.deleted = false
  }

  /** Adds one entry (same `ts` replaces); an entry also means the stream exists again. */
  addEntry(entry: Entry): void {
    this.entries = addEntry(this.entries, entry, this.keep)
    this.deleted = false
  }

  /** Empties the tile (a clear). */
  clear(): void {
    this.entries = []
  }

  /** Shows "stream deleted" (the widget was deleted). */
  markDeleted(): void {
    this.entries = []
    this.deleted = true
  }

  /** Redraws the tile from its held entries. */
  draw(): void {
    let state: TileState
    if (this.deleted) {
      this.renderer.dispose()
      state = "deleted"
    } else {
      let drawn = false
      try {
        drawn = this.renderer.render(this.entries, this.placed.options ?? {})
      } catch (error) {
        console.warn(`dashstream: tile ${this.model.streamName} could not draw`, error)
        this.renderer.dispose()
      }
      state = drawn ? "data" : "empty"
    }
    this.element.dataset["state"] = state
    this.placeholder.textContent = state === "deleted" ? "stream deleted" : state === "empty" ? "No data yet" : ""
    this.checkStale()
  }
}
