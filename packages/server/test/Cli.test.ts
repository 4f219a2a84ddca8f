import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { widgetTypes } from "@dashstream/core"
import { afterAll, assert, beforeAll, describe, it as base } from "@effect/vitest"
import { type Console, Effect } from "effect"
import * as Cli from "../src/Cli.js"
import { cli, postJson, type Result, startServer, stop, tempDir } from "./support.js"

/**
 * The `dashstream` command line and the `serve` process lifecycle (contract section 8), run as real processes
 * (`node packages/server/dist/bin.js`, brought up to date by the global setup) against a temporary database. The HTTP behaviour itself is the
 * conformance suite's business; here only what the CLI and process add.
 */

const it = base

/** The last line of stderr is one sentence, and stderr has no other line (no stack trace). */
const assertOneLineError = (result: Result, pattern: RegExp) => {
  const lines = result.stderr.trimEnd().split("\n")
  assert.strictEqual(lines.length, 1, `expected one line on stderr, got:\n${result.stderr}`)
  assert.match(lines[0]!, /^dashstream: /)
  assert.match(lines[0]!, pattern)
}

const assertUsageError = (result: Result, pattern: RegExp) => {
  assert.strictEqual(result.code, 2, `exit code; stderr: ${result.stderr}`)
  assert.strictEqual(result.stdout, "")
  assertOneLineError(result, pattern)
}

/**
 * Each case spawns a process that loads effect and the adapters: seconds on a busy machine, so the limits are
 * generous.
 */
const timeout = 180_000

describe.concurrent("usage errors (exit 2, one line on stderr)", { timeout }, () => {
  const dir = tempDir()
  const db = `sqlite:${join(dir.path, "untouched", "db.sqlite")}`
  afterAll(() => {
    // A usage error is found before the database is opened: nothing was created.
    assert.isFalse(existsSync(join(dir.path, "untouched")))
    dir.remove()
  })

  it("unknown command", async () => {
    assertUsageError(await cli(["frobnicate", "--db", db]), /unknown command "frobnicate".*accounts create/)
  })

  it("missing command", async () => {
    assertUsageError(await cli([]), /missing command/)
  })

  it("unknown subcommand", async () => {
    assertUsageError(await cli(["accounts", "delete", "--db", db]), /unknown command "accounts delete"/)
  })

  it("unknown flag", async () => {
    assertUsageError(await cli(["accounts", "create", "--nmae", "x", "--db", db]), /unknown flag --nmae.*--name/)
  })

  it("flag without its value", async () => {
    assertUsageError(await cli(["accounts", "create", "--db"]), /--db needs a value/)
  })

  it("flag followed by another flag instead of its value", async () => {
    assertUsageError(await cli(["accounts", "create", "--db", "--name", "x"]), /--db needs a value/)
  })

  it("stray argument", async () => {
    assertUsageError(await cli(["migrate", "now", "--db", db]), /unexpected argument "now"/)
  })

  it("bad --db", async () => {
    const result = await cli(["accounts", "create", "--db", "mysql://root:hunter2@x/db"])
    assertUsageError(result, /--db must be sqlite:<path>.*postgres:\/\/.*got a mysql: URL/)
    assert.notInclude(result.stderr, "hunter2")
  })

  it("bad DASHSTREAM_DB", async () => {
    assertUsageError(await cli(["migrate"], { DASHSTREAM_DB: "mysql://x" }), /^dashstream: DASHSTREAM_DB must be/)
  })

  it("bad --type lists the 20 types", async () => {
    const result = await cli(["widgets", "create", "--access-key", "k", "--stream", "s", "--type", "donut", "--db", db])
    assertUsageError(result, /--type must be one of the 20 widget types/)
    for (const type of widgetTypes) assert.include(result.stderr, type)
  })

  it("bad --stream", async () => {
    const result = await cli([
      "widgets",
      "create",
      "--access-key",
      "k",
      "--stream",
      "a/b",
      "--type",
      "number",
      "--db",
      db
    ])
    assertUsageError(result, /--stream must be/)
  })

  it("missing --access-key", async () => {
    assertUsageError(await cli(["widgets", "list", "--db", db]), /widgets list needs --access-key/)
  })

  it("missing required flags are all named", async () => {
    assertUsageError(await cli(["widgets", "create", "--stream", "s", "--db", db]), /needs --access-key, --type/)
  })

  it("dashboards: missing --name, empty --name, and a layout file that is missing, not JSON or off the grid", async () => {
    assertUsageError(await cli(["dashboards", "create", "--access-key", "k", "--db", db]), /needs --name/)
    assertUsageError(
      await cli(["dashboards", "create", "--access-key", "k", "--name", "", "--db", db]),
      /--name must be 1 to 200 characters/
    )
    const layout = (name: string, text: string) => {
      const file = join(dir.path, name)
      writeFileSync(file, text)
      return file
    }
    const create = (file: string) =>
      cli(["dashboards", "create", "--access-key", "k", "--name", "n", "--layout", file, "--db", db])
    assertUsageError(await create(join(dir.path, "missing.json")), /--layout .*missing\.json cannot be read/)
    assertUsageError(await create(layout("text.json", "tiles: none")), /--layout .*text\.json is not JSON/)
    const offGrid = layout("off.json", JSON.stringify({ tiles: [{ streamName: "s", x: 8, y: 0, w: 5, h: 1 }] }))
    assertUsageError(await create(offGrid), /off\.json: tiles\[0\]\.w: the tile is off the grid/)
    const overlap = layout(
      "overlap.json",
      JSON.stringify([
        { streamName: "s", x: 0, y: 0, w: 2, h: 2 },
        { streamName: "s", x: 1, y: 1, w: 2, h: 2 }
      ])
    )
    assertUsageError(await create(overlap), /tiles\[1\]: the tile overlaps tiles\[0\]/)
  })

  it("bad --port and --rate-limit", async () => {
    assertUsageError(
      await cli(["serve", "--port", "99999", "--db", db]),
      /--port must be a whole number from 0 to 65535/
    )
    assertUsageError(await cli(["serve", "--rate-limit", "0", "--db", db]), /--rate-limit must be a whole number/)
  })

  it("bad DASHSTREAM_LOG_LEVEL", async () => {
    assertUsageError(await cli(["migrate", "--db", db], { DASHSTREAM_LOG_LEVEL: "loud" }), /DASHSTREAM_LOG_LEVEL/)
  })
})

/** Runs `dashstream ...argv` in this process (`Cli.run`), with stdout and stderr captured. */
const cliInProcess = async (argv: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<Result> => {
  const stdout: Array<string> = []
  const stderr: Array<string> = []
  const line = (parts: ReadonlyArray<unknown>) => `${parts.map(String).join(" ")}\n`
  const base = await Effect.runPromise(Effect.console)
  const console: Console.Console = {
    ...base,
    log: (...parts) => Effect.sync(() => void stdout.push(line(parts))),
    error: (...parts) => Effect.sync(() => void stderr.push(line(parts)))
  }
  const code = await Effect.runPromise(Cli.run(argv, env).pipe(Effect.withConsole(console)))
  return { code, signal: null, stdout: stdout.join(""), stderr: stderr.join("") }
}

describe("flags (in process): one sentence naming the flag, exit 2", () => {
  const dir = tempDir()
  const db = `sqlite:${join(dir.path, "untouched", "db.sqlite")}`
  afterAll(() => {
    assert.isFalse(existsSync(join(dir.path, "untouched")))
    dir.remove()
  })
  const usage = async (argv: ReadonlyArray<string>, pattern: RegExp) =>
    assertUsageError(await cliInProcess([...argv, "--db", db]), pattern)

  it("an unknown flag, long or short, lists the command's flags", async () => {
    await usage(
      ["accounts", "create", "--nmae", "x"],
      /^dashstream: unknown flag --nmae for accounts create; its flags are --name, --json, --db, --help$/
    )
    await usage(["accounts", "create", "-x"], /^dashstream: unknown flag -x for accounts create/)
    await usage(["widgets", "list", "--access-key", "k", "-hq"], /^dashstream: unknown flag -q for widgets list/)
  })

  it("a string flag without its value, at the end, before another flag, or before --", async () => {
    for (const argv of [
      ["widgets", "list", "--access-key"],
      ["widgets", "list", "--access-key", "--json"],
      ["widgets", "list", "--access-key", "--db=x"],
      ["widgets", "list", "--access-key", "-h"],
      ["widgets", "list", "--access-key", "--"]
    ]) {
      const result = await cliInProcess(argv)
      assertUsageError(
        result,
        /^dashstream: --access-key needs a value \(to pass a value starting with "-", write --access-key=VALUE\)$/
      )
    }
  })

  it("a boolean flag given a value", async () => {
    await usage(["accounts", "create", "--json=yes"], /^dashstream: --json takes no value$/)
  })

  it("a stray argument, also after --", async () => {
    await usage(
      ["migrate", "now"],
      /^dashstream: unexpected argument "now" for migrate; usage: pnpm dashstream migrate/
    )
    await usage(["migrate", "--", "now"], /unexpected argument "now" for migrate/)
  })

  it("a value starting with - is the flag's value, written apart or with =", async () => {
    // --stream is checked before the database is opened: its error shows which value --access-key and --stream got.
    for (const argv of [
      ["--access-key", "-Qx9", "--stream", "-a/b"],
      ["--access-key=-Qx9", "--stream=-a/b"]
    ]) {
      await usage(
        ["widgets", "create", ...argv, "--type", "number"],
        /^dashstream: --stream must be 1 to 255 characters/
      )
    }
    await usage(["widgets", "create", "--access-key", "-Qx9", "--stream", "s", "--type", "-donut"], /got "-donut"/)
  })

  it("bad configuration values name their flag or variable", async () => {
    await usage(["serve", "--decimate-at", "25:00"], /^dashstream: --decimate-at must be a UTC time of day HH:MM/)
    assertUsageError(
      await cliInProcess(["serve", "--db", db], { DASHSTREAM_DECIMATION_TIERS: "1h:1d,5m:2d" }),
      /^dashstream: DASHSTREAM_DECIMATION_TIERS: invalid tier policy/
    )
    assertUsageError(
      await cliInProcess(["serve", "--db", db], { DASHSTREAM_LOG_REQUESTS: "maybe" }),
      /^dashstream: DASHSTREAM_LOG_REQUESTS must be 1 or 0/
    )
    await usage(["decimate", "--now", "yesterday"], /^dashstream: --now must be an ISO 8601 time with a zone/)
  })
})

describe("help", { timeout }, () => {
  it("help, --help and <command> --help print usage on stdout and exit 0", async () => {
    for (const args of [["help"], ["--help"], ["-h"]]) {
      const result = await cli(args)
      assert.strictEqual(result.code, 0)
      assert.include(result.stdout, "Usage: pnpm dashstream <command>")
      for (const command of [
        "serve",
        "migrate",
        "accounts create",
        "widgets create",
        "widgets list",
        "dashboards create",
        "dashboards list"
      ]) {
        assert.include(result.stdout, command)
      }
    }
    const command = await cli(["widgets", "create", "--help"])
    assert.strictEqual(command.code, 0)
    assert.include(command.stdout, "pnpm dashstream widgets create --access-key K --stream S --type T")
  })
})

/** A database for one test group, as a `--db` URL. */
interface TestDatabase {
  readonly url: string
  readonly cleanup: () => Promise<void>
}

/**
 * The commands and the process lifecycle against one kind of database. A database that cannot be made fails the
 * suite (openTestDatabase throws when no PostgreSQL can be found or started).
 */
const suite = (name: string, makeDatabase: () => Promise<TestDatabase | undefined>) =>
  describe(name, { timeout }, () => {
    let database: TestDatabase | undefined
    let db = ""
    beforeAll(async () => {
      database = await makeDatabase()
      db = database?.url ?? ""
    }, timeout)
    afterAll(() => database?.cleanup())
    const it = (title: string, test: () => Promise<void>) =>
      base(title, async (context) => {
        if (database === undefined) return context.skip("no database of this kind is available")
        await test()
      })

    const createAccount = async (accountName = "acme") => {
      const result = await cli(["accounts", "create", "--name", accountName, "--json", "--db", db])
      assert.strictEqual(result.code, 0, result.stderr)
      return JSON.parse(result.stdout) as { id: string; name: string; accessKey: string }
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
        assert.include(out, `pnpm dashstream accounts create --name "My dashboard" --db `)
        assert.include(out, `pnpm dashstream widgets create --access-key <ACCESS_KEY> --stream revenue --type number`)
        assert.include(out, "/admin/accounts")
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
    it("accounts create refuses a name over 200 characters (issue 13, defect 6)", async () => {
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
        listed.map((d) => [d.name, d.tiles.length, d.viewToken, d.url]),
        [
          ["Wall", 2, null, null],
          ["Map", 1, null, null]
        ]
      )
      assert.deepStrictEqual(
        listed[0].tiles.map((t: any) => t.streamName),
        ["revenue", "visitors"]
      )
      const table = await dashboards("list")
      assert.strictEqual(table.code, 0, table.stderr)
      assert.match(table.stdout, /^ID +NAME +TILES +CREATED$/m)
      assert.match(table.stdout, /^[0-9a-f-]{36} +Map +1 +\d{4}-/m)
      const unknown = await cli(["dashboards", "list", "--access-key", "nope", "--db", db])
      assert.strictEqual(unknown.code, 1)
      assertOneLineError(unknown, /access key is unknown/)
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
      const created = await cli([
        "widgets",
        "create",
        "--access-key",
        accessKey,
        "--stream",
        "kept",
        "--type",
        "number",
        "--db",
        db
      ])
      assert.strictEqual(created.code, 0, created.stderr)

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

suite("SQLite", async () => {
  const dir = tempDir()
  return {
    url: `sqlite:${join(dir.path, "nested", "dashstream.db")}`,
    cleanup: async () => dir.remove()
  }
})

describe.concurrent("database failures (exit 1, one line on stderr)", { timeout }, () => {
  it("a SQLite file that cannot be created", async () => {
    const result = await cli(["accounts", "create", "--db", "sqlite:/dev/null/dashstream.db"])
    assert.strictEqual(result.code, 1)
    assertOneLineError(result, /SQLite file \/dev\/null\/dashstream\.db/)
  })

  it("an unreachable PostgreSQL server, for a command and for serve; the password is never printed", async () => {
    const db = "postgres://dashstream:hunter2@127.0.0.1:1/dashstream"
    const create = await cli(["accounts", "create", "--db", db])
    assert.strictEqual(create.code, 1)
    assertOneLineError(create, /PostgreSQL database dashstream at 127\.0\.0\.1:1 is unreachable/)
    const serve = await cli(["serve", "--port", "0", "--db", db], { DASHSTREAM_LOG_LEVEL: "warning" })
    assert.strictEqual(serve.code, 1)
    assertOneLineError(serve, /PostgreSQL database dashstream at 127\.0\.0\.1:1 is unreachable/)
    assert.notInclude(create.stderr + serve.stderr + serve.stdout, "hunter2")
  })

  it("a bad PostgreSQL URL parameter is a usage error", async () => {
    assertUsageError(await cli(["migrate", "--db", "postgres://127.0.0.1/x?pool_max=0"]), /pool_max/)
  })
})

suite("PostgreSQL", async () => {
  const { openTestDatabase } = await import("@dashstream/storage-postgres/testing")
  const database = await openTestDatabase()
  return database === undefined ? undefined : { url: database.url, cleanup: database.close }
})

describe("PostgreSQL, a new database", { timeout }, () => {
  base("accounts create works before any migrate or serve (every command migrates first)", async (context) => {
    const { openTestDatabase } = await import("@dashstream/storage-postgres/testing")
    const database = await openTestDatabase()
    if (database === undefined) return context.skip("no PostgreSQL available")
    try {
      const result = await cli(["accounts", "create", "--json", "--db", database.url])
      assert.strictEqual(result.code, 0, result.stderr)
      assert.match(JSON.parse(result.stdout).accessKey, /^ds_[A-Za-z0-9_-]{43}$/)
    } finally {
      await database.close()
    }
  })
})

describe("--version", { timeout }, () => {
  it("prints the version of packages/server/package.json, as `version` does", async () => {
    const expected = JSON.parse(readFileSync(join(import.meta.dirname, "../package.json"), "utf8")).version as string
    assert.match(expected, /^\d+\.\d+\.\d+/)
    for (const args of [["--version"], ["version"]]) {
      const result = await cli(args)
      assert.deepStrictEqual([result.code, result.stdout, result.stderr], [0, `${expected}\n`, ""])
    }
  })
})
