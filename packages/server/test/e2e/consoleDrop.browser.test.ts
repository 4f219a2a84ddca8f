/**
 * A mouse drop in the console's layout editor (docs/api.md section 14) lands where the pointer is, in Debian's Chromium
 * against a real server: a tile grabbed anywhere in it and dropped lands with the grabbed cell under the pointer (a tile
 * grabbed in its top-left cell: at the cell under the pointer), whatever the tile's size, wherever in the cells the
 * grab and the drop are, at 1280, 1440 and 1920 px. The saved layout (`PUT`, read back through the admin API) holds
 * that cell.
 */
import type { Page } from "@playwright/test"
import { until } from "@dashstream/dashboard-web/testing"
import { beforeAll, describe, expect, it } from "vitest"
import { q, unexpectedErrors, useBrowserSuite } from "./browserHarness.js"

/** The editor's rows, in pixels (its gridstack `cellHeight`). */
const cellHeight = 96

/**
 * One drag: a `w` x `h` tile starting at the top-left of the grid, grabbed in its cell `grab` (column and row inside
 * the tile) at the fraction `grabAt` of that cell's width and height, dropped with the pointer at the fraction `dropAt`
 * of a cell such that the tile's top-left lands at `to`. The grid's tallest column (an 1x8 tile in column 11) keeps
 * eight rows to drop into.
 */
interface Drag {
  readonly w: number
  readonly h: number
  readonly grab: { readonly x: number; readonly y: number }
  readonly grabAt: readonly [number, number]
  readonly dropAt: readonly [number, number]
  readonly to: { readonly x: number; readonly y: number }
}

const drags: ReadonlyArray<Drag> = [
  // A 6x2 tile by the middle of its top-left cell, dropped in the top half of a cell.
  { w: 6, h: 2, grab: { x: 0, y: 0 }, grabAt: [0.5, 0.5], dropAt: [0.5, 0.2], to: { x: 3, y: 4 } },
  // A 6x2 tile by the lower part of a cell in the middle of it, dropped high in the target cell.
  { w: 6, h: 2, grab: { x: 2, y: 1 }, grabAt: [0.5, 0.8], dropAt: [0.4, 0.15], to: { x: 4, y: 3 } },
  // A 6x2 tile by the middle of its lower-right cell (its corner is the resize handle), dropped in the upper left of a
  // cell: the tile lands up and left of the pointer.
  { w: 6, h: 2, grab: { x: 5, y: 1 }, grabAt: [0.5, 0.5], dropAt: [0.3, 0.3], to: { x: 2, y: 4 } },
  // A 3x2 tile by the lower right of its top-left cell, dropped at the upper left of a cell.
  { w: 3, h: 2, grab: { x: 0, y: 0 }, grabAt: [0.85, 0.85], dropAt: [0.15, 0.15], to: { x: 7, y: 5 } },
  // A 4x3 tile by the upper left of its bottom row, dropped at the lower right of a cell.
  { w: 4, h: 3, grab: { x: 1, y: 2 }, grabAt: [0.2, 0.2], dropAt: [0.85, 0.85], to: { x: 5, y: 3 } },
  // A 2x1 tile, dropped near the bottom of a cell.
  { w: 2, h: 1, grab: { x: 1, y: 0 }, grabAt: [0.8, 0.4], dropAt: [0.3, 0.8], to: { x: 9, y: 6 } }
]

describe("a mouse drop in the layout editor", { timeout: 300_000 }, () => {
  const suite = useBrowserSuite({ page: { viewport: { width: 1440, height: 900 } }, signIn: true })
  let page: Page
  let accountId: string

  beforeAll(async () => {
    accountId = (await suite.api.setup({ moved: "number", anchor: "label" })).id
    page = suite.page
  }, 180_000)

  for (const width of [1280, 1440, 1920]) {
    for (const drag of drags) {
      const { w, h, grab, to } = drag
      it(`at ${width} px, a ${w}x${h} tile grabbed in its cell (${grab.x}, ${grab.y}) lands at (${to.x}, ${to.y})`, async () => {
        const created = await suite.api.admin("POST", `/admin/accounts/${accountId}/dashboards`, {
          name: `Drop ${width} ${w}x${h}`,
          tiles: [
            { streamName: "moved", x: 0, y: 0, w, h },
            { streamName: "anchor", x: 11, y: 0, w: 1, h: 8 }
          ]
        })
        expect(created.status, created.text).toBe(201)
        const dashboardId = created.json.id as string
        await page.setViewportSize({ width, height: 900 })
        await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}/dashboards/${dashboardId}`)
        await until(page, `document.querySelectorAll(".cw-item").length === 2`, 10_000)
        await until(page, `${q('.cw-item[data-stream="moved"]')}?.dataset.cell === "0,0,${w},${h}"`, 5_000)

        // Where the grid's cells are on the screen: 12 columns across the grid, rows of cellHeight pixels.
        const grid = (await page.locator(".cw-grid").boundingBox())!
        const cellWidth = grid.width / 12
        const at = (column: number, row: number, [fx, fy]: readonly [number, number]) => ({
          x: grid.x + (column + fx) * cellWidth,
          y: grid.y + (row + fy) * cellHeight
        })
        const from = at(grab.x, grab.y, drag.grabAt)
        const onto = at(to.x + grab.x, to.y + grab.y, drag.dropAt)
        // The drop point is inside the window, so nothing scrolls.
        expect(onto.y).toBeLessThan(900)
        await page.mouse.move(from.x, from.y)
        await page.mouse.down()
        await page.mouse.move(onto.x, onto.y, { steps: 25 })
        await page.mouse.up()

        const expected = `${to.x},${to.y},${w},${h}`
        await until(page, `${q('.cw-item[data-stream="moved"]')}?.dataset.cell !== "0,0,${w},${h}"`, 5_000)
        expect(await page.getAttribute('.cw-item[data-stream="moved"]', "data-cell")).toBe(expected)
        await page.click("button.cw-save")
        await until(page, `${q(".cw-save-state")}?.textContent === "Saved."`, 5_000)
        const saved = await suite.api.admin("GET", `/admin/accounts/${accountId}/dashboards/${dashboardId}`)
        expect(saved.json.tiles).toEqual([
          { streamName: "moved", x: to.x, y: to.y, w, h },
          { streamName: "anchor", x: 11, y: 0, w: 1, h: 8 }
        ])
        expect(unexpectedErrors(suite.watch, [401])).toEqual([])
      })
    }
  }
})
