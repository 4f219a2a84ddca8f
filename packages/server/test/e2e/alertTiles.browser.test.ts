/**
 * Firing alert rules on the view page end to end (docs/api.md sections 11.5 and 18): a real `dashstream serve` on
 * SQLite, rules stored through the storage while it runs (as the CLI stores them), and Debian's Chromium on the view
 * link. A push crossing two rules of one stream outlines its tile in the alert colour with both rules' names within 2
 * seconds; the resolution takes them away; a rule that is only pending (its `for` not yet over) shows nothing.
 */
import type { Page } from "@playwright/test"
import { until } from "@dashstream/dashboard-web/testing"
import { beforeAll, describe, expect, it } from "vitest"
import { addRules } from "./alertSupport.js"
import { tileSel, useBrowserSuite } from "./browserHarness.js"

/** A tile's `data-firing` (the names the page shows), or `null`. */
const firingOf = (page: Page, stream: string) =>
  page.locator(tileSel(stream)).evaluate((e) => ((e as any).dataset["firing"] as string | undefined) ?? null)
/** What the tile draws: its outline and the text at its foot (a pseudo-element showing the names). */
const drawnOf = (page: Page, stream: string) =>
  page.locator(tileSel(stream)).evaluate((e) => {
    // Runs in the page: its `getComputedStyle`.
    const computed = (globalThis as any).getComputedStyle
    const style = computed(e)
    return {
      outline: `${style.outlineStyle} ${style.outlineWidth} ${style.outlineColor}` as string,
      label: computed(e, "::after").content as string
    }
  })
const firingIs = (stream: string, names: string | null) =>
  `(document.querySelector('${tileSel(stream)}')?.dataset.firing ?? null) === ${JSON.stringify(names)}`

describe("firing alert rules on the view page against a real server", { timeout: 180_000 }, () => {
  const suite = useBrowserSuite({
    account: { widgets: { cpu: "number", disk: "number" } },
    page: { viewport: { width: 1280, height: 720 } }
  })
  const { push } = suite
  let view: string

  beforeAll(async () => {
    const created = await suite.createDashboard("Ops", [
      { streamName: "cpu", title: "CPU", x: 0, y: 0, w: 6, h: 2 },
      { streamName: "disk", title: "Disk", x: 6, y: 0, w: 6, h: 2 }
    ])
    view = created.url
    await addRules(suite.db.url, suite.account, [
      { name: "CPU hot", stream: "cpu", condition: { above: 90 } },
      { name: "CPU very hot", stream: "cpu", condition: { above: 95 } },
      { name: "Disk full for an hour", stream: "disk", condition: { above: 50 }, for: 3_600 }
    ])
  })

  it("a crossing push names its firing rules on the tile within 2 s; the resolution takes them away", async () => {
    const { page } = suite
    await page.goto(suite.server.baseUrl + view)
    await until(page, `document.documentElement.dataset.connection === 'live'`, 20_000)
    await until(page, `!!document.querySelector('${tileSel("cpu")}')`, 20_000)
    expect(await firingOf(page, "cpu")).toBeNull()
    const quiet = await drawnOf(page, "cpu")

    // Rules stored a moment ago reach the server's engine within a second.
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const t0 = Date.now()
    await push("cpu", 97)
    await until(page, firingIs("cpu", "CPU hot \u00b7 CPU very hot"), 2_000)
    console.log(`a firing rule's name on its tile ${Date.now() - t0} ms after the crossing push's answer`)
    const firing = await drawnOf(page, "cpu")
    expect(firing.outline).toMatch(/^solid 3px rgb/)
    expect(firing.outline).not.toBe(quiet.outline)
    expect(firing.label).toContain("CPU hot \u00b7 CPU very hot")
    // The alert colour has a light-theme form of its own.
    const dark = firing.outline
    await page.evaluate(`document.documentElement.dataset.theme = "light"`)
    expect((await drawnOf(page, "cpu")).outline).not.toBe(dark)
    await page.evaluate(`delete document.documentElement.dataset.theme`)

    // One rule resolves, then the other.
    await push("cpu", 93)
    await until(page, firingIs("cpu", "CPU hot"), 2_000)
    await push("cpu", 10)
    await until(page, firingIs("cpu", null), 2_000)
    expect((await drawnOf(page, "cpu")).outline).toBe(quiet.outline)
    expect(suite.watch.errors).toEqual([])
  })

  it("a pending rule (its for not yet over) shows nothing; a reloaded page shows the firing ones at once", async () => {
    const { page } = suite
    await push("disk", 80)
    await push("cpu", 92)
    // Long enough for a firing rule to have shown (see above), and for a reload to bring a snapshot.
    await new Promise((resolve) => setTimeout(resolve, 2_000))
    expect(await firingOf(page, "disk")).toBeNull()
    await page.reload()
    await until(page, `document.documentElement.dataset.connection === 'live'`, 20_000)
    await until(page, `!!document.querySelector('${tileSel("disk")}')`, 20_000)
    // From the snapshot: no event comes after it (nothing changes).
    await until(page, firingIs("cpu", "CPU hot"), 2_000)
    expect(await firingOf(page, "disk")).toBeNull()
    expect(suite.watch.errors).toEqual([])
  })
})
