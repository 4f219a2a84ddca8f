import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import {
  type Cell,
  dropPosition,
  errorTarget,
  firstFreeCell,
  GRID_COLUMNS,
  keyboardCell,
  overlaps,
  sameLayout
} from "../src/browser/layout.js"

const cellArb = fc
  .record({ x: fc.integer({ min: 0, max: 11 }), y: fc.integer({ min: 0, max: 20 }), h: fc.integer({ min: 1, max: 6 }) })
  .chain(({ x, y, h }) => fc.integer({ min: 1, max: GRID_COLUMNS - x }).map((w) => ({ x, y, w, h })))
const onGrid = (c: Cell) => c.x >= 0 && c.y >= 0 && c.w >= 1 && c.h >= 1 && c.x + c.w <= GRID_COLUMNS

describe("keyboardCell", () => {
  const cell = { x: 3, y: 2, w: 4, h: 2 }
  it("arrow keys move the tile one cell", () => {
    assert.deepStrictEqual(keyboardCell("ArrowRight", false, cell), { x: 4, y: 2, w: 4, h: 2 })
    assert.deepStrictEqual(keyboardCell("ArrowLeft", false, cell), { x: 2, y: 2, w: 4, h: 2 })
    assert.deepStrictEqual(keyboardCell("ArrowDown", false, cell), { x: 3, y: 3, w: 4, h: 2 })
    assert.deepStrictEqual(keyboardCell("ArrowUp", false, cell), { x: 3, y: 1, w: 4, h: 2 })
  })
  it("Shift+arrows resize it: right and down grow, left and up shrink", () => {
    assert.deepStrictEqual(keyboardCell("ArrowRight", true, cell), { x: 3, y: 2, w: 5, h: 2 })
    assert.deepStrictEqual(keyboardCell("ArrowLeft", true, cell), { x: 3, y: 2, w: 3, h: 2 })
    assert.deepStrictEqual(keyboardCell("ArrowDown", true, cell), { x: 3, y: 2, w: 4, h: 3 })
    assert.deepStrictEqual(keyboardCell("ArrowUp", true, cell), { x: 3, y: 2, w: 4, h: 1 })
  })
  it("stops at the grid's edges and at one cell, and ignores other keys", () => {
    assert.isUndefined(keyboardCell("ArrowLeft", false, { x: 0, y: 0, w: 2, h: 1 }))
    assert.isUndefined(keyboardCell("ArrowUp", false, { x: 0, y: 0, w: 2, h: 1 }))
    assert.isUndefined(keyboardCell("ArrowRight", false, { x: 8, y: 0, w: 4, h: 1 }))
    assert.isUndefined(keyboardCell("ArrowRight", true, { x: 8, y: 0, w: 4, h: 1 }))
    assert.isUndefined(keyboardCell("ArrowLeft", true, { x: 0, y: 0, w: 1, h: 1 }))
    assert.isUndefined(keyboardCell("ArrowUp", true, { x: 0, y: 0, w: 1, h: 1 }))
    assert.isUndefined(keyboardCell("a", false, cell))
  })
  it.prop(
    "keeps every tile on the grid",
    [cellArb, fc.constantFrom("ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown"), fc.boolean()],
    ([c, key, shift]) => {
      const next = keyboardCell(key, shift, c)
      return next === undefined || onGrid(next)
    }
  )
})

describe("firstFreeCell", () => {
  it("is the top-left corner of an empty grid", () => {
    assert.deepStrictEqual(firstFreeCell([], 3, 2), { x: 0, y: 0, w: 3, h: 2 })
  })
  it("is the first free place, row by row, left to right", () => {
    const taken = [
      { x: 0, y: 0, w: 6, h: 2 },
      { x: 6, y: 0, w: 4, h: 1 }
    ]
    assert.deepStrictEqual(firstFreeCell(taken, 2, 1), { x: 10, y: 0, w: 2, h: 1 })
    assert.deepStrictEqual(firstFreeCell(taken, 3, 2), { x: 6, y: 1, w: 3, h: 2 })
  })
  it.prop(
    "never overlaps a tile and stays on the grid",
    [fc.array(cellArb, { maxLength: 12 }), fc.integer({ min: 1, max: 14 }), fc.integer({ min: 1, max: 4 })],
    ([taken, w, h]) => {
      const cell = firstFreeCell(taken, w, h)
      return onGrid(cell) && !taken.some((t) => overlaps(t, cell))
    }
  )
})

describe("errorTarget", () => {
  it("names the tile and field of a tile path", () => {
    assert.deepStrictEqual(errorTarget("tiles[2].streamName"), { kind: "tile", index: 2, field: "streamName" })
    assert.deepStrictEqual(errorTarget("tiles[0]"), { kind: "tile", index: 0, field: "" })
    assert.deepStrictEqual(errorTarget("tiles[1].options.thresholds[0].color"), {
      kind: "tile",
      index: 1,
      field: "options.thresholds[0].color"
    })
  })
  it("names the dashboard's name, or the dashboard as a whole", () => {
    assert.deepStrictEqual(errorTarget("name"), { kind: "name" })
    assert.deepStrictEqual(errorTarget("tiles"), { kind: "dashboard" })
    assert.deepStrictEqual(errorTarget(undefined), { kind: "dashboard" })
  })
})

describe("sameLayout", () => {
  it("ignores key order and undefined fields, not values or tile order", () => {
    const a = { streamName: "s", x: 0, y: 0, w: 2, h: 1 }
    const b = { h: 1, w: 2, y: 0, x: 0, streamName: "s", title: undefined }
    assert.isTrue(sameLayout([a], [b]))
    assert.isFalse(sameLayout([a], [{ ...a, x: 1 }]))
    assert.isFalse(sameLayout([a, { ...a, y: 1 }], [{ ...a, y: 1 }, a]))
    assert.isFalse(sameLayout([a], [{ ...a, options: { staleAfter: 60 } }]))
  })
})

describe("dropPosition", () => {
  it("puts the grabbed cell of a dragged tile in the cell under the pointer", () => {
    // Grabbed 80 px into a 96 px row (its first row), the pointer 400 px down (row 4): the tile's top at row 4.
    assert.strictEqual(dropPosition(400, 80, 96), 4 * 96)
    // Grabbed in its second row, the pointer in row 4: the tile's top at row 3.
    assert.strictEqual(dropPosition(400, 100, 96), 3 * 96)
  })
  it("rounds to that cell also after a grid adds or takes less than half a cell (gridstack's margins)", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 3000, noNaN: true }),
        fc.double({ min: 0, max: 1000, noNaN: true }),
        fc.double({ min: 20, max: 200, noNaN: true }),
        fc.double({ min: -0.45, max: 0.45, noNaN: true }),
        (pointer, grab, cell, margin) => {
          const cells = Math.floor(pointer / cell) - Math.floor(grab / cell)
          assert.strictEqual(Math.round((dropPosition(pointer, grab, cell) + margin * cell) / cell), cells)
        }
      )
    )
  })
})
