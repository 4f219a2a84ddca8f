import { chromium, type Browser, type BrowserContext, type Page } from "@playwright/test"
import { chromiumPath } from "./globalSetup.js"

/**
 * Browser helpers for tests of the dashboard page (this package's component tests, and the server's end-to-end
 * tests): Debian's Chromium driven by Playwright as a library, never a downloaded browser.
 */

/** The Chromium flags the tests use: headless, no sandbox (CI runs as root), no background traffic. */
export const chromiumArgs: ReadonlyArray<string> = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync"
]

/** Launches `/usr/bin/chromium` (installed by this package's vitest global setup when missing). */
export const launchChromium = (): Promise<Browser> => {
  process.env["PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD"] = "1"
  return chromium.launch({ executablePath: chromiumPath, args: [...chromiumArgs], headless: true })
}

/** What {@link isolatedPage} records while the page runs. */
export interface PageWatch {
  readonly context: BrowserContext
  readonly page: Page
  /** Console messages of type `error` and uncaught page errors, as text. */
  readonly errors: Array<string>
  /** Every request the page tried to make to an origin other than `origin` (each was aborted). */
  readonly foreignRequests: Array<string>
}

/**
 * A fresh context and page in which every request to another origin than `origin` is aborted and recorded, and
 * console errors and page errors are collected. Close it with `watch.context.close()`.
 */
export const isolatedPage = async (
  browser: Browser,
  origin: string,
  options: {
    readonly viewport?: { readonly width: number; readonly height: number }
    /** Other origins the page may reach (pushed image URLs), besides `origin`. */
    readonly alsoAllow?: ReadonlyArray<string>
  } = {}
): Promise<PageWatch> => {
  const allowed = [origin, ...(options.alsoAllow ?? [])]
  const context = await browser.newContext({ viewport: options.viewport ?? { width: 1920, height: 1080 } })
  const errors: Array<string> = []
  const foreignRequests: Array<string> = []
  await context.route("**/*", (route) => {
    const url = route.request().url()
    if (allowed.some((o) => url.startsWith(`${o}/`) || url === o)) return route.continue()
    foreignRequests.push(url)
    return route.abort("blockedbyclient")
  })
  const page = await context.newPage()
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(`console: ${message.text()}`)
  })
  page.on("pageerror", (error) => errors.push(`pageerror: ${error.message}`))
  return { context, page, errors, foreignRequests }
}

/**
 * Waits until the JS expression `expr` is true in the page, polling every 20 ms through the DevTools protocol.
 * (Playwright's `waitForFunction` polls with `new Function`, which the dashboard page's CSP rightly forbids.)
 */
export const until = async (page: Page, expr: string, timeoutMs: number): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if ((await page.evaluate(expr).catch(() => false)) === true) return
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${expr}`)
    await new Promise((r) => setTimeout(r, 20))
  }
}
