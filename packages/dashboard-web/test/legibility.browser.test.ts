import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser } from "@playwright/test"
import type { Entry, TileModel } from "../src/index.js"
import { widgetTypes } from "../src/WidgetType.js"
import { screenshotFile } from "../../../test/screenshots.js"
import { launchChromium, until } from "./support/browser.js"
import { tiles as fixtureTiles } from "./support/fixture.js"
import { openTiles, textProblems } from "./support/legibility.js"

/**
 * Legibility: every widget type drawn at 1x1 and 2x1 on a 1280x720 screen of an 8-row dashboard (the
 * smallest tiles a wall screen shows) and at 12x8 (the whole screen), with no two text boxes overlapping and no text
 * cut or outside its tile (what counts as text: `support/textProblems.ts`).
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

/** Serves `tiles` with the fixture's entries, opens the page at 1280x720, waits until `n` tiles are drawn. */
const openLayout = (
  tiles: ReadonlyArray<TileModel>,
  n: number,
  more: (origin: string) => Record<string, ReadonlyArray<Entry>> = () => ({})
) => openTiles(browser, tiles, n, { viewport, more })

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
      await view.page.screenshot({ path: screenshotFile("small.png") })
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
        await view.page.screenshot({ path: screenshotFile(`large-${type}.png`) })
        const problems = await view.page.evaluate(textProblems, ".ds-tile")
        assert.deepStrictEqual(problems, [])
        assert.deepStrictEqual(view.errors, [])
      } finally {
        await view.close()
      }
    })
  }
})

/** Long texts everywhere a pushed string or a title shows (long names are ellipsised, never cut). */
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
      await view.page.screenshot({ path: screenshotFile("long-small.png") })
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
      await four.page.screenshot({ path: screenshotFile("long-medium.png") })
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
