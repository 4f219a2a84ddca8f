/**
 * The setup every browser test file of the server shares: a fresh SQLite database, the real `dashstream serve` on it
 * (`harness.ts`'s {@link startServer}), an account with the file's widgets, Debian's Chromium through Playwright and
 * one isolated page, all made before the file's tests and closed after them (the page, the browser, the server, the
 * database, in that order). A file's own `beforeAll` runs after this one (vitest runs `beforeAll` hooks in the order
 * they are declared, `afterAll` hooks in the reverse order), so it can push data and make dashboards.
 */
import type { Browser, Page } from "@playwright/test"
import { isolatedPage, launchChromium, type PageWatch, until } from "@dashstream/dashboard-web/testing"
import { afterAll, beforeAll, expect } from "vitest"
import {
  type Account,
  Api,
  type Database,
  defaultAdminToken,
  type RunningServer,
  type ServeOptions,
  sqliteDatabase,
  startServer,
  type WidgetType
} from "./harness.js"

/** The options of {@link isolatedPage}: the window's size, other origins the page may reach. */
export type PageOptions = NonNullable<Parameters<typeof isolatedPage>[2]>

/** What a browser test file asks of {@link useBrowserSuite}. */
export interface BrowserSuiteOptions {
  /** The server's options (extra `serve` flags, admin token); a function when they are known only at start. */
  readonly serve?: ServeOptions | (() => ServeOptions | Promise<ServeOptions>)
  /** An account to make (by name, or named by {@link Api.createAccount}), with its widgets (stream name to type). */
  readonly account?: { readonly name?: string; readonly widgets?: Readonly<Record<string, WidgetType>> }
  /** The page to open on the server's origin ({@link isolatedPage}); `false` for none (the file opens its own). */
  readonly page?: PageOptions | (() => PageOptions) | false
  /** Whether the page signs in to the console ({@link signInToConsole}) once it is open. */
  readonly signIn?: boolean
}

/** The running parts of a browser test file, available from its own `beforeAll` on. */
export interface BrowserSuite {
  readonly db: Database
  readonly server: RunningServer
  /** The admin and push API of {@link server}, with the default admin token. */
  readonly api: Api
  readonly browser: Browser
  /** The page's watch (its console errors and foreign requests); fails without a page. */
  readonly watch: PageWatch
  readonly page: Page
  /** The account made with the file's widgets; fails without one. */
  readonly account: Account
  /** Pushes `point` to a stream of the account; expects 200. */
  readonly push: (streamName: string, point: unknown) => Promise<void>
  /** Makes a dashboard of the account (`POST /admin/accounts/<id>/dashboards`, 201 expected); returns its JSON. */
  readonly createDashboard: (
    name: string,
    tiles?: ReadonlyArray<Record<string, unknown>>
  ) => Promise<Record<string, unknown> & { readonly id: string; readonly url: string }>
  /**
   * Stops the server, runs `whileStopped` (what the page does without it), then starts it again on the same database
   * with the same options (a new `api`).
   */
  readonly restart: (whileStopped?: () => Promise<void>) => Promise<void>
}

/**
 * Declares the shared `beforeAll` and `afterAll` of a browser test file (see the module note) and returns its parts,
 * read through getters once `beforeAll` has run (a part read before, or one not asked for, throws).
 */
export const useBrowserSuite = (options: BrowserSuiteOptions = {}): BrowserSuite => {
  let db: Database | undefined
  let server: RunningServer | undefined
  let api: Api | undefined
  let browser: Browser | undefined
  let watch: PageWatch | undefined
  let account: Account | undefined
  let serveOptions: ServeOptions = {}
  const need = <A>(a: A | undefined, what: string): A => {
    if (a === undefined) throw new Error(`${what} not started (beforeAll failed, or not asked for)`)
    return a
  }
  const start = async () => {
    server = await startServer(need(db, "database").url, serveOptions)
    api = new Api(server.baseUrl)
  }

  beforeAll(async () => {
    serveOptions = typeof options.serve === "function" ? await options.serve() : (options.serve ?? {})
    db = await sqliteDatabase()
    await start()
    if (options.account !== undefined) {
      account = await api!.createAccount(options.account.name)
      for (const [stream, type] of Object.entries(options.account.widgets ?? {})) {
        await api!.createWidget(account.id, stream, type)
      }
    }
    browser = await launchChromium()
    if (options.page !== false) {
      const page = typeof options.page === "function" ? options.page() : options.page
      watch = await isolatedPage(browser, server!.baseUrl, page)
      if (options.signIn === true) await signInToConsole(watch.page, server!.baseUrl)
    }
  }, 180_000)

  afterAll(async () => {
    await watch?.context.close()
    await browser?.close()
    await server?.stop()
    await db?.drop()
  })

  const suite: BrowserSuite = {
    get db() {
      return need(db, "database")
    },
    get server() {
      return need(server, "server")
    },
    get api() {
      return need(api, "server")
    },
    get browser() {
      return need(browser, "browser")
    },
    get watch() {
      return need(watch, "page")
    },
    get page() {
      return need(watch, "page").page
    },
    get account() {
      return need(account, "account")
    },
    push: async (streamName, point) => {
      const r = await suite.api.pushPoint(suite.account.accessKey, streamName, point)
      expect(r.status, r.text).toBe(200)
    },
    createDashboard: async (name, tiles) => {
      const r = await suite.api.admin("POST", `/admin/accounts/${suite.account.id}/dashboards`, {
        name,
        ...(tiles === undefined ? {} : { tiles })
      })
      expect(r.status, r.text).toBe(201)
      return r.json
    },
    restart: async (whileStopped) => {
      await need(server, "server").stop()
      await whileStopped?.()
      await start()
    }
  }
  return suite
}

/**
 * An isolated page ({@link isolatedPage}) on `origin` whose clock (`Date`, `Date.now()`) runs `offsetMs` milliseconds
 * off the machine's, as a wall screen's clock that is minutes fast (positive) or slow (negative). Close it with
 * `watch.context.close()`.
 */
export const skewedClockPage = async (
  browser: Browser,
  origin: string,
  offsetMs: number,
  options: PageOptions = {}
): Promise<PageWatch> => {
  const watch = await isolatedPage(browser, origin, options)
  await watch.context.addInitScript((offset: number) => {
    const RealDate = Date
    class SkewedDate extends RealDate {
      constructor(...args: Array<unknown>) {
        if (args.length === 0) super(RealDate.now() + offset)
        else super(...(args as [string]))
      }
      static override now() {
        return RealDate.now() + offset
      }
    }
    globalThis.Date = SkewedDate as DateConstructor
  }, offsetMs)
  return watch
}

/** The CSS selector of the view page's tile of a stream. */
export const tileSel = (stream: string): string => `.ds-tile[data-stream="${stream}"]`

/** The page-side expression of the first element `selector` finds (`document.querySelector(...)`). */
export const q = (selector: string): string => `document.querySelector(${JSON.stringify(selector)})`

/**
 * The page's console errors but for Chromium's line for each answer of one of `statuses` to a `fetch` (it logs every
 * non-2xx answer, such as the 401 of the console's session check before sign-in, or the 400 of a body the test has
 * the server refuse).
 */
export const unexpectedErrors = (watch: PageWatch, statuses: ReadonlyArray<number>): Array<string> => {
  const expected = new RegExp(
    `^console: Failed to load resource: the server responded with a status of (${statuses.join("|")}) `
  )
  return watch.errors.filter((e) => !expected.test(e))
}

/** The trimmed text of the first element `selector` finds on `page` (`""` when it has none). */
export const text = async (page: Page, selector: string): Promise<string> =>
  ((await page.locator(selector).first().textContent()) ?? "").trim()

/**
 * Opens `<baseUrl>/console` on `page`, waits for its sign-in form and signs in with the admin token the harness's
 * servers are started with (docs/api.md section 7); resolves once the console says it is signed in.
 */
export const signInToConsole = async (page: Page, baseUrl: string): Promise<void> => {
  await page.goto(`${baseUrl}/console`)
  await until(page, `document.querySelector(".cw-app")?.dataset.auth === "signed-out"`, 10_000)
  await page.fill('input[name="token"]', defaultAdminToken)
  await page.click('button[type="submit"]')
  await until(page, `document.querySelector(".cw-app")?.dataset.auth === "signed-in"`, 5_000)
}
