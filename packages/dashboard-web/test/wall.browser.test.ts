import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser, Page } from "@playwright/test"
import type { TileModel, WidgetType } from "../src/index.js"
import { screenshotFile } from "../../../test/screenshots.js"
import { launchChromium, until } from "./support/browser.js"
import { tiles as fixtureTiles } from "./support/fixture.js"
import { openTiles, textProblems } from "./support/legibility.js"

/**
 * The page on a wall screen and on a phone (docs/live-and-dashboards.md, Dashboards): text grows with its tile,
 * titles read as the stream is named, pies say what their slices are, no chart label overlaps another or is cut,
 * tiles stack on a phone in on-screen order, and stale ages follow the server's clock, not the screen's.
 */

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

const wall = { width: 1920, height: 1080 }
const phone = { width: 390, height: 844 }

const byType = new Map(fixtureTiles.map((t) => [t.type, t]))
const tileOf = (type: WidgetType, x: number, y: number, w: number, h: number): TileModel => ({
  ...byType.get(type)!,
  x,
  y,
  w,
  h
})

/** The computed font size in pixels of the first element `selector` matches. */
const fontSize = (page: Page, selector: string): Promise<number> =>
  page
    .locator(selector)
    .first()
    .evaluate((e) => parseFloat((globalThis as any).getComputedStyle(e).fontSize))

describe("a wall screen, 1920x1080", () => {
  it("text grows with its tile: a 4x3 leaderboard's names at 36 px or more, titles at 20 px or more", async () => {
    const tiles = [
      tileOf("leaderboard", 0, 0, 4, 3),
      tileOf("list", 4, 0, 4, 3),
      tileOf("text-feed", 8, 0, 4, 3),
      tileOf("number", 0, 3, 4, 3),
      tileOf("line-graph", 4, 3, 4, 3),
      tileOf("table", 8, 3, 4, 3)
    ]
    const view = await openTiles(browser, tiles, 6, { viewport: wall })
    try {
      await view.page.screenshot({ path: screenshotFile("wall-text.png") })
      assert.isAtLeast(await fontSize(view.page, ".ds-type-leaderboard .ds-tile-body .ds-name"), 36)
      for (const title of await view.page.locator(".ds-tile-title").all()) {
        const size = await title.evaluate((e) => parseFloat((globalThis as any).getComputedStyle(e).fontSize))
        assert.isAtLeast(size, 20, (await title.textContent()) ?? "")
      }
      assert.isAtLeast(await fontSize(view.page, ".ds-list li"), 30)
      assert.isAtLeast(await fontSize(view.page, ".ds-feed-title"), 24)
      assert.isAtLeast(await fontSize(view.page, ".ds-big-number"), 100)
      assert.isAtLeast(await fontSize(view.page, ".ds-line-value"), 40)
      assert.isAtLeast(await fontSize(view.page, ".ds-table td"), 24)
      const problems = await view.page.evaluate(textProblems, ".ds-tile")
      assert.deepStrictEqual(problems, [], problems.join("\n"))
      assert.deepStrictEqual(view.errors, [])
    } finally {
      await view.close()
    }
  })

  it("a big number fills a tall tile (past the 150 px it once stopped at)", async () => {
    const view = await openTiles(browser, [tileOf("number", 0, 0, 12, 8)], 1, { viewport: wall })
    try {
      assert.isAtLeast(await fontSize(view.page, ".ds-big-number"), 300)
    } finally {
      await view.close()
    }
  })

  it("titles are shown as written; a line-protocol stream's title names its tag values", async () => {
    const lineProtocol = "cpu.usage_idle{cpu=cpu-total,host=web1}"
    const tiles: ReadonlyArray<TileModel> = [
      tileOf("number", 0, 0, 4, 2),
      { streamName: lineProtocol, type: "number", x: 4, y: 0, w: 4, h: 2, deleted: false }
    ]
    const view = await openTiles(browser, tiles, 2, {
      viewport: wall,
      more: () => ({ [lineProtocol]: [{ ts: 1_700_000_000, point: { number: 97.5 } }] })
    })
    try {
      const titles = view.page.locator(".ds-tile-title")
      assert.strictEqual(await titles.nth(0).textContent(), "Revenue today")
      assert.strictEqual(
        await titles.nth(0).evaluate((e) => (globalThis as any).getComputedStyle(e).textTransform),
        "none"
      )
      assert.strictEqual(await titles.nth(1).textContent(), "cpu.usage_idle (cpu-total, web1)")
      assert.strictEqual(await titles.nth(1).getAttribute("title"), lineProtocol)
    } finally {
      await view.close()
    }
  })

  it("a pie labels its slices, or names them in a legend when too small for labels", async () => {
    const tiles = [tileOf("pie-chart", 0, 0, 4, 3), { ...tileOf("pie-chart", 4, 0, 2, 1), streamName: "regions" }]
    const view = await openTiles(browser, [...tiles, tileOf("label", 0, 5, 1, 1)], 3, { viewport: wall })
    try {
      const chartTexts = (n: number) =>
        view.page.locator(".ds-type-pie-chart").nth(n).locator("svg text").allTextContents()
      const big = (await chartTexts(0)).join(" ")
      for (const name of ["Chrome", "Safari", "Firefox", "Edge"]) assert.include(big, name)
      const small = (await chartTexts(1)).join(" ")
      for (const name of ["AMER", "EMEA", "APAC"]) assert.include(small, name)
      const problems = await view.page.evaluate(textProblems, ".ds-type-pie-chart")
      assert.deepStrictEqual(problems, [], problems.join("\n"))
    } finally {
      await view.close()
    }
  })
})

/**
 * Page-side: for each label of each pie on the page, how far its box is from the pie's centre, less the pie's outer
 * radius (the slices' box), in pixels (negative when the label lies over the ring), and whether it is inside the
 * chart (not cut at its edge).
 */
const pieLabelClearances = `(() => [...document.querySelectorAll(".ds-type-pie-chart")].flatMap((tile) => {
  const slices = [...tile.querySelectorAll("svg path")].filter((p) => /A/i.test(p.getAttribute("d") ?? ""))
  const boxes = slices.map((p) => p.getBoundingClientRect())
  const left = Math.min(...boxes.map((b) => b.left)), right = Math.max(...boxes.map((b) => b.right))
  const top = Math.min(...boxes.map((b) => b.top)), bottom = Math.max(...boxes.map((b) => b.bottom))
  const cx = (left + right) / 2, cy = (top + bottom) / 2, radius = (right - left) / 2
  return [...tile.querySelectorAll("svg text")].map((text) => {
    const b = text.getBoundingClientRect()
    const x = Math.max(b.left, Math.min(cx, b.right)), y = Math.max(b.top, Math.min(cy, b.bottom))
    const svg = text.ownerSVGElement.getBoundingClientRect()
    const inside = b.left >= svg.left && b.right <= svg.right && b.top >= svg.top && b.bottom <= svg.bottom
    return { text: text.textContent, clearance: Math.round(Math.hypot(x - cx, y - cy) - radius), inside }
  })
}))()`

const charts: ReadonlyArray<WidgetType> = ["line-graph", "bar-chart", "multi-bar-graph", "xy-graph", "pie-chart"]

describe("pie labels clear of the ring", () => {
  it("a slice at the bottom of a pie on a wall keeps its two-line label off the ring, none cut at the edge", async () => {
    // Clockwise from the top: 40 % to 144 degrees, then the 20 % slice centred on the bottom (180 degrees).
    const point = {
      leaderboard: [
        { name: "Search", value: 40 },
        { name: "Direct", value: 20 },
        { name: "Social", value: 30 },
        { name: "Email", value: 10 }
      ]
    }
    const pie = { ...tileOf("pie-chart", 3, 2, 3, 3), streamName: "sources" }
    // And a 2x2 pie of a 6-row dashboard, as tall as it is wide: its labels beside the ring, not cut at the tile's edge.
    const square = tileOf("pie-chart", 8, 2, 2, 2)
    const view = await openTiles(browser, [pie, square, tileOf("label", 0, 5, 1, 1)], 3, {
      viewport: wall,
      more: () => ({ sources: [{ ts: 1_700_000_000, point }] })
    })
    try {
      const labels = (await view.page.evaluate(pieLabelClearances)) as Array<{
        text: string
        clearance: number
        inside: boolean
      }>
      assert.includeMembers(
        labels.map((l) => l.text),
        ["Search", "Direct", "Social", "Email"]
      )
      const over = labels.filter((l) => !(l.clearance >= 0) || !l.inside)
      assert.deepStrictEqual(over, [], JSON.stringify(labels))
      const problems = await view.page.evaluate(textProblems, ".ds-tile")
      assert.deepStrictEqual(problems, [], problems.join("\n"))
    } finally {
      await view.close()
    }
  })
})

describe("chart labels never overlap nor are cut", () => {
  for (const [w, h] of [
    [1, 1],
    [2, 1],
    [2, 2],
    [3, 2]
  ] as const) {
    it(`${w}x${h} charts of an 8-row dashboard at 1920x1080`, async () => {
      // As many to a row as fit the 12 columns, the rest on the rows below: every chart on the grid.
      const perRow = Math.floor(12 / w)
      const tiles = charts.map((type, i) => tileOf(type, (i % perRow) * w, Math.floor(i / perRow) * h, w, h))
      const view = await openTiles(browser, [...tiles, tileOf("label", 11, 7, 1, 1)], charts.length + 1, {
        viewport: wall
      })
      try {
        await view.page.screenshot({ path: screenshotFile(`wall-charts-${w}x${h}.png`) })
        const problems = await view.page.evaluate(textProblems, ".ds-tile")
        assert.deepStrictEqual(problems, [], problems.join("\n"))
        const labels = (await view.page.evaluate(pieLabelClearances)) as Array<{ clearance: number }>
        assert.deepStrictEqual(
          labels.filter((l) => !(l.clearance >= 0)),
          [],
          "a pie's text over its ring"
        )
      } finally {
        await view.close()
      }
    })
  }

  it("a time label at the very start of the axis clears the lowest value label beside it", async () => {
    // The demo's 4x2 line graph of a 7-row wall, its hour starting on a labelled minute (16:30), or just before it.
    const line = { ...tileOf("line-graph", 5, 0, 4, 2), streamName: "users" }
    for (const offset of [0, -5, -30]) {
      const from = 1_764_979_200 + 16 * 3600 + 1800 + offset
      const users = Array.from({ length: 61 }, (_, i) => ({
        ts: from + i * 60,
        point: { number: Math.round(900 + 400 * Math.sin(i / 3)) }
      }))
      const view = await openTiles(browser, [line, tileOf("label", 0, 6, 1, 1)], 2, {
        viewport: wall,
        more: () => ({ users }),
        now: from + 3600
      })
      try {
        const problems = await view.page.evaluate(textProblems, ".ds-tile")
        assert.deepStrictEqual(problems, [], `${offset} s: ${problems.join("\n")}`)
      } finally {
        await view.close()
      }
    }
  })

  it("charts on a 390x844 phone", async () => {
    const tiles = charts.map((type, i) => tileOf(type, (i % 3) * 4, Math.floor(i / 3) * 2, 4, 2))
    const view = await openTiles(browser, tiles, charts.length, { viewport: phone })
    try {
      const problems = await view.page.evaluate(textProblems, ".ds-tile")
      assert.deepStrictEqual(problems, [], problems.join("\n"))
    } finally {
      await view.close()
    }
  })
})

describe("a phone, 390x844", () => {
  it("tiles stack in on-screen order (by row, then column), whatever the saved order", async () => {
    const tiles = [
      tileOf("label", 8, 2, 4, 2),
      tileOf("number", 4, 0, 4, 2),
      tileOf("list", 0, 2, 8, 2),
      tileOf("sparkline", 0, 0, 4, 2),
      tileOf("leaderboard", 8, 0, 4, 2)
    ]
    const view = await openTiles(browser, tiles, 5, { viewport: phone })
    try {
      const order = await view.page.locator(".ds-tile").evaluateAll((all) =>
        all
          .map((e) => ({
            type: (e as any).dataset["type"] as string,
            y: (e as any).getBoundingClientRect().top as number
          }))
          .sort((a, b) => a.y - b.y)
          .map((t) => t.type)
      )
      assert.deepStrictEqual(order, ["sparkline", "number", "leaderboard", "list", "label"])
    } finally {
      await view.close()
    }
  })
})

describe("stale ages by the server's clock", () => {
  const stale = { ...tileOf("number", 0, 0, 4, 2), options: { staleAfter: 60 } }
  /** Opens a stale-after-60-s tile whose entry is `age` seconds old by a server whose clock is `ahead` s ahead. */
  const openAged = (age: number, ahead: number) => {
    const serverNow = Date.now() / 1000 + ahead
    return openTiles(browser, [stale], 1, {
      viewport: wall,
      more: () => ({ revenue: [{ ts: serverNow - age, point: { number: 5 } }] }),
      now: serverNow
    })
  }

  it("a screen 10 minutes fast does not call a 30-second-old entry stale", async () => {
    const view = await openAged(30, -600)
    try {
      assert.strictEqual(await view.page.locator(".ds-tile").getAttribute("data-stale"), null)
    } finally {
      await view.close()
    }
  })

  it("a screen 10 minutes slow says a 10.5-minute-old entry is 10 min old", async () => {
    const view = await openAged(630, 600)
    try {
      await until(view.page, `document.querySelector('.ds-tile').dataset.stale === "true"`, 5_000)
      assert.strictEqual(await view.page.locator(".ds-stale").textContent(), "No data for 10 min")
    } finally {
      await view.close()
    }
  })
})
