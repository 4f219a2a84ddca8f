import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { root } from "./support.js"

/**
 * A command loads only what it uses (startup time; the figures are bench/startup's): `help` and `version`
 * load no effect at all, and a SQLite command loads neither the HTTP stack nor the PostgreSQL driver. A module hook
 * in the CLI process records the URL of every module it loads.
 */

const hook = `
import { appendFileSync } from "node:fs"
let log
export function initialize(data) { log = data.log }
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(log, resolved.url + "\\n")
  return resolved
}`

const register = (log: string) =>
  `data:text/javascript,${encodeURIComponent(
    `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)}, { data: { log: ${JSON.stringify(log)} } })`
  )}`

const dir = mkdtempSync(join(tmpdir(), "dashstream-startup-"))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

let runs = 0
/** Runs `dashstream ...args` from source and returns the URLs of the modules it loaded. */
const loaded = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const log = join(dir, `loaded-${runs++}.txt`)
  const result = spawnSync(
    process.execPath,
    [
      "--import",
      register(log),
      "--conditions=@dashstream/source",
      "--import",
      "tsx",
      join(root, "packages/server/src/bin.ts"),
      ...args
    ],
    { cwd: root, encoding: "utf8", env: { ...process.env, DASHSTREAM_LOG_LEVEL: "none" }, timeout: 60_000 }
  )
  assert.strictEqual(result.status, 0, result.stderr)
  return readFileSync(log, "utf8").trim().split("\n")
}

const matching = (urls: ReadonlyArray<string>, pattern: RegExp) => urls.filter((url) => pattern.test(url))

const effect = /\/node_modules\/effect\//
// The HTTP adapter, its metrics library, and the HTTP modules of @effect/platform(-node) (runMain's NodeRuntime is not
// one: every command runs under it). The adapter's `ReverseProxy` module is not either: the parsers of `--base-path` and
// `--trust-proxy` that the configuration checks, importing node:net and effect only (`@dashstream/http/ReverseProxy`).
const httpStack =
  /\/packages\/http\/(?!(src|dist)\/ReverseProxy\.[jt]s$)|\/node_modules\/prom-client\/|\/node_modules\/@effect\/platform[^/]*\/dist\/esm\/(Node)?Http/
const postgres = /\/node_modules\/pg\/|\/packages\/storage-postgres\//
const sqlite = /\/node_modules\/better-sqlite3\/|\/packages\/storage-sqlite\//

describe("what a command loads", { timeout: 120_000 }, () => {
  it("help and --version load no effect, no storage and no HTTP", () => {
    for (const args of [["help"], ["--version"]]) {
      const urls = loaded(args)
      assert.isNotEmpty(matching(urls, /\/packages\/server\/src\/Commands\.ts$/))
      assert.deepStrictEqual(matching(urls, effect), [])
      assert.deepStrictEqual(matching(urls, sqlite), [])
      assert.deepStrictEqual(matching(urls, httpStack), [])
    }
  })

  it("accounts create on SQLite loads the SQLite adapter but neither the HTTP stack nor PostgreSQL", () => {
    const urls = loaded(["accounts", "create", "--db", `sqlite:${join(dir, "startup.db")}`])
    assert.isNotEmpty(matching(urls, effect))
    assert.isNotEmpty(matching(urls, sqlite))
    assert.deepStrictEqual(matching(urls, httpStack), [])
    assert.deepStrictEqual(matching(urls, postgres), [])
  })
})
