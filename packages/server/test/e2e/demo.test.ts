/**
 * `serve --demo` (docs/api.md section 8.5) as a process: the first start makes the account "demo", its widgets and the
 * dashboard "Demo" and prints the dashboard's view link beside the console link; the page answers, entries arrive
 * live on its event stream; a restart keeps the one demo account and prints the same link (a share link).
 * Under `serve --workers N` one process feeds the demo.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Api, backends, type Database, type RunningServer, startServer, suiteName, testWorkers } from "./harness.js"
import { entriesOf, openEvents } from "./sse.js"

const demoLine = /^Demo dashboard: (http:\/\/127\.0\.0\.1:\d+)(\/d\/dv_[\w-]+)( \(a new link.*\))?$/m

/** Waits (up to 5 s) until the server's standard output matches `pattern`: lines after the listening line come later. */
const printed = async (server: RunningServer, pattern: RegExp): Promise<void> => {
  for (let i = 0; i < 50 && !pattern.test(server.stdout()); i++) await new Promise((r) => setTimeout(r, 100))
  expect(server.stdout()).toMatch(pattern)
}

const hint = /Besides the demo, the database has no accounts yet/

/** The view path `serve --demo` printed, and whether it said the link is new. */
const printedDemo = async (server: RunningServer): Promise<{ path: string; renewed: boolean }> => {
  await printed(server, demoLine)
  const match = demoLine.exec(server.stdout())
  expect(match, `stdout:\n${server.stdout()}`).not.toBeNull()
  expect(match![1]).toBe(server.baseUrl)
  return { path: match![2]!, renewed: match![3] !== undefined }
}

const demoAccounts = async (api: Api) => {
  const r = await api.admin("GET", "/admin/accounts")
  expect(r.status, r.text).toBe(200)
  return (r.json.accounts as Array<{ id: string; name: string }>).filter((a) => a.name === "demo")
}

for (const backend of backends) {
  describe(suiteName("serve --demo", backend), { timeout: 120_000 }, () => {
    let db: Database
    let server: RunningServer | undefined

    beforeAll(async () => {
      db = await backend.database()
      server = await startServer(db.url, { extraArgs: ["--demo"] })
    }, 180_000)

    afterAll(async () => {
      try {
        await server?.stop()
      } finally {
        await db?.drop()
      }
    })

    it("first start: prints the demo's view link after the console line; the page answers; entries arrive live", async () => {
      const api = new Api(server!.baseUrl)
      const { path, renewed } = await printedDemo(server!)
      expect(renewed).toBe(false)
      const lines = server!.stdout().split("\n")
      const consoleAt = lines.findIndex((l) => l.startsWith("Console: "))
      const demoAt = lines.findIndex((l) => l.startsWith("Demo dashboard: "))
      expect(consoleAt, server!.stdout()).toBeGreaterThan(0)
      expect(demoAt).toBe(consoleAt + 1)
      // The operator has no account of their own yet: the hint is still printed.
      await printed(server!, hint)

      const page = await api.fetch(path)
      expect(page.status).toBe(200)
      expect(page.headers.get("content-type")).toMatch(/^text\/html/)

      const [account] = await demoAccounts(api)
      expect(account).toBeDefined()
      const widgets = await api.admin("GET", `/admin/accounts/${account!.id}/widgets`)
      const types = new Set((widgets.json.widgets as Array<{ type: string }>).map((w) => w.type))
      expect(types.size).toBeGreaterThanOrEqual(12)
      const dashboards = await api.admin("GET", `/admin/accounts/${account!.id}/dashboards`)
      const demo = (dashboards.json.dashboards as Array<{ name: string; tiles: Array<unknown> }>).filter(
        (d) => d.name === "Demo"
      )
      expect(demo).toHaveLength(1)
      expect(demo[0]!.tiles).toHaveLength(12)

      const events = await openEvents(server!.baseUrl, `${path}/events`)
      try {
        expect(events.status).toBe(200)
        await events.until("a snapshot", () => events.events.some((e) => e.event === "snapshot"), 10_000)
        const before = entriesOf(events.events).length
        // Entries pushed after the page opened: the feed runs every few seconds.
        await events.until("live entries", () => entriesOf(events.events).length >= before + 10, 10_000)
      } finally {
        events.close()
      }
      // One process feeds the demo, also under --workers N.
      expect(server!.output().match(/demo: pushing to 12 widgets/g), server!.output()).toHaveLength(1)
      if (testWorkers > 1) expect(server!.output()).toContain(`serving with ${testWorkers} worker processes`)
    })

    it("a restart keeps the one demo account and prints the same link, which still works", async () => {
      const before = await printedDemo(server!)
      const api = new Api(server!.baseUrl)
      const [account] = await demoAccounts(api)
      const exit = await server!.stop()
      expect(exit.killed).toBe(false)
      server = await startServer(db.url, { extraArgs: ["--demo"] })
      const api2 = new Api(server.baseUrl)
      const after = await printedDemo(server)
      expect(after.renewed).toBe(false)
      expect(after.path).toBe(before.path)
      const accounts = await demoAccounts(api2)
      expect(accounts.map((a) => a.id)).toEqual([account!.id])
      const dashboards = await api2.admin("GET", `/admin/accounts/${account!.id}/dashboards`)
      expect((dashboards.json.dashboards as Array<{ name: string }>).filter((d) => d.name === "Demo")).toHaveLength(1)
      expect((await api2.fetch(after.path)).status).toBe(200)
      // The demo is the only account: the hint is printed again.
      await printed(server, hint)
    })
  })
}
