/**
 * Pure rules of the layout editor (docs/api.md sections 11 and 14), no DOM: the 12-column grid, keyboard moves and
 * resizes, where a dragged tile lands, where a new tile goes, and which tile a server error's `path` names.
 */

/** Columns of the dashboard grid (docs/api.md section 11). */
export const GRID_COLUMNS = 12

/** A tile's place in grid cells: column, row, width, height (integers, `x + w <= 12`). */
export interface Cell {
  readonly x: number
  readonly y: number
  readonly w: number
  readonly h: number
}

/** True when two cells share at least one grid cell (tiles of a dashboard do not overlap, section 11). */
export const overlaps = (a: Cell, b: Cell): boolean =>
  a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h

const arrows: Readonly<Record<string, readonly [number, number]>> = {
  ArrowLeft: [-1, 0],
  ArrowRight: [1, 0],
  ArrowUp: [0, -1],
  ArrowDown: [0, 1]
}

/**
 * The keyboard editing of docs/api.md section 14: an arrow key moves the tile one cell, Shift+arrow resizes it by one
 * cell (right and down grow, left and up shrink), always staying on the grid (`x >= 0`, `y >= 0`, `x + w <= 12`,
 * `w, h >= 1`). Answers the new cell, or `undefined` when the key is not an arrow or the tile cannot go further.
 * Collisions with other tiles are the grid's to resolve (it pushes them aside), not this function's.
 */
export const keyboardCell = (key: string, shift: boolean, cell: Cell): Cell | undefined => {
  const d = arrows[key]
  if (d === undefined) return undefined
  const [dx, dy] = d
  const next = shift
    ? {
        ...cell,
        w: Math.min(Math.max(cell.w + dx, 1), GRID_COLUMNS - cell.x),
        h: Math.max(cell.h + dy, 1)
      }
    : {
        ...cell,
        x: Math.min(Math.max(cell.x + dx, 0), GRID_COLUMNS - cell.w),
        y: Math.max(cell.y + dy, 0)
      }
  return next.x === cell.x && next.y === cell.y && next.w === cell.w && next.h === cell.h ? undefined : next
}

/**
 * Where a tile dragged with the mouse goes, along one axis, in pixels from the grid's edge: the grabbed cell of the
 * tile lands in the cell under the pointer, so the tile's edge is `(pointer's cell - grabbed cell) * cell`. `pointer`
 * is the pointer's distance from the grid's edge, `grab` its distance from the tile's edge when the drag began, `cell`
 * a cell's size (all in CSS pixels). A whole number of cells, so a grid that rounds a position to a cell, after adding
 * or taking less than half a cell (gridstack's margins), keeps it.
 */
export const dropPosition = (pointer: number, grab: number, cell: number): number =>
  (Math.floor(pointer / cell) - Math.floor(grab / cell)) * cell

/**
 * Where a new `w` x `h` tile goes: the first free place, row by row from the top, left to right, that overlaps no
 * tile of `taken`. `w` is capped at the grid's width.
 */
export const firstFreeCell = (taken: ReadonlyArray<Cell>, w: number, h: number): Cell => {
  const width = Math.min(Math.max(w, 1), GRID_COLUMNS)
  for (let y = 0; ; y++) {
    for (let x = 0; x + width <= GRID_COLUMNS; x++) {
      const cell = { x, y, w: width, h }
      if (!taken.some((t) => overlaps(t, cell))) return cell
    }
  }
}

/** Where a server error's `path` points in a dashboard body: a tile (by index, and its field), the name, or neither. */
export type ErrorTarget =
  | { readonly kind: "tile"; readonly index: number; readonly field: string }
  | { readonly kind: "name" }
  | { readonly kind: "dashboard" }

/**
 * Reads the `path` of a 400 answering `PUT .../dashboards/<id>` (docs/api.md section 11): `tiles[2].streamName` and
 * `tiles[2]` name tile 2 (field `streamName`, or `""` for the tile as a whole), `tiles[1].options.thresholds[0].color`
 * names tile 1 (field `options.thresholds[0].color`), `name` the dashboard's name; anything else (or no path) the
 * dashboard as a whole.
 */
export const errorTarget = (path: string | undefined): ErrorTarget => {
  if (path === undefined) return { kind: "dashboard" }
  const tile = /^tiles\[(\d+)\](?:\.(.+))?$/.exec(path)
  if (tile !== null) return { kind: "tile", index: Number(tile[1]), field: tile[2] ?? "" }
  return path === "name" ? { kind: "name" } : { kind: "dashboard" }
}

/** A JSON value with object keys sorted, so two tiles that differ only in key order compare equal. */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : typeof value === "object" && value !== null
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([, v]) => v !== undefined)
            .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
            .map(([k, v]) => [k, canonical(v)])
        )
      : value

/**
 * True when two layouts are the same: the same tiles in the same order, field by field (object key order and
 * `undefined` fields aside). The editor shows "unsaved changes" while its layout and the saved one differ.
 */
export const sameLayout = (a: ReadonlyArray<unknown>, b: ReadonlyArray<unknown>): boolean =>
  JSON.stringify(canonical(a)) === JSON.stringify(canonical(b))
