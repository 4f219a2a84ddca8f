/**
 * The process as a whole: restart persistence, the command line (docs/api.md section 8) against the same database
 * as a running server, the admin API being off without a token (section 7), and `--rate-limit` (section 5).
 */
import { describe, expect, it } from "vitest"
import {
  Api,
  backends,
  type CliResult,
  expectError,
  expectSuccess,
  pool,
  runCli,
  startServer,
  suiteName,
  useServer
} from "./harness.js"

/** An error from the CLI: the exit code, and one clear sentence on stderr (no stack trace). */
const expectCliError = (r: CliResult, codes: ReadonlyArray<number>): void => {
  expect(codes, `exit ${r.code}; stderr: ${r.stderr}`).toContain(r.code)
  const err = r.stderr.trim()
  expect(err.length).toBeGreaterThan(0)
  expect(err.split("\n").length, err).toBeLessThanOrEqual(2)
  expect(err).not.toMatch(/\n\s+at |node_modules/)
}

for (const backend of backends) {
  describe(suiteName("lifecycle", backend), () => {
    const ctx = useServer(backend)

    it("prints the listening line first on stdout when bound, then (fresh database) the first-start hint", async () => {
      const { server } = ctx
      await new Promise((r) => setTimeout(r, 500))
      const lines = server
        .stdout()
        .split("\n")
        .filter((l) => l.trim() !== "")
      // docs/api.md section 8 leaves the wording open; the listening line must come first so scripts can read the port.
      expect(lines[0], `stdout:\n${server.stdout()}`).toBe(`Dashstream listening on ${server.baseUrl}`)
      expect(lines.filter((l) => l.startsWith("Dashstream listening on"))).toHaveLength(1)
      expect(server.stdout()).toContain("accounts create")
    })

    it("restart persistence: SIGTERM exits cleanly, and every stored entry reads back after a restart", async () => {
      const { api } = ctx
      const account = await api.setup({
        n: "number",
        spark: "sparkline",
        feed: "text-feed",
        lb: "leaderboard",
        tbl: "table",
        map: "usa-map",
        lst: "list"
      })
      const key = account.accessKey
      for (let i = 0; i < 5; i++) expectSuccess(await api.pushPoint(key, "n", { delta: 2, prefix: "$" }))
      expectSuccess(
        await api.pushPoint(key, "spark", [
          { number: 1.5, timestamp: 1_700_000_000.123456 },
          { number: 2, timestamp: 1_700_000_001 }
        ])
      )
      expectSuccess(await api.pushPoint(key, "feed", [{ title: "é", msg: "✓", imgUrl: "https://x.example/a" }]))
      expectSuccess(await api.pushPoint(key, "lb", { leaderboard: [{ name: "a", value: 1 }] }))
      expectSuccess(await api.pushPoint(key, "lb", { leaderboardItem: { name: "b", value: 2 } }))
      expectSuccess(await api.pushPoint(key, "tbl", { table: [["h"], [1]] }))
      expectSuccess(await api.pushPoint(key, "tbl", { tableRow: [2] }))
      expectSuccess(await api.pushPoint(key, "map", { latitude: 1, longitude: 2, color: "green" }))
      expectSuccess(await api.pushPoint(key, "lst", { listItem: "x" }))
      const streams = ["n", "spark", "feed", "lb", "tbl", "map", "lst"]
      const before = await Promise.all(streams.map((s) => api.entries(key, s)))
      const maxTs = Math.max(...before.flat().map((e) => e.ts))

      const exit = await ctx.restart()
      expect(exit.killed, "server had to be SIGKILLed").toBe(false)
      expect(exit.code === 0 || exit.signal === "SIGTERM", `exit ${exit.code} ${exit.signal}`).toBe(true)

      const api2 = ctx.api
      expect(api2.baseUrl).not.toBe("")
      expect(await Promise.all(streams.map((s) => api2.entries(key, s)))).toEqual(before)
      // State carries on: deltas from the stored number, and new ts after the old ones.
      expectSuccess(await api2.pushPoint(key, "n", { delta: 1 }))
      const n = await api2.entries(key, "n", "")
      expect(n[0]!.point).toEqual({ number: 11, prefix: "$" })
      expect(n[0]!.ts).toBeGreaterThan(maxTs)
      expectSuccess(await api2.pushPoint(key, "lst", { listItem: "y" }))
      expect(await api2.latest(key, "lst")).toEqual({ list: [{ listItem: "y" }, { listItem: "x" }] })
      // Accounts and widgets persist too.
      const widgets = await api2.admin("GET", `/admin/accounts/${account.id}/widgets`)
      expect(widgets.json.widgets).toHaveLength(streams.length)
    }, 240_000)

    it("a 200 means durably stored: data survives SIGKILL right after the reply", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number", feed: "text-feed" })
      for (let i = 0; i < 20; i++) expectSuccess(await api.pushPoint(accessKey, "n", { delta: 1 }))
      expectSuccess(
        await api.push({
          accessKey,
          streams: [
            {
              streamName: "feed",
              point: [
                { title: "a", msg: "1" },
                { title: "b", msg: "2" }
              ]
            },
            { streamName: "n", point: { delta: 1 } }
          ]
        })
      )
      const before = [await api.entries(accessKey, "n"), await api.entries(accessKey, "feed")]
      const exit = await ctx.restart("SIGKILL")
      expect(exit.signal).toBe("SIGKILL")
      expect([await ctx.api.entries(accessKey, "n"), await ctx.api.entries(accessKey, "feed")]).toEqual(before)
      expect(await ctx.api.latest(accessKey, "n")).toEqual({ number: 21 })
    }, 240_000)

    describe("command line on the same database as the running server", () => {
      it("accounts create --json, widgets create, widgets list: the server sees them", async () => {
        const { api, db } = ctx
        const created = await runCli(["accounts", "create", "--name", "cli-account", "--json", "--db", db.url])
        expect(created.code, created.stderr).toBe(0)
        const account = JSON.parse(created.stdout.trim()) as { id: unknown; name: string; accessKey: string }
        expect(Object.keys(account).sort()).toEqual(["accessKey", "id", "name"])
        expect(account.name).toBe("cli-account")
        api.keys.push(account.accessKey)
        for (const [stream, type] of [
          ["cli-number", "number"],
          ["cli feed", "text-feed"]
        ]) {
          const w = await runCli([
            "widgets",
            "create",
            "--access-key",
            account.accessKey,
            "--stream",
            stream!,
            "--type",
            type!,
            "--db",
            db.url
          ])
          expect(w.code, w.stderr).toBe(0)
        }
        expectSuccess(await api.pushPoint(account.accessKey, "cli-number", 5))
        expectSuccess(await api.pushPoint(account.accessKey, "cli feed", { title: "T", msg: "M" }))
        expect(await api.latest(account.accessKey, "cli-number")).toEqual({ number: 5 })

        const list = await runCli(["widgets", "list", "--access-key", account.accessKey, "--json", "--db", db.url])
        expect(list.code, list.stderr).toBe(0)
        expect(list.stdout).toContain("cli-number")
        expect(list.stdout).toContain("cli feed")
        expect(list.stdout).toContain("text-feed")
        // The key is shown only at creation: not in the widget list.
        expect(list.stdout).not.toContain(account.accessKey)
      })

      it("DASHSTREAM_DB sets the database like --db", async () => {
        const { api, db } = ctx
        const created = await runCli(["accounts", "create", "--json"], { DASHSTREAM_DB: db.url })
        expect(created.code, created.stderr).toBe(0)
        const { accessKey } = JSON.parse(created.stdout.trim()) as { accessKey: string }
        api.keys.push(accessKey)
        const w = await runCli(["widgets", "create", "--access-key", accessKey, "--stream", "e", "--type", "label"], {
          DASHSTREAM_DB: db.url
        })
        expect(w.code, w.stderr).toBe(0)
        expectSuccess(await api.pushPoint(accessKey, "e", { label: "env" }))
      })

      it("migrate is a no-op on an up-to-date database", async () => {
        const { db } = ctx
        const r = await runCli(["migrate", "--db", db.url])
        expect(r.code, r.stderr).toBe(0)
      })

      it("errors: exit 2 for usage errors, non-zero with one sentence on stderr otherwise", async () => {
        const { api, db } = ctx
        const { accessKey } = await api.setup({ taken: "number" })
        const cases: Array<[ReadonlyArray<string>, ReadonlyArray<number>]> = [
          [["no-such-command", "--db", db.url], [2]],
          [["serve", "--port", "not-a-port", "--db", db.url], [2]],
          [["widgets", "create", "--stream", "s", "--type", "number", "--db", db.url], [2]],
          [["accounts", "create", "--db", "mysql://nope"], [2]],
          [
            ["widgets", "create", "--access-key", accessKey, "--stream", "s", "--type", "gauge", "--db", db.url],
            [1, 2]
          ],
          [
            ["widgets", "create", "--access-key", "unknown-key", "--stream", "s", "--type", "number", "--db", db.url],
            [1, 2]
          ],
          [
            ["widgets", "create", "--access-key", accessKey, "--stream", "taken", "--type", "number", "--db", db.url],
            [1, 2]
          ]
        ]
        const results = await pool(
          3,
          cases.map(
            ([args]) =>
              () =>
                runCli(args)
          )
        )
        results.forEach((r, i) => expectCliError(r, cases[i]![1]))
      }, 120_000)
    })

    it("with --no-admin the admin API is off (404); pushes still work", async () => {
      const db = await backend.database()
      try {
        const migrated = await runCli(["migrate", "--db", db.url])
        expect(migrated.code, migrated.stderr).toBe(0)
        const created = await runCli(["accounts", "create", "--json", "--db", db.url])
        expect(created.code, created.stderr).toBe(0)
        const { accessKey } = JSON.parse(created.stdout.trim()) as { accessKey: string }
        const w = await runCli([
          "widgets",
          "create",
          "--access-key",
          accessKey,
          "--stream",
          "s",
          "--type",
          "number",
          "--db",
          db.url
        ])
        expect(w.code, w.stderr).toBe(0)
        const server = await startServer(db.url, { adminToken: null, extraArgs: ["--no-admin"] })
        try {
          const api = new Api(server.baseUrl, "")
          for (const token of [null, "", "anything"]) {
            const r = await api.admin("POST", "/admin/accounts", { name: "x" }, token)
            expect([r.status, r.json?.error?.code], r.text).toEqual([404, "not_found"])
          }
          expectSuccess(await api.pushPoint(accessKey, "s", 1))
          expect(await api.latest(accessKey, "s")).toEqual({ number: 1 })
        } finally {
          await server.stop()
        }
      } finally {
        await db.drop()
      }
    }, 240_000)

    it("--rate-limit N: N per second per key with bursts of N, then 429 rate_limited with Retry-After", async () => {
      const db = await backend.database()
      const server = await startServer(db.url, { extraArgs: ["--rate-limit", "5"] })
      try {
        const api = new Api(server.baseUrl)
        const a = await api.setup({ s: "number" })
        const b = await api.setup({ s: "number" })
        const replies = await Promise.all(
          Array.from({ length: 20 }, () => api.pushPoint(a.accessKey, "s", { delta: 1 }))
        )
        const ok = replies.filter((r) => r.status === 200).length
        const limited = replies.filter((r) => r.status === 429)
        expect(ok + limited.length, replies.map((r) => r.status).join(",")).toBe(20)
        expect(ok).toBeGreaterThanOrEqual(5)
        expect(ok).toBeLessThan(20)
        for (const r of limited) {
          expectError(r, 429, "rate_limited")
          expect(r.headers.get("retry-after") ?? "").toMatch(/^\d+$/)
          expect(Number(r.headers.get("retry-after"))).toBeGreaterThanOrEqual(1)
        }
        // Rejected pushes stored nothing. (The reads below also count against the key, so wait first.)
        await new Promise((r) => setTimeout(r, 1_500))
        const stored = await api.entries(a.accessKey, "s")
        expect(stored).toHaveLength(ok)
        expect(stored[stored.length - 1]!.point).toEqual({ number: ok })
        // Another key has its own budget.
        for (let i = 0; i < 5; i++) expectSuccess(await api.pushPoint(b.accessKey, "s", i))
        // Reads count against the key too.
        await new Promise((r) => setTimeout(r, 1_500))
        const reads = await Promise.all(Array.from({ length: 20 }, () => api.read(a.accessKey, "s")))
        expect(reads.some((r) => r.status === 429)).toBe(true)
        // After Retry-After, the key works again.
        const retry = Number(reads.find((r) => r.status === 429)?.headers.get("retry-after") ?? "1")
        await new Promise((r) => setTimeout(r, retry * 1000 + 500))
        expectSuccess(await api.pushPoint(a.accessKey, "s", { delta: 1 }))
      } finally {
        await server.stop()
        await db.drop()
      }
    }, 240_000)
  })
}
