/**
 * The demo dashboard of `serve --demo` (docs/api.md section 8.5) in Debian's Chromium: the link the server prints opens
 * a page whose twelve tiles all draw data, with no console error and no request to another origin, and whose values
 * change while it is open, with no reload. The README's screenshot of it (`docs/demo.png`) is taken here.
 */
import { until } from "@dashstream/dashboard-web/testing"
import { describe, expect, it } from "vitest"
import { useBrowserSuite } from "./browserHarness.js"
import { screenshotPath } from "../support/screenshots.js"

describe("the demo dashboard in a browser", { timeout: 120_000 }, () => {
  const suite = useBrowserSuite({ serve: { extraArgs: ["--demo"] } })

  it("draws all twelve tiles with data, then shows new values without a reload", async () => {
    const url = /^Demo dashboard: (\S+)/m.exec(suite.server.stdout())?.[1]
    expect(url, suite.server.stdout()).toBeDefined()
    const { page } = suite.watch
    await page.setViewportSize({ width: 1920, height: 1080 })
    await page.goto(url!)
    await until(page, `document.querySelectorAll('.ds-tile[data-state="data"]').length === 12`, 20_000)
    expect(await page.getAttribute("html", "data-connection")).toBe("live")
    expect(await page.title()).toContain("Demo")
    const orders = `document.querySelector('.ds-tile[data-stream="Latest orders"]')?.textContent`
    const first = await page.evaluate(orders)
    const requests = `document.querySelector('.ds-tile[data-stream="Requests per second"]')?.textContent`
    const firstRequests = await page.evaluate(requests)
    // The feed pushes every 3 seconds; within 10 the numbers and the list have moved on.
    await until(page, `${requests} !== ${JSON.stringify(firstRequests)}`, 10_000)
    await until(page, `${orders} !== ${JSON.stringify(first)}`, 15_000)
    await page.screenshot({ path: screenshotPath("demo.png") })
    expect(suite.watch.errors).toEqual([])
    expect(suite.watch.foreignRequests).toEqual([])
  })
})
