/**
 * Rotations in the console (docs/api.md sections 14 and 15.2), in Debian's Chromium against a real server on SQLite:
 * a rotation made in the page (dashboards picked in order, reordered, removed; the interval's bounds), edited, listed
 * on the account page with its dashboards in order and its interval, its share link opened, copied and rotated, a
 * rotation (and a dashboard) whose link is not kept (its database row as a version before view links were kept left
 * it) given a new one with "Replace link", deleted. A body the server refuses is shown on the field its `path` names
 * (`name`, `intervalSeconds`, `dashboardIds[3]`) and nothing is stored. The breadcrumbs name the account and the
 * rotation; no horizontal scrollbar at 1280, 1440 and 1920 px with a long stream name; no console error, no request
 * elsewhere.
 */
import { createRequire } from "node:module"
import type { Page } from "@playwright/test"
import { until } from "@dashstream/dashboard-web/testing"
import { beforeAll, describe, expect, it } from "vitest"
import { q, text, unexpectedErrors, useBrowserSuite } from "./browserHarness.js"

/** better-sqlite3 as this test uses it (the server package depends on the driver, not on its type declarations). */
const Sqlite = createRequire(import.meta.url)("better-sqlite3") as new (file: string) => {
  prepare(sql: string): { run(...params: Array<unknown>): { changes: number } }
  close(): void
}

/** A stream (and the dashboard named after it) whose name is longer than any column it is shown in. */
const longName = `${"warehouse_cold_room_temperature_by_building_and_floor_".repeat(3)}probe_4`

const crumbs = (page: Page) =>
  page.evaluate(`document.querySelector(".cw-crumbs")?.textContent.replace(/\\s+/g, " ").trim()`)

interface RotationJson {
  readonly id: string
  readonly name: string
  readonly dashboardIds: ReadonlyArray<string>
  readonly intervalSeconds: number
  readonly viewToken: string | null
  readonly url: string | null
}

describe("rotations in the console", { timeout: 180_000 }, () => {
  const suite = useBrowserSuite({ page: { viewport: { width: 1440, height: 900 } }, signIn: true })
  let page: Page
  let accountId: string
  const dashboards: Record<string, string> = {}
  let rotationId: string
  let viewUrl: string

  const rotationsPath = () => `/admin/accounts/${accountId}/rotations`
  const storedRotations = async (): Promise<ReadonlyArray<RotationJson>> => {
    const r = await suite.api.admin("GET", rotationsPath())
    expect(r.status, r.text).toBe(200)
    return r.json.rotations as ReadonlyArray<RotationJson>
  }
  const storedRotation = async (): Promise<RotationJson> => {
    const r = await suite.api.admin("GET", `${rotationsPath()}/${rotationId}`)
    expect(r.status, r.text).toBe(200)
    return r.json as RotationJson
  }
  const createDashboard = async (name: string) => {
    const r = await suite.api.admin("POST", `/admin/accounts/${accountId}/dashboards`, { name })
    expect(r.status, r.text).toBe(201)
    dashboards[name] = r.json.id as string
  }
  /** The dashboards the form lists, in order, by name. */
  const formOrder = () =>
    page
      .locator(".cw-rotation-list li .cw-rotation-name")
      .evaluateAll((names) => names.map((n) => n.textContent!.trim()))
  const addToForm = async (name: string) => {
    await page.selectOption('select[name="addDashboard"]', dashboards[name]!)
    await page.click('button:has-text("Add dashboard")')
  }
  const row = () => `.cw-rotations tr[data-rotation="${rotationId}"]`

  beforeAll(async () => {
    const account = await suite.api.setup({ revenue: "number", [longName]: "number" })
    accountId = account.id
    for (const name of ["Sales", "Operations", "Scratch", longName]) await createDashboard(name)
    page = suite.page
  }, 180_000)

  it("creates a rotation: dashboards picked in order, reordered and removed; a refused interval stores nothing", async () => {
    await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}`)
    await until(
      page,
      `${q('section[aria-label="Rotations"]')}?.textContent.includes("No rotations yet") === true`,
      10_000
    )
    await page.click('a:has-text("New rotation")')
    await until(page, `${q('select[name="addDashboard"]')}?.options.length === 5`, 10_000)
    const account = (await page.locator(".cw-crumbs .cw-crumb").nth(1).textContent())!.trim()
    expect(await crumbs(page)).toBe(`Accounts / ${account} / New rotation`)
    // The interval field carries the documented bounds.
    expect(await page.getAttribute('input[name="intervalSeconds"]', "min")).toBe("5")
    expect(await page.getAttribute('input[name="intervalSeconds"]', "max")).toBe("3600")

    await page.fill('input[name="rotationName"]', "Lobby TV")
    await addToForm("Sales")
    await addToForm("Operations")
    await addToForm("Sales")
    await addToForm(longName)
    expect(await formOrder()).toEqual(["Sales", "Operations", "Sales", longName])
    await page.click('.cw-rotation-list li[data-index="1"] button[aria-label="Move up"]')
    expect(await formOrder()).toEqual(["Operations", "Sales", "Sales", longName])
    await page.click('.cw-rotation-list li[data-index="2"] button:has-text("Remove")')
    expect(await formOrder()).toEqual(["Operations", "Sales", longName])
    expect(await page.locator('.cw-rotation-list li[data-index="2"] button[aria-label="Move down"]').isDisabled()).toBe(
      true
    )

    // Below the bounds: the server's error on the interval field, nothing stored, the form kept.
    await page.fill('input[name="intervalSeconds"]', "3")
    await page.click('button:has-text("Create rotation")')
    const intervalError = `.cw-field:has(input[name="intervalSeconds"]) .cw-field-error`
    await until(page, `${q(intervalError)} !== null`, 5_000)
    expect(await text(page, intervalError)).toContain("5 to 3600")
    expect(await page.getAttribute('input[name="intervalSeconds"]', "aria-invalid")).toBe("true")
    expect(await page.locator(".cw-field-error").count()).toBe(1)
    expect(await storedRotations()).toEqual([])
    expect(await formOrder()).toEqual(["Operations", "Sales", longName])

    await page.fill('input[name="intervalSeconds"]', "20")
    expect(await page.locator(".cw-field-error").count()).toBe(0)
    await page.click('button:has-text("Create rotation")')
    await until(page, `location.hash.includes("/rotations/") && !location.hash.endsWith("/new")`, 5_000)
    rotationId = decodeURIComponent(((await page.evaluate("location.hash")) as string).split("/").pop()!)
    const [stored] = await storedRotations()
    expect(stored).toMatchObject({
      id: rotationId,
      name: "Lobby TV",
      dashboardIds: [dashboards["Operations"], dashboards["Sales"], dashboards[longName]],
      intervalSeconds: 20
    })
    await until(page, `${q(".cw-save-state")}?.textContent === "Created."`, 5_000)
    await until(page, `document.querySelectorAll(".cw-crumbs .cw-crumb").length === 3`, 5_000)
    expect(await crumbs(page)).toBe(`Accounts / ${account} / Lobby TV`)
  })

  it("opens the rotation page and copies its link; rotating it ends the old link", async () => {
    const open = `.cw-rotation-link a:has-text("Open view page")`
    const first = (await page.locator(open).getAttribute("href"))!
    expect(first).toBe(new URL((await storedRotation()).url!, suite.server.baseUrl).href)
    expect(first).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/r\/dv_[A-Za-z0-9_-]{43}$/)
    expect((await suite.api.fetch(new URL(first).pathname)).status).toBe(200)
    await suite.watch.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: new URL(first).origin })
    await page.click('.cw-rotation-link button:has-text("Copy link")')
    await page.locator('.cw-rotation-link button:has-text("Copied")').waitFor({ timeout: 5_000 })
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(first)

    const [view] = await Promise.all([suite.watch.context.waitForEvent("page"), page.click(open)])
    await until(view, `document.title.startsWith("Operations")`, 10_000)
    await view.close()

    await page.click('.cw-rotation-link button:has-text("Rotate view link")')
    await page.click('.cw-rotation-link .cw-confirm button:has-text("Rotate")')
    await until(page, `${q(".cw-rotation-link a.cw-button")}?.href !== ${JSON.stringify(first)}`, 5_000)
    viewUrl = (await page.locator(open).getAttribute("href"))!
    expect(viewUrl).toBe(new URL((await storedRotation()).url!, suite.server.baseUrl).href)
    expect((await suite.api.fetch(new URL(first).pathname)).status).toBe(404)
    expect((await suite.api.fetch(new URL(viewUrl).pathname)).status).toBe(200)
  })

  it("edits it: a refused name or dashboard is shown on its field and nothing is stored; fixed, it saves", async () => {
    const before = await storedRotation()
    await page.fill('input[name="rotationName"]', "")
    expect(await text(page, ".cw-save-state")).toBe("Unsaved changes")
    await page.click("button.cw-save")
    const nameError = `.cw-field:has(input[name="rotationName"]) .cw-field-error`
    await until(page, `${q(nameError)} !== null`, 5_000)
    expect(await page.locator(".cw-field-error").count()).toBe(1)
    expect(await storedRotation()).toEqual(before)

    // A dashboard deleted elsewhere while it is in the form: the server names it by its place (dashboardIds[3]).
    await page.fill('input[name="rotationName"]', "Lobby TV, ground floor")
    await addToForm("Scratch")
    const deleted = await suite.api.admin("DELETE", `/admin/accounts/${accountId}/dashboards/${dashboards["Scratch"]}`)
    expect(deleted.status).toBe(204)
    await page.click("button.cw-save")
    const rowError = `.cw-rotation-list li[data-index="3"] .cw-field-error`
    await until(page, `${q(rowError)} !== null`, 5_000)
    expect(await page.getAttribute('.cw-rotation-list li[data-index="3"]', "aria-invalid")).toBe("true")
    expect(await page.locator(".cw-field-error").count()).toBe(1)
    expect(await storedRotation()).toEqual(before)

    await page.click('.cw-rotation-list li[data-index="3"] button:has-text("Remove")')
    await page.click('.cw-rotation-list li[data-index="2"] button[aria-label="Move up"]')
    await page.fill('input[name="intervalSeconds"]', "45")
    await page.click("button.cw-save")
    await until(page, `${q(".cw-save-state")}?.textContent === "Saved."`, 5_000)
    expect(await storedRotation()).toEqual({
      ...before,
      name: "Lobby TV, ground floor",
      dashboardIds: [dashboards["Operations"], dashboards[longName], dashboards["Sales"]],
      intervalSeconds: 45
    })
    await until(page, `document.querySelector(".cw-crumbs")?.textContent.includes("ground floor") === true`, 5_000)
  })

  it("lists it on the account page; a dashboard deleted there leaves it", async () => {
    await page.click(".cw-crumbs a.cw-crumb >> nth=1")
    const order = JSON.stringify(`Operations → ${longName} → Sales`)
    await until(page, `${q(`${row()} .cw-rotation-order`)}?.textContent === ${order}`, 10_000)
    expect(await text(page, `${row()} td:first-child`)).toBe("Lobby TV, ground floor")
    expect(await text(page, `${row()} td:nth-child(3)`)).toBe("45 s")
    expect(await page.locator(`${row()} a:has-text("Open view page")`).getAttribute("href")).toBe(viewUrl)
    expect(await page.locator(`${row()} a:has-text("Edit")`).getAttribute("href")).toBe(
      `#/accounts/${accountId}/rotations/${rotationId}`
    )

    const sales = `.cw-dashboards tr[data-dashboard="${dashboards["Sales"]}"]`
    await page.click(`${sales} button:has-text("Delete")`)
    await page.click(`${sales} button:has-text("Delete dashboard")`)
    await until(
      page,
      `${q(`${row()} .cw-rotation-order`)}?.textContent === ${JSON.stringify(`Operations → ${longName}`)}`,
      5_000
    )
    expect((await storedRotation()).dashboardIds).toEqual([dashboards["Operations"], dashboards[longName]])
  })

  it("a rotation or dashboard whose link is not kept says so and offers Replace link, which gives it one", async () => {
    // As a version that kept only the view token's digest left them: the links still work, they cannot be shown.
    const ops = dashboards["Operations"]!
    const opsLink = new URL(
      (await suite.api.admin("GET", `/admin/accounts/${accountId}/dashboards/${ops}`)).json.url as string,
      suite.server.baseUrl
    ).href
    const file = new Sqlite(suite.db.url.slice("sqlite:".length))
    try {
      expect(file.prepare("UPDATE rotations SET view_token_text = NULL WHERE id = ?").run(rotationId).changes).toBe(1)
      expect(file.prepare("UPDATE dashboards SET view_token_text = NULL WHERE id = ?").run(ops).changes).toBe(1)
    } finally {
      file.close()
    }
    expect(await storedRotation()).toMatchObject({ viewToken: null, url: null })
    await page.reload()
    const opsRow = `.cw-dashboards tr[data-dashboard="${ops}"]`
    for (const view of [row(), opsRow]) {
      await until(page, `${q(`${view} .cw-link-unknown`)} !== null`, 10_000)
      expect(await text(page, `${view} .cw-link-unknown`)).toBe(
        "This link can't be shown again; replace it to get a new one."
      )
      expect(await page.locator(`${view} a:has-text("Open view page")`).count()).toBe(0)
      expect(await page.locator(`${view} button:has-text("Rotate view link")`).count()).toBe(0)
    }
    expect((await suite.api.fetch(new URL(viewUrl).pathname)).status).toBe(200)
    expect((await suite.api.fetch(new URL(opsLink).pathname)).status).toBe(200)

    for (const [view, old] of [
      [row(), viewUrl],
      [opsRow, opsLink]
    ] as const) {
      await page.click(`${view} button:has-text("Replace link")`)
      await page.click(`${view} .cw-confirm button:has-text("Replace")`)
      await until(page, `${q(`${view} a.cw-button[target="_blank"]`)} !== null`, 5_000)
      const fresh = (await page.locator(`${view} a:has-text("Open view page")`).getAttribute("href"))!
      expect(fresh).not.toBe(old)
      expect((await suite.api.fetch(new URL(fresh).pathname)).status).toBe(200)
      expect((await suite.api.fetch(new URL(old).pathname)).status).toBe(404)
      if (view === row()) {
        expect(fresh).toBe(new URL((await storedRotation()).url!, suite.server.baseUrl).href)
        viewUrl = fresh
      }
    }
  })

  for (const width of [1280, 1440, 1920]) {
    it(`shows the rotation screens with a long stream name and no horizontal scrollbar at ${width} px`, async () => {
      await page.setViewportSize({ width, height: 900 })
      const fits = async (what: string) => {
        // The page's width, and what sticks out past the window (to name it when the test fails).
        const b = (await page.evaluate(`({ pageWidth: document.documentElement.scrollWidth, viewport: innerWidth,
          outside: [...document.querySelectorAll("body *")].filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5)
            .map((e) => e.tagName.toLowerCase() + "." + [...e.classList].join(".")).slice(-3) })`)) as {
          pageWidth: number
          viewport: number
          outside: Array<string>
        }
        expect(b.pageWidth, `horizontal scrollbar on ${what}: ${b.outside.join(", ")}`).toBeLessThanOrEqual(b.viewport)
      }
      await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}`)
      await until(page, `${q(`${row()} .cw-rotation-order`)}?.textContent.includes("probe_4") === true`, 10_000)
      await until(page, `${q(`.cw-widgets tr[data-stream="${longName}"]`)} !== null`, 10_000)
      await fits("the account page")
      await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}/rotations/${rotationId}`)
      await until(page, `document.querySelectorAll(".cw-rotation-list li").length === 2`, 10_000)
      await fits("the rotation's page")
      await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}/rotations/new`)
      await until(page, `${q('select[name="addDashboard"]')}?.options.length === 3`, 10_000)
      await addToForm(longName)
      await fits("a new rotation's form")
    })
  }

  it("deletes it after a confirmation: back on the account page, its link stops working", async () => {
    await page.goto(`${suite.server.baseUrl}/console#/accounts/${accountId}/rotations/${rotationId}`)
    await until(page, `${q(".cw-rotation-link")} !== null`, 10_000)
    await page.click('.cw-rotation-link button:has-text("Delete")')
    expect(await text(page, ".cw-rotation-link .cw-confirm-question")).toBe(
      "Delete the rotation Lobby TV, ground floor?"
    )
    await page.click('.cw-rotation-link button:has-text("Delete rotation")')
    await until(page, `location.hash === ${JSON.stringify(`#/accounts/${accountId}`)}`, 5_000)
    await until(
      page,
      `${q('section[aria-label="Rotations"]')}?.textContent.includes("No rotations yet") === true`,
      10_000
    )
    expect((await suite.api.admin("GET", `${rotationsPath()}/${rotationId}`)).status).toBe(404)
    expect((await suite.api.fetch(new URL(viewUrl).pathname)).status).toBe(404)
    expect(unexpectedErrors(suite.watch, [400, 401])).toEqual([])
    expect(suite.watch.foreignRequests).toEqual([])
  })
})
