/**
 * The rotation page end to end (docs/api.md section 15): a real `dashstream serve` on SQLite, two dashboards made
 * through the admin API and a rotation of them with the shortest interval (5 s), opened in Debian's Chromium. The
 * page shows dashboard A (its name as the title), then B, then A again, with pushes appearing live on each (also the
 * ones made while the other dashboard was shown), all over ONE request to the rotation's event stream; the turns are
 * the server's clock's, also on a screen whose own clock is minutes off; a rotated token ends the page. An empty rotation says so. The README's screenshot (`docs/rotation.png`) is taken here.
 */
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { until } from "@dashstream/dashboard-web/testing"
import { beforeAll, describe, expect, it } from "vitest"
import { skewedClockPage, text, tileSel, useBrowserSuite } from "./browserHarness.js"
import { screenshotPath } from "../support/screenshots.js"

const screenshot = screenshotPath("rotation.png")

const shown = (id: string) =>
  `document.documentElement.dataset.dashboardId === ${JSON.stringify(id)} && ` +
  `document.documentElement.dataset.rendered === "true"`

describe("the rotation page against a real server", { timeout: 120_000 }, () => {
  const suite = useBrowserSuite({
    account: {
      name: "rotation e2e",
      widgets: {
        revenue: "number",
        cpu: "dial",
        signups: "sparkline",
        status: "label",
        queue: "horizontal-bar",
        deploys: "text-feed"
      }
    },
    page: { viewport: { width: 1280, height: 720 } }
  })
  const { push } = suite
  let dashboardA: string
  let dashboardB: string
  let rotationId: string
  let viewPath: string
  /** Every request the page made to an event stream. */
  const eventRequests: Array<string> = []

  const dashboard = async (name: string, tiles: ReadonlyArray<Record<string, unknown>>) =>
    (await suite.createDashboard(name, tiles)).id

  beforeAll(async () => {
    await push("revenue", { number: 1200, prefix: "$" })
    await push("cpu", { number: 42 })
    for (let i = 0; i < 12; i++)
      await push("signups", { number: 40 + ((i * 7) % 11), timestamp: 1_700_000_000 + i * 60 })
    await push("status", { label: "All systems go" })
    await push("queue", { number: 340 })
    await push("deploys", [
      { title: "api", msg: "v2.3.1 deployed" },
      { title: "web", msg: "v5.0.0 deployed" }
    ])
    dashboardA = await dashboard("Sales", [
      { streamName: "revenue", title: "Revenue today", x: 0, y: 0, w: 6, h: 2 },
      { streamName: "cpu", title: "CPU", x: 6, y: 0, w: 6, h: 2 },
      { streamName: "signups", title: "Signups", x: 0, y: 2, w: 12, h: 2 }
    ])
    dashboardB = await dashboard("Operations", [
      { streamName: "status", title: "Status", x: 0, y: 0, w: 6, h: 2 },
      { streamName: "queue", title: "Queue", x: 6, y: 0, w: 6, h: 2 },
      { streamName: "deploys", title: "Deploys", x: 0, y: 2, w: 12, h: 2 }
    ])
    const created = await suite.api.admin("POST", `/admin/accounts/${suite.account.id}/rotations`, {
      name: "Wall TV",
      dashboardIds: [dashboardA, dashboardB],
      intervalSeconds: 5
    })
    expect(created.status, created.text).toBe(201)
    rotationId = created.json.id as string
    viewPath = created.json.url as string
    suite.watch.page.on("request", (request) => {
      if (new URL(request.url()).pathname.endsWith("/events")) eventRequests.push(request.url())
    })
  })

  it("shows A, then B, then A, each with live pushes, over one event stream", async () => {
    const { page } = suite.watch
    await page.goto(suite.server.baseUrl + viewPath)
    // The turns are the server's clock's: wait for B's turn, then A's begins and lasts 5 s.
    await until(page, shown(dashboardB), 12_000)
    await until(
      page,
      `${shown(dashboardA)} && document.querySelectorAll('.ds-tile[data-state="data"]').length === 3`,
      8_000
    )
    const shownAt = performance.now()
    expect(await page.title()).toBe("Sales")
    expect(await text(page, ".ds-name")).toBe("Sales")
    expect(await text(page, ".ds-rotation-position")).toBe("1 / 2")
    expect(await text(page, `${tileSel("revenue")} .ds-big-number`)).toBe("$1,200")
    // The progress indicator fills over the interval.
    expect(await page.locator(".ds-rotation-progress").isVisible()).toBe(true)
    expect(await page.locator(".ds-rotation-progress-bar").getAttribute("style")).toMatch(/transform [\d.]+s linear/)
    // Only A's tiles are on the page.
    expect(await page.locator(".ds-tile").count()).toBe(3)
    expect(await page.locator(tileSel("status")).count()).toBe(0)

    // A push appears on A within a second.
    await push("revenue", { number: 1300, prefix: "$" })
    await until(page, `document.querySelector('${tileSel("revenue")} .ds-big-number')?.textContent === "$1,300"`, 1_000)
    await page.waitForTimeout(200)
    mkdirSync(dirname(screenshot), { recursive: true })
    await page.screenshot({ path: screenshot })

    // After 5 s: B, with its name as the title; a push appears on it.
    await until(page, shown(dashboardB), 8_000)
    const switchedAt = performance.now()
    // At the end of A's turn, a multiple of 5 s of the server's clock (this machine's).
    expect((Date.now() / 1000) % 5, "seconds into B's turn when it was seen").toBeLessThan(1.5)
    expect(switchedAt - shownAt).toBeLessThan(7_000)
    expect(await page.title()).toBe("Operations")
    expect(await text(page, ".ds-rotation-position")).toBe("2 / 2")
    await until(
      page,
      `document.querySelector('${tileSel("status")} .ds-label')?.textContent === "All systems go"`,
      1_000
    )
    expect(await page.locator(tileSel("revenue")).count()).toBe(0)
    await push("status", { label: "Degraded" })
    await until(page, `document.querySelector('${tileSel("status")} .ds-label')?.textContent === "Degraded"`, 1_000)
    // A push to A's stream while B is shown: A shows it when it comes back.
    await push("revenue", { number: 1400, prefix: "$" })

    // Then A again, holding what was pushed meanwhile, and live.
    await until(page, shown(dashboardA), 8_000)
    expect(await page.title()).toBe("Sales")
    await until(page, `document.querySelector('${tileSel("revenue")} .ds-big-number')?.textContent === "$1,400"`, 1_000)
    await push("revenue", { number: 1500, prefix: "$" })
    await until(page, `document.querySelector('${tileSel("revenue")} .ds-big-number')?.textContent === "$1,500"`, 1_000)

    // All of it over ONE request to the rotation's event stream.
    expect(eventRequests).toEqual([`${suite.server.baseUrl}${viewPath}/events`])
    expect(suite.watch.errors.filter((e) => !e.includes("favicon"))).toEqual([])
    expect(suite.watch.foreignRequests).toEqual([])
  })

  it("keeps the server's turns on a screen whose clock is 7 minutes and one turn off", async () => {
    // The page's Date runs 425 s ahead: its own clock would put it a whole 5 s turn ahead, on the other dashboard.
    const skewed = await skewedClockPage(suite.browser, suite.server.baseUrl, 425_000, {
      viewport: { width: 1280, height: 720 }
    })
    try {
      const page = skewed.page
      await page.goto(suite.server.baseUrl + viewPath)
      await until(page, `document.documentElement.dataset.rendered === "true"`, 10_000)
      expect(await page.evaluate("Date.now() - performance.timeOrigin - performance.now()")).toBeGreaterThan(400_000)
      // Sampled in the middle of three turns: the dashboard of the server's turn, also on the open page beside it.
      for (let sample = 0; sample < 3; sample++) {
        const toMiddle = (2_500 - (Date.now() % 5_000) + 5_000) % 5_000
        await new Promise((r) => setTimeout(r, toMiddle))
        const turn = Math.floor(Date.now() / 5_000) % 2
        expect(await page.evaluate("document.documentElement.dataset.rotationIndex")).toBe(String(turn))
        expect(await suite.watch.page.evaluate("document.documentElement.dataset.rotationIndex")).toBe(String(turn))
        await new Promise((r) => setTimeout(r, 1_000))
      }
      expect(skewed.errors).toEqual([])
    } finally {
      await skewed.context.close()
    }
  })

  it("an edit reaches the open page without a reload; an empty rotation says it has no dashboards", async () => {
    const { page } = suite.watch
    const put = await suite.api.admin("PUT", `/admin/accounts/${suite.account.id}/rotations/${rotationId}`, {
      name: "Wall TV",
      dashboardIds: [dashboardB],
      intervalSeconds: 5
    })
    expect(put.status, put.text).toBe(200)
    await until(page, shown(dashboardB), 5_000)
    expect(await page.locator(".ds-rotation-progress").isVisible()).toBe(false)
    const empty = await suite.api.admin("PUT", `/admin/accounts/${suite.account.id}/rotations/${rotationId}`, {
      name: "Wall TV",
      dashboardIds: [],
      intervalSeconds: 5
    })
    expect(empty.status, empty.text).toBe(200)
    await until(
      page,
      `document.querySelector('.ds-no-tiles')?.textContent === "This rotation has no dashboards"`,
      5_000
    )
    expect(await page.title()).toBe("Wall TV")
    expect(eventRequests.length).toBe(1)
  })

  it("a rotated view token ends the page's event stream and the old link answers 404", async () => {
    const { page } = suite.watch
    const r = await suite.api.admin("POST", `/admin/accounts/${suite.account.id}/rotations/${rotationId}/view-token`)
    expect(r.status, r.text).toBe(201)
    expect((await suite.api.fetch(viewPath)).status).toBe(404)
    await until(page, `document.documentElement.dataset.connection === "gone"`, 20_000)
    expect(await text(page, ".ds-status-text")).toBe("This rotation link is no longer valid")
    expect((await suite.api.fetch(r.json.url as string)).status).toBe(200)
  })
})
