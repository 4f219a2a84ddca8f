/**
 * The demo dashboard of `serve --demo` (docs/api.md section 8.5) on a 390x844 phone, in Debian's Chromium: its twelve
 * tiles stacked in one column that fits the screen (no horizontal scrollbar), by row then column, each drawing data,
 * with no console error and no request to another origin. The README's screenshot of it (`docs/demo-phone.png`) is taken here; the wall
 * screen's (`docs/demo.png`, 1920x1080) by `demo.browser.test.ts`.
 */
import { until } from "@dashstream/dashboard-web/testing"
import { describe, expect, it } from "vitest"
import { screenshotPath } from "../support/screenshots.js"
import { useBrowserSuite } from "./browserHarness.js"
import { demoWidgets } from "../../src/Demo.js"

const phone = { width: 390, height: 844 }

describe("the demo dashboard on a phone", { timeout: 120_000 }, () => {
  const suite = useBrowserSuite({ serve: { extraArgs: ["--demo"] }, page: { viewport: phone } })

  it("stacks the twelve tiles in one column that fits the screen, by row then column, each with data", async () => {
    const url = /^Demo dashboard: (\S+)/m.exec(suite.server.stdout())?.[1]
    expect(url, suite.server.stdout()).toBeDefined()
    const { page } = suite
    await page.goto(url!)
    await until(page, `document.querySelectorAll('.ds-tile[data-state="data"]').length === 12`, 20_000)
    await until(page, `document.querySelectorAll('.ds-type-world-map svg path').length > 40`, 15_000)
    const layout = (await page.evaluate(`(() => ({
      pageWidth: document.documentElement.scrollWidth,
      tiles: [...document.querySelectorAll(".ds-tile")].map((t) => {
        const r = t.getBoundingClientRect()
        return { stream: t.dataset.stream, left: r.left, right: r.right, top: r.top, bottom: r.bottom }
      })
    }))()`)) as {
      pageWidth: number
      tiles: Array<{ stream: string; left: number; right: number; top: number; bottom: number }>
    }
    expect(layout.pageWidth, "horizontal scrollbar").toBeLessThanOrEqual(phone.width)
    // One column: every tile as wide as the others, inside the screen, each below the one before it.
    const lefts = layout.tiles.map((t) => Math.round(t.left))
    const rights = layout.tiles.map((t) => Math.round(t.right))
    expect(new Set(lefts).size, JSON.stringify(lefts)).toBe(1)
    expect(new Set(rights).size, JSON.stringify(rights)).toBe(1)
    expect(Math.max(...rights)).toBeLessThanOrEqual(phone.width)
    const byTop = [...layout.tiles].sort((a, b) => a.top - b.top)
    for (const [i, tile] of byTop.entries()) if (i > 0) expect(tile.top).toBeGreaterThanOrEqual(byTop[i - 1]!.bottom)
    // In the wall's reading order: by row, then column.
    const wallOrder = [...demoWidgets].sort((a, b) => a.y - b.y || a.x - b.x).map((w) => w.streamName)
    expect(byTop.map((t) => t.stream)).toEqual(wallOrder)
    await page.waitForTimeout(500)
    await page.screenshot({ path: screenshotPath("demo-phone.png") })
    expect(suite.watch.errors).toEqual([])
    expect(suite.watch.foreignRequests).toEqual([])
  })
})
