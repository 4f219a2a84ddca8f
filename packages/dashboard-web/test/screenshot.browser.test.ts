import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Browser } from "@playwright/test"
import { mkdirSync, statSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { isolatedPage, launchChromium, until } from "./support/browser.js"
import { entries, tiles } from "./support/fixture.js"
import { startPageServer, type PageServer } from "./support/pageServer.js"

/** The README's screenshot: the 20-tile dashboard at 1920x1080, dark theme, written to `docs/dashboard.png`. */
const target = fileURLToPath(new URL("../../../docs/dashboard.png", import.meta.url))

describe("screenshot", () => {
  let browser: Browser
  let server: PageServer
  beforeAll(async () => {
    browser = await launchChromium()
    server = await startPageServer({ name: "Acme operations", tiles, theme: "dark" })
    server.snapshot = entries(server.origin)
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("of all 20 widget types at 1920x1080 to docs/dashboard.png", async () => {
    const watch = await isolatedPage(browser, server.origin)
    await watch.page.goto(server.url)
    const markers = (s: string) =>
      `document.querySelectorAll('.ds-tile[data-stream="${s}"] svg path[d^="M1 0A1 1"]').length === 5`
    await until(
      watch.page,
      `document.querySelectorAll('.ds-tile[data-state="data"]').length === 20 && ${markers("stores")} && ${markers("visitors")} && [...document.images].every((i) => i.complete)`,
      10_000
    )
    await watch.page.waitForTimeout(300)
    mkdirSync(fileURLToPath(new URL("../../../docs/", import.meta.url)), { recursive: true })
    await watch.page.screenshot({ path: target })
    assert.isAbove(statSync(target).size, 50_000)
    assert.deepStrictEqual(watch.errors, [])
    await watch.context.close()
  })
})
