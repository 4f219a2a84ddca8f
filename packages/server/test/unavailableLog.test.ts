/**
 * A request answered 503 `unavailable` because PostgreSQL cannot be reached is logged in one line that names the
 * driver's reason (`connect ECONNREFUSED 127.0.0.1:<port>`), once while that reason lasts, without a stack. Real
 * parts: the HTTP layer on loopback over the PostgreSQL adapter, pointed at a loopback port nothing listens on.
 */
import { createServer } from "node:net"
import * as Postgres from "@dashstream/storage-postgres"
import { Effect } from "effect"
import { assert, describe, it } from "vitest"
import { serveHttp } from "./support/loopbackHttp.js"

/** A loopback port nothing listens on (bound, then closed). */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number }
      server.close(() => resolve(port))
    })
  })

describe("a 503 while PostgreSQL is unreachable", () => {
  it("is logged in one line with the driver's reason, once for many requests, without a stack", async () => {
    const port = await closedPort()
    let logs: ReadonlyArray<string> = []
    await Effect.runPromise(
      Effect.scoped(
        Effect.gen(function* () {
          const config = yield* Postgres.parseUrl(
            `postgres://postgres@127.0.0.1:${port}/dashstream?connect_timeout_ms=2000`
          )
          const server = yield* serveHttp(Postgres.layer(config))
          const url = server.url
          logs = server.logs
          for (let i = 0; i < 3; i++) {
            const push = yield* Effect.promise(() =>
              fetch(`${url}/customSend`, {
                method: "POST",
                headers: { "content-type": "application/json" },
                body: JSON.stringify({ accessKey: "ds_not_a_real_key", streamName: "n", point: i }),
                signal: AbortSignal.timeout(10_000)
              })
            )
            assert.strictEqual(push.status, 503)
            const read = yield* Effect.promise(() =>
              fetch(`${url}/api/v2/ds_not_a_real_key/datastream/n`, { signal: AbortSignal.timeout(10_000) })
            )
            assert.strictEqual(read.status, 503)
          }
          yield* Effect.sleep("50 millis")
        })
      )
    )
    const reason = `connect ECONNREFUSED 127.0.0.1:${port}`
    assert.deepStrictEqual(
      logs.filter((line) => line.includes("answered 503")),
      [
        `POST /customSend answered 503 unavailable: ${reason}`,
        `GET /api/v2/:accessKey/datastream/:streamName answered 503 unavailable: ${reason}`
      ]
    )
    for (const line of logs) assert.notInclude(line, "ds_not_a_real_key")
  }, 30_000)
})
