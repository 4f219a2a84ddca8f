/**
 * Looking back on the view page end to end (docs/api.md sections 11.6 and 15.1): a real `dashstream serve` on SQLite,
 * 30 days of points pushed with explicit timestamps through `/customSend` (arrays of timestamped numbers, the ordinary
 * push API), dashboards whose time tiles carry the `range` option, and Debian's Chromium on the view link. A 7-day tile
 * shows only the last 7 days, read with about one point per pixel of its width; a number tile says its change across
 * the window, its latest value read with it (before the event stream's snapshot); `?range=24h` and the picker change
 * every time tile and "Live" returns them to their own range; `?from=` alone grows live, `from`/`to` wins over `range`,
 * and `to` alone or `from` after `to` is ignored; a drag across a line graph zooms every time tile (from/to in the
 * address) and Back undoes it; the picker is there at 1280 px and not at 390 px; a live push shows on a ranged tile
 * within 2 seconds, and an entry older than the window leaves it within 5 seconds. The first paint of six 30-day tiles
 * is measured and printed. The README's screenshot of a 30-day line graph under the picker (`docs/history.png`) is
 * taken here.
 */
import type { Page } from "@playwright/test"
import { isolatedPage, until } from "@dashstream/dashboard-web/testing"
import { beforeAll, describe, expect, it } from "vitest"
import { text, tileSel, useBrowserSuite } from "./browserHarness.js"
import { screenshotPath } from "../support/screenshots.js"

const screenshot = screenshotPath("history.png")

const day = 86_400
const week = 7 * day
/** The server's clock, roughly, when the data is pushed (whole seconds); every point is older. */
const now0 = Math.floor(Date.now() / 1000)

/**
 * 30 days of a stream, one point every `step` seconds, the newest half an hour ago (so no point sits on a window's
 * edge while the test runs): a daily wave with a slow drift, deterministic.
 */
const thirtyDays = (step: number, phase: number): Array<{ number: number; timestamp: number }> => {
  const newest = now0 - 1_800
  const n = Math.floor((30 * day) / step)
  return Array.from({ length: n }, (_, i) => {
    const t = newest - (n - 1 - i) * step
    const v = 500 + 200 * Math.sin((2 * Math.PI * (t + phase)) / day) + 80 * Math.sin(t / 400_000) + ((i * 37) % 23)
    return { number: Math.round(v * 10) / 10, timestamp: t }
  })
}

/** The number tile's stream: one point an hour, valued by its hour (0 for the oldest, 719 half an hour ago). */
const hourly = Array.from({ length: 720 }, (_, k) => ({ number: k, timestamp: now0 - 1_800 - (719 - k) * 3_600 }))

const data = (page: Page, stream: string) =>
  page.locator(tileSel(stream)).evaluate((e) => ({ ...(e as any).dataset }) as Record<string, string>)
/** True in the page once every tile of `streams` has read its window and drawn it. */
const ready = (streams: ReadonlyArray<string>) =>
  streams.map((s) => `document.querySelector('${tileSel(s)}')?.dataset.windowReady === 'true'`).join(" && ")
/** How long a page may take to load and read its windows on a loaded machine (a wait, not a figure). */
const loadMs = 60_000
/**
 * Waits until every tile of `streams` has read its window and drawn it and the page has drawn its event stream's
 * first snapshot: a window's read may answer before the snapshot, and the newest value of a number tile, whose read
 * holds only the window's first entries, comes with the snapshot.
 */
const shown = async (page: Page, streams: ReadonlyArray<string>) => {
  await until(page, `${ready(streams)} && performance.getEntriesByName("ds-snapshot").length > 0`, loadMs)
  // The snapshot is drawn in the animation frame it asked for, which runs before this one.
  await page.evaluate("new Promise((resolve) => requestAnimationFrame(resolve))")
}
const windowOf = async (page: Page, stream: string) => {
  const d = await data(page, stream)
  return d["windowFrom"] === undefined ? undefined : Number(d["windowTo"]) - Number(d["windowFrom"])
}

describe("looking back on the view page against a real server", { timeout: 180_000 }, () => {
  const suite = useBrowserSuite({
    account: {
      name: "history e2e",
      widgets: {
        visits: "line-graph",
        plain: "line-graph",
        signups: "sparkline",
        orders: "number",
        status: "label",
        minute: "sparkline"
      }
    },
    page: { viewport: { width: 1280, height: 720 } }
  })
  const { push } = suite
  let view: string

  /** Pushes `points` to a sparkline or line graph in arrays of 10,000. */
  const pushAll = async (streamName: string, points: ReadonlyArray<unknown>) => {
    for (let i = 0; i < points.length; i += 10_000) await push(streamName, points.slice(i, i + 10_000))
  }
  const dashboard = async (name: string, tiles: ReadonlyArray<Record<string, unknown>>): Promise<string> =>
    (await suite.createDashboard(name, tiles)).url
  /** The `/range` reads the page makes while `run` runs, as URLs. */
  const rangeReads = async (page: Page, run: () => Promise<void>): Promise<Array<URL>> => {
    const urls: Array<URL> = []
    const listen = (request: { url: () => string }) => {
      const url = new URL(request.url())
      if (url.pathname.endsWith("/range")) urls.push(url)
    }
    page.on("request", listen)
    try {
      await run()
    } finally {
      page.off("request", listen)
    }
    return urls
  }

  beforeAll(async () => {
    await pushAll("visits", thirtyDays(600, 0))
    await pushAll("plain", thirtyDays(600, 7_000))
    await pushAll("signups", thirtyDays(1_800, 20_000))
    // A number widget takes one point a push (arrays are for series): 720 pushes, 24 at a time.
    for (let i = 0; i < hourly.length; i += 24) await Promise.all(hourly.slice(i, i + 24).map((p) => push("orders", p)))
    await push("status", { label: "All good" })
    view = await dashboard("History", [
      { streamName: "visits", title: "Visits", x: 0, y: 0, w: 8, h: 2, options: { range: week } },
      { streamName: "orders", title: "Orders", x: 8, y: 0, w: 4, h: 1, options: { range: week } },
      { streamName: "signups", title: "Signups", x: 8, y: 1, w: 4, h: 1, options: { range: week } },
      { streamName: "plain", title: "Plain", x: 0, y: 2, w: 8, h: 2 },
      { streamName: "status", title: "Status", x: 8, y: 2, w: 4, h: 2 }
    ])
  })

  it("a 7-day tile over 30 days of data shows only the last 7 days, read at about one point per pixel", async () => {
    const { page } = suite.watch
    const reads = await rangeReads(page, async () => {
      await page.goto(suite.server.baseUrl + view)
      await shown(page, ["visits", "orders", "signups"])
    })
    for (const stream of ["visits", "orders", "signups"]) {
      const d = await data(page, stream)
      expect(Number(d["windowTo"]) - Number(d["windowFrom"]), stream).toBe(week)
      expect(Math.abs(Number(d["windowTo"]) - Date.now() / 1000), stream).toBeLessThan(30)
      // Nothing older than the window; the window's start is covered (a point every 10 min, 30 min, 1 h).
      expect(Number(d["firstTs"]), stream).toBeGreaterThanOrEqual(Number(d["windowFrom"]))
      expect(Number(d["firstTs"]) - Number(d["windowFrom"]), stream).toBeLessThan(3_600)
      expect(Number(d["lastTs"]), stream).toBe(now0 - 1_800)
    }
    // Each chart read its window once, with `points` between half and twice its width in CSS pixels.
    for (const stream of ["visits", "signups"]) {
      const mine = reads.filter((u) => u.searchParams.get("stream") === stream)
      expect(mine.length, stream).toBe(1)
      const width = await page.locator(`${tileSel(stream)} .ds-chart`).evaluate((e) => e.clientWidth)
      const points = Number(mine[0]!.searchParams.get("points"))
      expect(points, stream).toBeGreaterThanOrEqual(width / 2)
      expect(points, stream).toBeLessThanOrEqual(width * 2)
      expect(mine[0]!.searchParams.has("to"), stream).toBe(false)
      // At most four entries a point (first, last, lowest, highest of each bucket) and more than the raw
      // 1,008 (10-minute points) would need: the 7 days, thinned.
      expect(Number((await data(page, stream))["count"]), stream).toBeLessThanOrEqual(4 * points + 10)
    }
    expect(Number((await data(page, "visits"))["count"])).toBeLessThanOrEqual(week / 600 + 2)
    // The number tile: the latest value and its change since the window's first entry (hour 552), with the span.
    expect(await text(page, `${tileSel("orders")} .ds-big-number`)).toBe("719")
    expect(await text(page, `${tileSel("orders")} .ds-change`)).toBe("\u25b2 +167 (+30.25%) in 7 d")
    // A tile without range shows what it holds live; a label shows no time at all.
    expect(await windowOf(page, "plain")).toBeUndefined()
    expect(await windowOf(page, "status")).toBeUndefined()
    expect(reads.some((u) => u.searchParams.get("stream") === "plain")).toBe(false)
    expect(suite.watch.errors).toEqual([])
  })

  it("a number tile shows its latest value from its own reads, before the event stream's snapshot", async () => {
    const page = await suite.watch.context.newPage()
    try {
      // The event stream held back until the tiles have read their windows.
      let release: () => void = () => undefined
      const held = new Promise<void>((resolve) => (release = resolve))
      await page.route(
        (url) => url.pathname.endsWith("/events"),
        async (route) => {
          await held
          await route.continue()
        }
      )
      await page.goto(suite.server.baseUrl + view)
      await until(page, ready(["orders"]), loadMs)
      expect(await page.evaluate(`performance.getEntriesByName("ds-snapshot").length`)).toBe(0)
      expect(await text(page, `${tileSel("orders")} .ds-big-number`)).toBe("719")
      expect(await text(page, `${tileSel("orders")} .ds-change`)).toBe("\u25b2 +167 (+30.25%) in 7 d")
      release()
    } finally {
      await page.close()
    }
  })

  it("?range=24h changes every time tile; the picker's presets do too, and Live returns them to their own", async () => {
    const { page } = suite.watch
    await page.goto(`${suite.server.baseUrl}${view}?range=24h`)
    await shown(page, ["visits", "orders", "signups", "plain"])
    for (const stream of ["visits", "orders", "signups", "plain"])
      expect(await windowOf(page, stream), stream).toBe(day)
    expect(await windowOf(page, "status")).toBeUndefined()
    expect(await text(page, `${tileSel("orders")} .ds-change`)).toBe("\u25b2 +23 (+3.3%) in 24 h")
    expect(await page.locator('.ds-picker-button[aria-pressed="true"]').textContent()).toBe("24h")

    await page.click('.ds-picker-button:text-is("30d")')
    expect(new URL(page.url()).search).toBe("?range=30d")
    await shown(page, ["visits", "orders", "signups", "plain"])
    for (const stream of ["visits", "orders", "signups", "plain"]) {
      expect(await windowOf(page, stream), stream).toBe(30 * day)
    }
    expect(await text(page, `${tileSel("orders")} .ds-change`)).toBe("\u25b2 +719 in 30 d")

    await page.click('.ds-picker-button:text-is("Live")')
    expect(new URL(page.url()).search).toBe("")
    await until(page, `document.querySelector('${tileSel("plain")}').dataset.windowFrom === undefined`, 5_000)
    for (const stream of ["visits", "orders", "signups"]) expect(await windowOf(page, stream), stream).toBe(week)
    expect(await windowOf(page, "plain")).toBeUndefined()
    expect(await page.locator('.ds-picker-button[aria-pressed="true"]').textContent()).toBe("Live")
    // Back goes to the 30-day view again.
    await page.goBack()
    await until(page, `document.querySelector('${tileSel("plain")}').dataset.windowFrom !== undefined`, 5_000)
    expect(new URL(page.url()).search).toBe("?range=30d")
    expect(await windowOf(page, "plain")).toBe(30 * day)
    // Other values are ignored: the tiles' own settings.
    await page.goto(`${suite.server.baseUrl}${view}?range=2d&theme=light`)
    await shown(page, ["visits"])
    expect(await windowOf(page, "visits")).toBe(week)
    expect(await windowOf(page, "plain")).toBeUndefined()
    expect(suite.watch.errors).toEqual([])
  })

  it("a drag across a line graph zooms every time tile; new entries do not move it; Back undoes it", async () => {
    const { page } = suite.watch
    await page.goto(`${suite.server.baseUrl}${view}?range=7d`)
    await shown(page, ["visits", "orders", "signups", "plain"])
    const box = (await page.locator(`${tileSel("visits")} .ds-chart`).boundingBox())!
    const y = box.y + box.height * 0.5
    await page.mouse.move(box.x + box.width * 0.3, y)
    await page.mouse.down()
    await page.mouse.move(box.x + box.width * 0.5, y, { steps: 5 })
    await page.mouse.move(box.x + box.width * 0.6, y, { steps: 5 })
    await page.mouse.up()
    await until(page, `new URLSearchParams(location.search).has("from")`, 5_000)
    const q = new URL(page.url()).searchParams
    expect(q.has("range")).toBe(false)
    const from = Number(q.get("from"))
    const to = Number(q.get("to"))
    // About 30% of the 7 days (the grid is a little narrower than the chart), inside them.
    expect(to - from).toBeGreaterThan(0.2 * week)
    expect(to - from).toBeLessThan(0.45 * week)
    expect(from).toBeGreaterThan(now0 - week - 3_600)
    expect(to).toBeLessThan(now0)
    await shown(page, ["visits", "orders", "signups", "plain"])
    for (const stream of ["visits", "orders", "signups", "plain"]) {
      const d = await data(page, stream)
      expect([Number(d["windowFrom"]), Number(d["windowTo"])], stream).toEqual([Math.round(from), Math.round(to)])
      expect(Number(d["firstTs"]), stream).toBeGreaterThanOrEqual(from)
      expect(Number(d["lastTs"]), stream).toBeLessThanOrEqual(to)
    }
    expect(await text(page, `${tileSel("orders")} .ds-change`)).toMatch(/ in \d+(\.\d)? d$/)
    expect(await text(page, ".ds-picker-span")).toContain("\u2013")
    expect(await page.locator('.ds-picker-button[aria-pressed="true"]').count()).toBe(0)
    // While a from/to is shown, new entries do not move it.
    const before = await data(page, "visits")
    await push("visits", { number: 999 })
    await push("orders", { number: 5_000 })
    await new Promise((r) => setTimeout(r, 1_500))
    const after = await data(page, "visits")
    expect([after["windowFrom"], after["windowTo"], after["lastTs"], after["count"]]).toEqual([
      before["windowFrom"],
      before["windowTo"],
      before["lastTs"],
      before["count"]
    ])
    expect(await text(page, `${tileSel("orders")} .ds-big-number`)).not.toBe("5,000")

    await page.goBack()
    await until(page, `!new URLSearchParams(location.search).has("from")`, 5_000)
    expect(new URL(page.url()).search).toBe("?range=7d")
    await shown(page, ["visits", "orders", "signups", "plain"])
    for (const stream of ["visits", "orders", "signups", "plain"])
      expect(await windowOf(page, stream), stream).toBe(week)
    // Back in a live window, the newest entries are there.
    await until(page, `document.querySelector('${tileSel("orders")} .ds-big-number').textContent === '5,000'`, 5_000)
    expect(await text(page, `${tileSel("visits")} .ds-line-value`)).toBe("999")
    expect(suite.watch.errors).toEqual([])
  })

  it("the picker is there on a wide screen and not on a phone", async () => {
    const phone = await isolatedPage(suite.browser, suite.server.baseUrl, { viewport: { width: 390, height: 844 } })
    try {
      await phone.page.goto(suite.server.baseUrl + view)
      await shown(phone.page, ["visits"])
      expect(await phone.page.locator(".ds-picker").isVisible()).toBe(false)
      expect(await phone.page.locator(".ds-picker-button").first().isVisible()).toBe(false)
      // At 800 px still none; at 801 px there it is.
      await phone.page.setViewportSize({ width: 800, height: 844 })
      expect(await phone.page.locator(".ds-picker").isVisible()).toBe(false)
      await phone.page.setViewportSize({ width: 801, height: 844 })
      await until(phone.page, `!document.querySelector('.ds-picker').hidden`, 2_000)
      expect(phone.errors).toEqual([])
    } finally {
      await phone.context.close()
    }
    const { page } = suite.watch
    await page.goto(suite.server.baseUrl + view)
    await shown(page, ["visits"])
    expect(await page.locator(".ds-picker").isVisible()).toBe(true)
    expect(await page.locator(".ds-picker-button").allTextContents()).toEqual([
      "1h",
      "6h",
      "24h",
      "7d",
      "30d",
      "90d",
      "1y",
      "Live"
    ])
  })

  it("a live push shows on a ranged tile within 2 s; an entry older than the window leaves it within 5 s", async () => {
    const { page } = suite.watch
    await page.goto(suite.server.baseUrl + view)
    await shown(page, ["visits", "orders"])
    const pushed = Date.now()
    await push("visits", { number: 1234 })
    await push("orders", { number: 800 })
    await until(page, `document.querySelector('${tileSel("visits")} .ds-line-value').textContent === '1,234'`, 2_000)
    await until(page, `document.querySelector('${tileSel("orders")} .ds-big-number').textContent === '800'`, 2_000)
    expect(Date.now() - pushed).toBeLessThan(2_000)
    expect(await text(page, `${tileSel("orders")} .ds-change`)).toBe("\u25b2 +248 (+44.93%) in 7 d")
    expect(Number((await data(page, "visits"))["lastTs"])).toBeGreaterThan(now0)

    // A one-minute window: entries 30 and 25 seconds old leave it within 5 seconds of turning 60 seconds old (the
    // page has until then to load and read them).
    const t = Math.floor(Date.now() / 1000)
    await push("minute", [
      { number: 1, timestamp: t - 30 },
      { number: 2, timestamp: t - 25 }
    ])
    const minute = await dashboard("Minute", [{ streamName: "minute", x: 0, y: 0, w: 6, h: 2, options: { range: 60 } }])
    const fresh = await suite.watch.context.newPage()
    try {
      await fresh.goto(suite.server.baseUrl + minute)
      await shown(fresh, ["minute"])
      expect((await data(fresh, "minute"))["count"]).toBe("2")
      await until(fresh, `document.querySelector('${tileSel("minute")}').dataset.count === '1'`, 45_000)
      expect(Date.now() / 1000 - (t - 30 + 60)).toBeLessThan(5)
      await until(fresh, `document.querySelector('${tileSel("minute")}').dataset.count === '0'`, 20_000)
      expect(Date.now() / 1000 - (t - 25 + 60)).toBeLessThan(5)
      expect(await fresh.locator(`${tileSel("minute")} .ds-placeholder`).textContent()).toBe(
        "No data in this time range"
      )
      // A push brings it back at once.
      await push("minute", { number: 3 })
      await until(fresh, `document.querySelector('${tileSel("minute")}').dataset.count === '1'`, 2_000)
      expect(await fresh.locator(tileSel("minute")).getAttribute("data-state")).toBe("data")
      // A clear empties the window.
      const cleared = await suite.api.push({
        accessKey: suite.account.accessKey,
        streamName: "minute",
        command: "clear"
      })
      expect(cleared.status, cleared.text).toBe(200)
      await until(fresh, `document.querySelector('${tileSel("minute")}').dataset.state === 'empty'`, 2_000)
      expect((await data(fresh, "minute"))["count"]).toBe("0")
    } finally {
      await fresh.close()
    }
    expect(suite.watch.errors).toEqual([])
  })

  it("a rotation's page takes ?range= and the picker as a dashboard's does", async () => {
    const dashboards = (await suite.api.admin("GET", `/admin/accounts/${suite.account.id}/dashboards`)).json
      .dashboards as Array<any>
    const history = dashboards.find((d) => d.name === "History")
    const created = await suite.api.admin("POST", `/admin/accounts/${suite.account.id}/rotations`, {
      name: "Wall",
      dashboardIds: [history.id],
      intervalSeconds: 60
    })
    expect(created.status, created.text).toBe(201)
    const { page } = suite.watch
    const reads = await rangeReads(page, async () => {
      await page.goto(`${suite.server.baseUrl}${created.json.url as string}?range=24h`)
      await shown(page, ["visits", "orders", "signups", "plain"])
    })
    for (const stream of ["visits", "orders", "signups", "plain"])
      expect(await windowOf(page, stream), stream).toBe(day)
    expect(reads.every((u) => u.pathname === `${created.json.url as string}/range`)).toBe(true)
    expect(await text(page, `${tileSel("orders")} .ds-change`)).toMatch(/ in 24 h$/)
    await page.click('.ds-picker-button:text-is("Live")')
    await until(page, `document.querySelector('${tileSel("plain")}').dataset.windowFrom === undefined`, 5_000)
    expect(await windowOf(page, "visits")).toBe(week)
    expect(new URL(page.url()).search).toBe("")
    expect(suite.watch.errors).toEqual([])
  })

  it("?from= without to grows live; from/to wins over range; to alone or from after to is ignored", async () => {
    const { page } = suite.watch
    const time = ["visits", "orders", "signups", "plain"]
    const from = Math.floor(Date.now() / 1000) - 2 * day
    await page.goto(`${suite.server.baseUrl}${view}?from=${from}`)
    await shown(page, time)
    for (const stream of time) {
      const d = await data(page, stream)
      expect(Number(d["windowFrom"]), stream).toBe(from)
      expect(Math.abs(Number(d["windowTo"]) - Date.now() / 1000), stream).toBeLessThan(30)
    }
    expect(await windowOf(page, "status")).toBeUndefined()
    expect(await page.locator('.ds-picker-button[aria-pressed="true"]').count()).toBe(0)
    // Up to now, growing live: a push shows at once, and the window keeps its start.
    await push("plain", { number: 4321 })
    await until(page, `document.querySelector('${tileSel("plain")} .ds-line-value').textContent === '4,321'`, 2_000)
    expect(Number((await data(page, "plain"))["lastTs"])).toBeGreaterThan(now0)
    expect(Number((await data(page, "plain"))["windowFrom"])).toBe(from)

    const to = from + day
    await page.goto(`${suite.server.baseUrl}${view}?range=7d&from=${from}&to=${to}`)
    await shown(page, time)
    for (const stream of time) {
      const d = await data(page, stream)
      expect([Number(d["windowFrom"]), Number(d["windowTo"])], stream).toEqual([from, to])
      expect(Number(d["lastTs"]), stream).toBeLessThanOrEqual(to)
    }
    // A fixed window around one hourly entry of the number tile: its value, and no change (fewer than two entries).
    const hour700 = hourly[700]!.timestamp
    await page.goto(`${suite.server.baseUrl}${view}?from=${hour700 - 600}&to=${hour700 + 600}`)
    await shown(page, time)
    expect(await text(page, `${tileSel("orders")} .ds-big-number`)).toBe("700")
    expect(await text(page, `${tileSel("orders")} .ds-change`)).toBe("")
    expect((await data(page, "orders"))["count"]).toBe("1")
    for (const query of [`?to=${to}`, `?from=${to}&to=${from}`]) {
      await page.goto(`${suite.server.baseUrl}${view}${query}`)
      await shown(page, ["visits", "orders", "signups"])
      for (const stream of ["visits", "orders", "signups"]) expect(await windowOf(page, stream), query).toBe(week)
      expect(await windowOf(page, "plain"), query).toBeUndefined()
    }
    expect(suite.watch.errors).toEqual([])
  })

  it("paints six 30-day tiles quickly (first paint measured), and looks right (the README's screenshot)", async () => {
    const streams = ["a", "b", "c", "d", "e", "f"]
    for (const [i, stream] of streams.entries()) {
      await suite.api.createWidget(suite.account.id, stream, i % 3 === 2 ? "sparkline" : "line-graph")
      // One point a minute for 30 days: 43,200 entries a stream, 259,200 in all.
      await pushAll(stream, thirtyDays(60, i * 5_000))
    }
    const six = await dashboard(
      "Thirty days",
      streams.map((streamName, i) => ({
        streamName,
        x: (i % 3) * 4,
        y: Math.floor(i / 3) * 2,
        w: 4,
        h: 2,
        options: { range: 30 * day }
      }))
    )
    const timings: Array<number> = []
    for (let run = 0; run < 3; run++) {
      const page = await suite.watch.context.newPage()
      try {
        await page.setViewportSize({ width: 1920, height: 1080 })
        await page.goto(suite.server.baseUrl + six)
        await shown(page, streams)
        const marks = await page.evaluate(() => ({
          snapshot: performance.getEntriesByName("ds-snapshot")[0]?.startTime ?? -1,
          ready: Math.max(...performance.getEntriesByName("ds-window-ready").map((m) => m.startTime)),
          each: performance.getEntriesByName("ds-window-ready").map((m) => Math.round(m.startTime)),
          first: performance.getEntriesByName("ds-first-render")[0]?.startTime ?? -1,
          reads: performance
            .getEntriesByType("resource")
            .filter((r) => r.name.includes("/range?"))
            .map((r) => [Math.round(r.startTime), Math.round(r.startTime + r.duration)])
        }))
        console.log(`history: run ${run}: ${JSON.stringify(marks)}`)
        timings.push(marks.ready)
      } finally {
        await page.close()
      }
    }
    const best = Math.min(...timings)
    console.log(
      `history: six 30-day tiles (43,200 entries each), window read and drawn ${timings
        .map((t) => `${Math.round(t)} ms`)
        .join(", ")} after navigation (best ${Math.round(best)} ms; target 1,500 ms)`
    )
    // A generous bound for a loaded machine; the figure is printed above.
    expect(best).toBeLessThan(6_000)

    const traffic = await dashboard("Traffic", [
      { streamName: "a", title: "Requests per minute", x: 0, y: 0, w: 8, h: 2, options: { range: 30 * day } },
      { streamName: "c", title: "Sign-ups", x: 8, y: 0, w: 4, h: 1, options: { range: 30 * day } },
      { streamName: "f", title: "Queue depth", x: 8, y: 1, w: 4, h: 1, options: { range: 30 * day } }
    ])
    const page = await suite.watch.context.newPage()
    try {
      await page.setViewportSize({ width: 1280, height: 400 })
      await page.goto(`${suite.server.baseUrl}${traffic}?range=30d`)
      await shown(page, ["a", "c", "f"])
      expect(await page.locator(".ds-picker").isVisible()).toBe(true)
      await new Promise((r) => setTimeout(r, 300))
      await page.screenshot({ path: screenshot })
    } finally {
      await page.close()
    }
    expect(suite.watch.errors).toEqual([])
  })
})
