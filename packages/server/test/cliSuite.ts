import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it as base } from "@effect/vitest"
import { cli, postJson, type Result, startServer, stop, tempDir } from "./support.js"

/**
 * What the CLI tests share: the one-sentence error checks and the suite of commands and process lifecycle run
 * against one kind of database (CliSqlite.test.ts, CliPostgres.test.ts: one file each, so that they run in parallel).
 */

/** The last line of stderr is one sentence, and stderr has no other line (no stack trace). */
export const assertOneLineError = (result: Result, pattern: RegExp) => {
  const lines = result.stderr.trimEnd().split("\n")
  assert.strictEqual(lines.length, 1, `expected one line on stderr, got:\n${result.stderr}`)
  assert.match(lines[0]!, /^dashstream: /)
  assert.match(lines[0]!, pattern)
}

export const assertUsageError = (result: Result, pattern: RegExp) => {
  assert.strictEqual(result.code, 2, `exit code; stderr: ${result.stderr}`)
  assert.strictEqual(result.stdout, "")
  assertOneLineError(result, pattern)
}

/**
 * Each case spawns a process that loads effect and the adapters: seconds on a busy machine, so the limits are
 * generous.
 */
export const timeout = 180_000

/** A database for one test group, as a `--db` URL. */
interface TestDatabase {
  readonly url: string
  readonly cleanup: () => Promise<void>
}

/**
 * The commands and the process lifecycle against one kind of database. A database that cannot be made fails every
 * test of the suite.
 */
export const cliSuite = (name: string, makeDatabase: () => Promise<TestDatabase>) =>
  describe(name, { timeout }, () => {
    let database: TestDatabase | undefined
    let db = ""
    beforeAll(async () => {
      database = await makeDatabase()
      db = database?.url ?? ""
    }, timeout)
    afterAll(() => database?.cleanup())
    const it = (title: string, test: () => Promise<void>) =>
      base(title, async () => {
        if (database === undefined) throw new Error("the test database could not be made (see beforeAll)")
        await test()
      })

    const createAccount = async (accountName = "acme") => {
      const result = await cli(["accounts", "create", "--name", accountName, "--json", "--db", db])
      assert.strictEqual(result.code, 0, result.stderr)
      return JSON.parse(result.stdout) as { id: string; name: string; accessKey: string }
    }

    const createWidget = async (accessKey: string, stream: string, type: string) => {
      const created = await cli([
        "widgets",
        "create",
        "--access-key",
        accessKey,
        "--stream",
        stream,
        "--type",
        type,
        "--db",
        db
      ])
      assert.strictEqual(created.code, 0, created.stderr)
    }

    it("migrate twice succeeds", async () => {
      for (let i = 0; i < 2; i++) {
        const result = await cli(["migrate", "--db", db])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.match(result.stdout, /up to date/)
      }
    })

    it("serve on an empty database prints the listening line and the first-start hint, then stops on SIGTERM", async () => {
      const server = await startServer(["--db", db])
      try {
        await server.waitForStdout("accounts create")
        const out = server.stdout()
        assert.match(out, /^Dashstream listening on http:\/\/127\.0\.0\.1:\d+$/m)
        assert.include(out, `pnpm@10.34.9 -s dashstream accounts create --name "My dashboard" --json --db `)
        assert.include(
          out,
          `pnpm@10.34.9 -s dashstream widgets create --access-key "$KEY" --stream revenue --type number`
        )
        // A first run's token is printed only in the Console link, which the hint points to.
        assert.include(out, "Or open the Console link above in a browser.")
        assert.notInclude(out, "/admin/accounts")
        const health = await fetch(`${server.url}/healthz`)
        assert.strictEqual(health.status, 200)
      } finally {
        const started = Date.now()
        const result = await stop(server)
        assert.strictEqual(result.code, 0, result.stderr)
        assert.isBelow(Date.now() - started, 5_000)
      }
    })

    // After the empty-database test above: this one creates an account.
    it("accounts create refuses a name over 200 characters", async () => {
      assertUsageError(
        await cli(["accounts", "create", "--name", "a".repeat(201), "--db", db]),
        /--name: account name must be at most 200 characters/
      )
      assert.strictEqual((await createAccount("é".repeat(200))).name, "é".repeat(200))
    })

    it("accounts create prints the access key; --json prints {id, name, accessKey}", async () => {
      const account = await createAccount("json account")
      assert.deepStrictEqual(Object.keys(account).sort(), ["accessKey", "id", "name"])
      assert.strictEqual(account.name, "json account")
      assert.match(account.accessKey, /^ds_[A-Za-z0-9_-]{43}$/)

      const plain = await cli(["accounts", "create", "--db", db])
      assert.strictEqual(plain.code, 0, plain.stderr)
      assert.match(plain.stdout, /^ds_[A-Za-z0-9_-]{43}$/m)
      assert.strictEqual(plain.stderr, "")
    })

    it("widgets create, then widgets list shows it; a taken stream name exits 1", async () => {
      const { accessKey } = await createAccount()
      for (const [stream, type] of [
        ["revenue", "number"],
        ["signups per day", "line-graph"]
      ] as const) {
        await createWidget(accessKey, stream, type)
      }
      const list = await cli(["widgets", "list", "--access-key", accessKey, "--json", "--db", db])
      assert.strictEqual(list.code, 0, list.stderr)
      const { widgets } = JSON.parse(list.stdout) as {
        widgets: Array<{ streamName: string; type: string; createdAt: string }>
      }
      assert.deepStrictEqual(
        widgets.map((w) => [w.streamName, w.type]),
        [
          ["revenue", "number"],
          ["signups per day", "line-graph"]
        ]
      )
      const table = await cli(["widgets", "list", "--access-key", accessKey, "--db", db])
      assert.strictEqual(table.code, 0)
      assert.match(table.stdout, /^signups per day +line-graph /m)

      const again = await cli([
        "widgets",
        "create",
        "--access-key",
        accessKey,
        "--stream",
        "revenue",
        "--type",
        "dial",
        "--db",
        db
      ])
      assert.strictEqual(again.code, 1)
      assertOneLineError(again, /already has a widget with stream name "revenue"/)
    })

    it("dashboards create prints the view URL path; --layout and --json; dashboards list; a bad stream exits 2", async () => {
      const { accessKey } = await createAccount()
      const dashboards = (...args: ReadonlyArray<string>) =>
        cli(["dashboards", ...args, "--access-key", accessKey, "--db", db])
      for (const [stream, type] of [
        ["revenue", "number"],
        ["visitors", "world-map"]
      ] as const) {
        await createWidget(accessKey, stream, type)
      }
      const plain = await dashboards("create", "--name", "Wall")
      assert.strictEqual(plain.code, 0, plain.stderr)
      assert.match(plain.stdout, /^Created dashboard "Wall" with id [0-9a-f-]{36} and 2 tiles\.$/m)
      const lastLine = plain.stdout.trimEnd().split("\n").at(-1)!
      assert.match(lastLine, /^\/d\/dv_[A-Za-z0-9_-]{43}$/)

      const dir = tempDir()
      try {
        const tiles = [{ streamName: "visitors", title: "Visitors", x: 0, y: 0, w: 12, h: 3 }]
        const file = join(dir.path, "layout.json")
        writeFileSync(file, JSON.stringify({ tiles }))
        const json = await dashboards("create", "--name", "Map", "--layout", file, "--json")
        assert.strictEqual(json.code, 0, json.stderr)
        const created = JSON.parse(json.stdout)
        assert.deepStrictEqual(Object.keys(created).sort(), ["createdAt", "id", "name", "tiles", "url", "viewToken"])
        assert.deepStrictEqual([created.name, created.tiles, created.url], ["Map", tiles, `/d/${created.viewToken}`])

        writeFileSync(file, JSON.stringify([{ streamName: "ghost", x: 0, y: 0, w: 1, h: 1 }]))
        const ghost = await dashboards("create", "--name", "Ghost", "--layout", file)
        assertUsageError(ghost, /tiles\[0\]\.streamName: no widget with stream name "ghost"/)
      } finally {
        dir.remove()
      }

      const list = await dashboards("list", "--json")
      assert.strictEqual(list.code, 0, list.stderr)
      const listed = JSON.parse(list.stdout).dashboards as Array<any>
      assert.deepStrictEqual(
        listed.map((d) => [d.name, d.tiles.length, d.url]),
        [
          ["Wall", 2, lastLine],
          ["Map", 1, `/d/${listed[1].viewToken}`]
        ]
      )
      assert.deepStrictEqual(
        listed[0].tiles.map((t: any) => t.streamName),
        ["revenue", "visitors"]
      )
      const table = await dashboards("list")
      assert.strictEqual(table.code, 0, table.stderr)
      assert.match(table.stdout, /^ID +NAME +TILES +CREATED +VIEW URL$/m)
      assert.match(table.stdout, /^[0-9a-f-]{36} +Map +1 +\d{4}-\S+ +\/d\/dv_[A-Za-z0-9_-]{43}$/m)
      // With --base-url, full URLs; a base URL that is not one is a usage error, before the database is opened.
      const full = await dashboards("list", "--json", "--base-url", "https://dash.example.com/wall/")
      assert.strictEqual(full.code, 0, full.stderr)
      assert.deepStrictEqual(
        (JSON.parse(full.stdout).dashboards as Array<any>).map((d) => d.url),
        listed.map((d) => `https://dash.example.com/wall${d.url}`)
      )
      const fullTable = await dashboards("list", "--base-url", "http://127.0.0.1:8080")
      assert.include(fullTable.stdout, ` http://127.0.0.1:8080${lastLine}\n`)
      assertUsageError(await dashboards("list", "--base-url", "dash.example.com"), /--base-url must be/)
      const rotatedLink = await dashboards("rotate-token", "--id", listed[0].id, "--base-url", "https://d.example")
      assert.strictEqual(rotatedLink.code, 0, rotatedLink.stderr)
      const newLink = rotatedLink.stdout.trimEnd().split("\n").at(-1)!
      assert.match(newLink, /^https:\/\/d\.example\/d\/dv_[A-Za-z0-9_-]{43}$/)
      assert.notInclude(newLink, lastLine)
      const after = await dashboards("list", "--json")
      assert.strictEqual((JSON.parse(after.stdout).dashboards as Array<any>)[0].url, new URL(newLink).pathname)
      const unknown = await cli(["dashboards", "list", "--access-key", "nope", "--db", db])
      assert.strictEqual(unknown.code, 1)
      assertOneLineError(unknown, /access key is unknown/)
    })

    it("rotations create prints the view URL path; list, show, rotate-token and delete; bad flags exit 2", async () => {
      const { accessKey } = await createAccount()
      const rotations = (...args: ReadonlyArray<string>) =>
        cli(["rotations", ...args, "--access-key", accessKey, "--db", db])
      await createWidget(accessKey, "revenue", "number")
      const ids: Array<string> = []
      for (const name of ["A", "B"]) {
        const made = await cli([
          "dashboards",
          "create",
          "--name",
          name,
          "--json",
          "--access-key",
          accessKey,
          "--db",
          db
        ])
        assert.strictEqual(made.code, 0, made.stderr)
        ids.push(JSON.parse(made.stdout).id)
      }
      const [a, b] = ids as [string, string]

      const plain = await rotations("create", "--name", "Wall", "--dashboards", `${a},${b}`, "--interval", "30")
      assert.strictEqual(plain.code, 0, plain.stderr)
      assert.match(plain.stdout, /^Created rotation "Wall" with id [0-9a-f-]{36}: 2 dashboards, 30 s each\.$/m)
      const url = plain.stdout.trimEnd().split("\n").at(-1)!
      assert.match(url, /^\/r\/dv_[A-Za-z0-9_-]{43}$/)
      const id = /with id ([0-9a-f-]{36})/.exec(plain.stdout)![1]!

      const json = await rotations("create", "--name", "Empty", "--interval", "3600", "--json")
      assert.strictEqual(json.code, 0, json.stderr)
      const empty = JSON.parse(json.stdout)
      assert.deepStrictEqual(Object.keys(empty).sort(), [
        "createdAt",
        "dashboardIds",
        "id",
        "intervalSeconds",
        "name",
        "url",
        "viewToken"
      ])
      assert.deepStrictEqual(
        [empty.name, empty.dashboardIds, empty.intervalSeconds, empty.url],
        ["Empty", [], 3600, `/r/${empty.viewToken}`]
      )

      // Bad flags: the rule's message with the flag; nothing stored.
      assertUsageError(
        await rotations("create", "--name", "x", "--interval", "4"),
        /--interval: intervalSeconds must be from 5 to 3600/
      )
      assertUsageError(await rotations("create", "--name", "x", "--interval", "soon"), /--interval: /)
      assertUsageError(await rotations("create", "--name", "", "--interval", "5"), /--name: name must not be empty/)
      assertUsageError(
        await rotations("create", "--name", "x", "--dashboards", `${a},nope`, "--interval", "5"),
        /--dashboards: no dashboard with id "nope" in this account/
      )
      assertUsageError(await rotations("create", "--name", "x"), /--interval/)

      const list = await rotations("list", "--json")
      assert.strictEqual(list.code, 0, list.stderr)
      assert.deepStrictEqual(
        (JSON.parse(list.stdout).rotations as Array<any>).map((r) => [r.name, r.dashboardIds, r.url]),
        [
          ["Wall", [a, b], url],
          ["Empty", [], empty.url]
        ]
      )
      const table = await rotations("list")
      assert.strictEqual(table.code, 0, table.stderr)
      assert.match(table.stdout, /^ID +NAME +DASHBOARDS +INTERVAL +CREATED +VIEW URL$/m)
      assert.match(table.stdout, /^[0-9a-f-]{36} +Wall +2 +30s +\d{4}-\S+ +\/r\/dv_[A-Za-z0-9_-]{43}$/m)

      const shown = await rotations("show", "--id", id)
      assert.strictEqual(shown.code, 0, shown.stderr)
      assert.include(shown.stdout, `  ${a}\n  ${b}\n`)
      assert.strictEqual(shown.stdout.trimEnd().split("\n").at(-1), url)
      const shownFull = await rotations("show", "--id", id, "--base-url", "https://wall.example:8443/ds")
      assert.strictEqual(shownFull.stdout.trimEnd().split("\n").at(-1), `https://wall.example:8443/ds${url}`)

      const rotated = await rotations("rotate-token", "--id", id)
      assert.strictEqual(rotated.code, 0, rotated.stderr)
      const next = rotated.stdout.trimEnd().split("\n").at(-1)!
      assert.match(next, /^\/r\/dv_[A-Za-z0-9_-]{43}$/)
      assert.notStrictEqual(next, url)

      const deleted = await rotations("delete", "--id", id)
      assert.strictEqual(deleted.code, 0, deleted.stderr)
      const again = await rotations("delete", "--id", id)
      assert.strictEqual(again.code, 1)
      assertOneLineError(again, /no rotation with id/)
      const missing = await rotations("show", "--id", id)
      assert.strictEqual(missing.code, 1)
    })

    it("streams read prints a window, whole or in points, as lines or as the HTTP read's JSON; bad flags exit 2", async () => {
      const { accessKey } = await createAccount()
      await createWidget(accessKey, "temperature", "line-graph")
      // 2,100 entries one second apart: more than one page of the read, so output is streamed page by page.
      const t0 = 1_700_000_000
      const values = Array.from({ length: 2100 }, (_, i) => (i % 2 === 0 ? i : -i))
      const server = await startServer(["--db", db])
      try {
        const points = values.map((number, i) => ({ number, timestamp: t0 + i }))
        const pushed = await postJson(`${server.url}/customSend`, {
          accessKey,
          streamName: "temperature",
          point: points
        })
        assert.strictEqual(pushed.status, 200, JSON.stringify(pushed.body))
      } finally {
        assert.strictEqual((await stop(server)).code, 0)
      }
      type Body = { data: Array<{ ts: number; point: { number: number } }> }
      const read = async (...flags: Array<string>) => {
        const result = await cli([
          "streams",
          "read",
          "--access-key",
          accessKey,
          "--stream",
          "temperature",
          ...flags,
          "--db",
          db
        ])
        assert.strictEqual(result.code, 0, result.stderr)
        assert.strictEqual(result.stderr, "")
        return result.stdout
      }
      const json = async (...flags: Array<string>) => JSON.parse(await read(...flags, "--json")) as Body

      const all = await json()
      assert.deepStrictEqual(
        all.data.map((e) => [e.ts, e.point.number]),
        values.map((number, i) => [t0 + i, number])
      )
      const lines = (await read()).trimEnd().split("\n")
      assert.strictEqual(lines.length, 2100)
      assert.strictEqual(lines[1], '2023-11-14T22:13:21.000Z {"number":-1}')

      const window = await json("--from", "2023-11-14T22:13:22Z", "--to", String(t0 + 5))
      assert.deepStrictEqual(
        window.data.map((e) => e.ts),
        [t0 + 2, t0 + 3, t0 + 4, t0 + 5]
      )
      const after = await json("--since", String(t0 + 2097.5), "--limit", "1")
      assert.deepStrictEqual(after.data, [{ ts: t0 + 2098, point: { number: 2098 } }])

      const reduced = await json("--points", "10")
      assert.isAtMost(reduced.data.length, 40)
      const numbers = reduced.data.map((e) => e.point.number)
      assert.strictEqual(Math.min(...numbers), Math.min(...values))
      assert.strictEqual(Math.max(...numbers), Math.max(...values))
      for (const entry of reduced.data) assert.strictEqual(entry.point.number, values[entry.ts - t0])

      const base = ["streams", "read", "--access-key", accessKey, "--stream", "temperature", "--db", db]
      assertUsageError(
        await cli([...base, "--from", String(t0 + 5), "--to", String(t0 + 2)]),
        /--to: to must not be before from/
      )
      assertUsageError(await cli([...base, "--points", "1"]), /--points: points must be a whole number from 2 to 10000/)
      assertUsageError(
        await cli([...base, "--from", "yesterday"]),
        /--from must be UNIX seconds .* or an ISO 8601 time/
      )
      const missing = await cli(["streams", "read", "--access-key", accessKey, "--stream", "nope", "--db", db])
      assert.strictEqual(missing.code, 1)
      assertOneLineError(missing, /no widget with stream name "nope"/)
    })

    it("an unknown access key exits 1", async () => {
      const list = await cli(["widgets", "list", "--access-key", "not-a-key", "--db", db])
      assert.strictEqual(list.code, 1)
      assertOneLineError(list, /access key is unknown/)
      const create = await cli([
        "widgets",
        "create",
        "--access-key",
        "nope",
        "--stream",
        "s",
        "--type",
        "list",
        "--db",
        db
      ])
      assert.strictEqual(create.code, 1)
      assertOneLineError(create, /access key is unknown/)
    })

    it("an access key starting with - is taken as the value of --access-key, not as a flag", async () => {
      // Keys made before the ds_ prefix are base64url and may start with "-": a runtime failure here (unknown key,
      // exit 1) shows the value reached the lookup; a usage error (exit 2) would mean it was read as a flag.
      for (const key of [["--access-key", "-Qx9_unknown-key"], ["--access-key=-Qx9_unknown-key"]]) {
        const list = await cli(["widgets", "list", ...key, "--db", db])
        assert.strictEqual(list.code, 1, list.stderr)
        assertOneLineError(list, /access key is unknown/)
      }
    })

    it("data pushed before SIGTERM reads back after a restart; no first-start hint once accounts exist", async () => {
      const { accessKey } = await createAccount()
      await createWidget(accessKey, "kept", "number")

      const first = await startServer(["--db", db])
      try {
        const pushed = await postJson(`${first.url}/customSend`, { accessKey, streamName: "kept", point: 42 })
        assert.deepStrictEqual(pushed, { status: 200, body: { message: "Success!" } })
      } finally {
        assert.strictEqual((await stop(first)).code, 0)
      }
      assert.notInclude(first.stdout(), "accounts create")
      assert.notInclude(first.stderr(), accessKey)

      const second = await startServer(["--db", db])
      try {
        const read = await fetch(`${second.url}/api/v2/${accessKey}/datastream/kept`)
        assert.strictEqual(read.status, 200)
        const body = (await read.json()) as { data: Array<{ point: { number: number } }> }
        assert.deepStrictEqual(
          body.data.map((entry) => entry.point),
          [{ number: 42 }]
        )
      } finally {
        assert.strictEqual((await stop(second, "SIGINT")).code, 0)
      }
    })

    it("on SIGTERM, requests in flight are answered and stored before the database closes", async () => {
      const { accessKey } = await createAccount()
      await cli(["widgets", "create", "--access-key", accessKey, "--stream", "count", "--type", "number", "--db", db])
      const server = await startServer(["--db", db])
      const pushes = Array.from({ length: 200 }, (_, i) =>
        new Promise((wait) => setTimeout(wait, i)).then(() =>
          postJson(`${server.url}/customSend`, { accessKey, streamName: "count", point: { delta: 1 } }).then(
            (response) => response.status,
            () => "no response"
          )
        )
      )
      await new Promise((wait) => setTimeout(wait, 50))
      const result = await stop(server)
      const statuses = await Promise.all(pushes)
      assert.strictEqual(result.code, 0, result.stderr)
      // A push is either answered 200 (and stored) or refused at the connection; never a 5xx.
      assert.deepStrictEqual(
        statuses.filter((s) => s !== 200 && s !== "no response"),
        []
      )
      const answered = statuses.filter((s) => s === 200).length
      assert.isAbove(answered, 0)

      const again = await startServer(["--db", db])
      try {
        const read = await fetch(`${again.url}/api/v2/${accessKey}/datastream/count`)
        const body = (await read.json()) as { data: Array<{ point: { number: number } }> }
        assert.strictEqual(body.data[0]?.point.number, answered)
      } finally {
        await stop(again)
      }
    })

    it("a port already in use exits 1 with one line", async () => {
      const first = await startServer(["--db", db])
      try {
        const port = new URL(first.url).port
        const second = await cli(["serve", "--port", port, "--db", db], { DASHSTREAM_LOG_LEVEL: "warning" })
        assert.strictEqual(second.code, 1)
        assertOneLineError(second, new RegExp(`port ${port}.*in use`))
      } finally {
        await stop(first)
      }
    })
  })
