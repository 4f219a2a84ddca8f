/**
 * The console as an operator reads it (docs/api.md section 14), in Debian's Chromium against a real server: the
 * breadcrumbs name the account and the dashboard; the widgets table shows each latest value as a person reads it (a
 * leaderboard's leader, a list's first items), never JSON; the layout editor's side panel stays inside its column with
 * a very long stream name, with no horizontal scrollbar at 1280, 1440 and 1920 px.
 */
import type { Page } from "@playwright/test"
import { until } from "@dashstream/dashboard-web/testing"
import { beforeAll, describe, expect, it } from "vitest"
import { signInToConsole, useBrowserSuite } from "./browserHarness.js"

const longName = `${"checkout_latency_p99_by_region_and_payment_provider_".repeat(3)}eu_west`

describe("the console's names, values and side panel", { timeout: 120_000 }, () => {
  const suite = useBrowserSuite({ page: { viewport: { width: 1280, height: 900 } } })
  let accountId: string
  let dashboardId: string
  let page: Page

  beforeAll(async () => {
    const { api, server } = suite
    page = suite.page
    const account = await api.setup({ "top sellers": "leaderboard", chores: "list", [longName]: "number" })
    accountId = account.id
    const push = async (streamName: string, point: unknown) =>
      expect((await api.pushPoint(account.accessKey, streamName, point)).status).toBe(200)
    await push("top sellers", {
      leaderboard: [
        { name: "Alice", value: 42 },
        { name: "Bob", value: 37 }
      ]
    })
    await push("chores", { list: [{ listItem: "Call the supplier" }, { listItem: "Ship order 1042" }] })
    await push(longName, 12)
    const created = await api.admin("POST", `/admin/accounts/${accountId}/dashboards`, { name: "Wall" })
    expect(created.status, created.text).toBe(201)
    dashboardId = created.json.id as string
    await signInToConsole(page, server.baseUrl)
  })

  const crumbs = () => page.evaluate(`document.querySelector(".cw-crumbs")?.textContent.replace(/\\s+/g, " ").trim()`)

  it("names the account in the breadcrumbs and reads each latest value as a person would", async () => {
    await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}`)
    await until(page, `document.querySelectorAll(".cw-widgets tr[data-stream] .cw-latest").length === 3`, 10_000)
    await until(page, `document.querySelectorAll(".cw-crumbs .cw-crumb").length === 2`, 10_000)
    const name = (await page.locator("h1").first().textContent())!.trim()
    expect(name).toMatch(/^e2e-/)
    expect(await crumbs()).toBe(`Accounts / ${name}`)
    const latest = async (stream: string) =>
      ((await page.locator(`.cw-widgets tr[data-stream="${stream}"] .cw-latest`).textContent()) ?? "").trim()
    await until(
      page,
      `document.querySelector('.cw-widgets tr[data-stream="chores"] .cw-latest')?.textContent !== ""`,
      5_000
    )
    expect(await latest("top sellers")).toBe("1. Alice 42 \u00b7 2. Bob 37")
    expect(await latest("chores")).toBe("Call the supplier \u00b7 Ship order 1042")
    expect(await latest(longName)).toBe("12")
    expect(await page.locator(".cw-widgets .cw-latest").allTextContents()).not.toContainEqual(
      expect.stringMatching(/[{[]/)
    )
  })

  it("names the account and the dashboard in the editor's breadcrumbs; the account links back", async () => {
    await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}/dashboards/${dashboardId}`)
    await until(page, `document.querySelectorAll(".cw-crumbs .cw-crumb").length === 3`, 10_000)
    const name = (await page.locator(".cw-crumbs .cw-crumb").nth(1).textContent())!.trim()
    expect(await crumbs()).toBe(`Accounts / ${name} / Wall`)
    expect(await page.locator(".cw-crumbs a.cw-crumb").nth(1).getAttribute("href")).toBe(`#/accounts/${accountId}`)
  })

  for (const width of [1280, 1366, 1440, 1600, 1920]) {
    it(`keeps the editor's side panel inside its column with a long stream name at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 900 })
      await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}/dashboards/${dashboardId}`)
      await until(page, `document.querySelector('.cw-item[data-stream="${longName}"]') !== null`, 10_000)
      await page.locator(`.cw-item[data-stream="${longName}"]`).click()
      await until(page, `document.querySelector(".cw-tile-form") !== null`, 5_000)
      const box = await page.evaluate(`(() => {
        const panel = document.querySelector(".cw-inspector").getBoundingClientRect()
        const grid = document.querySelector(".cw-grid-wrap").getBoundingClientRect()
        const widest = Math.max(...[...document.querySelectorAll(".cw-inspector *")].map((e) => e.getBoundingClientRect().right))
        return { panelRight: panel.right, panelLeft: panel.left, gridRight: grid.right, widest,
          pageWidth: document.documentElement.scrollWidth, viewport: innerWidth }
      })()`)
      const b = box as Record<string, number>
      expect(b["pageWidth"], "horizontal scrollbar").toBeLessThanOrEqual(b["viewport"]!)
      expect(b["panelRight"]).toBeLessThanOrEqual(b["viewport"]!)
      expect(b["panelLeft"]).toBeGreaterThan(b["gridRight"]!)
      expect(b["widest"], "something in the side panel sticks out of it").toBeLessThanOrEqual(b["panelRight"]! + 0.5)
    })
  }
})
