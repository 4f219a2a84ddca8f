import { el, Tile, type RenderContext, type WidgetType, widgetTypes } from "@dashstream/dashboard-web/browser"
import { GridStack, type GridItemHTMLElement } from "gridstack"
import type { StoredEntry, TileJson } from "./api.js"
import { type Cell, dropPosition, GRID_COLUMNS, keyboardCell } from "./layout.js"
import { previewOptions } from "./options.js"

/** One tile of the layout being edited: a key of the editor's own (stable while editing) and the tile's JSON. */
export interface EditorTile {
  readonly key: string
  readonly tile: TileJson
}

/** What the grid draws besides positions: each stream's widget type and newest entry (`null`: empty). */
export interface StreamInfo {
  readonly type: string
  readonly latest: StoredEntry | null | undefined
}

/** What the editor's owner hears from the grid. */
export interface GridCallbacks {
  /** Tiles were moved or resized (by mouse, keyboard, or pushed aside): their new cells, by key. */
  readonly onCells: (cells: ReadonlyMap<string, Cell>) => void
  /** A tile was selected (clicked or focused). */
  readonly onSelect: (key: string) => void
  /** The selected tile's remove key (Delete) was pressed. */
  readonly onRemove: (key: string) => void
}

interface Item {
  readonly element: GridItemHTMLElement
  readonly content: HTMLElement
  readonly error: HTMLElement
  tile: Tile
  streamName: string
  type: string
  title: string | undefined
  /** The tile's options as last drawn (JSON), to redraw when they change. */
  options: string
  /** The `ts` of the newest entry fed to the tile; `undefined` before any, `null` after an empty answer. */
  fedTs: number | null | undefined
}

const known = new Set<string>(widgetTypes)

/** A drag's position as gridstack's draggable reports it: the item's top-left corner, in pixels from the grid's. */
interface DragUi {
  readonly position: { readonly top: number; readonly left: number }
}

/** gridstack's draggable of an item (its internal `ddElement.ddDraggable`), whose `ui()` gridstack places drags by. */
const draggableOf = (element: HTMLElement): { ui: () => DragUi } | undefined =>
  (element as unknown as { ddElement?: { ddDraggable?: { ui: () => DragUi } } }).ddElement?.ddDraggable

/**
 * The layout editor's grid (docs/api.md section 14): gridstack (12 columns, mode `float`: tiles stay where they are put)
 * holding one dashboard tile per item, drawn by the dashboard page's own {@link Tile} and renderers, so the editor
 * shows each tile as the view page does. The owner keeps the layout as state and calls {@link sync} with it; the grid
 * reports moves and resizes through {@link GridCallbacks.onCells}. Arrow keys move the focused tile a cell,
 * Shift+arrows resize it.
 */
export class GridEditor {
  private readonly grid: GridStack
  private readonly items = new Map<string, Item>()
  private readonly host: HTMLElement
  private syncing = false
  private frame = 0
  private readonly dirty = new Set<Item>()
  /** The pointer, in client pixels, while a tile is dragged. */
  private readonly pointer = { x: 0, y: 0 }
  private readonly onPointerMove = (event: PointerEvent) => {
    this.pointer.x = event.clientX
    this.pointer.y = event.clientY
  }
  /** The tile being dragged and where it was grabbed, in pixels from its top-left corner. */
  private grab: { readonly element: HTMLElement; readonly x: number; readonly y: number } | undefined
  private readonly following = new WeakSet<object>()

  constructor(
    parent: HTMLElement,
    private readonly ctx: RenderContext,
    private readonly callbacks: GridCallbacks
  ) {
    this.host = el("div", "grid-stack cw-grid")
    parent.append(this.host)
    const grid = GridStack.init(
      {
        column: GRID_COLUMNS,
        cellHeight: 96,
        margin: 6,
        mode: "float",
        animate: false,
        minRow: 4,
        resizable: { handles: "se" },
        draggable: { cancel: "button, input, textarea, select" }
      },
      this.host
    )
    if (grid === null) throw new Error("gridstack could not start")
    this.grid = grid
    this.grid.on("change", () => {
      if (!this.syncing) this.report()
    })
    this.host.addEventListener("keydown", (event) => this.onKey(event))
    this.host.addEventListener("focusin", (event) => {
      const key = this.keyOf(event.target)
      if (key !== undefined) callbacks.onSelect(key)
    })
    // gridstack blurs the focused element on mousedown (and prevents the default focus), so a tile takes the focus
    // (and with it the selection) on click, and after it was dragged or resized.
    this.host.addEventListener("click", (event) => {
      const key = this.keyOf(event.target)
      if (key !== undefined) this.items.get(key)?.content.focus({ preventScroll: true })
    })
    const focusMoved = (_: Event, element: GridItemHTMLElement) => {
      element.querySelector<HTMLElement>(".cw-item")?.focus({ preventScroll: true })
    }
    this.grid.on("dragstop", focusMoved)
    this.grid.on("resizestop", focusMoved)
    this.host.addEventListener("pointerdown", (event) => this.onPointerDown(event), { capture: true })
    addEventListener("pointermove", this.onPointerMove, { capture: true, passive: true })
  }

  /**
   * Brings the grid in line with the layout: adds, removes, moves and retitles items; marks the selected item and the
   * items with an error (their message shown on the tile); feeds each tile its stream's newest entry.
   */
  sync(
    tiles: ReadonlyArray<EditorTile>,
    streams: ReadonlyMap<string, StreamInfo>,
    selected: string | undefined,
    errors: ReadonlyMap<string, string>
  ): void {
    this.syncing = true
    try {
      this.grid.batchUpdate()
      const keys = new Set(tiles.map((t) => t.key))
      for (const [key, item] of this.items) {
        if (keys.has(key)) continue
        item.tile.dispose()
        this.grid.removeWidget(item.element, true, false)
        this.items.delete(key)
      }
      for (const { key, tile } of tiles) {
        const info = streams.get(tile.streamName)
        let item = this.items.get(key)
        const type = info?.type ?? "label"
        if (item !== undefined && (item.type !== type || item.streamName !== tile.streamName)) {
          item.tile.dispose()
          item.tile = this.makeTile(tile, type, info === undefined)
          item.content.prepend(item.tile.element)
          item.type = type
          item.streamName = tile.streamName
          item.fedTs = undefined
        }
        if (item === undefined) {
          item = this.add(key, tile, type, info === undefined)
        } else {
          const n = item.element.gridstackNode
          if (n === undefined || n.x !== tile.x || n.y !== tile.y || n.w !== tile.w || n.h !== tile.h) {
            this.grid.update(item.element, { x: tile.x, y: tile.y, w: tile.w, h: tile.h })
          }
        }
        // The layout's cell, as the owner holds it (what Save sends): for people reading the DOM and for tests.
        item.content.dataset["cell"] = `${tile.x},${tile.y},${tile.w},${tile.h}`
        if (item.title !== tile.title) {
          item.title = tile.title
          const title = item.tile.element.querySelector(".ds-tile-title")
          if (title !== null) title.textContent = tile.title ?? tile.streamName
        }
        // Options drawn live as they are edited (the well-formed part of them).
        const options = JSON.stringify(tile.options ?? null)
        if (item.options !== options) {
          item.options = options
          item.tile.place({ ...item.tile.model, title: tile.title, options: previewOptions(tile.options) })
        }
        const message = errors.get(key)
        item.error.textContent = message ?? ""
        item.content.classList.toggle("cw-has-error", message !== undefined)
        item.content.classList.toggle("cw-selected", key === selected)
        item.content.setAttribute("aria-selected", String(key === selected))
        this.feed(item, info)
      }
    } finally {
      this.grid.batchUpdate(false)
      this.syncing = false
    }
    // gridstack may have pushed tiles aside to make room for a moved one: tell the owner where everything is now.
    this.report()
  }

  /** Focuses the item of `key` (after a keyboard move, or to show the tile an error names). */
  focus(key: string): void {
    this.items.get(key)?.content.focus({ preventScroll: false })
  }

  /** Removes gridstack's listeners and disposes every tile. */
  destroy(): void {
    for (const item of this.items.values()) item.tile.dispose()
    this.items.clear()
    cancelAnimationFrame(this.frame)
    removeEventListener("pointermove", this.onPointerMove, { capture: true })
    this.grid.destroy(true)
  }

  /**
   * A drop lands in the cell under the pointer (docs/console.md, "Layout editor"). gridstack places a dragged item by
   * rounding its top-left corner to the nearest cell, and that corner trails the pointer by however far the pointer
   * moved before the drag began: a tile grabbed low in a cell and dropped high in one landed a row above the pointer,
   * one grabbed at the right of a cell a column to the left. So the item's draggable reports gridstack, in place of that
   * corner, the cell under the pointer less the cell of the tile that was grabbed ({@link dropPosition}); gridstack's
   * placeholder, its pushing aside of other tiles and the drop all follow the pointer. `ui()` is gridstack's own
   * report of a drag's position (internal to gridstack 14, the one place it reads one);
   * `packages/server/test/e2e/consoleDrop.browser.test.ts` holds the editor to the pointer's cell.
   */
  private onPointerDown(event: PointerEvent): void {
    const target = event.target instanceof Element ? event.target : null
    const element = target?.closest<HTMLElement>(".grid-stack-item")
    if (event.button !== 0 || element == null || target?.closest(".ui-resizable-handle") != null) {
      this.grab = undefined
      return
    }
    const box = element.getBoundingClientRect()
    this.grab = { element, x: event.clientX - box.left, y: event.clientY - box.top }
    this.onPointerMove(event)
    const draggable = draggableOf(element)
    if (draggable === undefined || this.following.has(draggable)) return
    this.following.add(draggable)
    const reported = draggable.ui.bind(draggable)
    draggable.ui = () => {
      const ui = reported()
      const grab = this.grab
      if (grab?.element !== element) return ui
      const grid = this.host.getBoundingClientRect()
      return {
        ...ui,
        position: {
          left: dropPosition(this.pointer.x - grid.left, grab.x, this.grid.cellWidth()),
          top: dropPosition(this.pointer.y - grid.top, grab.y, this.grid.getCellHeight(true))
        }
      }
    }
  }

  private makeTile(tile: TileJson, type: string, deleted: boolean): Tile {
    const t = new Tile(
      {
        streamName: tile.streamName,
        title: tile.title,
        type: (known.has(type) ? type : "label") as WidgetType,
        x: tile.x,
        y: tile.y,
        w: tile.w,
        h: tile.h,
        deleted,
        options: previewOptions(tile.options)
      },
      this.ctx
    )
    t.draw()
    return t
  }

  private add(key: string, tile: TileJson, type: string, deleted: boolean): Item {
    const element = el("div", "grid-stack-item") as GridItemHTMLElement
    const content = el("div", "grid-stack-item-content cw-item")
    content.tabIndex = 0
    content.dataset["key"] = key
    content.dataset["stream"] = tile.streamName
    content.setAttribute("role", "option")
    content.setAttribute("aria-label", `Tile ${tile.title ?? tile.streamName}`)
    const error = el("div", "cw-tile-error")
    error.setAttribute("role", "alert")
    const t = this.makeTile(tile, type, deleted)
    content.append(t.element, error)
    element.append(content)
    this.host.append(element)
    this.grid.makeWidget(element, { x: tile.x, y: tile.y, w: tile.w, h: tile.h, id: key })
    const item: Item = {
      element,
      content,
      error,
      tile: t,
      streamName: tile.streamName,
      type,
      title: tile.title,
      options: JSON.stringify(tile.options ?? null),
      fedTs: undefined
    }
    this.items.set(key, item)
    return item
  }

  private feed(item: Item, info: StreamInfo | undefined): void {
    const latest = info?.latest
    if (latest === undefined) return
    if (latest === null) {
      if (item.fedTs !== null) {
        item.tile.clear()
        item.fedTs = null
        this.touch(item)
      }
      return
    }
    if (item.fedTs === latest.ts) return
    if (item.fedTs === undefined || item.fedTs === null) item.tile.setEntries([latest])
    else item.tile.addEntry(latest)
    item.fedTs = latest.ts
    this.touch(item)
  }

  // Draw at most once per frame, as the view page does.
  private touch(item: Item): void {
    this.dirty.add(item)
    if (this.frame !== 0) return
    this.frame = requestAnimationFrame(() => {
      this.frame = 0
      for (const i of this.dirty) i.tile.draw()
      this.dirty.clear()
    })
  }

  private keyOf(target: EventTarget | null): string | undefined {
    const content = target instanceof Element ? target.closest<HTMLElement>(".cw-item") : null
    return content?.dataset["key"]
  }

  private onKey(event: KeyboardEvent): void {
    const key = this.keyOf(event.target)
    if (key === undefined || event.target !== this.items.get(key)?.content) return
    if (event.key === "Delete") {
      event.preventDefault()
      this.callbacks.onRemove(key)
      return
    }
    const item = this.items.get(key)!
    const n = item.element.gridstackNode
    if (n === undefined) return
    const next = keyboardCell(event.key, event.shiftKey, { x: n.x ?? 0, y: n.y ?? 0, w: n.w ?? 1, h: n.h ?? 1 })
    if (event.key.startsWith("Arrow")) event.preventDefault()
    if (next === undefined) return
    this.grid.update(item.element, next)
    this.report()
    item.content.focus({ preventScroll: true })
  }

  private report(): void {
    const cells = new Map<string, Cell>()
    for (const [key, item] of this.items) {
      const n = item.element.gridstackNode
      if (n !== undefined) cells.set(key, { x: n.x ?? 0, y: n.y ?? 0, w: n.w ?? 1, h: n.h ?? 1 })
    }
    this.callbacks.onCells(cells)
  }
}
