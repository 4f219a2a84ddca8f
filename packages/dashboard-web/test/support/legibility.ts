import type { Browser, Page } from "@playwright/test"
import type { Entry, TileModel } from "../../src/index.js"
import { isolatedPage, until } from "./browser.js"
import { entries } from "./fixture.js"
import { startPageServer } from "./pageServer.js"

/**
 * The legibility checks of the page's tiles, run in the browser (shared by the legibility and wall-screen tests).
 *
 * What counts as text: every non-blank DOM text node of the tile (its box is the text's own layout box, from a
 * Range), and every `<text>` element of the charts' SVG (ECharts draws with its SVG renderer, so its labels are real
 * elements with real boxes; a label ECharts drops for overlapping is not in the SVG). Text wholly hidden by an
 * element that clips its overflow (list rows past the bottom) is not shown, so not checked; text partly clipped is
 * "cut" unless the clipping element ends it with an ellipsis (`text-overflow` or `line-clamp`; then its visible box is
 * the element's). The html tile's markup is a separate document (a sandboxed frame) and is not looked into.
 */

/** The checks, run in the page: problems found in the tiles `selector` matches, as text. */
export const textProblems = (selector: string): Array<string> => {
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

/** Waits two animation frames and 300 ms: charts lay out on the next frame. */
export const settle = async (page: Page) => {
  await page.evaluate(
    () =>
      new Promise((r) => (globalThis as any).requestAnimationFrame(() => (globalThis as any).requestAnimationFrame(r)))
  )
  await new Promise((r) => setTimeout(r, 300))
}

const drawn = (n: number) => `document.querySelectorAll('.ds-tile[data-state="data"]').length === ${n}`

/**
 * Serves `tiles` with the fixture's entries (and `more`), opens the page at `viewport`, waits until `n` tiles are
 * drawn, maps included, and the charts have laid out. `now` is the server's time the snapshot says (seconds).
 */
export const openTiles = async (
  browser: Browser,
  tiles: ReadonlyArray<TileModel>,
  n: number,
  options: {
    readonly viewport: { readonly width: number; readonly height: number }
    readonly more?: (origin: string) => Record<string, ReadonlyArray<Entry>>
    readonly now?: number
  }
) => {
  const server = await startPageServer({ name: "Legibility", tiles, theme: "dark" })
  server.snapshot = { ...entries(server.origin), ...options.more?.(server.origin) }
  server.now = options.now
  const watch = await isolatedPage(browser, server.origin, { viewport: options.viewport })
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
