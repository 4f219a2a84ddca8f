import type { TileOptionsData } from "@dashstream/core/tileStatus"
import type { Entry } from "../../Model.js"
import type { Bounds } from "../timeWindow.js"

/** What a renderer's DOM part gets besides its tile body. */
export interface RenderContext {
  readonly theme: "dark" | "light"
  /** URL paths of the TopoJSON map outlines. */
  readonly maps: { readonly world: string; readonly usa: string }
  /**
   * Where a drag across a line graph zooms the page's time tiles (docs/api.md section 11.6); absent where the page
   * offers no zoom (the console's layout editor).
   */
  readonly zoom?: ZoomTarget | undefined
}

/** What a line graph's drag-to-zoom asks of its page. */
export interface ZoomTarget {
  /** True when a drag zooms now (not on a narrow screen). */
  readonly active: () => boolean
  /** Zooms every time tile to `from`..`to`, in seconds. */
  readonly zoom: (from: number, to: number) => void
}

/** A mounted renderer: takes new view models until disposed. */
export interface Mounted<V> {
  readonly update: (view: V) => void
  readonly dispose: () => void
}

/**
 * One widget type's renderer, split in two:
 * - `view`: PURE, the tile's held entries (ascending `ts`) and its options (docs/api.md section 15: thresholds, min/max)
 *   to a view model (or an ECharts option); `undefined` when there is nothing to draw, which the tile frame shows as
 *   its empty state. A tile showing a window of time (section 15.1, `range`) also gets the window's bounds now: a
 *   chart's time axis spans them, a number's change is reckoned across them. Unit-tested in Node.
 * - `mount`: the DOM part; builds the tile body once and applies view models to it.
 */
export interface Renderer<V> {
  readonly view: (entries: ReadonlyArray<Entry>, options: TileOptionsData, window?: Bounds) => V | undefined
  readonly mount: (body: HTMLElement, ctx: RenderContext) => Mounted<V>
}

/**
 * The tile frame's handle on a renderer: draw the entries with the tile's options (and the bounds of the window of
 * time it shows, if any), answer false when they are empty.
 */
export interface TileBody {
  readonly render: (entries: ReadonlyArray<Entry>, options: TileOptionsData, window?: Bounds) => boolean
  readonly dispose: () => void
}

/** Hides a renderer's view model type: the tile frame only needs {@link TileBody}. */
export interface AnyRenderer {
  readonly create: (body: HTMLElement, ctx: RenderContext) => TileBody
}

/** Wraps a {@link Renderer}: mounts on the first non-empty view, disposes when the tile becomes empty. */
export const erase = <V>(renderer: Renderer<V>): AnyRenderer => ({
  create: (body, ctx) => {
    let mounted: Mounted<V> | undefined
    const dispose = () => {
      mounted?.dispose()
      mounted = undefined
      body.replaceChildren()
    }
    return {
      render: (entries, options, window) => {
        const view = renderer.view(entries, options, window)
        if (view === undefined) {
          dispose()
          return false
        }
        mounted ??= renderer.mount(body, ctx)
        mounted.update(view)
        return true
      },
      dispose
    }
  }
})
