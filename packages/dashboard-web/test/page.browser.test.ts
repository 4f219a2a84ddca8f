import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser, Page } from "@playwright/test"
import { namedColors } from "../src/browser/format.js"
import { onScreenOrder } from "../src/browser/TileData.js"
import { palette } from "../src/browser/views/options.js"
import type { TileModel } from "../src/index.js"
import { isolatedPage, launchChromium, until, type PageWatch } from "./support/browser.js"
import { entries, tiles } from "./support/fixture.js"
import { startPageServer, type PageServer } from "./support/pageServer.js"

/**
 * Component test of the dashboard page in a real browser (Debian's Chromium through Playwright): the page is served
 * by `pageHtml` + `assets()` from a small node:http server whose event stream sends the section-11 events.
 */

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

const tileSel = (stream: string) => `.ds-tile[data-stream="${stream}"]`
const allDrawn = (n: number) => `document.querySelectorAll('.ds-tile[data-state="data"]').length === ${n}`
const q = (selector: string) => `document.querySelector('${selector}')`

/** Opens the page of `server` in an isolated context and waits until `ready` (a JS expression) holds. */
const open = async (server: PageServer, ready: string, query = ""): Promise<PageWatch> => {
  const watch = await isolatedPage(browser, server.origin)
  await watch.page.goto(`${server.url}${query}`)
  await until(watch.page, ready, 10_000)
  return watch
}

const text = async (page: Page, selector: string): Promise<string> =>
  ((await page.locator(selector).first().textContent()) ?? "").trim()
const texts = (page: Page, selector: string): Promise<Array<string>> => page.locator(selector).allTextContents()
const count = (page: Page, selector: string): Promise<number> => page.locator(selector).count()

/** ECharts' SVG renderer draws a circle symbol (scatter, map marker) as this arc path. */
const symbolSel = (stream: string, color: string) => `${tileSel(stream)} svg path[d^="M1 0A1 1 0 1 1"][fill="${color}"]`
const symbols = (stream: string) =>
  `document.querySelectorAll('${tileSel(stream)} svg path[d^="M1 0A1 1 0 1 1"]').length`

describe("the 20-tile dashboard", () => {
  let server: PageServer
  let watch: PageWatch
  beforeAll(async () => {
    server = await startPageServer({ name: "Acme operations", tiles, theme: "dark" })
    server.snapshot = entries(server.origin)
    watch = await open(server, `${allDrawn(20)} && ${symbols("stores")} === 5 && ${symbols("visitors")} === 5`)
  })
  afterAll(async () => {
    await watch?.context.close()
    await server?.close()
  })

  it("every tile shows its data", async () => {
    const { page } = watch
    assert.strictEqual(await text(page, `${tileSel("revenue")} .ds-big-number`), "$1,284.5")
    assert.strictEqual(await text(page, `${tileSel("revenue")} .ds-change`), "\u25b2 +$84.5 (+7.04%)")
    assert.strictEqual(await text(page, `${tileSel("revenue")} .ds-tile-title`), "Revenue today")
    assert.strictEqual(await text(page, `${tileSel("cpu")} .ds-gauge-value`), "72%")
    assert.strictEqual(await page.locator(`${tileSel("cpu")} .ds-gauge-fill`).getAttribute("data-fraction"), "0.7200")
    assert.strictEqual(await text(page, `${tileSel("queue")} .ds-gauge-value`), "340")
    assert.include(await text(page, `${tileSel("satisfaction")} svg`), "87%")
    assert.strictEqual(await text(page, `${tileSel("signups")} .ds-spark-value`), "64.8")
    // One line path per series (the line graph and the sparkline are one series each).
    const line = `path[fill="none"][stroke="${palette[0]}"]`
    assert.strictEqual(await count(page, `${tileSel("requests")} svg ${line}`), 1)
    assert.strictEqual(await count(page, `${tileSel("signups")} svg ${line}`), 1)
    // A map marker per point, in its colour (red when none is given), on a drawn outline.
    for (const [stream, colors] of [
      ["visitors", ["red", "blue", "green", "yellow", "purple"]],
      ["stores", ["blue", "green", "red", "purple", "yellow"]]
    ] as const) {
      for (const c of colors)
        assert.strictEqual(await count(page, symbolSel(stream, namedColors[c])), 1, `${stream} ${c}`)
      assert.isAbove(await count(page, `${tileSel(stream)} svg path`), 40, `${stream} outline`)
    }
    assert.deepStrictEqual(await texts(page, `${tileSel("deploys")} .ds-feed-title`), ["worker", "web", "api"])
    assert.strictEqual(await count(page, `${tileSel("deploys")} img.ds-feed-img`), 3)
    assert.deepStrictEqual(await texts(page, `${tileSel("top-sellers")} .ds-name`), [
      "Ann",
      "Bob",
      "Chloé",
      "Dmitri",
      "Eve"
    ])
    assert.strictEqual(await text(page, `${tileSel("top-sellers")} li .ds-value`), "$1,280")
    // Pie: one slice per row; bars: one bar per row in its colour; multi-bar: one colour per series.
    for (const c of palette.slice(0, 4))
      assert.isAtLeast(await count(page, `${tileSel("browsers")} svg path[fill="${c}"]`), 1)
    for (const c of ["blue", "green", "purple", "yellow"] as const) {
      assert.strictEqual(await count(page, `${tileSel("regions")} svg path[fill="${namedColors[c]}"]`), 1)
    }
    for (const c of palette.slice(0, 3))
      assert.isAtLeast(await count(page, `${tileSel("quarters")} svg path[fill="${c}"]`), 4)
    assert.deepStrictEqual(await texts(page, `${tileSel("todo")} li`), [
      "Ann (primary)",
      "Bob (secondary)",
      "Chloé (manager)"
    ])
    assert.deepStrictEqual(await texts(page, `${tileSel("incidents")} th`), ["Service", "Status", "Since"])
    assert.deepStrictEqual(await texts(page, `${tileSel("incidents")} tbody tr:first-child td`), [
      "Checkout",
      "Degraded",
      "10:02"
    ])
    assert.strictEqual(await count(page, `${tileSel("incidents")} tbody tr`), 4)
    assert.strictEqual(
      await page.locator(`${tileSel("chart-of-the-day")} img`).getAttribute("src"),
      `${server.origin}/img/chart.svg`
    )
    assert.strictEqual(await text(page, `${tileSel("status")} .ds-label`), "All systems go")
    assert.strictEqual(await text(page, `${tileSel("team")} .ds-gallery-title`), "Offsite 2025")
    assert.strictEqual(
      await page.locator(`${tileSel("team")} img`).getAttribute("src"),
      `${server.origin}/img/team.svg`
    )
    assert.strictEqual(await count(page, symbolSel("latency", palette[4]!)), 25)
    const html = page.frameLocator(`${tileSel("notice")} iframe`)
    assert.strictEqual(await html.locator("b").textContent(), "Maintenance")
    // Every picture loaded (the test server serves them, same origin).
    assert.strictEqual(await count(page, "img.ds-broken"), 0)
  })

  it("no console error, no request to another origin, the grid fills 1920x1080 without scrolling", async () => {
    assert.deepStrictEqual(watch.errors, [])
    assert.deepStrictEqual(watch.foreignRequests, [])
    const [scrollH, scrollW] = (await watch.page.evaluate(
      "[document.documentElement.scrollHeight, document.documentElement.scrollWidth]"
    )) as [number, number]
    assert.isAtMost(scrollH, 1080)
    assert.isAtMost(scrollW, 1920)
    const box = await watch.page.locator(tileSel("notice")).boundingBox()
    assert.isAbove(box!.y + box!.height, 1000, "the last row reaches the bottom of the screen")
    const firstRender = (await watch.page.evaluate(
      "performance.getEntriesByName('ds-first-render')[0].startTime"
    )) as number
    console.log(`first render of the 20-tile page: ${Math.round(firstRender)} ms after navigation start`)
    // The target is < 1 s on an idle machine (about 0.6-0.9 s measured, docs/benchmarks.md); the bound here only
    // catches a gross regression, with room for a slow machine busy with the rest of the suite (2,517 ms was seen on
    // one about half as fast as usual, 2026-11-27, when the bound was 2,500).
    assert.isBelow(firstRender, 5000)
  })

  it("an entry appears within 1 s; same ts replaces; clear empties; deleted shows it", async () => {
    const { page } = watch
    const t0 = 1_700_000_000
    const sentAt = Date.now()
    server.send("entry", { streamName: "revenue", ts: t0 + 120, point: { number: 1300, prefix: "$" } })
    await until(page, `${q(`${tileSel("revenue")} .ds-big-number`)}.textContent === "$1,300"`, 1000)
    console.log(`entry visible after ${Date.now() - sentAt} ms`)
    assert.strictEqual(await text(page, `${tileSel("revenue")} .ds-change`), "\u25b2 +$15.5 (+1.21%)")
    server.send("entry", { streamName: "revenue", ts: t0 + 120, point: { number: 1000, prefix: "$" } })
    await until(page, `${q(`${tileSel("revenue")} .ds-change`)}.textContent.startsWith("\u25bc")`, 1000)
    assert.strictEqual(await text(page, `${tileSel("revenue")} .ds-big-number`), "$1,000")

    server.send("entry", {
      streamName: "stores",
      ts: t0 + 10,
      point: { latitude: 29.8, longitude: -95.4, color: "green" }
    })
    await until(page, `${symbols("stores")} === 6`, 1000)
    assert.strictEqual(await count(page, symbolSel("stores", namedColors.green)), 2)
    server.send("entry", { streamName: "status", ts: t0 + 10, point: { label: "Degraded" } })
    await until(page, `${q(`${tileSel("status")} .ds-label`)}.textContent === "Degraded"`, 1000)

    server.send("clear", { streamName: "visitors" })
    await until(page, `${q(tileSel("visitors"))}.dataset.state === "empty"`, 1000)
    assert.strictEqual(await text(page, `${tileSel("visitors")} .ds-placeholder`), "No data yet")
    assert.strictEqual(await count(page, `${tileSel("visitors")} svg`), 0)

    server.send("deleted", { streamName: "todo" })
    await until(page, `${q(tileSel("todo"))}.dataset.state === "deleted"`, 1000)
    assert.strictEqual(await text(page, `${tileSel("todo")} .ds-placeholder`), "stream deleted")
    assert.deepStrictEqual(watch.errors, [])
  })

  it("a dropped connection shows the lost state, then recovers with a fresh snapshot", async () => {
    const { page } = watch
    assert.strictEqual(await page.getAttribute("html", "data-connection"), "live")
    server.snapshot = { ...entries(server.origin), status: [{ ts: 1_700_000_100, point: { label: "Back online" } }] }
    const restarted = server.restart(1500)
    await until(page, `document.documentElement.dataset.connection === "reconnecting"`, 3000)
    assert.include(await text(page, ".ds-status"), "reconnecting")
    await restarted
    await until(page, `document.documentElement.dataset.connection === "live"`, 10_000)
    await until(page, `${q(`${tileSel("status")} .ds-label`)}.textContent === "Back online"`, 2000)
    // The fresh snapshot replaced every tile: the cleared map has its points again.
    await until(page, `${q(tileSel("visitors"))}.dataset.state === "data"`, 2000)
    assert.strictEqual(server.openStreams(), 1)
  })

  it("a widget deleted while the page was away: the fresh snapshot names it deleted and the tile says so", async () => {
    const { page } = watch
    assert.strictEqual(await page.evaluate(`${q(tileSel("deploys"))}.dataset.state`), "data")
    const { deploys: _, ...rest } = entries(server.origin)
    server.snapshot = rest
    server.deleted = ["deploys"]
    await server.restart(300)
    await until(page, `${q(tileSel("deploys"))}.dataset.state === "deleted"`, 10_000)
    assert.strictEqual(await text(page, `${tileSel("deploys")} .ds-placeholder`), "stream deleted")
    // A widget made again with that name: the next snapshot has its entries, and the tile shows them.
    server.snapshot = entries(server.origin)
    server.deleted = []
    await server.restart(300)
    await until(page, `${q(tileSel("deploys"))}.dataset.state === "data"`, 10_000)
    // The restarts' dropped connections are logged by the browser; nothing else is.
    assert.deepStrictEqual(
      watch.errors.filter((e) => !e.startsWith("console: Failed to load resource: net::")),
      []
    )
  })
})

describe("layout changes (docs/api.md section 14)", () => {
  const small: ReadonlyArray<TileModel> = [
    { streamName: "kept", type: "number", x: 0, y: 0, w: 6, h: 1, deleted: false },
    { streamName: "gone", type: "label", x: 6, y: 0, w: 6, h: 1, deleted: false }
  ]

  it("event: layout re-lays the page out without a reload; the next snapshot fills only the new tiles", async () => {
    const server = await startPageServer({ name: "Before", tiles: small, theme: "dark" })
    server.snapshot = {
      kept: [{ ts: 1, point: { number: 41 } }],
      gone: [{ ts: 1, point: { label: "old" } }]
    }
    const watch = await open(server, allDrawn(2))
    const { page } = watch
    await page.evaluate("window.sameDocument = true")
    const before = (await page.locator(tileSel("kept")).boundingBox())!
    server.send("layout", {
      name: "After",
      tiles: [
        { streamName: "kept", title: "Kept, wider", x: 0, y: 0, w: 12, h: 1, type: "number" },
        { streamName: "fresh", x: 0, y: 1, w: 8, h: 2, type: "label" },
        { streamName: "absent", x: 8, y: 1, w: 4, h: 2, type: null }
      ]
    })
    server.send("snapshot", { tiles: { fresh: [{ ts: 2, point: { label: "new tile" } }] }, deleted: ["absent"] })
    await until(page, `${q(`${tileSel("fresh")} .ds-label`)}?.textContent === "new tile"`, 2000)
    assert.strictEqual(await page.evaluate("window.sameDocument"), true)
    assert.strictEqual(await text(page, ".ds-name"), "After")
    assert.strictEqual(await count(page, tileSel("gone")), 0)
    assert.strictEqual(await count(page, ".ds-tile"), 3)
    // The kept tile keeps its data, with its new title and size.
    assert.strictEqual(await text(page, `${tileSel("kept")} .ds-big-number`), "41")
    assert.strictEqual(await text(page, `${tileSel("kept")} .ds-tile-title`), "Kept, wider")
    const after = (await page.locator(tileSel("kept")).boundingBox())!
    assert.isAbove(after.width, before.width * 1.5)
    // A tile with no widget shows "stream deleted".
    assert.strictEqual(await page.getAttribute(tileSel("absent"), "data-state"), "deleted")
    // Live entries reach the new tile; the removed one is gone for good.
    server.send("entry", { streamName: "fresh", ts: 3, point: { label: "live" } })
    await until(page, `${q(`${tileSel("fresh")} .ds-label`)}.textContent === "live"`, 1000)
    server.send("entry", { streamName: "kept", ts: 4, point: { number: 42 } })
    await until(page, `${q(`${tileSel("kept")} .ds-big-number`)}.textContent === "42"`, 1000)
    // A layout with no tiles says so.
    server.send("layout", { name: "Empty", tiles: [] })
    await until(page, `document.querySelectorAll(".ds-tile").length === 0`, 1000)
    assert.strictEqual(await text(page, ".ds-no-tiles"), "This dashboard has no tiles yet.")
    assert.deepStrictEqual(watch.errors, [])
    await watch.context.close()
    await server.close()
  })
})

describe("themes and small screens", () => {
  let server: PageServer
  beforeAll(async () => {
    server = await startPageServer({ name: "Acme", tiles, theme: "dark" })
    server.snapshot = entries(server.origin)
  })
  afterAll(async () => {
    await server?.close()
  })

  it("?theme=light switches to the light theme", async () => {
    const watch = await open(server, allDrawn(20), "?theme=light")
    assert.strictEqual(await watch.page.getAttribute("html", "data-theme"), "light")
    assert.strictEqual(
      await watch.page.evaluate("getComputedStyle(document.body).backgroundColor"),
      "rgb(238, 242, 247)"
    )
    assert.deepStrictEqual(watch.errors, [])
    await watch.context.close()
  })

  it("tiles stack on a narrow screen, in on-screen order", async () => {
    const watch = await isolatedPage(browser, server.origin, { viewport: { width: 600, height: 900 } })
    await watch.page.goto(server.url)
    await until(watch.page, allDrawn(20), 10_000)
    const boxes = await Promise.all(
      onScreenOrder(tiles).map((t) => watch.page.locator(tileSel(t.streamName)).boundingBox())
    )
    for (const b of boxes) {
      assert.strictEqual(Math.round(b!.x), Math.round(boxes[0]!.x))
      assert.isAbove(b!.width, 500)
    }
    for (let i = 1; i < boxes.length; i++) assert.isAbove(boxes[i]!.y, boxes[i - 1]!.y)
    await watch.context.close()
  })
})

describe("hostile content never runs", () => {
  const flag = (n: number) => `window.pwned=${n};try{parent.pwned=${n}}catch(e){};try{top.pwned=${n}}catch(e){}`
  const payloads = [
    `<script>${flag(1)}</script>`,
    `<img src=x onerror="${flag(2)}">`,
    `<a id="js" href="javascript:${flag(3)}">click me</a>`,
    `<svg onload="${flag(4)}"></svg>`,
    `<iframe srcdoc="<script>${flag(5)}</script>"></iframe>`,
    `<b>bold</b>`
  ].join("")
  const hostileTiles: ReadonlyArray<TileModel> = [
    { streamName: "h-html", type: "html", x: 0, y: 0, w: 4, h: 2, deleted: false },
    { streamName: "h-feed", type: "text-feed", x: 4, y: 0, w: 4, h: 2, deleted: false },
    { streamName: "h-label", type: "label", x: 8, y: 0, w: 4, h: 1, deleted: false },
    { streamName: "h-image", type: "image", x: 8, y: 1, w: 4, h: 1, deleted: false },
    { streamName: "h-table", type: "table", x: 0, y: 2, w: 6, h: 2, deleted: false },
    { streamName: "h-list", type: "list", x: 6, y: 2, w: 6, h: 2, title: payloads, deleted: false }
  ]
  const snapshot = {
    "h-html": [{ ts: 1, point: { html: payloads } }],
    "h-feed": [{ ts: 1, point: { title: payloads, msg: payloads, imgUrl: `javascript:${flag(6)}` } }],
    "h-label": [{ ts: 1, point: { label: payloads } }],
    "h-image": [{ ts: 1, point: { imgUrl: `javascript:${flag(7)}` } }],
    "h-table": [
      {
        ts: 1,
        point: {
          table: [
            [payloads, "b"],
            ["<img src=x onerror=window.pwned=8>", payloads]
          ]
        }
      }
    ],
    "h-list": [{ ts: 1, point: { list: [{ listItem: payloads }, { listItem: "<script>window.pwned=9</script>" }] } }]
  }

  it("in html, text feed, label, table and list points (snapshot and live), and in titles", async () => {
    const server = await startPageServer({ name: payloads, tiles: hostileTiles, theme: "dark" })
    server.snapshot = snapshot
    const watch = await open(server, allDrawn(5))
    const { page } = watch
    // Live entries carry the same payloads.
    server.send("entry", { streamName: "h-label", ts: 2, point: { label: `<img src=x onerror="${flag(10)}">` } })
    server.send("entry", { streamName: "h-html", ts: 2, point: { html: payloads + "<p>live</p>" } })
    const frame = page.frameLocator(`${tileSel("h-html")} iframe`)
    // Attached, not visible: on a loaded machine (the full suite in CI) the sandboxed frame's new document was once
    // still unlaid-out (hidden) after 2 s, and once not even attached after 10 s (3-5 s for the whole test alone or
    // beside six busy loops); what this test checks is that the markup arrived and no script ran.
    await frame.locator("p").waitFor({ state: "attached", timeout: 30_000 })
    // The markup is rendered in the sandboxed frame, and its javascript: link does nothing when clicked.
    assert.strictEqual(await frame.locator("b").first().textContent(), "bold")
    await frame
      .locator("#js")
      .click({ timeout: 2000 })
      .catch(() => undefined)
    await page.waitForTimeout(500)
    assert.strictEqual(await page.evaluate("typeof window.pwned"), "undefined")
    assert.strictEqual(await page.locator(`${tileSel("h-html")} iframe`).getAttribute("sandbox"), "")
    // Everywhere else the payload is text.
    assert.strictEqual(await text(page, `${tileSel("h-label")} .ds-label`), `<img src=x onerror="${flag(10)}">`)
    assert.strictEqual(await text(page, `${tileSel("h-feed")} .ds-feed-title`), payloads)
    assert.strictEqual(await count(page, `${tileSel("h-feed")} img`), 0)
    assert.strictEqual(await text(page, `${tileSel("h-table")} th`), payloads)
    assert.strictEqual(await text(page, `${tileSel("h-list")} li`), payloads)
    assert.strictEqual(await text(page, `${tileSel("h-list")} .ds-tile-title`), payloads)
    assert.strictEqual(await text(page, ".ds-name"), payloads)
    assert.strictEqual(await page.locator(tileSel("h-image")).getAttribute("data-state"), "empty")
    // Outside the html frame no element came from the payload.
    assert.strictEqual(
      await count(page, "body script, body svg[onload], body img[onerror], body a[href^='javascript']"),
      0
    )
    assert.strictEqual(await page.evaluate("typeof window.pwned"), "undefined")
    assert.deepStrictEqual(watch.foreignRequests, [])
    await watch.context.close()
    await server.close()
  })
})
