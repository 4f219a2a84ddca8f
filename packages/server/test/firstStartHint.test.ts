import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Redacted } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { commandOf, firstStartHint, originOf } from "../src/FirstStartHint.js"
import { parseDatabaseUrl } from "../src/Config.js"
import { binArgs } from "./support/bin.js"
import { childEnv, root, type Server, startServer, stop } from "./support.js"
import { Either } from "effect"

/**
 * The first-start hint of `serve` (docs/api.md section 8.3) run as printed: every command line of it (the lines that
 * start with two spaces), unchanged, in order, in bash in the directory the server was started from. They must make an
 * account, declare a widget and push a point to it, through the command line and through the admin API.
 */

const dirs: Array<string> = []
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "dashstream-hint-"))
  dirs.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** The command lines of the hint in `stdout`. */
const commandsOf = (stdout: string): Array<string> => {
  const at = stdout.indexOf("database has no accounts yet")
  expect(at, stdout).toBeGreaterThan(0)
  return stdout
    .slice(at)
    .split("\n")
    .filter((line) => line.startsWith("  "))
}

/**
 * Runs `commands` as printed in one bash (so that `$KEY` and `$ID` carry over), stopping at the first failure, then
 * prints the two variables for the test to check.
 */
const run = (commands: ReadonlyArray<string>, cwd: string, env: Record<string, string> = {}) => {
  const script = ["set -euo pipefail", ...commands, 'printf "\\n%s %s\\n" "$KEY" "${ID:-}"'].join("\n")
  const result = spawnSync("bash", ["-c", script], { cwd, env: childEnv(env), encoding: "utf8", timeout: 120_000 })
  expect(result.status, `${commands.join("\n")}\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`).toBe(0)
  const [key, id] = result.stdout.trim().split("\n").at(-1)!.split(" ")
  return { stdout: result.stdout, key: key!, id }
}

/** The pushes the commands made: the key's `revenue` holds 42, the admin API's account has the widget `revenue`. */
const checkStored = async (server: Server, key: string, id: string | undefined, token: string | undefined) => {
  const read = await fetch(`${server.url}/api/v2/${key}/datastream/revenue`)
  expect(((await read.json()) as { data: Array<{ point: unknown }> }).data[0]?.point).toEqual({ number: 42 })
  if (id === undefined || token === undefined) return
  const widgets = await fetch(`${server.url}/admin/accounts/${id}/widgets`, {
    headers: { authorization: `Bearer ${token}` }
  })
  expect(
    ((await widgets.json()) as { widgets: Array<{ streamName: string }> }).widgets.map((w) => w.streamName)
  ).toEqual(["revenue"])
}

describe("the first-start hint, run as printed", { timeout: 180_000 }, () => {
  it("first run from the repository root: the command line (npx pnpm); the run's token only in the Console link", async () => {
    const dir = tempDir()
    const server = await startServer(["--db", `sqlite:${join(dir, "hint.db")}`])
    try {
      await server.waitForStdout("Or open the Console link above")
      const commands = commandsOf(server.stdout())
      expect(commands).toHaveLength(3)
      expect(commands[0]).toMatch(/^ {2}KEY=\$\(npx --yes pnpm@10\.34\.9 -s dashstream accounts create/)
      expect(server.stdout()).not.toContain("<")
      const token = /console#token=(\S+)/.exec(server.stdout())![1]!
      expect(server.stdout().split(token).length - 1).toBe(1)
      const { stdout, key } = run(commands, root)
      expect(stdout).toContain('{"message":"Success!"}')
      await checkStored(server, key, undefined, undefined)
    } finally {
      await stop(server)
    }
  })

  it("started elsewhere with a relative --db, a configured token and two workers: -C <root> and the file's full path", async () => {
    const dir = tempDir()
    const token = "hint-test-token-0123456789abcdef"
    const server = await startServer(
      ["--db", "sqlite:relative.db", "--workers", "2"],
      { DASHSTREAM_ADMIN_TOKEN: token },
      60_000,
      [process.execPath, ...binArgs],
      dir
    )
    try {
      await server.waitForStdout("  curl -fsS")
      const commands = commandsOf(server.stdout())
      expect(commands[0]).toContain(`-C ${root} -s dashstream`)
      expect(commands[0]).toContain(`--db sqlite:${join(dir, "relative.db")}`)
      expect(commands.at(-1)).toContain("Bearer $DASHSTREAM_ADMIN_TOKEN")
      const { key, id } = run(commands, dir, { DASHSTREAM_ADMIN_TOKEN: token })
      await checkStored(server, key, id, token)
    } finally {
      await stop(server)
    }
  })

  it("from an installed package: node and the bundle's own path", async () => {
    const dir = tempDir()
    const dbUrl = `sqlite:${join(dir, "package.db")}`
    const server = await startServer(["--db", dbUrl, "--no-admin"])
    try {
      await server.waitForStdout("admin API and the console are off")
      const db = {
        database: Either.getOrThrow(parseDatabaseUrl(dbUrl, "--db")),
        source: "flag" as const,
        url: Redacted.make(dbUrl)
      }
      const hint = firstStartHint({
        db,
        admin: { _tag: "Off" },
        adminToken: undefined,
        url: server.url,
        demo: false,
        origin: { _tag: "Package", bin: binArgs[0]! },
        cwd: dir
      })
      const commands = commandsOf(hint)
      expect(commands).toHaveLength(3)
      expect(commands[1]).toMatch(new RegExp(`^ {2}node ${binArgs[0]!.replaceAll(".", "\\.")} widgets create`))
      const { key } = run(commands, dir)
      await checkStored(server, key, undefined, undefined)
    } finally {
      await stop(server)
    }
  })

  it("tells a repository from an installed package by the script's place", () => {
    expect(originOf(binArgs[0]!)).toEqual({ _tag: "Repository", root })
    const dir = tempDir()
    const bundle = join(dir, "node_modules/@dashstream/server/bundle")
    mkdirSync(bundle, { recursive: true })
    writeFileSync(join(bundle, "bin.js"), "")
    mkdirSync(join(dir, "node_modules/.bin"))
    symlinkSync(join(bundle, "bin.js"), join(dir, "node_modules/.bin/dashstream"))
    const origin = originOf(join(dir, "node_modules/.bin/dashstream"))
    expect(origin).toEqual({ _tag: "Package", bin: join(bundle, "bin.js") })
    expect(commandOf(origin, dir).command).toBe(`node ${join(bundle, "bin.js")}`)
    expect(commandOf({ _tag: "Repository", root }, root).command).toBe("npx --yes pnpm@10.34.9 -s dashstream")
  })
})
