import { type ChildProcess, execFileSync, spawn, spawnSync } from "node:child_process"
import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { assertBuilt, repoRoot } from "../../../test/build.js"

/**
 * The packages as people install them: every package is packed with `pnpm pack` (which rewrites
 * `workspace:*` to versions), the tarballs are installed with npm into a temporary project outside the workspace
 * together with this example's own files, the example is compiled with `tsc` against the installed `.d.ts` files
 * and run with plain node. A broken `exports` map, a missing file in `files`, a declaration that does not compile or
 * an undeclared dependency fails here.
 *
 * Registry dependencies come from npm's cache after the first run. npm installs with `--ignore-scripts`: the one
 * native addon, better-sqlite3, is the build pnpm already compiled for this workspace (same version, same node),
 * copied in, so the test does not spend a minute compiling it again.
 */

const exampleDir = join(repoRoot, "examples/embed")
let dir: string
let project: string

const run = (command: string, args: ReadonlyArray<string>, cwd: string, timeout = 120_000): string => {
  const result = spawnSync(command, args, { cwd, encoding: "utf8", timeout, env: { ...process.env, NODE_OPTIONS: "" } })
  if (result.status !== 0) {
    throw new Error(`${command} ${args.join(" ")} failed (${result.status}):\n${result.stdout}\n${result.stderr}`)
  }
  return result.stdout
}

/** `pnpm` on PATH, else the pinned version through npx (as the README says). */
const pnpm = (args: ReadonlyArray<string>, cwd: string) =>
  spawnSync("sh", ["-c", "command -v pnpm"]).status === 0
    ? run("pnpm", args, cwd)
    : run("npx", ["--yes", "pnpm@10.34.9", ...args], cwd)

beforeAll(() => {
  assertBuilt()
  dir = mkdtempSync(join(tmpdir(), "dashstream-pack-"))
  const tarballs = join(dir, "tarballs")
  pnpm(["-r", "--filter", "./packages/*", "pack", "--pack-destination", tarballs], repoRoot)

  project = join(dir, "project")
  mkdirSync(project)
  cpSync(join(exampleDir, "src"), join(project, "src"), { recursive: true })
  copyFileSync(join(exampleDir, "tsconfig.json"), join(project, "tsconfig.json"))
  // The example's package.json with every @dashstream package taken from its tarball instead of the registry.
  const manifest = JSON.parse(readFileSync(join(exampleDir, "package.json"), "utf8")) as {
    dependencies: Record<string, string>
  }
  for (const file of readdirSync(tarballs)) {
    const packed = JSON.parse(
      execFileSync("tar", ["-xOzf", join(tarballs, file), "package/package.json"], { encoding: "utf8" })
    )
    manifest.dependencies[packed.name] = `file:${join(tarballs, file)}`
  }
  writeFileSync(join(project, "package.json"), JSON.stringify(manifest, null, 2))
  run(
    "npm",
    ["install", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"],
    project
  )

  const workspaceAddon = join(
    dirname(
      createRequire(join(repoRoot, "packages/storage-sqlite/package.json")).resolve("better-sqlite3/package.json")
    ),
    "build/Release/better_sqlite3.node"
  )
  const addonDir = join(project, "node_modules/better-sqlite3/build/Release")
  mkdirSync(addonDir, { recursive: true })
  copyFileSync(workspaceAddon, join(addonDir, "better_sqlite3.node"))

  run("node", [join(project, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"], project)
}, 300_000)

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

/** Starts `node args` in the project and resolves with the process and its stdout once `ready` matches it. */
const start = (args: ReadonlyArray<string>, ready: RegExp) =>
  new Promise<{ child: ChildProcess; stdout: () => string; exited: Promise<number | null> }>((resolve, reject) => {
    const child = spawn("node", args, { cwd: project, env: { ...process.env, NODE_OPTIONS: "" } })
    let stdout = ""
    let stderr = ""
    const exited = new Promise<number | null>((done) => child.on("close", done))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`node ${args.join(" ")} did not print ${ready} within 30 s:\n${stdout}\n${stderr}`))
    }, 30_000)
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      if (ready.test(stdout)) {
        clearTimeout(timer)
        resolve({ child, stdout: () => stdout, exited })
      }
    })
    void exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`node ${args.join(" ")} exited (${code}) early:\n${stdout}\n${stderr}`))
    })
  })

describe("the packed packages, installed with npm", { timeout: 60_000 }, () => {
  it("embed the core with SQLite storage: push and read without HTTP", () => {
    const out = run("node", ["dist/push-and-read.js", join(dir, "embedded.db")], project)
      .trim()
      .split("\n")
    assert.strictEqual(out[0], '{"ts":1700000000,"point":{"number":21.5}}')
    assert.strictEqual(out[1], '{"ts":1700000060,"point":{"number":22}}')
    assert.match(out[2]!, /^\{"ts":\d+(\.\d+)?,"point":\{"number":22\.5\}\}$/)
    assert.strictEqual(out[3], 'latest: {"number":22.5}')
    assert.strictEqual(out.length, 4)
  })

  it("mount Dashstream's HTTP routes in a server of one's own", async () => {
    const server = await start(["dist/own-server.js", join(dir, "own-server.db"), "0"], /listening on (\S+)/)
    try {
      const text = server.stdout()
      const base = /listening on (\S+)/.exec(text)![1]!
      const key = /access key: (\S+)/.exec(text)![1]!
      const dashboard = /dashboard: (\S+)/.exec(text)![1]!

      const hello = await fetch(`${base}/hello`)
      assert.strictEqual(await hello.text(), "hello from my own service\n")

      const push = await fetch(`${base}/customSend`, {
        method: "POST",
        body: JSON.stringify({ accessKey: key, streamName: "visits", point: 42 })
      })
      assert.deepStrictEqual(await push.json(), { message: "Success!" })
      const read = (await (await fetch(`${base}/api/v2/${key}/datastream/visits`)).json()) as {
        data: Array<{ point: unknown }>
      }
      assert.deepStrictEqual(
        read.data.map((entry) => entry.point),
        [{ number: 42 }]
      )

      // The dashboard page and its script: the prebuilt bundle ships in @dashstream/dashboard-web.
      const page = await fetch(`${base}${dashboard}`)
      assert.strictEqual(page.status, 200)
      // Its URLs are relative to the page (`../assets/...` from `/d/<token>`, docs/api.md section 16).
      const script = /<script[^>]+src="(\.\.\/assets\/app\.[0-9a-f]+\.js)"/.exec(await page.text())?.[1]
      assert.isDefined(script)
      const asset = await fetch(new URL(script!, `${base}${dashboard}`))
      assert.strictEqual(asset.status, 200)
      assert.isAbove((await asset.arrayBuffer()).byteLength, 10_000)

      assert.strictEqual((await fetch(`${base}/openapi.json`)).status, 200)
      assert.strictEqual((await fetch(`${base}/nowhere`)).status, 404)
    } finally {
      server.child.kill("SIGTERM")
    }
    assert.strictEqual(await server.exited, 0)
  })

  it("the installed dashstream command runs with plain node: version, accounts create, serve", async () => {
    const bin = join(project, "node_modules/.bin/dashstream")
    assert.strictEqual(run(bin, ["--version"], project).trim(), "0.1.0")
    const db = `sqlite:${join(dir, "bin.db")}`
    assert.match(run(bin, ["accounts", "create", "--name", "installed", "--db", db], project), /Access key/)
    const server = await start([bin, "serve", "--port", "0", "--decimate-at", "off", "--db", db], /listening on (\S+)/)
    try {
      const base = /listening on (\S+)/.exec(server.stdout())![1]!
      assert.strictEqual((await fetch(`${base}/healthz`)).status, 200)
    } finally {
      server.child.kill("SIGTERM")
    }
    assert.strictEqual(await server.exited, 0)
  })

  it("internal modules and the workspace's test helpers are not importable", () => {
    for (const specifier of ["@dashstream/core/internal/x.js", "@dashstream/dashboard-web/testing"]) {
      const result = spawnSync("node", ["--input-type=module", "-e", `await import(${JSON.stringify(specifier)})`], {
        cwd: project,
        encoding: "utf8"
      })
      assert.notStrictEqual(result.status, 0)
      assert.include(result.stderr, "ERR_PACKAGE_PATH_NOT_EXPORTED")
    }
  })
})
