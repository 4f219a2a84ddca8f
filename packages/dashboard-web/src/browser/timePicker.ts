/**
 * The view page's time picker (docs/api.md section 11.6), shared by the dashboard and rotation pages: the page's own
 * window of time from its address (`?range=<preset>`, `?from=&to=`), a row of preset buttons and a "Live" button in
 * the header on screens wider than 800 px (none at 800 px and narrower), and the drag-to-zoom of line graphs. Each
 * choice goes into the address with `history.pushState` (so it can be shared, and Back undoes it); "Live" takes
 * `range`, `from` and `to` out of it, and the tiles return to their own settings.
 */
import { el } from "./dom.js"
import type { ZoomTarget } from "./renderers/Renderer.js"
import { formatDate } from "./format.js"
import { pageWindow, type RangePreset, rangePresets, type TimeWindow, withPageWindow } from "./timeWindow.js"

/** Screens on which the page offers the picker and the drag-to-zoom. */
const wideScreen = "(min-width: 801px)"

/** The page's window of time and its controls. */
export interface TimeControl {
  /** The picker, for the page's header (hidden on narrow screens). */
  readonly element: HTMLElement
  /** The page's window now: `undefined` when the tiles follow their own `range` ("Live"). */
  readonly current: () => TimeWindow | undefined
  /** What a drag across a line graph zooms: every time tile, to the dragged span; not on a narrow screen. */
  readonly zoom: ZoomTarget
}

/**
 * Reads the page's window from its address and builds the picker; `onChange` is called with the new window after
 * every choice and every Back or Forward.
 */
export const timeControl = (onChange: (window: TimeWindow | undefined) => void): TimeControl => {
  let current = pageWindow(location.search)
  const wide = matchMedia(wideScreen)
  const picker = el("nav", "ds-picker")
  picker.setAttribute("aria-label", "Time range")
  const span = el("span", "ds-picker-span")
  const buttons = new Map<RangePreset | "live", HTMLButtonElement>()
  const button = (key: RangePreset | "live", label: string, window: TimeWindow | undefined) => {
    const b = el("button", "ds-picker-button", label)
    b.type = "button"
    b.dataset["range"] = key
    b.addEventListener("click", () => choose(window))
    buttons.set(key, b)
    return b
  }
  picker.append(
    span,
    ...(Object.keys(rangePresets) as Array<RangePreset>).map((preset) =>
      button(preset, preset, { kind: "last", seconds: rangePresets[preset], preset })
    ),
    button("live", "Live", undefined)
  )

  const show = () => {
    const pressed = current === undefined ? "live" : current.kind === "last" ? current.preset : undefined
    for (const [key, b] of buttons) b.setAttribute("aria-pressed", String(key === pressed))
    span.textContent =
      current?.kind === "between"
        ? current.to === undefined
          ? `since ${formatDate(current.from)}`
          : `${formatDate(current.from)} \u2013 ${formatDate(current.to)}`
        : ""
    picker.hidden = !wide.matches
  }
  const choose = (window: TimeWindow | undefined) => {
    current = window
    history.pushState(null, "", `${location.pathname}${withPageWindow(location.search, window)}${location.hash}`)
    show()
    onChange(window)
  }
  addEventListener("popstate", () => {
    current = pageWindow(location.search)
    show()
    onChange(current)
  })
  wide.addEventListener("change", show)
  show()

  return {
    element: picker,
    current: () => current,
    zoom: {
      active: () => wide.matches,
      zoom: (from, to) => {
        if (wide.matches) choose({ kind: "between", from, to })
      }
    }
  }
}
