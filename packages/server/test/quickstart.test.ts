import { execFileSync, spawnSync } from "node:child_process"
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { assertBuilt } from "../../../test/build.js"
import { root, type Server, startServer } from "./support.js"

/**
 * Runs the README's quick start block exactly as written (bash, curl, `pnpm -s dashstream ...` from the repository
 * root) against the server the README's Try it starts (`serve --demo`). Only the `BASE=` line is replaced by the test server's address, and the database is
 * chosen with `DASHSTREAM_DB`, which the README's commands honour. `pnpm dashstream` runs the build
 * (`packages/server/bundle/bin.js`, as installed), so the test first checks that the build is current.
 */
const quickstart = (): string => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const block = /<!-- quickstart:begin -->\n```sh\n([\s\S]*?)```\n<!-- quickstart:end -->/.exec(readme)
  if (block === null) throw new Error("README.md has no quick start block between the quickstart markers")
  return block[1]!
}

const adminToken = "quickstart-admin-token-0123456789"

describe("README quick start", () => {
  let dir: string
  let server: Server
  let bin: string

  beforeAll(async () => {
    assertBuilt()
    dir = mkdtempSync(join(tmpdir(), "dashstream-quickstart-"))
    // The server of the README's Try it, which the quick start follows: `serve --demo`.
    server = await startServer(["--db", `sqlite:${join(dir, "qs.db")}`, "--demo"], {
      DASHSTREAM_ADMIN_TOKEN: adminToken
    })
    // `pnpm` as the README says: the one on PATH, else the pinned version through npx.
    bin = join(dir, "bin")
    execFileSync("mkdir", ["-p", bin])
    if (spawnSync("sh", ["-c", "command -v pnpm"]).status !== 0) {
      writeFileSync(join(bin, "pnpm"), '#!/bin/sh\nexec npx --yes pnpm@10.34.9 "$@"\n')
      chmodSync(join(bin, "pnpm"), 0o755)
    }
  }, 60_000)
  afterAll(async () => {
    server?.child.kill("SIGTERM")
    await server?.exited
    rmSync(dir, { recursive: true, force: true })
  }, 30_000)

  it("works as written, against the server of Try it", async () => {
    const script = quickstart()
    expect(script).toMatch(/^BASE=http:\/\/127\.0\.0\.1:8080$/m)
    const run = spawnSync("bash", ["-euo", "pipefail", "-c", script.replace(/^BASE=.*$/m, `BASE=${server.url}`)], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, PATH: `${bin}:${process.env["PATH"]}`, DASHSTREAM_DB: `sqlite:${join(dir, "qs.db")}` },
      timeout: 120_000
    })
    expect(run.stderr).not.toMatch(/error/i)
    expect(run.status).toBe(0)
    const out = run.stdout
    // Every push answered Success!, and the reads show what the comments in the README say.
    expect(out.match(/\{"message":"Success!"\}/g)?.length).toBe(4)
    expect(out).toMatch(/"data":\[\{"ts":\d+(\.\d+)?,"point":\{"number":105,"prefix":"\$"\}\}\]/)
    expect(out).toContain('"data":[{"ts":1700000000,"point":{"number":3}},{"ts":1700000060,"point":{"number":7}}]')
    expect(out).toContain('"data":[{"ts":1700000060,"point":{"number":7}}]')
    // The account it made is one of its own, beside the demo's, not a second "demo".
    await server.waitForStdout("Demo dashboard: ", 20_000)
    const listed = await fetch(`${server.url}/admin/accounts`, { headers: { authorization: `Bearer ${adminToken}` } })
    const { accounts } = (await listed.json()) as { accounts: Array<{ name: string }> }
    expect(accounts.map((a) => a.name).sort()).toEqual(["demo", "shop"])
  }, 180_000)
})
