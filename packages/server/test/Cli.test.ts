import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { widgetTypes } from "@dashstream/core"
import { afterAll, assert, describe, it as base } from "@effect/vitest"
import { type Console, Effect } from "effect"
import * as Cli from "../src/Cli.js"
import { assertOneLineError, assertUsageError, timeout } from "./cliSuite.js"
import { cli, type Result, startServer, stop, tempDir } from "./support.js"
import { assertTimedOut, trickle } from "../../http/test/support/trickle.js"
import { entriesOf, eventsPath, openOk } from "./e2e/sse.js"

/**
 * The `dashstream` command line (docs/api.md section 8): usage errors, help, version and database failures, run as real
 * processes (`node packages/server/dist/bin.js`, brought up to date by the global setup) and, for each flag error,
 * in process. The commands against each backend and the `serve` lifecycle are in CliSqlite.test.ts and
 * CliPostgres.test.ts; the HTTP behaviour itself is the conformance suite's business.
 */

const it = base

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

  it("--trust-proxy refuses brackets, a zone, a prefix with a leading zero and host bits; --base-path refuses empty", async () => {
    for (const [value, shown] of [
      ["[::1]", '"[::1]"'],
      ["fe80::1%eth0", '"fe80::1%eth0"'],
      ["127.0.0.1,127.0.0.1/08", '"127.0.0.1/08"']
    ]) {
      const escaped = shown!.replace(/[[\]]/g, "\\$&")
      await usage(
        ["serve", "--trust-proxy", value!],
        new RegExp(`^dashstream: --trust-proxy must be IP addresses.*got ${escaped}$`)
      )
    }
    await usage(
      ["serve", "--trust-proxy", "10.0.0.1/8"],
      /^dashstream: --trust-proxy: 10\.0\.0\.1\/8 has host bits set past its \/8 prefix; did you mean the network 10\.0\.0\.0\/8\?$/
    )
    assertUsageError(
      await cliInProcess(["serve", "--db", db], { DASHSTREAM_TRUST_PROXY: "fd00::1/8" }),
      /^dashstream: DASHSTREAM_TRUST_PROXY: fd00::1\/8 has host bits set .* the network fd00::\/8\?$/
    )
    for (const value of ["", " "]) {
      await usage(["serve", "--base-path", value], /^dashstream: --base-path must be a URL path .*\(\/ for the root\)/)
    }
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

describe.concurrent("database failures (exit 1, one line on stderr)", { timeout }, () => {
  it("a SQLite file that cannot be created", async () => {
    const result = await cli(["accounts", "create", "--db", "sqlite:/dev/null/dashstream.db"])
    assert.strictEqual(result.code, 1)
    assertOneLineError(result, /SQLite file \/dev\/null\/dashstream\.db/)
  })

  it("a SQLite path whose directory cannot be created (under /proc): serve, copy and migrate fail at once", async () => {
    // Node's recursive mkdir loops forever on /proc: the process spun at 100% CPU, printed nothing, ignored SIGTERM.
    const db = "sqlite:/proc/nope/x.db"
    const dir = tempDir()
    try {
      const good = `sqlite:${join(dir.path, "good.db")}`
      assert.strictEqual((await cli(["migrate", "--db", good], {}, 30_000)).code, 0)
      const sentence = /^dashstream: the SQLite file \/proc\/nope\/x\.db failed: ENOENT: no such file or directory/m
      const runs = await Promise.all([
        cli(["serve", "--port", "0", "--workers", "1", "--db", db], {}, 30_000),
        cli(["migrate", "--db", db], {}, 30_000),
        cli(["copy", "--from", good, "--to", db], {}, 30_000),
        cli(["serve", "--port", "0", "--workers", "2", "--db", db], {}, 30_000)
      ])
      for (const result of runs) {
        assert.strictEqual(result.signal, null, `killed after 30 s; stderr: ${result.stderr}`)
        assert.strictEqual(result.code, 1, result.stderr)
        assert.match(result.stderr, sentence)
      }
      // Several processes also log their workers starting and the primary names the worker that failed.
      for (const result of runs.slice(0, 3)) assertOneLineError(result, sentence)
    } finally {
      dir.remove()
    }
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

describe("serve --frame-ancestors (who may frame a dashboard page)", { timeout }, () => {
  it("defaults to 'self'; the flag beats DASHSTREAM_FRAME_ANCESTORS; a bad value is a usage error", async () => {
    const dir = tempDir()
    try {
      const db = `sqlite:${join(dir.path, "frames.db")}`
      const account = await cli(["accounts", "create", "--json", "--db", db])
      const { accessKey } = JSON.parse(account.stdout) as { accessKey: string }
      const widget = await cli([
        "widgets",
        "create",
        "--access-key",
        accessKey,
        "--stream",
        "s",
        "--type",
        "number",
        "--db",
        db
      ])
      assert.strictEqual(widget.code, 0, widget.stderr)
      const dashboard = await cli([
        "dashboards",
        "create",
        "--access-key",
        accessKey,
        "--name",
        "d",
        "--json",
        "--db",
        db
      ])
      const { url } = JSON.parse(dashboard.stdout) as { url: string }
      const frameAncestors = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
        const server = await startServer(["--db", db, ...args], env)
        try {
          const page = await fetch(`${server.url}${url}`)
          assert.strictEqual(page.status, 200)
          return /frame-ancestors ([^;]*)/.exec(page.headers.get("content-security-policy") ?? "")?.[1]
        } finally {
          await stop(server)
        }
      }
      assert.strictEqual(await frameAncestors([]), "'self'")
      assert.strictEqual(await frameAncestors([], { DASHSTREAM_FRAME_ANCESTORS: "*" }), "*")
      assert.strictEqual(
        await frameAncestors(["--frame-ancestors", "'self' https://wiki.example.com"], {
          DASHSTREAM_FRAME_ANCESTORS: "*"
        }),
        "'self' https://wiki.example.com"
      )
      assertUsageError(
        await cli(["serve", "--port", "0", "--frame-ancestors", "'self'; script-src *", "--db", db]),
        /--frame-ancestors must be a CSP source list/
      )
    } finally {
      dir.remove()
    }
  })
})

describe("serve --trust-proxy trusting every peer", { timeout }, () => {
  for (const workers of ["1", "2"]) {
    it(`starts with a warning line naming the range (--workers ${workers})`, async () => {
      const dir = tempDir()
      try {
        const db = `sqlite:${join(dir.path, "trust.db")}`
        const server = await startServer([
          "--db",
          db,
          "--workers",
          workers,
          "--trust-proxy",
          "127.0.0.1,0.0.0.0/0,::/0"
        ])
        await stop(server)
        const warnings = server
          .stderr()
          .split("\n")
          .filter((line) => line.includes("level=WARN"))
        assert.strictEqual(warnings.length, 1, server.stderr())
        assert.include(warnings[0], "--trust-proxy 0.0.0.0/0,::/0 trusts every peer")
        const quiet = await startServer(["--db", db, "--workers", workers, "--trust-proxy", "127.0.0.1"])
        await stop(quiet)
        assert.notInclude(quiet.stderr(), "trusts every peer")
      } finally {
        dir.remove()
      }
    })
  }
})

describe("serve --request-timeout", { timeout }, () => {
  for (const workers of ["1", "2"]) {
    it(`answers 408 to a body trickled past it, and keeps an event stream open longer (--workers ${workers})`, async () => {
      const dir = tempDir()
      try {
        const db = `sqlite:${join(dir.path, "timeout.db")}`
        const account = await cli(["accounts", "create", "--json", "--db", db])
        const { accessKey } = JSON.parse(account.stdout) as { accessKey: string }
        const widget = await cli([
          "widgets",
          "create",
          "--access-key",
          accessKey,
          "--stream",
          "n",
          "--type",
          "number",
          "--db",
          db
        ])
        assert.strictEqual(widget.code, 0, widget.stderr)
        const server = await startServer(["--db", db, "--workers", workers, "--request-timeout", "1"])
        try {
          const port = Number(new URL(server.url).port)
          const stream = await openOk(server.url, eventsPath(accessKey, "n"))
          const body = JSON.stringify({ accessKey, streamName: "n", point: 7 })
          const head = `POST /customSend HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n`
          const answers = await Promise.all(Array.from({ length: 4 }, () => trickle(port, head, body, 100, 5_000)))
          for (const answer of answers) assertTimedOut(answer, 1_000)
          // The event stream, open for longer than the timeout, still delivers.
          const pushed = await fetch(`${server.url}/customSend`, {
            method: "POST",
            body: JSON.stringify({ accessKey, streamName: "n", point: 8 })
          })
          assert.strictEqual(pushed.status, 200)
          await stream.until("the entry", () => entriesOf(stream.events).length > 0, 5_000)
          assert.deepStrictEqual(
            entriesOf(stream.events).map((e) => e.point),
            [{ number: 8 }]
          )
          stream.close()
        } finally {
          await stop(server)
        }
      } finally {
        dir.remove()
      }
    })
  }
  it("a bad value is a usage error", async () => {
    assertUsageError(
      await cli(["serve", "--port", "0", "--request-timeout", "0"]),
      /^dashstream: --request-timeout must be a whole number of seconds from 1 to 3600/
    )
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
