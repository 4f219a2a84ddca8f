/**
 * The console end to end (docs/api.md section 14): a real `dashstream serve` on SQLite and Debian's Chromium running
 * the console page. Sign-in (the form, and the first-run link whose fragment leaves the address bar); accounts,
 * access keys, widgets, test points and dashboards made in the page and checked through the API; the layout editor:
 * tiles dragged and resized with the mouse, moved and resized with the keyboard, saved and still there after a
 * reload, drawn by the view page's renderers with live data, a layout the server refuses shown on the tile its
 * `path` names with the edit kept; a save re-lays out the dashboard's view page open in another browser within 2 s,
 * without a reload (the `layout` event); sign-out. No console error, no request to another origin. The README's
 * screenshot (`docs/console.png`) is taken here.
 */
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import type { Page } from "@playwright/test"
import { isolatedPage, type PageWatch, until } from "@dashstream/dashboard-web/testing"
import { beforeAll, describe, expect, it } from "vitest"
import { text, useBrowserSuite } from "./browserHarness.js"
import { defaultAdminToken } from "./harness.js"
import { screenshotPath } from "../support/screenshots.js"

const screenshot = screenshotPath("console.png")

/**
 * Chromium logs every non-2xx answer to a `fetch` as a console error ("Failed to load resource: ... status of 401").
 * The page is expected to meet two: the 401 of its session check before sign-in, and the 400 of a layout the server
 * refuses (the test provokes it). Every other console error fails the test.
 */
const expectedNetworkError = /^console: Failed to load resource: the server responded with a status of (400|401) /
const unexpected = (watch: PageWatch) => watch.errors.filter((e) => !expectedNetworkError.test(e))

const q = (selector: string) => `document.querySelector(${JSON.stringify(selector)})`
const itemSel = (stream: string) => `.cw-item[data-stream="${stream}"]`
const rowSel = (stream: string) => `.cw-widgets tr[data-stream="${stream}"]`

/** The cell the editor holds for the tile of `stream` (`x,y,w,h`). */
const cellOf = async (page: Page, stream: string) => {
  const cell = await page.locator(itemSel(stream)).getAttribute("data-cell")
  const [x, y, w, h] = (cell ?? "").split(",").map(Number)
  return { x: x!, y: y!, w: w!, h: h! }
}

describe("the console against a real server", { timeout: 180_000 }, () => {
  const suite = useBrowserSuite({ page: { viewport: { width: 1600, height: 1000 } } })
  let page: Page
  let accountId: string
  let accessKey: string
  let dashboardId: string
  let viewUrl: string
  /** The tiles the layout tests resized and dragged, and where the drag put it. */
  let resized: string
  let dragged: string
  let target: { x: number; y: number }

  const tilesOf = async () => {
    const r = await suite.api.admin("GET", `/admin/accounts/${accountId}/dashboards/${dashboardId}`)
    expect(r.status, r.text).toBe(200)
    return r.json.tiles as Array<{ streamName: string; title?: string; x: number; y: number; w: number; h: number }>
  }
  const tileOf = async (stream: string) => (await tilesOf()).find((t) => t.streamName === stream)!
  const push = async (streamName: string, point: unknown) => {
    const r = await suite.api.pushPoint(accessKey, streamName, point)
    expect(r.status, r.text).toBe(200)
  }

  beforeAll(() => {
    page = suite.page
  })

  it("serves the page with its CSP and no-referrer, and signs in with the admin token", async () => {
    const head = await suite.api.fetch("/console")
    expect(head.status).toBe(200)
    expect(head.headers.get("content-security-policy")).toContain("script-src 'self'")
    expect(head.headers.get("referrer-policy")).toBe("no-referrer")
    await page.goto(`${suite.server.baseUrl}/console`)
    await until(page, `document.querySelector(".cw-app")?.dataset.auth === "signed-out"`, 10_000)
    await page.fill('input[name="token"]', "not-the-token")
    await page.click('button[type="submit"]')
    await until(page, `${q(".cw-signin .cw-error")}?.textContent.length > 0`, 5_000)
    await page.fill('input[name="token"]', defaultAdminToken)
    await page.click('button[type="submit"]')
    await until(page, `document.querySelector(".cw-app")?.dataset.auth === "signed-in"`, 5_000)
    const cookies = await suite.watch.context.cookies()
    expect(cookies.length).toBeGreaterThan(0)
    expect(cookies.every((c) => c.httpOnly && c.sameSite === "Strict")).toBe(true)
    expect(cookies.some((c) => c.value.includes(defaultAdminToken))).toBe(false)
  })

  it("creates an account and shows its access key once; the key pushes", async () => {
    await page.fill('input[name="accountName"]', "Acme")
    await page.click('button:has-text("Create account")')
    await until(page, `${q(".cw-secret-value")}?.value.length > 20`, 5_000)
    accessKey = await page.inputValue(".cw-secret-value")
    const r = await suite.api.admin("GET", "/admin/accounts")
    expect(r.status, r.text).toBe(200)
    const account = (r.json.accounts as Array<{ id: string; name: string }>).find((a) => a.name === "Acme")!
    expect(account).toBeDefined()
    accountId = account.id
    await until(page, `${q(`.cw-accounts tr[data-account="${accountId}"]`)} !== null`, 5_000)
    await page.click('.cw-secret button:has-text("Done")')
    expect(await page.locator(".cw-secret").count()).toBe(0)
    // The key is real: it reads the account's (still missing) stream as 404, not 403.
    const read = await suite.api.read(accessKey, "revenue")
    expect(read.status).toBe(404)
  })

  it("creates widgets, pushes a test point from the example and shows it with its age; deletes after confirming", async () => {
    await page.click(`.cw-accounts tr[data-account="${accountId}"] a`)
    await until(page, `${q(".cw-widgets")} !== null || ${q(".cw-section")} !== null`, 5_000)
    const create = async (stream: string, type: string) => {
      await page.fill('input[name="streamName"]', stream)
      await page.selectOption('select[name="type"]', type)
      await page.click('button:has-text("Create widget")')
      await until(page, `${q(rowSel(stream))} !== null`, 5_000)
    }
    await create("revenue", "number")
    await create("cpu", "dial")
    await create("scratch", "label")
    // The others of the screenshot, through the API.
    for (const [stream, type] of [
      ["signups", "sparkline"],
      ["top-sellers", "leaderboard"],
      ["status", "label"]
    ] as const)
      await suite.api.createWidget(accountId, stream, type)

    await page.click(`${rowSel("revenue")} button:has-text("Test point")`)
    const example = JSON.parse(await page.inputValue('textarea[name="point"]'))
    expect(example).toHaveProperty("number")
    await page.fill('textarea[name="point"]', JSON.stringify({ number: 1284.5, prefix: "$" }))
    await page.click('button:has-text("Push test point")')
    await until(page, `${q(".cw-test-point .cw-ok")}?.textContent === "Stored."`, 5_000)
    await until(page, `${q(`${rowSel("revenue")} .cw-latest`)}?.textContent === "$1,284.5"`, 5_000)
    expect(await text(page, `${rowSel("revenue")} .cw-age`)).toBe("just now")
    expect(await suite.api.latest(accessKey, "revenue")).toEqual({ number: 1284.5, prefix: "$" })
    // A point the widget's type refuses: the push's error, with its path.
    await page.fill('textarea[name="point"]', JSON.stringify({ number: "lots" }))
    await page.click('button:has-text("Push test point")')
    await until(page, `${q(".cw-test-point .cw-error")}?.textContent.includes("number") === true`, 5_000)
    await page.click(`${rowSel("revenue")} button:has-text("Test point")`)

    await page.click(`${rowSel("scratch")} button:has-text("Delete")`)
    expect(await text(page, `${rowSel("scratch")} .cw-confirm-question`)).toBe("Delete scratch and all its data?")
    await page.click(`${rowSel("scratch")} button:has-text("Delete widget")`)
    await until(page, `${q(rowSel("scratch"))} === null`, 5_000)
    const widgets = await suite.api.admin("GET", `/admin/accounts/${accountId}/widgets`)
    expect((widgets.json.widgets as Array<{ streamName: string }>).map((w) => w.streamName).sort()).toEqual(
      ["cpu", "revenue", "signups", "status", "top-sellers"].sort()
    )
  })

  it("issues a new access key that revokes the others", async () => {
    await page.check('input[name="revokeOthers"]')
    await page.click('button:has-text("Issue a new key")')
    await until(page, `${q(".cw-secret-value")}?.value.length > 20`, 5_000)
    const fresh = await page.inputValue(".cw-secret-value")
    expect(fresh).not.toBe(accessKey)
    expect((await suite.api.read(accessKey, "revenue")).status).toBe(403)
    expect((await suite.api.read(fresh, "revenue")).status).toBe(200)
    accessKey = fresh
    await page.click('.cw-secret button:has-text("Done")')
  })

  it("creates a dashboard and shows its view link to open and copy; rotating it ends the old link", async () => {
    await page.fill('input[name="dashboardName"]', "Acme operations")
    await page.click('button:has-text("Create dashboard")')
    await until(page, `${q(".cw-dashboards tr[data-dashboard]")} !== null`, 5_000)
    dashboardId = (await page.locator(".cw-dashboards tr[data-dashboard]").getAttribute("data-dashboard"))!
    expect((await tilesOf()).length).toBe(5)
    const row = `.cw-dashboards tr[data-dashboard="${dashboardId}"]`
    const first = (await page.locator(`${row} a:has-text("Open view page")`).getAttribute("href"))!
    expect(first).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/d\/dv_[A-Za-z0-9_-]{43}$/)
    expect(await page.locator(`${row} button:has-text("Copy link")`).getAttribute("data-link")).toBe(first)
    expect((await suite.api.fetch(new URL(first).pathname)).status).toBe(200)

    await page.click(`${row} button:has-text("Rotate view link")`)
    await page.click(`${row} button:has-text("Rotate"):not(:has-text("view"))`)
    await until(page, `${q(`${row} a.cw-button[target="_blank"]`)}?.href !== ${JSON.stringify(first)}`, 5_000)
    viewUrl = (await page.locator(`${row} a:has-text("Open view page")`).getAttribute("href"))!
    expect(viewUrl).not.toBe(first)
    expect((await suite.api.fetch(new URL(first).pathname)).status).toBe(404)
    expect((await suite.api.fetch(new URL(viewUrl).pathname)).status).toBe(200)
  })

  it("the layout editor draws the tiles with the view page's renderers and live data", async () => {
    for (const [i, n] of [12, 18, 15, 22, 30, 27, 35].entries()) await push("signups", { number: n + i })
    await push("cpu", { number: 72, suffix: "%" })
    await push("status", { label: "All systems go" })
    await push("top-sellers", {
      leaderboard: [
        { name: "Ann", value: 42 },
        { name: "Bob", value: 37 },
        { name: "Chloé", value: 30 }
      ]
    })
    await page.click(`.cw-dashboards tr[data-dashboard="${dashboardId}"] a:has-text("Edit layout")`)
    await until(page, `document.querySelectorAll(".cw-item").length === 5`, 10_000)
    await until(page, `${q(`${itemSel("revenue")} .ds-big-number`)}?.textContent === "$1,284.5"`, 5_000)
    await until(page, `${q(`${itemSel("cpu")} .ds-tile`)}?.dataset.state === "data"`, 5_000)
    await until(page, `${q(`${itemSel("status")} .ds-label`)}?.textContent === "All systems go"`, 5_000)
    // Live: a push reaches the editor's tile without a reload (the editor re-reads every 2 s).
    await push("revenue", { number: 2000, prefix: "$" })
    await until(page, `${q(`${itemSel("revenue")} .ds-big-number`)}?.textContent === "$2,000"`, 5_000)
    await until(page, `${q(`${itemSel("revenue")} .ds-change`)}?.textContent.length > 0`, 5_000)
    expect(await text(page, ".cw-save-state")).toBe("No changes")
  })

  it("resizes a tile and drags another to a new cell; saved, they are there after a reload", async () => {
    const grid = (await page.locator(".cw-grid").boundingBox())!
    const cellW = grid.width / 12
    const cellH = 96
    const stored = await tilesOf()

    // Resize a tile that can grow one column wider and one row taller, by its corner handle.
    resized = stored.find((t) => t.x + t.w < 12)!.streamName
    const before = await cellOf(page, resized)
    const box = (await page.locator(itemSel(resized)).boundingBox())!
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2)
    const handle = (await page.locator(`.grid-stack-item:has(${itemSel(resized)}) .ui-resizable-se`).boundingBox())!
    const hx = handle.x + handle.width / 2
    const hy = handle.y + handle.height / 2
    await page.mouse.move(hx, hy)
    await page.mouse.down()
    await page.mouse.move(hx + cellW, hy + cellH, { steps: 20 })
    await page.mouse.up()
    const grown = { ...before, w: before.w + 1, h: before.h + 1 }
    await until(page, `${q(itemSel(resized))}?.dataset.cell === "${grown.x},${grown.y},${grown.w},${grown.h}"`, 5_000)
    expect(await text(page, ".cw-save-state")).toBe("Unsaved changes")

    // Drag the lowest tile (the resize may have pushed others down) into the free rows below the layout: straight
    // down first, then to the left edge, so that it crosses no other tile on its way.
    const cells = await Promise.all(
      stored.map(async (t) => ({ stream: t.streamName, ...(await cellOf(page, t.streamName)) }))
    )
    const rows = Math.max(...cells.map((c) => c.y + c.h))
    const lowest = cells.filter((c) => c.stream !== resized).sort((a, b) => b.y + b.h - (a.y + a.h))[0]!
    dragged = lowest.stream
    target = { x: 0, y: rows }
    const from = (await page.locator(itemSel(dragged)).boundingBox())!
    const grabX = from.x + 30
    const grabY = from.y + 20
    await page.mouse.move(grabX, grabY)
    await page.mouse.down()
    await page.mouse.move(grabX, grabY + (target.y - lowest.y) * cellH, { steps: 15 })
    await page.mouse.move(grabX + (target.x - lowest.x) * cellW, grabY + (target.y - lowest.y) * cellH, { steps: 15 })
    await page.mouse.up()
    await until(page, `${q(itemSel(dragged))}?.dataset.cell.startsWith("${target.x},${target.y},") === true`, 5_000)

    const expected = await page
      .locator(".cw-item")
      .evaluateAll((items) =>
        Object.fromEntries(items.map((i) => [i.getAttribute("data-stream"), i.getAttribute("data-cell")]))
      )
    await page.click("button.cw-save")
    await until(page, `${q(".cw-save-state")}?.textContent === "Saved."`, 5_000)
    expect(await tileOf(dragged)).toMatchObject({ x: target.x, y: target.y, w: lowest.w, h: lowest.h })
    expect(await tileOf(resized)).toMatchObject(grown)

    await page.reload()
    await until(page, `document.querySelectorAll(".cw-item").length === 5`, 10_000)
    const after = await page
      .locator(".cw-item")
      .evaluateAll((items) =>
        Object.fromEntries(items.map((i) => [i.getAttribute("data-stream"), i.getAttribute("data-cell")]))
      )
    expect(after).toEqual(expected)
    // Where gridstack drew it, too: the dragged tile's left edge is on the grid's, below every other tile.
    const moved = (await page.locator(itemSel(dragged)).boundingBox())!
    const gridNow = (await page.locator(".cw-grid").boundingBox())!
    expect(Math.round((moved.x - gridNow.x) / (gridNow.width / 12))).toBe(target.x)
    expect(Math.round((moved.y - gridNow.y) / cellH)).toBe(target.y)
    expect(await text(page, ".cw-save-state")).toBe("No changes")
  })

  it("moves the selected tile with arrow keys and resizes it with Shift+arrows", async () => {
    const start = await cellOf(page, dragged)
    await page.click(itemSel(dragged))
    await until(page, `${q(itemSel(dragged))}?.classList.contains("cw-selected") === true`, 2_000)
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowRight")
    await page.keyboard.press("ArrowDown")
    await page.keyboard.press("ArrowLeft")
    await page.keyboard.press("Shift+ArrowRight")
    await page.keyboard.press("Shift+ArrowDown")
    const moved = { x: start.x + 1, y: start.y + 1, w: start.w + 1, h: start.h + 1 }
    await until(page, `${q(itemSel(dragged))}?.dataset.cell === "${moved.x},${moved.y},${moved.w},${moved.h}"`, 2_000)
    expect(await text(page, ".cw-place")).toBe(
      `Column ${moved.x + 1}, row ${moved.y + 1}; ${moved.w} × ${moved.h} cells`
    )
    await page.keyboard.press("Control+s")
    await until(page, `${q(".cw-save-state")}?.textContent === "Saved."`, 5_000)
    expect(await tileOf(dragged)).toMatchObject(moved)
  })

  it("a layout the server refuses shows the error on the tile its path names and keeps the edit", async () => {
    const stored = await tilesOf()
    const index = stored.findIndex((t) => t.streamName === "status")
    await page.click(itemSel("status"))
    const title = "S".repeat(201)
    await page.fill('input[name="tileTitle"]', title)
    await until(page, `${q(`${itemSel("status")} .ds-tile-title`)}?.textContent === "${title}"`, 2_000)
    await page.click("button.cw-save")
    await until(page, `${q(itemSel("status"))}?.classList.contains("cw-has-error") === true`, 5_000)
    expect(await text(page, `${itemSel("status")} .cw-tile-error`)).toContain("title")
    expect(await text(page, `${itemSel("status")} .cw-tile-error`)).toContain("200")
    expect(await text(page, ".cw-save-error")).toContain(`tiles[${index}].title`)
    // Nothing else carries the error; the edit is kept, unsaved; the server stored nothing.
    expect(await page.locator(".cw-has-error").count()).toBe(1)
    expect(await text(page, ".cw-save-state")).toBe("Unsaved changes")
    expect(await page.inputValue('input[name="tileTitle"]')).toBe(title)
    expect(await tilesOf()).toEqual(stored)

    // Leaving the editor and coming back keeps the unsaved edit.
    await page.click('.cw-crumbs a:text-is("Acme")')
    await until(page, `${q(".cw-dashboards")} !== null`, 5_000)
    await page.click(`.cw-dashboards tr[data-dashboard="${dashboardId}"] a:has-text("Edit layout")`)
    await until(page, `${q(`${itemSel("status")} .ds-tile-title`)}?.textContent === "${title}"`, 10_000)
    expect(await text(page, ".cw-save-state")).toBe("Unsaved changes")

    // Fixed, it saves and the error is gone.
    await page.click(itemSel("status"))
    await page.fill('input[name="tileTitle"]', "Status")
    expect(await page.locator(".cw-has-error").count()).toBe(0)
    await page.click("button.cw-save")
    await until(page, `${q(".cw-save-state")}?.textContent === "Saved."`, 5_000)
    expect((await tileOf("status")).title).toBe("Status")
    expect(await page.locator(".cw-save-error").count()).toBe(0)
  })

  it("edits a tile's thresholds, staleAfter and range in the inspector; a refused option is shown on its field", async () => {
    const stored = await tilesOf()
    const index = stored.findIndex((t) => t.streamName === "revenue")
    await page.click(itemSel("revenue"))
    await until(page, `${q('.cw-option[data-option="thresholds"]')} !== null`, 2_000)
    // A number tile takes thresholds, staleAfter and range, not min/max (docs/api.md section 15).
    expect(await page.locator(".cw-option").evaluateAll((fs) => fs.map((f) => (f as any).dataset.option))).toEqual([
      "thresholds",
      "staleAfter",
      "range"
    ])
    await page.click('button:has-text("Add threshold")')
    await page.fill('input[name="threshold-0-value"]', "lots")
    await page.click("button.cw-save")
    // The server's path (tiles[i].options.thresholds[0].above) lands on that row of the editor.
    await until(page, `${q('.cw-threshold[data-index="0"] .cw-option-error')} !== null`, 5_000)
    expect(await text(page, '.cw-threshold[data-index="0"] .cw-option-error')).toContain("above must be a number")
    expect(await text(page, ".cw-save-error")).toContain(`tiles[${index}].options.thresholds[0].above`)
    expect(await tilesOf()).toEqual(stored)

    await page.fill('input[name="threshold-0-value"]', "1000")
    await page.selectOption('select[name="threshold-0-color"]', "red")
    // The editor draws the tile with its options as they are edited: $2,000 is above 1,000, so red.
    await until(page, `${q(`${itemSel("revenue")} .ds-big-number`)}?.dataset.status === "red"`, 2_000)
    await page.fill('input[name="option-staleAfter"]', "5")
    await page.click("button.cw-save")
    await until(page, `${q('.cw-option[data-option="staleAfter"] .cw-option-error')} !== null`, 5_000)
    expect(await text(page, '.cw-option[data-option="staleAfter"] .cw-option-error')).toContain("from 10 to 31536000")
    expect(await page.locator(".cw-threshold .cw-option-error").count()).toBe(0)

    await page.fill('input[name="option-staleAfter"]', "600")
    await page.fill('input[name="option-range"]', "30")
    await page.click("button.cw-save")
    await until(page, `${q('.cw-option[data-option="range"] .cw-option-error')} !== null`, 5_000)
    expect(await text(page, '.cw-option[data-option="range"] .cw-option-error')).toContain("from 60 to 31536000")
    await page.fill('input[name="option-range"]', "604800")
    await page.click("button.cw-save")
    await until(page, `${q(".cw-save-state")}?.textContent === "Saved."`, 5_000)
    expect((await tileOf("revenue")) as unknown).toMatchObject({
      options: { thresholds: [{ above: 1000, color: "red" }], staleAfter: 600, range: 604_800 }
    })
    expect(await page.locator(".cw-option-error").count()).toBe(0)
  })

  it("adds a tile from the account's widgets and removes one", async () => {
    await page.selectOption('select[name="addTile"]', "revenue")
    await page.click('button:has-text("Add tile")')
    await until(page, `document.querySelectorAll('${itemSel("revenue")}').length === 2`, 5_000)
    await until(
      page,
      `[...document.querySelectorAll('${itemSel("revenue")} .ds-big-number')].every((n) => n.textContent === "$2,000")`,
      5_000
    )
    await page.click('.cw-tile-form button:has-text("Remove tile")')
    await until(page, `document.querySelectorAll('${itemSel("revenue")}').length === 1`, 5_000)
    await page.click(itemSel("top-sellers"))
    await page.keyboard.press("Delete")
    await until(page, `${q(itemSel("top-sellers"))} === null`, 5_000)
    await page.click("button.cw-save")
    await until(page, `${q(".cw-save-state")}?.textContent === "Saved."`, 5_000)
    expect((await tilesOf()).map((t) => t.streamName).sort()).toEqual(["cpu", "revenue", "signups", "status"])
  })

  it("discards unsaved changes after a confirmation", async () => {
    await page.selectOption('select[name="addTile"]', "top-sellers")
    await page.click('button:has-text("Add tile")')
    await until(page, `${q(`${itemSel("top-sellers")} .ds-tile`)}?.dataset.state === "data"`, 5_000)
    expect(await text(page, ".cw-save-state")).toBe("Unsaved changes")
    await page.click('button:has-text("Discard changes")')
    await page.click('.cw-confirm button:has-text("Discard")')
    await until(page, `${q(".cw-save-state")}?.textContent === "No changes"`, 5_000)
    expect(await page.locator(itemSel("top-sellers")).count()).toBe(0)
  })

  it("a save reaches the dashboard's open view page within 2 s: re-laid out without a reload", async () => {
    // The view page, open in a second browser context (a viewer's browser, not the operator's), at the link the
    // console showed when it rotated the view token.
    const viewer = await isolatedPage(suite.browser, suite.server.baseUrl, { viewport: { width: 1600, height: 1000 } })
    try {
      const view = viewer.page
      const consoleErrorsBefore = suite.watch.errors.length
      await view.goto(viewUrl)
      await until(view, `document.querySelectorAll('.ds-tile[data-state="data"]').length === 4`, 10_000)
      await until(view, `document.documentElement.dataset.connection === "live"`, 10_000)
      await view.evaluate("window.sameDocument = true")
      const viewTile = (stream: string) => `.ds-tile[data-stream="${stream}"]`
      expect(await view.locator(viewTile("cpu")).count()).toBe(1)
      expect(await view.locator(viewTile("top-sellers")).count()).toBe(0)

      // The operator opens the layout editor from the account page.
      await page.click('.cw-crumbs a:text-is("Acme")')
      await until(page, `${q(".cw-dashboards")} !== null`, 5_000)
      await page.click(`.cw-dashboards tr[data-dashboard="${dashboardId}"] a:has-text("Edit layout")`)
      await until(page, `document.querySelectorAll(".cw-item").length === 4`, 10_000)
      expect(await text(page, ".cw-save-state")).toBe("No changes")

      // Moves the lowest tile (other than the one it removes) with the keyboard into the free rows below the layout,
      // one column to the side, so that it pushes no other tile.
      const removed = "cpu"
      const cells = await Promise.all(
        ["cpu", "revenue", "signups", "status"].map(async (s) => ({ stream: s, ...(await cellOf(page, s)) }))
      )
      const rows = Math.max(...cells.map((c) => c.y + c.h))
      const moving = cells.filter((c) => c.stream !== removed).sort((a, b) => b.y + b.h - (a.y + a.h))[0]!
      const side = moving.x + moving.w < 12 ? "ArrowRight" : "ArrowLeft"
      const to = { x: moving.x + (side === "ArrowRight" ? 1 : -1), y: rows, w: moving.w, h: moving.h }
      await page.click(itemSel(moving.stream))
      await until(page, `${q(itemSel(moving.stream))}?.classList.contains("cw-selected") === true`, 2_000)
      for (let i = moving.y; i < rows; i++) await page.keyboard.press("ArrowDown")
      await page.keyboard.press(side)
      await until(page, `${q(itemSel(moving.stream))}?.dataset.cell === "${to.x},${to.y},${to.w},${to.h}"`, 2_000)

      // Removes one tile and adds another.
      await page.click(itemSel(removed))
      await page.keyboard.press("Delete")
      await until(page, `${q(itemSel(removed))} === null`, 5_000)
      await page.selectOption('select[name="addTile"]', "top-sellers")
      await page.click('button:has-text("Add tile")')
      await until(page, `${q(`${itemSel("top-sellers")} .ds-tile`)}?.dataset.state === "data"`, 5_000)
      expect(await text(page, ".cw-save-state")).toBe("Unsaved changes")
      const expected = await page
        .locator(".cw-item")
        .evaluateAll((items) =>
          items.map((i) => ({ stream: i.getAttribute("data-stream")!, cell: i.getAttribute("data-cell")! }))
        )
      expect(expected.map((e) => e.stream).sort()).toEqual(["revenue", "signups", "status", "top-sellers"])
      expect(expected.find((e) => e.stream === moving.stream)!.cell).toBe(`${to.x},${to.y},${to.w},${to.h}`)

      // Saves: within 2 s every tile of the view page sits where the editor put it (its CSS grid placement, as the
      // browser computed it), the removed tile is gone, and the added one is drawn with its data.
      const placedAsSaved = expected
        .map(({ stream, cell }) => {
          const [x, y, w, h] = cell.split(",").map(Number)
          return `((t) => t.length === 1 && ((s) => s.gridColumnStart === "${x! + 1}" && s.gridColumnEnd === "span ${w}" && s.gridRowStart === "${y! + 1}" && s.gridRowEnd === "span ${h}")(getComputedStyle(t[0])))(document.querySelectorAll('${viewTile(stream)}'))`
        })
        .join(" && ")
      const relaidOut = [
        placedAsSaved,
        `document.querySelectorAll(".ds-tile").length === 4`,
        `${q(viewTile(removed))} === null`,
        `${q(viewTile("top-sellers"))}?.dataset.state === "data"`,
        `${q(`${viewTile("top-sellers")} .ds-leaderboard li:first-child .ds-name`)}?.textContent === "Ann"`
      ].join(" && ")
      expect(await view.evaluate(relaidOut)).toBe(false)
      const savedAt = performance.now()
      await page.click("button.cw-save")
      await until(view, relaidOut, 2_000)
      console.info(`console save to view page re-laid out: ${Math.round(performance.now() - savedAt)} ms`)
      await until(page, `${q(".cw-save-state")}?.textContent === "Saved."`, 5_000)

      // Without a reload; the tiles it showed before keep their data and go on receiving pushes.
      expect(await view.evaluate("window.sameDocument")).toBe(true)
      expect(await view.getAttribute(viewTile(moving.stream), "data-state")).toBe("data")
      await push("revenue", { number: 2100, prefix: "$" })
      await until(view, `${q(`${viewTile("revenue")} .ds-big-number`)}?.textContent === "$2,100"`, 2_000)
      expect(await view.evaluate("window.sameDocument")).toBe(true)
      expect(viewer.errors).toEqual([])
      expect(viewer.foreignRequests).toEqual([])
      expect(suite.watch.errors.slice(consoleErrorsBefore)).toEqual([])
    } finally {
      await viewer.context.close()
    }
  })

  it("looks right (the README's screenshot), with no console error and no request elsewhere", async () => {
    for (const [stream, type] of [
      ["queue", "horizontal-bar"],
      ["traffic", "pie-chart"]
    ] as const)
      await suite.api.createWidget(accountId, stream, type)
    await push("queue", { number: 340 })
    await push("traffic", {
      leaderboard: [
        { name: "Web", value: 55 },
        { name: "Mobile", value: 30 },
        { name: "API", value: 15 }
      ]
    })
    const wall = await suite.api.admin("POST", `/admin/accounts/${accountId}/dashboards`, {
      name: "Operations wall",
      tiles: [
        { streamName: "revenue", title: "Revenue today", x: 0, y: 0, w: 4, h: 2 },
        { streamName: "cpu", title: "CPU", x: 4, y: 0, w: 4, h: 2 },
        { streamName: "status", x: 8, y: 0, w: 4, h: 2 },
        { streamName: "top-sellers", title: "Top sellers", x: 0, y: 2, w: 5, h: 3 },
        { streamName: "traffic", title: "Traffic by client", x: 5, y: 2, w: 4, h: 3 },
        { streamName: "queue", title: "Queue", x: 9, y: 2, w: 3, h: 3 }
      ]
    })
    expect(wall.status, wall.text).toBe(201)
    await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}/dashboards/${wall.json.id as string}`)
    await until(page, `document.querySelectorAll('.cw-item .ds-tile[data-state="data"]').length === 6`, 10_000)
    await push("revenue", { number: 2184.5, prefix: "$" })
    await until(page, `${q(`${itemSel("revenue")} .ds-big-number`)}?.textContent === "$2,184.5"`, 5_000)
    await page.click(itemSel("cpu"))
    await page.waitForTimeout(300)
    mkdirSync(dirname(screenshot), { recursive: true })
    await page.screenshot({ path: screenshot })
    expect(unexpected(suite.watch)).toEqual([])
    expect(suite.watch.foreignRequests).toEqual([])
  })

  it("after a reload, opens the view page and copies its link; deletes a dashboard after a confirmation", async () => {
    await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}`)
    await page.reload()
    await until(page, `document.querySelectorAll(".cw-dashboards tr[data-dashboard]").length === 2`, 10_000)
    // The page was reloaded: the link is the server's answer, not something this page remembered.
    const row = `.cw-dashboards tr[data-dashboard="${dashboardId}"]`
    expect(await page.locator(`${row} a:has-text("Open view page")`).getAttribute("href")).toBe(viewUrl)
    await suite.watch.context.grantPermissions(["clipboard-read", "clipboard-write"], {
      origin: new URL(viewUrl).origin
    })
    await page.click(`${row} button:has-text("Copy link")`)
    await page.locator(`${row} button:has-text("Copied")`).waitFor({ timeout: 5_000 })
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(viewUrl)
    const [view] = await Promise.all([
      suite.watch.context.waitForEvent("page"),
      page.click(`${row} a:has-text("Open view page")`)
    ])
    await until(view, `document.querySelectorAll('.ds-tile[data-state="data"]').length === 4`, 10_000)
    expect(await view.title()).toBe("Acme operations · Dashstream")
    expect(await text(view, `.ds-tile[data-stream="status"] .ds-tile-title`)).toBe("Status")
    await view.close()

    const wall = `.cw-dashboards tr:has(a:text-is("Operations wall"))`
    const wallId = (await page.locator(wall).getAttribute("data-dashboard"))!
    await page.click(`${wall} button:has-text("Delete")`)
    await page.click(`${wall} button:has-text("Delete dashboard")`)
    await until(page, `document.querySelectorAll(".cw-dashboards tr[data-dashboard]").length === 1`, 5_000)
    expect((await suite.api.admin("GET", `/admin/accounts/${accountId}/dashboards/${wallId}`)).status).toBe(404)
    expect(unexpected(suite.watch)).toEqual([])
  })

  it("signs out: the page shows the sign-in form, and the old cookie no longer works", async () => {
    const cookies = await suite.watch.context.cookies()
    await page.click('button:has-text("Sign out")')
    await until(page, `document.querySelector(".cw-app")?.dataset.auth === "signed-out"`, 5_000)
    const cookie = cookies.map((c) => `${c.name}=${c.value}`).join("; ")
    const replay = await suite.api.fetch("/admin/accounts", { headers: { cookie } })
    expect(replay.status).toBe(401)
    await page.reload()
    await until(page, `document.querySelector(".cw-app")?.dataset.auth === "signed-out"`, 5_000)
    expect(unexpected(suite.watch)).toEqual([])
  })
})

describe("the console's first run", { timeout: 120_000 }, () => {
  const suite = useBrowserSuite({ serve: { adminToken: null } })

  it("opening the printed link signs in and takes the token out of the address bar", async () => {
    const link = /^Console: (http:\/\/\S+\/console#token=(\S+))$/m.exec(suite.server.stdout())
    expect(link, suite.server.stdout()).not.toBeNull()
    const [, url, token] = link!
    const { watch } = suite
    const requests: Array<string> = []
    watch.page.on("request", (r) => requests.push(r.url()))
    await watch.page.goto(url!)
    await until(watch.page, `document.querySelector(".cw-app")?.dataset.auth === "signed-in"`, 10_000)
    expect(watch.page.url()).toBe(`${suite.server.baseUrl}/console`)
    expect(await watch.page.evaluate("location.hash")).toBe("")
    expect(requests.filter((r) => r.includes(token!))).toEqual([])
    expect((await watch.context.cookies()).some((c) => c.value.includes(token!))).toBe(false)
    await until(watch.page, `document.querySelector("h1")?.textContent === "Accounts"`, 5_000)
    expect(unexpected(watch)).toEqual([])
    expect(watch.foreignRequests).toEqual([])
    // The link's entry was replaced, not followed by a new one: one step back is the page before it.
    await watch.page.goBack()
    expect(watch.page.url()).toBe("about:blank")
  })
})
