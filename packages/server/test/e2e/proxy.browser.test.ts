/**
 * The pages behind a reverse proxy (docs/api.md section 16): Debian's Chromium opens the dashboard page and the console
 * through a real nginx run with the README's server block (see `nginx.ts`), in front of `dashstream serve
 * --base-path /dashboards --trust-proxy 127.0.0.1`. Every request the pages make goes to nginx's origin (a request
 * anywhere else is blocked and fails the test), none fails or answers an error, and no console error is logged: the
 * pages' URLs are relative to where they were served.
 */
import { freePort } from "@dashstream/storage-postgres/testing"
import type { Page } from "@playwright/test"
import { isolatedPage, type PageWatch, until } from "@dashstream/dashboard-web/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tileSel, useBrowserSuite } from "./browserHarness.js"
import { Api, defaultAdminToken } from "./harness.js"
import { type Nginx, readmeBasePath, serverBlock, startNginx } from "./nginx.js"

/** Every request that failed or answered 400 and above, as `STATUS URL`. */
const watchRequests = (page: Page): Array<string> => {
  const failed: Array<string> = []
  page.on("requestfailed", (request) => failed.push(`failed ${request.url()} ${request.failure()?.errorText ?? ""}`))
  page.on("response", (response) => {
    if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`)
  })
  return failed
}

describe("the pages through nginx under a base path", { timeout: 180_000 }, () => {
  const suite = useBrowserSuite({
    serve: { extraArgs: ["--base-path", readmeBasePath, "--trust-proxy", "127.0.0.1"] },
    page: false
  })
  let nginx: Nginx
  let origin: string
  let proxied: string
  let api: Api
  let account: { id: string; accessKey: string }

  beforeAll(async () => {
    const port = await freePort()
    nginx = await startNginx([serverBlock(port, suite.server.port)], [port])
    origin = `http://127.0.0.1:${port}`
    proxied = `${origin}${readmeBasePath}`
    api = new Api(proxied)
    account = await api.setup({ revenue: "number", visits: "sparkline", customers: "world-map" })
  })

  afterAll(async () => {
    await nginx?.stop()
  })

  it("draws the dashboard page with live updates, no failed request and no console error", async () => {
    for (const [stream, point] of [
      ["revenue", { number: 1284.5, prefix: "$" }],
      ["visits", { number: 3 }],
      ["visits", { number: 7 }],
      ["customers", { latitude: 48.85, longitude: 2.35, color: "blue" }]
    ] as const) {
      const r = await api.pushPoint(account.accessKey, stream, point)
      expect(r.status, r.text).toBe(200)
    }
    const created = await api.admin("POST", `/admin/accounts/${account.id}/dashboards`, { name: "Behind nginx" })
    expect(created.status, created.text).toBe(201)
    expect(created.json.url).toMatch(new RegExp(`^${readmeBasePath}/d/`))
    const watch: PageWatch = await isolatedPage(suite.browser, origin)
    try {
      const failed = watchRequests(watch.page)
      await watch.page.goto(`${origin}${created.json.url}`)
      await until(watch.page, `document.querySelectorAll('.ds-tile[data-state="data"]').length === 3`, 20_000)
      await until(watch.page, `document.documentElement.dataset.connection === "live"`, 10_000)
      // A live update through nginx reaches the page.
      expect((await api.pushPoint(account.accessKey, "revenue", { number: 2000, prefix: "$" })).status).toBe(200)
      await until(
        watch.page,
        `document.querySelector('${tileSel("revenue")} .ds-big-number')?.textContent.trim() === "$2,000"`,
        5_000
      )
      expect(failed).toEqual([])
      expect(watch.errors).toEqual([])
      expect(watch.foreignRequests).toEqual([])
    } finally {
      await watch.context.close()
    }
  })

  it("signs in to the console and lists the accounts, every request under the base path", async () => {
    const watch: PageWatch = await isolatedPage(suite.browser, origin, { viewport: { width: 1600, height: 1000 } })
    try {
      const failed = watchRequests(watch.page)
      const { page } = watch
      await page.goto(`${proxied}/console`)
      await until(page, `document.querySelector(".cw-app")?.dataset.auth === "signed-out"`, 10_000)
      await page.fill('input[name="token"]', defaultAdminToken)
      await page.click('button[type="submit"]')
      await until(page, `document.querySelector(".cw-app")?.dataset.auth === "signed-in"`, 5_000)
      await until(page, `document.querySelector('.cw-accounts tr[data-account="${account.id}"]') !== null`, 5_000)
      const cookies = await watch.context.cookies()
      expect(cookies.map((c) => c.path)).toEqual([readmeBasePath])
      // The expected errors: the page's check of its session before sign-in
      // (its first admin call answers 401; the page then shows the form). Anything else fails the test.
      expect(failed.length).toBeLessThanOrEqual(2)
      for (const f of failed) expect(f).toMatch(new RegExp(`^401 ${proxied}/(admin/accounts|console/session)$`))
      expect(watch.errors.filter((e) => !/status of 401/.test(e))).toEqual([])
      expect(watch.foreignRequests).toEqual([])
    } finally {
      await watch.context.close()
    }
  })
})
