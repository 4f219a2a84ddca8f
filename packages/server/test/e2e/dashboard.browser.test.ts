/**
 * The dashboard page end to end (docs/api.md section 11): a real `dashstream serve` on SQLite, an account with all 20
 * widget types and points pushed through `/customSend`, a dashboard made through the admin API, and Debian's
 * Chromium opening its view link. Every tile shows its data; pushes appear within a second; a clear empties a tile;
 * pushed markup never runs; a server restart is shown and recovered from; a rotated view token ends the page's event
 * stream and the old link answers 404. The README's screenshot (`docs/dashboard.png`) is taken here.
 */
import { createServer, type Server as HttpServer } from "node:http"
import type { AddressInfo } from "node:net"
import { mkdirSync } from "node:fs"
import { dirname } from "node:path"
import { until } from "@dashstream/dashboard-web/testing"
import { freePort } from "@dashstream/storage-postgres/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { entries, tiles } from "../../../dashboard-web/test/support/fixture.js"
import { pictureSvg } from "../../../dashboard-web/test/support/pageServer.js"
import { text, tileSel, useBrowserSuite } from "./browserHarness.js"
import { timestampTypes } from "./harness.js"
import { screenshotPath } from "../support/screenshots.js"

const screenshot = screenshotPath("dashboard.png")

/** Pictures for the image, gallery and text-feed tiles, from another origin (as pushed image URLs are). */
const startImageServer = (): Promise<{ origin: string; server: HttpServer }> =>
  new Promise((resolve) => {
    const server = createServer((req, res) => {
      const name = /^\/img\/([\w-]+)\.svg$/.exec(req.url ?? "")?.[1]
      if (name === undefined) return void res.writeHead(404).end()
      res.writeHead(200, { "content-type": "image/svg+xml" }).end(pictureSvg(name))
    })
    server.listen(0, "127.0.0.1", () =>
      resolve({ origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server })
    )
  })

const markers = (stream: string) =>
  `document.querySelectorAll('${tileSel(stream)} svg path[d^="M1 0A1 1 0 1 1"]').length`

describe("the dashboard page against a real server", { timeout: 120_000 }, () => {
  let port: number
  let images: { origin: string; server: HttpServer }
  let viewPath: string
  let dashboardId: string

  // Before the suite's server and page: the server's port (the same after a restart) and the image origin.
  beforeAll(async () => {
    port = await freePort()
    images = await startImageServer()
  })
  afterAll(() => {
    images?.server.close()
  })

  const suite = useBrowserSuite({
    serve: () => ({ extraArgs: ["--port", String(port)] }),
    account: { name: "dashboard e2e", widgets: Object.fromEntries(tiles.map((tile) => [tile.streamName, tile.type])) },
    page: () => ({ alsoAllow: [images.origin] })
  })
  const { push } = suite

  beforeAll(async () => {
    const data = entries(images.origin)
    for (const tile of tiles) {
      for (const entry of data[tile.streamName] ?? []) {
        const point = entry.point as Record<string, unknown>
        await push(tile.streamName, timestampTypes.includes(tile.type) ? { ...point, timestamp: entry.ts } : point)
      }
    }
    const layout = tiles.map(({ streamName, title, x, y, w, h }) => ({ streamName, title, x, y, w, h }))
    const created = await suite.createDashboard("Acme operations", layout)
    viewPath = created.url
    dashboardId = created.id
  })

  it("shows every one of the 20 widget types with its data, with no console error and no request elsewhere", async () => {
    const { page } = suite.watch
    const started = performance.now()
    await page.goto(suite.server.baseUrl + viewPath)
    await until(
      page,
      `document.querySelectorAll('.ds-tile[data-state="data"]').length === 20 && ${markers("visitors")} === 5 && ` +
        `${markers("stores")} === 5 && [...document.images].every((i) => i.complete && i.naturalWidth > 0)`,
      20_000
    )
    console.info(`20-tile dashboard drawn ${Math.round(performance.now() - started)} ms after navigation started`)
    expect(await page.getAttribute("html", "data-connection")).toBe("live")
    expect(await text(page, `${tileSel("revenue")} .ds-big-number`)).toBe("$1,284.5")
    expect(await text(page, `${tileSel("revenue")} .ds-tile-title`)).toBe("Revenue today")
    expect(await text(page, `${tileSel("cpu")} .ds-gauge-value`)).toBe("72%")
    expect(await page.locator(`${tileSel("requests")} svg path[fill="none"]`).count()).toBeGreaterThanOrEqual(1)
    expect(await page.locator(`${tileSel("signups")} svg path[fill="none"]`).count()).toBeGreaterThanOrEqual(1)
    expect(await page.locator(`${tileSel("incidents")} th`).allTextContents()).toEqual(["Service", "Status", "Since"])
    expect(await page.locator(`${tileSel("incidents")} tbody tr:first-child td`).allTextContents()).toEqual([
      "Checkout",
      "Degraded",
      "10:02"
    ])
    expect(await page.locator(`${tileSel("top-sellers")} .ds-name`).allTextContents()).toEqual([
      "Ann",
      "Bob",
      "Chloé",
      "Dmitri",
      "Eve"
    ])
    expect(await text(page, `${tileSel("status")} .ds-label`)).toBe("All systems go")
    expect(await page.locator(`${tileSel("deploys")} .ds-feed-title`).allTextContents()).toEqual([
      "worker",
      "web",
      "api"
    ])
    expect(await page.locator(`${tileSel("latency")} svg path[d^="M1 0A1 1 0 1 1"]`).count()).toBeGreaterThan(0)
    expect(await page.locator(`${tileSel("notice")} iframe[sandbox=""]`).count()).toBe(1)
    await page.waitForTimeout(300)
    mkdirSync(dirname(screenshot), { recursive: true })
    await page.screenshot({ path: screenshot })
    expect(suite.watch.errors).toEqual([])
    expect(suite.watch.foreignRequests).toEqual([])
  })

  it("a push appears on the open page within 1 s without reload; a clear empties its tile", async () => {
    const { page } = suite.watch
    const started = performance.now()
    await push("revenue", { number: 2000, prefix: "$" })
    await until(page, `document.querySelector('${tileSel("revenue")} .ds-big-number')?.textContent === "$2,000"`, 1_000)
    console.info(`push to page: ${Math.round(performance.now() - started)} ms`)
    await push("status", { label: "Degraded" })
    await until(page, `document.querySelector('${tileSel("status")} .ds-label')?.textContent === "Degraded"`, 1_000)
    const r = await suite.api.push({ accessKey: suite.account.accessKey, streamName: "signups", command: "clear" })
    expect(r.status).toBe(200)
    await until(page, `document.querySelector('${tileSel("signups")}')?.dataset.state === "empty"`, 1_000)
    expect(suite.watch.errors).toEqual([])
  })

  it("a tile receiving 20 pushes per second keeps up (each visible within 1 s) with the main thread mostly idle", async () => {
    const { page } = suite.watch
    const cdp = await page.context().newCDPSession(page)
    await cdp.send("Performance.enable")
    const busy = async () => {
      const { metrics } = (await cdp.send("Performance.getMetrics")) as {
        metrics: Array<{ name: string; value: number }>
      }
      return metrics.find((m) => m.name === "TaskDuration")!.value
    }
    const lags: Array<number> = []
    const busyBefore = await busy()
    const started = performance.now()
    for (let i = 1; i <= 60; i++) {
      const due = started + i * 50
      await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())))
      const sent = performance.now()
      await push("queue", { number: 1000 + i })
      await until(
        page,
        `document.querySelector('${tileSel("queue")} .ds-gauge-value')?.textContent === "${(1000 + i).toLocaleString("en-US")}"`,
        1_000
      )
      lags.push(performance.now() - sent)
    }
    const seconds = (performance.now() - started) / 1000
    const mainThread = (await busy()) - busyBefore
    lags.sort((a, b) => a - b)
    console.info(
      `20 pushes/s for ${seconds.toFixed(1)} s: push-to-screen p50 ${lags[30]!.toFixed(0)} ms, max ${lags.at(-1)!.toFixed(0)} ms; ` +
        `page main thread busy ${((100 * mainThread) / seconds).toFixed(1)}% of the time`
    )
    // "Mostly idle": the page's main thread is busy less than half of the time (it drew 60 updates and was polled).
    expect(mainThread / seconds).toBeLessThan(0.5)
    await cdp.detach()
  })

  it("pushed markup never runs: html, text feed, label, table and list", async () => {
    const { page } = suite.watch
    const payload = `<script>window.pwned=1</script><img src=x onerror="window.pwned=2"><a href="javascript:window.pwned=3">x</a>`
    await push("notice", { html: payload })
    await push("deploys", { title: payload, msg: payload })
    await push("todo", { listItem: payload })
    await push("incidents", { tableRow: [payload, "<b onmouseover=window.pwned=4>x</b>", "now"] })
    await push("status", { label: payload })
    await until(
      page,
      `document.querySelector('${tileSel("status")} .ds-label')?.textContent === ${JSON.stringify(payload)}`,
      2_000
    )
    await until(
      page,
      `document.querySelector('${tileSel("todo")} li')?.textContent === ${JSON.stringify(payload)}`,
      2_000
    )
    await page.locator(`${tileSel("deploys")}`).hover()
    await page.waitForTimeout(300)
    expect(await page.evaluate("typeof window.pwned")).toBe("undefined")
    expect(await text(page, `${tileSel("incidents")} tbody tr:first-child td`)).toBe(payload)
  })

  it("a server restart under the open page: the page shows the lost connection, then recovers and goes on", async () => {
    const { page } = suite.watch
    await suite.restart(() => until(page, `document.documentElement.dataset.connection !== "live"`, 10_000))
    await until(page, `document.documentElement.dataset.connection === "live"`, 30_000)
    await push("revenue", { number: 3000, prefix: "$" })
    await until(page, `document.querySelector('${tileSel("revenue")} .ds-big-number')?.textContent === "$3,000"`, 2_000)
  })

  it("a layout change reaches the open page within 2 s: re-laid out without a reload, the new tile filled", async () => {
    const { page } = suite.watch
    const errorsBefore = suite.watch.errors.length
    await page.evaluate("window.sameDocument = true")
    await suite.api.createWidget(suite.account.id, "extra", "number")
    await push("extra", { number: 77 })
    // The html tile gives its place to a new one; the gallery is renamed.
    const layout = tiles
      .filter((t) => t.streamName !== "notice")
      .map(({ streamName, title, x, y, w, h }) => ({
        streamName,
        title: streamName === "team" ? "The team" : title,
        x,
        y,
        w,
        h
      }))
    layout.push({ streamName: "extra", title: "Extra", x: 10, y: 5, w: 2, h: 1 })
    const changedAt = performance.now()
    const r = await suite.api.admin("PUT", `/admin/accounts/${suite.account.id}/dashboards/${dashboardId}`, {
      name: "Acme operations, new",
      tiles: layout
    })
    expect(r.status, r.text).toBe(200)
    await until(page, `document.querySelector('${tileSel("extra")} .ds-big-number')?.textContent === "77"`, 2_000)
    console.info(`layout change to page: ${Math.round(performance.now() - changedAt)} ms`)
    expect(await page.evaluate("window.sameDocument")).toBe(true)
    expect(await page.locator(tileSel("notice")).count()).toBe(0)
    expect(await text(page, ".ds-name")).toBe("Acme operations, new")
    expect(await text(page, `${tileSel("team")} .ds-tile-title`)).toBe("The team")
    // The tiles it showed before keep their data, and go on receiving pushes.
    expect(await page.getAttribute(tileSel("revenue"), "data-state")).toBe("data")
    await push("revenue", { number: 2500, prefix: "$" })
    await until(page, `document.querySelector('${tileSel("revenue")} .ds-big-number')?.textContent === "$2,500"`, 1_000)
    // The html tile's sandboxed frame reports the hostile markup pushed by an earlier test each time it loads it (as
    // rendered by that test, or again by the restart test's reconnection); under load Chromium may load that frame
    // only now. That is the sandbox at work, not an error of the page.
    const sandboxAtWork =
      "console: Blocked script execution in 'about:srcdoc' because the document's frame is sandboxed and the 'allow-scripts' permission is not set."
    expect(suite.watch.errors.slice(errorsBefore).filter((e) => e !== sandboxAtWork)).toEqual([])
  })

  it("a rotated view token: the old link answers 404 and the page's event stream is ended", async () => {
    const { page } = suite.watch
    const r = await suite.api.admin("POST", `/admin/accounts/${suite.account.id}/dashboards/${dashboardId}/view-token`)
    expect(r.status, r.text).toBe(201)
    expect(r.json.url).not.toBe(viewPath)
    expect((await suite.api.fetch(viewPath)).status).toBe(404)
    expect((await suite.api.fetch(`${viewPath}/events`)).status).toBe(404)
    await until(page, `document.documentElement.dataset.connection === "gone"`, 20_000)
    const fresh = await suite.api.fetch(r.json.url as string)
    expect(fresh.status).toBe(200)
  })
})
