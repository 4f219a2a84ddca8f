import { AccountStore, StreamStore, type Widget } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Exit, Fiber, Layer } from "effect"
import pg from "pg"
import { layer, migrate, parseUrl } from "../src/index.js"
import { freePort, openTestDatabase, startEmbeddedPostgres } from "../src/testing/index.js"
import { freshSchema, processes, put, readAll, widgets, write } from "./fixtures.js"

const db = await openTestDatabase()
afterAll(() => db.close())

const tagOf = <A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.either(effect), (r) => (Either.isLeft(r) ? r.left._tag : "Success"))

describe("an unreachable server", () => {
  it.scopedLive("every operation, ping and migrate fail fast with StorageUnavailable", () =>
    Effect.gen(function* () {
      const port = yield* Effect.promise(freePort)
      for (const host of ["127.0.0.1", "localhost"]) {
        const config = yield* parseUrl(`postgres://postgres@${host}:${port}/postgres?connect_timeout_ms=2000`)
        const stores = yield* Layer.build(layer(config))
        const streams = Context.get(stores, StreamStore)
        const accounts = Context.get(stores, AccountStore)
        const started = Date.now()
        assert.strictEqual(yield* tagOf(streams.ping), "StorageUnavailable")
        assert.strictEqual(yield* tagOf(streams.read(1 as never, { since: null, limit: null })), "StorageUnavailable")
        assert.strictEqual(yield* tagOf(accounts.countAccounts), "StorageUnavailable")
        assert.strictEqual(yield* tagOf(accounts.findWidgets("a" as never, ["x"])), "StorageUnavailable")
        const widget = { id: 1, accountId: "a", streamName: "s", type: "number", createdAt: 0 } as unknown as Widget
        assert.strictEqual(yield* tagOf(write(stores, [[widget, put(1)]])), "StorageUnavailable")
        assert.strictEqual(yield* tagOf(migrate(config)), "StorageUnavailable")
        // Connection refused is reported at once, not after the connect timeout.
        assert.isBelow(Date.now() - started, 2_000)
      }
    })
  )
})

describe("broken connections", () => {
  const url = db.url

  it.scopedLive(
    "backends terminated under load: failures are StorageUnavailable, writes succeed again on the same layer, every acknowledged write reads back",
    () =>
      Effect.gen(function* () {
        const app = freshSchema("app")
        const [stores] = yield* processes(url, freshSchema("r"), 1, { application_name: app })
        const [w] = yield* widgets(stores!, [["line-graph", "g"]])
        const acknowledged: Array<number> = []
        const failures = new Map<string, number>()
        const push = (n: number) =>
          Effect.either(write(stores!, [[w!, put(n)]], n)).pipe(
            Effect.map((r) => {
              if (Either.isRight(r)) acknowledged.push(n)
              else failures.set(r.left._tag, (failures.get(r.left._tag) ?? 0) + 1)
            })
          )
        let terminated = 0
        const killer = Effect.promise(async () => {
          const client = new pg.Client({ connectionString: url })
          await client.connect()
          try {
            for (let i = 0; i < 8; i++) {
              await new Promise((resolve) => setTimeout(resolve, 40))
              const result = await client.query(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
                [app]
              )
              terminated += result.rowCount ?? 0
            }
          } finally {
            await client.end()
          }
        })
        yield* Effect.all(
          [
            killer,
            Effect.all(
              Array.from({ length: 600 }, (_, i) => push(i)),
              { concurrency: 16, discard: true }
            )
          ],
          { concurrency: "unbounded", discard: true }
        )
        assert.isAbove(terminated, 0)
        // A failure is only ever "unavailable, retry": never a 500.
        assert.deepStrictEqual(
          [...failures.keys()].filter((tag) => tag !== "StorageUnavailable"),
          []
        )
        // Connections killed while idle may still be in the pool for a moment; once the pool has noticed, every
        // write succeeds on the same layer.
        yield* Effect.sleep("300 millis")
        for (let i = 1000; i < 1020; i++) yield* write(stores!, [[w!, put(i)]], i)
        yield* Context.get(stores!, StreamStore).ping
        const stored = new Set((yield* readAll(stores!, w!)).map((e) => e.point.number))
        for (const n of [...acknowledged, ...Array.from({ length: 20 }, (_, i) => 1000 + i)]) {
          assert.isTrue(stored.has(n), `acknowledged write ${n} is missing`)
        }
        console.info(
          `terminated ${terminated} backends; ${acknowledged.length} writes acknowledged, failures: ${JSON.stringify(Object.fromEntries(failures))}`
        )
      }),
    120_000
  )
})

describe("timeouts", () => {
  const url = db.url

  const lockStream = (schema: string, id: number) =>
    Effect.acquireRelease(
      Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        await client.query("BEGIN")
        await client.query(`SELECT 1 FROM ${schema}.streams WHERE id = $1 FOR UPDATE`, [id])
        return client
      }),
      (client) => Effect.promise(() => client.query("ROLLBACK").then(() => client.end()))
    )

  it.scopedLive("a write blocked past statement_timeout_ms fails with StorageUnavailable and stores nothing", () =>
    Effect.gen(function* () {
      const schema = freshSchema("t")
      const [stores] = yield* processes(url, schema, 1, { statement_timeout_ms: "300" })
      const [w] = yield* widgets(stores!, [["number", "n"]])
      yield* Effect.scoped(
        Effect.gen(function* () {
          yield* lockStream(schema, w!.id)
          const started = Date.now()
          assert.strictEqual(yield* tagOf(write(stores!, [[w!, put(1)]])), "StorageUnavailable")
          assert.isBelow(Date.now() - started, 5_000)
        })
      )
      yield* write(stores!, [[w!, put(2)]])
      assert.deepStrictEqual(
        (yield* readAll(stores!, w!)).map((e) => e.point.number),
        [2]
      )
    })
  )

  it.scopedLive("an exhausted pool answers StorageUnavailable after connect_timeout_ms", () =>
    Effect.gen(function* () {
      const schema = freshSchema("x")
      const [stores] = yield* processes(url, schema, 1, { pool_max: "1", connect_timeout_ms: "300" })
      const [w] = yield* widgets(stores!, [["number", "n"]])
      const first = yield* Effect.scoped(
        Effect.gen(function* () {
          yield* lockStream(schema, w!.id)
          // The first write holds the only connection while it waits for the row lock; the next cannot get one.
          const first = yield* Effect.fork(write(stores!, [[w!, put(1)]]))
          yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
          assert.strictEqual(yield* tagOf(write(stores!, [[w!, put(2)]])), "StorageUnavailable")
          assert.strictEqual(yield* tagOf(Context.get(stores!, StreamStore).ping), "StorageUnavailable")
          return first
        })
      )
      // The row lock is released: the first write completes, and the pool serves again.
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(first)))
      yield* write(stores!, [[w!, put(3)]])
      assert.deepStrictEqual(
        (yield* readAll(stores!, w!)).map((e) => e.point.number),
        [1, 3]
      )
    })
  )
})

describe("a database that goes away and comes back", () => {
  it.scopedLive(
    "StorageUnavailable while it is down; the same layer works again once it is back",
    () =>
      Effect.gen(function* () {
        const server = yield* Effect.acquireRelease(Effect.promise(startEmbeddedPostgres), (s) =>
          Effect.promise(s.stop)
        )
        const config = yield* parseUrl(`${server.url}?connect_timeout_ms=2000`)
        yield* migrate(config)
        const stores = yield* Layer.build(layer(config))
        const streams = Context.get(stores, StreamStore)
        const [w] = yield* widgets(stores, [["number", "n"]])
        yield* write(stores, [[w!, put(1)]], 1)

        yield* Effect.promise(server.pause)
        assert.strictEqual(yield* tagOf(streams.ping), "StorageUnavailable")
        assert.strictEqual(yield* tagOf(write(stores, [[w!, put(2)]], 2)), "StorageUnavailable")
        assert.strictEqual(yield* tagOf(readAll(stores, w!)), "StorageUnavailable")

        yield* Effect.promise(server.resume)
        yield* streams.ping
        yield* write(stores, [[w!, put(3)]], 3)
        assert.deepStrictEqual(
          (yield* readAll(stores, w!)).map((e) => e.point.number),
          [1, 3]
        )
      }),
    120_000
  )
})
