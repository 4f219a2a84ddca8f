/**
 * Tile options on the view page end to end (docs/api.md section 15): a real `dashstream serve` on SQLite, a dashboard
 * whose tiles carry thresholds, min/max and staleAfter (stored through the admin API), points pushed through
 * `/customSend`, and Debian's Chromium on the view link. The value takes the colour of the last threshold it meets
 * and changes as pushes cross them; a tile whose newest entry is older than `staleAfter` (10 s, the least allowed)
 * is dimmed and says "No data for <age>", counting up, until a push clears it; an empty stream is not stale. The age
 * is the server's clock's, also on a screen whose own clock is 10 minutes off. The page has an icon (no 404 in the console), also at `/favicon.ico`. The README's screenshot of the status colours
 * (`docs/tile-status.png`) is taken here.
 */
import type { Page } from "@playwright/test"
import { isolatedPage, until } from "@dashstream/dashboard-web/testing"
import { describe, expect, it } from "vitest"
import { skewedClockPage, tileSel, useBrowserSuite } from "./browserHarness.js"
import { screenshotPath } from "../support/screenshots.js"

const screenshot = screenshotPath("tile-status.png")

/** The status colours of the dark theme (the page's stylesheet, `--status-*`), as computed CSS colours. */
const css = {
  green: "rgb(47, 191, 113)",
  amber: "rgb(245, 165, 36)",
  red: "rgb(242, 85, 90)",
  blue: "rgb(61, 139, 253)",
  grey: "rgb(141, 154, 176)",
  text: "rgb(232, 237, 245)"
} as const

const thresholds = [
  { above: 80, color: "amber" },
  { above: 95, color: "red" },
  { below: 10, color: "blue" }
]

const colorOf = (page: Page, selector: string) =>
  page
    .locator(selector)
    .first()
    .evaluate((e) => (globalThis as any).getComputedStyle(e).color)
/** The fill of the dial's value text: the largest SVG text reading `text` (a tick label may read the same). */
const dialValueFill = (page: Page, stream: string, text: string) =>
  page.locator(`${tileSel(stream)} svg text`).evaluateAll((elements, want) => {
    const same = elements.filter((e) => e.textContent === want)
    const largest = same.sort((a, b) => b.getBoundingClientRect().height - a.getBoundingClientRect().height)[0]
    return largest?.getAttribute("fill") ?? null
  }, text)

describe("tile options on the view page against a real server", { timeout: 120_000 }, () => {
  const suite = useBrowserSuite({
    account: {
      name: "tile options e2e",
      widgets: {
        load: "number",
        disk: "horizontal-bar",
        score: "dial",
        signups: "sparkline",
        latency: "line-graph",
        heartbeat: "number",
        never: "list",
        ok: "number",
        warm: "number",
        hot: "dial",
        cold: "sparkline",
        idle: "horizontal-bar",
        old: "number",
        clocked: "sparkline"
      }
    },
    page: { viewport: { width: 1280, height: 720 } }
  })
  const { push } = suite
  const dashboard = async (name: string, tiles: ReadonlyArray<Record<string, unknown>>): Promise<string> => {
    const created = await suite.createDashboard(name, tiles)
    expect(created["tiles"]).toEqual(tiles)
    return created.url
  }

  it("the value takes the colour of the last threshold it meets, and moves as pushes cross them", async () => {
    for (const stream of ["load", "disk", "score", "signups", "latency"]) await push(stream, { number: 50 })
    const view = await dashboard("Thresholds", [
      { streamName: "load", x: 0, y: 0, w: 3, h: 2, options: { thresholds } },
      { streamName: "disk", x: 3, y: 0, w: 3, h: 2, options: { thresholds, min: 0, max: 120 } },
      { streamName: "score", x: 6, y: 0, w: 3, h: 2, options: { thresholds, min: 0, max: 200 } },
      { streamName: "signups", x: 9, y: 0, w: 3, h: 2, options: { thresholds } },
      { streamName: "latency", x: 0, y: 2, w: 6, h: 2, options: { thresholds } }
    ])
    const { page } = suite.watch
    await page.goto(suite.server.baseUrl + view)
    await until(page, `document.querySelectorAll('.ds-tile[data-state="data"]').length === 5`, 20_000)

    const values = {
      load: `${tileSel("load")} .ds-big-number`,
      disk: `${tileSel("disk")} .ds-gauge-value`,
      signups: `${tileSel("signups")} .ds-spark-value`,
      latency: `${tileSel("latency")} .ds-line-value`
    }
    // 50 meets no threshold: the default text colour, no status.
    for (const selector of Object.values(values)) expect(await colorOf(page, selector)).toBe(css.text)
    expect(await page.locator(`${tileSel("load")} .ds-big-number`).getAttribute("data-status")).toBeNull()

    // The scale is min..max: 50 of 0..120 fills 41.67% of the bar; the bands are drawn on it.
    expect(await page.locator(`${tileSel("disk")} .ds-gauge-fill`).getAttribute("data-fraction")).toBe("0.4167")
    expect(await page.locator(`${tileSel("disk")} .ds-gauge-scale`).textContent()).toBe("0120")
    expect(
      await page.locator(`${tileSel("disk")} .ds-gauge-band`).evaluateAll((bs) => bs.map((b) => b.dataset["color"]))
    ).toEqual(["blue", "amber", "red"])
    expect(await page.locator(`${tileSel("score")} svg text`, { hasText: /^200$/ }).count()).toBe(1)

    for (const [n, color] of [
      [85, "amber"],
      [99, "red"],
      [5, "blue"],
      [80, undefined],
      [96, "red"]
    ] as const) {
      for (const stream of ["load", "disk", "score", "signups", "latency"]) await push(stream, { number: n })
      const expected = color === undefined ? css.text : css[color]
      await until(
        page,
        `document.querySelector('${values.load}').textContent === '${n}' && ` +
          `document.querySelector('${values.latency}').textContent === '${n}'`,
        5_000
      )
      for (const [stream, selector] of Object.entries(values)) {
        expect(await colorOf(page, selector), `${stream} at ${n}`).toBe(expected)
      }
      const fill = await dialValueFill(page, "score", String(n))
      expect(fill, `dial at ${n}`).toBe(
        color === undefined ? "#e8edf5" : { amber: "#f5a524", red: "#f2555a", blue: "#3d8bfd" }[color]
      )
    }
    // Options changed in the admin API reach the open page with the layout (docs/api.md section 14), without a reload.
    const dashboards = (await suite.api.admin("GET", `/admin/accounts/${suite.account.id}/dashboards`)).json
      .dashboards as Array<any>
    const thresholdsBoard = dashboards.find((d) => d.name === "Thresholds")
    const tiles = thresholdsBoard.tiles.map((t: any) =>
      t.streamName === "load" ? { ...t, options: { thresholds: [{ above: 0, color: "green" }] } } : t
    )
    const put = await suite.api.admin("PUT", `/admin/accounts/${suite.account.id}/dashboards/${thresholdsBoard.id}`, {
      name: "Thresholds",
      tiles
    })
    expect(put.status, put.text).toBe(200)
    await until(page, `document.querySelector('${values.load}').dataset.status === 'green'`, 5_000)
    expect(await colorOf(page, values.load)).toBe(css.green)
    expect(suite.watch.errors).toEqual([])
  })

  it("a tile goes stale after staleAfter (dimmed, 'No data for <age>' counting up) and recovers on a push; an empty stream is not", async () => {
    await push("heartbeat", { number: 1 })
    const pushedAt = Date.now()
    const view = await dashboard("Staleness", [
      { streamName: "heartbeat", x: 0, y: 0, w: 4, h: 2, options: { staleAfter: 10 } },
      { streamName: "never", x: 4, y: 0, w: 4, h: 2, options: { staleAfter: 10 } }
    ])
    const { page } = suite.watch
    await page.goto(suite.server.baseUrl + view)
    const tile = tileSel("heartbeat")
    await until(page, `document.querySelector('${tile}').dataset.state === 'data'`, 20_000)
    expect(await page.locator(tile).getAttribute("data-stale")).toBeNull()
    expect((await page.locator(`${tile} .ds-stale`).textContent()) ?? "").toBe("")

    // Stale once the entry is more than 10 s old (the page checks every second; 8 s of slack for a loaded machine).
    await until(page, `document.querySelector('${tile}').dataset.stale === 'true'`, 20_000)
    const wentStale = (Date.now() - pushedAt) / 1000
    expect(wentStale).toBeGreaterThan(10)
    const first = (await page.locator(`${tile} .ds-stale`).textContent()) ?? ""
    expect(first).toMatch(/^No data for 1\d s$/)
    expect(await page.locator(`${tile} .ds-stale`).isVisible()).toBe(true)
    // Dimmed: the value is drawn faint.
    expect(
      Number(
        await page.locator(`${tile} .ds-tile-body`).evaluate((e) => (globalThis as any).getComputedStyle(e).opacity)
      )
    ).toBeLessThan(0.5)
    // Counting up, live.
    await new Promise((r) => setTimeout(r, 2_500))
    const later = (await page.locator(`${tile} .ds-stale`).textContent()) ?? ""
    expect(Number(/(\d+) s$/.exec(later)?.[1])).toBeGreaterThan(Number(/(\d+) s$/.exec(first)?.[1]))

    // The empty stream with the same staleAfter is not stale: it shows its empty state.
    expect(await page.locator(tileSel("never")).getAttribute("data-state")).toBe("empty")
    expect(await page.locator(tileSel("never")).getAttribute("data-stale")).toBeNull()

    // A push clears it within a second or so.
    await push("heartbeat", { number: 2 })
    await until(page, `document.querySelector('${tile}').dataset.stale === undefined`, 5_000)
    expect(await page.locator(`${tile} .ds-big-number`).textContent()).toBe("2")
    expect(await page.locator(`${tile} .ds-stale`).isVisible()).toBe(false)
    expect(suite.watch.errors).toEqual([])
  })

  it("a wall screen whose clock is 10 minutes fast or slow says the age by the server's clock", async () => {
    // An entry 90 s old by the server's clock: stale after 60 s, "No data for 1 min". A screen's own clock would say
    // 11 min (10 minutes fast) or not stale at all (10 minutes slow).
    const ts = Math.floor(Date.now() / 1000) - 90
    await push("clocked", [{ number: 5, timestamp: ts }])
    const view = await dashboard("Wall clock", [
      { streamName: "clocked", x: 0, y: 0, w: 4, h: 2, options: { staleAfter: 60 } }
    ])
    const tile = tileSel("clocked")
    for (const offsetMs of [600_000, -600_000]) {
      const wall = await skewedClockPage(suite.browser, suite.server.baseUrl, offsetMs, {
        viewport: { width: 1920, height: 1080 }
      })
      try {
        await wall.page.goto(suite.server.baseUrl + view)
        await until(wall.page, `Math.abs(Date.now() - performance.timeOrigin - performance.now()) > 590_000`, 5_000)
        await until(wall.page, `document.querySelector('${tile}')?.dataset.stale === 'true'`, 10_000)
        expect(await wall.page.locator(`${tile} .ds-stale`).textContent(), `clock ${offsetMs} ms off`).toBe(
          "No data for 1 min"
        )
        expect(wall.errors).toEqual([])
      } finally {
        await wall.context.close()
      }
    }
  })

  it("the page has an icon, linked and at /favicon.ico, and no console error on load", async () => {
    const view = await dashboard("Icon", [{ streamName: "load", x: 0, y: 0, w: 2, h: 1 }])
    const fresh = await isolatedPage(suite.browser, suite.server.baseUrl)
    try {
      const icons: Array<string> = []
      fresh.page.on("response", (r) => {
        if (/favicon/.test(r.url())) icons.push(`${r.status()} ${new URL(r.url()).pathname}`)
      })
      await fresh.page.goto(suite.server.baseUrl + view)
      await until(fresh.page, `document.documentElement.dataset.rendered === 'true'`, 20_000)
      const href = await fresh.page.locator('link[rel="icon"]').getAttribute("href")
      // Relative to the page (docs/api.md section 16: pages use URLs relative to where they were served).
      expect(href).toMatch(/^\.\.\/assets\/favicon\.[0-9a-f]+\.svg$/)
      const linked = await suite.api.fetch(new URL(href!, suite.server.baseUrl + view).pathname)
      expect([linked.status, linked.headers.get("content-type")]).toEqual([200, "image/svg+xml"])
      const ico = await suite.api.fetch("/favicon.ico")
      expect([ico.status, ico.headers.get("content-type")]).toEqual([200, "image/x-icon"])
      await new Promise((r) => setTimeout(r, 500))
      expect(
        icons.every((line) => line.startsWith("200 ")),
        icons.join(", ")
      ).toBe(true)
      expect(fresh.errors).toEqual([])
    } finally {
      await fresh.context.close()
    }
  })

  it("looks right: a tile in each status colour, and a stale one (the README's screenshot)", async () => {
    const now = Math.floor(Date.now() / 1000)
    await push("ok", { number: 99.98, suffix: "%" })
    await push("warm", { number: 72, suffix: "°C" })
    for (const [i, n] of [61, 66, 74, 79, 88, 93, 97].entries())
      await push("hot", { number: n, timestamp: now - 60 + i })
    for (const [i, n] of [40, 32, 25, 17, 12, 9, 6].entries())
      await push("cold", { number: n, timestamp: now - 3600 + i * 600 })
    await push("idle", { number: 3, suffix: " jobs" })
    await push("old", { number: 1204, timestamp: now - 12 * 60 })
    const view = await dashboard("Status colours", [
      {
        streamName: "ok",
        title: "Uptime",
        x: 0,
        y: 0,
        w: 2,
        h: 2,
        options: {
          thresholds: [
            { below: 99.9, color: "red" },
            { above: 99.9, color: "green" }
          ]
        }
      },
      {
        streamName: "warm",
        title: "Rack temperature",
        x: 2,
        y: 0,
        w: 2,
        h: 2,
        options: {
          thresholds: [
            { above: 65, color: "amber" },
            { above: 80, color: "red" }
          ]
        }
      },
      {
        streamName: "hot",
        title: "Error budget used",
        x: 4,
        y: 0,
        w: 2,
        h: 2,
        options: {
          min: 0,
          max: 100,
          thresholds: [
            { above: 50, color: "amber" },
            { above: 90, color: "red" }
          ]
        }
      },
      {
        streamName: "cold",
        title: "Free disk (GB)",
        x: 6,
        y: 0,
        w: 2,
        h: 2,
        options: { thresholds: [{ below: 10, color: "blue" }] }
      },
      {
        streamName: "idle",
        title: "Queue",
        x: 8,
        y: 0,
        w: 2,
        h: 2,
        options: {
          min: 0,
          max: 50,
          thresholds: [
            { below: 5, color: "grey" },
            { above: 30, color: "amber" }
          ]
        }
      },
      { streamName: "old", title: "Orders", x: 10, y: 0, w: 2, h: 2, options: { staleAfter: 300 } }
    ])
    const page = await suite.watch.context.newPage()
    try {
      await page.setViewportSize({ width: 1280, height: 300 })
      await page.goto(suite.server.baseUrl + view)
      await until(page, `document.querySelectorAll('.ds-tile[data-state="data"]').length === 6`, 20_000)
      await until(page, `document.querySelector('${tileSel("old")}').dataset.stale === 'true'`, 5_000)
      expect(await page.locator(`${tileSel("old")} .ds-stale`).textContent()).toBe("No data for 12 min")
      expect(await colorOf(page, `${tileSel("ok")} .ds-big-number`)).toBe(css.green)
      expect(await colorOf(page, `${tileSel("warm")} .ds-big-number`)).toBe(css.amber)
      expect(await colorOf(page, `${tileSel("cold")} .ds-spark-value`)).toBe(css.blue)
      expect(await colorOf(page, `${tileSel("idle")} .ds-gauge-value`)).toBe(css.grey)
      await new Promise((r) => setTimeout(r, 300))
      await page.screenshot({ path: screenshot })
    } finally {
      await page.close()
    }
  })
})
