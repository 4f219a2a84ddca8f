/**
 * Writes the README's pictures of the dashboard page: `docs/wall.png` (a 1920x1080 wall screen) and `docs/phone.png`
 * (a 390x844 phone, tiles stacked), of the 20-tile fixture dashboard (`test/support/fixture.ts`) served by the test
 * page server and drawn by Debian's Chromium. Run by `pnpm docs:screenshots`, never by the tests; needs the built
 * bundle (`pnpm install` builds it).
 */
import { fileURLToPath } from "node:url"
import { isolatedPage, launchChromium, until } from "../test/support/browser.js"
import { entries, tiles } from "../test/support/fixture.js"
import { startPageServer } from "../test/support/pageServer.js"

const docs = (name: string) => fileURLToPath(new URL(`../../../docs/${name}`, import.meta.url))

const shots = [
  { file: "wall.png", viewport: { width: 1920, height: 1080 } },
  { file: "phone.png", viewport: { width: 390, height: 844 } }
] as const

const browser = await launchChromium()
const server = await startPageServer({ name: "Operations", tiles, theme: "dark" })
server.snapshot = entries(server.origin)
try {
  for (const shot of shots) {
    const watch = await isolatedPage(browser, server.origin, { viewport: shot.viewport })
    await watch.page.goto(server.url)
    await until(
      watch.page,
      `document.querySelectorAll('.ds-tile[data-state="data"]').length === ${tiles.length}`,
      15_000
    )
    await until(watch.page, `document.querySelectorAll('.ds-type-world-map svg path').length > 40`, 15_000)
    await watch.page.waitForTimeout(500)
    await watch.page.screenshot({ path: docs(shot.file) })
    console.log(`wrote docs/${shot.file} (${shot.viewport.width}x${shot.viewport.height})`)
    await watch.context.close()
  }
} finally {
  await server.close()
  await browser.close()
}
