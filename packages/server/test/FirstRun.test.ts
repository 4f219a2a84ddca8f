import { afterAll, assert, describe, it } from "@effect/vitest"
import { startServer, stop, tempDir } from "./support.js"

// docs/api.md section 14, "First run": only a loopback address gets a token made for the run.
describe("serve's admin API on a non-loopback address", () => {
  const dir = tempDir()
  afterAll(() => dir.remove())
  const db = `sqlite:${dir.path}/first-run.db`

  it("without a configured token it stays off (404), and no Console line is printed", async () => {
    const server = await startServer(["--host", "0.0.0.0", "--db", db])
    try {
      const local = server.url.replace("0.0.0.0", "127.0.0.1")
      for (const path of ["/admin/accounts", "/console", "/console/session"]) {
        assert.strictEqual((await fetch(`${local}${path}`)).status, 404, path)
      }
      assert.notMatch(server.stdout(), /^Console:/m)
      assert.strictEqual((await fetch(`${local}/healthz`)).status, 200)
    } finally {
      assert.strictEqual((await stop(server)).code, 0)
    }
  })

  it("with a configured token it is on, and the Console line names the address without the token", async () => {
    const server = await startServer(["--host", "0.0.0.0", "--db", db], { DASHSTREAM_ADMIN_TOKEN: "configured-token" })
    try {
      await server.waitForStdout("Console:")
      const port = new URL(server.url).port
      assert.match(
        server.stdout(),
        new RegExp(`^Console: http://127\\.0\\.0\\.1:${port}/console \\(sign in with DASHSTREAM_ADMIN_TOKEN\\)$`, "m")
      )
      assert.notInclude(server.stdout(), "configured-token")
      const local = server.url.replace("0.0.0.0", "127.0.0.1")
      const res = await fetch(`${local}/admin/accounts`, { headers: { authorization: "Bearer configured-token" } })
      assert.strictEqual(res.status, 200)
    } finally {
      assert.strictEqual((await stop(server)).code, 0)
    }
  })
})
