import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser, Page } from "@playwright/test"
import type { Entry, TileModel } from "../src/index.js"
import { widgetTypes } from "../src/WidgetType.js"
import { isolatedPage, launchChromium, until } from "./support/browser.js"
import { entries, tiles as fixtureTiles } from "./support/fixture.js"
import { startPageServer } from "./support/pageServer.js"

/**
 * Legibility (issue 25): every widget type drawn at 1x1 and 2x1 on a 1280x720 screen of an 8-row dashboard (the
 * smallest tiles a wall screen shows) and at 12x8 (the whole screen), with no two text boxes overlapping and no text
 * cut or outside its tile.
 *
 * What counts as text: every non-blank DOM text node of the tile (its box is the text's own layout box, from a
 * Range), and every `<text>` element of the charts' SVG (ECharts draws with its SVG renderer, so its labels are real
 * elements with real boxes; a label ECharts drops for overlapping is not in the SVG). Text wholly hidden by an
 * element that clips its overflow (list rows past the bottom) is not shown, so not checked; text partly clipped is
 * "cut" unless the clipping element ends it with an ellipsis (`text-overflow` or `line-clamp`; then its visible box is
 * the element's). The html
 * tile's markup is a separate document (a sandboxed frame) and is not looked into.
 */

let browser: Browser
beforeAll(async () => {
  browser = await launchChromium()
})
afterAll(async () => {
  await browser?.close()
})

const viewport = { width: 1280, height: 720 }

/** One tile per widget type, of the fixture's streams (their entries come from the fixture). */
const byType = new Map(fixtureTiles.map((t) => [t.type, t]))
const tileOf = (type: (typeof widgetTypes)[number], x: number, y: number, w: number, h: number): TileModel => ({
  ...byType.get(type)!,
  x,
  y,
  w,
  h
})

/** The checks, run in the page: problems found in the tiles `selector` matches, as text. */
const textProblems = (selector: string): Array<string> => {
  // Runs in the page; this package's tests are typed for Node, so the DOM is reached untyped.
  const page = globalThis as any
  const document = page.document
  const getComputedStyle = page.getComputedStyle as (e: unknown) => Record<string, string>
  type Box = { readonly left: number; readonly top: number; readonly right: number; readonly bottom: number }
  const slack = 0.75
  const inside = (r: Box, c: Box) =>
    r.left >= c.left - slack && r.right <= c.right + slack && r.top >= c.top - slack && r.bottom <= c.bottom + slack
  const apart = (r: Box, c: Box) =>
    r.right <= c.left + slack || r.left >= c.right - slack || r.bottom <= c.top + slack || r.top >= c.bottom - slack
  const meet = (r: Box, c: Box): Box => ({
    left: Math.max(r.left, c.left),
    top: Math.max(r.top, c.top),
    right: Math.min(r.right, c.right),
    bottom: Math.min(r.bottom, c.bottom)
  })
  const show = (r: Box) => `[${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.right)},${Math.round(r.bottom)}]`
  const problems: Array<string> = []
  for (const tile of Array.from(document.querySelectorAll(selector) as ArrayLike<any>)) {
    const frame = tile.getBoundingClientRect()
    const name = `${tile.dataset["type"]} ${Math.round(frame.width)}x${Math.round(frame.height)}`
    const boxes: Array<{ text: string; box: Box }> = []
    const walker = document.createTreeWalker(tile, page.NodeFilter.SHOW_TEXT)
    for (let node = walker.nextNode(); node !== null; node = walker.nextNode()) {
      const text = (node.textContent ?? "").trim()
      const host = node.parentElement!
      if (text === "" || host.closest("svg") !== null) continue
      const range = document.createRange()
      range.selectNodeContents(node)
      let box: Box = range.getBoundingClientRect()
      if (box.right - box.left < 0.5 || box.bottom - box.top < 0.5) continue // not displayed
      let hidden = false
      let cut: string | undefined
      for (let a: any = host; a !== null && a !== tile.parentElement; a = a.parentElement) {
        const style = getComputedStyle(a)
        if (style.visibility === "hidden" || Number(style.opacity) === 0) hidden = true
        if (style.overflowX === "visible" && style.overflowY === "visible") continue
        const clip = a.getBoundingClientRect()
        if (!apart(box, clip) || inside(box, clip)) {
          if (!inside(box, clip)) {
            // An ellipsis ends the visible part: one line (text-overflow) or the last line shown (line-clamp).
            const ellipsis = style.textOverflow === "ellipsis" || (style.webkitLineClamp ?? "none") !== "none"
            if (ellipsis && a.contains(host)) box = meet(box, clip)
            else cut ??= `${a.className || a.tagName} ${show(clip)}`
          }
        } else hidden = true // wholly clipped away: not shown
      }
      if (hidden) continue
      if (cut !== undefined) problems.push(`${name}: "${text}" ${show(box)} is cut by ${cut}`)
      else if (!inside(box, frame)) problems.push(`${name}: "${text}" ${show(box)} is outside its tile ${show(frame)}`)
      boxes.push({ text, box })
    }
    for (const element of Array.from(tile.querySelectorAll("svg text") as ArrayLike<any>)) {
      const text = (element.textContent ?? "").trim()
      const box = element.getBoundingClientRect()
      if (text === "" || box.width < 0.5 || box.height < 0.5) continue
      const style = getComputedStyle(element)
      if (style.display === "none" || style.visibility === "hidden" || Number(style.opacity) === 0) continue
      if (!inside(box, frame))
        problems.push(`${name}: chart text "${text}" ${show(box)} is outside its tile ${show(frame)}`)
      boxes.push({ text, box })
    }
    for (let i = 0; i < boxes.length; i++) {
      for (let j = i + 1; j < boxes.length; j++) {
        const [a, b] = [boxes[i]!, boxes[j]!]
        if (!apart(a.box, b.box))
          problems.push(`${name}: "${a.text}" ${show(a.box)} overlaps "${b.text}" ${show(b.box)}`)
      }
    }
  }
  return problems
}

const drawn = (n: number) => `document.querySelectorAll('.ds-tile[data-state="data"]').length === ${n}`

/** Serves `tiles` with the fixture's entries, opens the page at 1280x720, waits until `n` tiles are drawn. */
const openLayout = async (
  tiles: ReadonlyArray<TileModel>,
  n: number,
  more: (origin: string) => Record<string, ReadonlyArray<Entry>> = () => ({})
) => {
  const server = await startPageServer({ name: "Legibility", tiles, theme: "dark" })
  server.snapshot = { ...entries(server.origin), ...more(server.origin) }
  const watch = await isolatedPage(browser, server.origin, { viewport })
  await watch.page.goto(server.url)
  await until(watch.page, drawn(n), 15_000)
  // Maps draw once their outline has loaded; charts lay out on the next frame.
  for (const map of ["world-map", "usa-map"]) {
    if (tiles.some((t) => t.type === map)) {
      await until(watch.page, `document.querySelectorAll('.ds-type-${map} svg path').length > 40`, 15_000)
    }
  }
  await settle(watch.page)
  return {
    page: watch.page,
    errors: watch.errors,
    close: async () => {
      await watch.context.close()
      await server.close()
    }
  }
}

const settle = async (page: Page) => {
  await page.evaluate(
    () =>
      new Promise((r) => (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(r)))
  )
  await new Promise((r) => setTimeout(r, 300))
}

describe("legibility: every widget type at 1x1, 2x1 and 12x8 on a 1280x720 screen", () => {
  it("1x1 and 2x1 tiles of an 8-row dashboard: no text overlaps, none is cut or outside its tile", async () => {
    // Rows 0-1: one 1x1 tile per type; rows 2-5: one 2x1 tile per type (6 a row); a label at row 7 makes 8 rows.
    const small = widgetTypes.map((type, i) => tileOf(type, i % 12, Math.floor(i / 12), 1, 1))
    const wide = widgetTypes.map((type, i) => tileOf(type, (i % 6) * 2, 2 + Math.floor(i / 6), 2, 1))
    const filler = tileOf("label", 0, 7, 1, 1)
    const view = await openLayout([...small, ...wide, filler], 41)
    try {
      const rows = await view.page
        .locator(".ds-tile")
        .first()
        .evaluate((e) => (e as any).offsetHeight as number)
      assert.isBelow(rows, 90, "an 8-row grid on a 720-pixel screen")
      await view.page.screenshot({ path: "/tmp/tiles-shots/small.png" })
      const problems = await view.page.evaluate(textProblems, ".ds-tile")
      assert.deepStrictEqual(problems, [], problems.join("\n"))
      assert.deepStrictEqual(view.errors, [])
    } finally {
      await view.close()
    }
  })

  for (const type of widgetTypes) {
    it(`12x8: ${type}`, async () => {
      const view = await openLayout([tileOf(type, 0, 0, 12, 8)], 1)
      try {
        await view.page.screenshot({ path: `/tmp/tiles-shots/large-${type}.png` })
        const problems = await view.page.evaluate(textProblems, ".ds-tile")
        assert.deepStrictEqual(problems, [])
        assert.deepStrictEqual(view.errors, [])
      } finally {
        await view.close()
      }
    })
  }
})

/** Long texts everywhere a pushed string or a title shows (issue 25: long names are ellipsised, never cut). */
const long = (origin: string): Record<string, ReadonlyArray<Entry>> => {
  const t0 = 1_700_000_000
  const name = (i: number) =>
    `${["Northern", "Southern", "Eastern", "Western"][i % 4]} region sales team number ${i + 1}`
  const named = Array.from({ length: 6 }, (_, i) => ({ name: name(i), value: 1_234_567 * (6 - i), prefix: "$" }))
  return {
    revenue: [
      { ts: t0, point: { number: 987_654_321.5, prefix: "$", suffix: " per annum" } },
      { ts: t0 + 1, point: { number: 1_234_567_890.12, prefix: "$", suffix: " per annum" } }
    ],
    cpu: [{ ts: t0, point: { number: 123_456_789, suffix: " requests" } }],
    queue: [{ ts: t0, point: { number: 98_765_432.1, prefix: "£" } }],
    satisfaction: [{ ts: t0, point: { number: 123_456_789.25, suffix: " points" } }],
    status: [
      { ts: t0, point: { label: "All systems go, except the payment gateway in the eu-west-1 region since 10:02" } }
    ],
    "top-sellers": [{ ts: t0, point: { leaderboard: named } }],
    browsers: [{ ts: t0, point: { leaderboard: named } }],
    regions: [{ ts: t0, point: { chart: named.map(({ name, value }) => ({ name, value })) } }],
    todo: [{ ts: t0, point: { list: named.map((n) => ({ listItem: `${n.name} is on call until next Tuesday` })) } }],
    incidents: [
      {
        ts: t0,
        point: {
          table: [
            ["Service name", "Current status", "Since when"],
            ...named.map((n) => [n.name, "Degraded performance in several zones", "2026-11-26 10:02:00 UTC"])
          ]
        }
      }
    ],
    deploys: named.map((n, i) => ({
      ts: t0 + i,
      point: {
        title: n.name,
        msg: `${n.name} rolled out version 12.4.${i} to every region`,
        imgUrl: `${origin}/img/d${i}.svg`
      }
    })),
    team: [
      {
        ts: t0,
        point: {
          title: "The whole team at the offsite in Lisbon, 2025",
          msg: "Photo by the events team",
          imgUrl: `${origin}/img/team.svg`
        }
      }
    ],
    quarters: [
      {
        ts: t0,
        point: {
          matrix: [
            ["", ...named.slice(0, 3).map((n) => n.name)],
            ...["First quarter of the year", "Second quarter", "Third quarter", "Fourth quarter"].map((q, i) => [
              q,
              i + 1,
              i + 2,
              i + 3
            ])
          ]
        }
      }
    ]
  }
}

describe("legibility with long texts", () => {
  it("long values, names, titles and cells at 1x1, 2x1 and 4x2: ellipsised or shrunk, never overlapping or cut", async () => {
    const longTitle = (t: TileModel): TileModel => ({
      ...t,
      title: `${t.title ?? t.streamName} for the whole company, this week`
    })
    const small = widgetTypes.map((type, i) => longTitle(tileOf(type, i % 12, Math.floor(i / 12), 1, 1)))
    const wide = widgetTypes.map((type, i) => longTitle(tileOf(type, (i % 6) * 2, 2 + Math.floor(i / 6), 2, 1)))
    const filler = tileOf("label", 0, 7, 1, 1)
    const view = await openLayout([...small, ...wide, filler], 41, long)
    try {
      await view.page.screenshot({ path: "/tmp/tiles-shots/long-small.png" })
      const problems = await view.page.evaluate(textProblems, ".ds-tile")
      assert.deepStrictEqual(problems, [], problems.join("\n"))
      // Titles too long for their tile end with an ellipsis (the whole title is the element's tooltip).
      const title = view.page.locator(".ds-tile-title").first()
      assert.isTrue(await title.evaluate((e) => (e as any).scrollWidth > (e as any).clientWidth))
      assert.include((await title.getAttribute("title")) ?? "", "for the whole company")
    } finally {
      await view.close()
    }
    const medium = widgetTypes.map((type, i) => tileOf(type, (i % 3) * 4, Math.floor(i / 3) * 2, 4, 2))
    const four = await openLayout(medium.slice(0, 12), 12, long)
    try {
      await four.page.screenshot({ path: "/tmp/tiles-shots/long-medium.png" })
      const problems = await four.page.evaluate(textProblems, ".ds-tile")
      assert.deepStrictEqual(problems, [], problems.join("\n"))
    } finally {
      await four.close()
    }
  })

  it("a picture that fails to load shows a placeholder, not the browser's broken image", async () => {
    const view = await openLayout([tileOf("image", 0, 0, 4, 4), tileOf("gallery", 4, 0, 4, 4)], 2, (origin) => ({
      "chart-of-the-day": [{ ts: 1, point: { imgUrl: `${origin}/missing.png` } }],
      team: [{ ts: 1, point: { title: "Offsite", imgUrl: `${origin}/also-missing.png` } }]
    }))
    try {
      await until(view.page, `document.querySelectorAll('.ds-broken-image').length === 2`, 5_000)
      assert.strictEqual(await view.page.locator(".ds-tile img").count(), 0)
      const box = await view.page.locator(".ds-type-image .ds-broken-image").boundingBox()
      assert.isAbove(box?.height ?? 0, 50, "the placeholder fills the tile")
      assert.strictEqual(await view.page.locator(".ds-type-image .ds-broken-image").getAttribute("role"), "img")
      // The only console errors are the two failed loads themselves.
      assert.deepStrictEqual(
        view.errors.filter((e) => !/status of 404/.test(e)),
        []
      )
    } finally {
      await view.close()
    }
  })
})
