import { afterAll, assert, describe, it } from "@effect/vitest"
import { DecimationStore, micros, type Widget } from "@dashstream/core"
import { Context, Deferred, Effect, Fiber, Option } from "effect"
import pg from "pg"
import { migrate, migrations, parseUrl } from "../src/index.js"
import { openTestDatabase, withSchema } from "../src/testing/index.js"
import { delta, freshSchema, processes, put, readAll, type Stores, widgets, write } from "./fixtures.js"

const db = await openTestDatabase()
afterAll(() => db.close())

const tablesOf = async (schema: string) => {
  const client = new pg.Client({ connectionString: db.url })
  await client.connect()
  try {
    const result = await client.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name COLLATE "C"',
      [schema]
    )
    return result.rows.map((r) => r.table_name)
  } finally {
    await client.end()
  }
}

// Several server processes on one database, simulated by independent layers (each with its own pool).
describe("several processes on one database", () => {
  const url = db.url

  it.effect(
    "concurrent migrations from separate Kysely instances all succeed; one of them applies every migration",
    () =>
      Effect.gen(function* () {
        // The public schema of a fresh database (the default), then fresh schemas that `migrate` has to create.
        const schemas = ["public", ...Array.from({ length: 4 }, () => freshSchema("m"))]
        for (const schema of schemas) {
          const config = yield* parseUrl(schema === "public" ? url : withSchema(url, schema))
          const applied = yield* Effect.all(
            Array.from({ length: 4 }, () => migrate(config)),
            { concurrency: "unbounded" }
          )
          assert.deepStrictEqual(applied.flat(), Object.keys(migrations))
          assert.deepStrictEqual(yield* migrate(config), [])
          const tables = yield* Effect.promise(() => tablesOf(schema))
          assert.deepStrictEqual(tables, [
            "access_keys",
            "accounts",
            "alert_deliveries",
            "alert_events",
            "alert_receivers",
            "alert_rule_receivers",
            "alert_rule_signals",
            "alert_rules",
            "dashboards",
            "ended_sessions",
            "entry_blocks",
            "kysely_migration",
            "kysely_migration_lock",
            "rotation_dashboards",
            "rotations",
            "streams"
          ])
        }
      })
  )

  it.scopedLive("300 concurrent +1 deltas through two pools end at exactly 300 with distinct ts", () =>
    Effect.gen(function* () {
      // Long checkout timeout: the 300 transactions queue up behind one row lock.
      const [a, b] = yield* processes(url, freshSchema("d"), 2, { connect_timeout_ms: "60000" })
      const [w] = yield* widgets(a!, [["number", "n"]])
      yield* Effect.all(
        Array.from({ length: 300 }, (_, i) => write(i % 2 === 0 ? a! : b!, [[w!, delta(1)]], i % 7)),
        { concurrency: "unbounded", discard: true }
      )
      const all = yield* readAll(b!, w!)
      assert.strictEqual(all.length, 300)
      assert.strictEqual(new Set(all.map((e) => e.ts)).size, 300)
      assert.deepStrictEqual(
        all.map((e) => e.point.number),
        Array.from({ length: 300 }, (_, i) => i + 1)
      )
    })
  )

  it.scopedLive("multi-stream writes touching A,B and B,A concurrently never deadlock", () =>
    Effect.gen(function* () {
      const [p, q] = yield* processes(url, freshSchema("l"), 2, { connect_timeout_ms: "60000" })
      const [x, y, z] = yield* widgets(p!, [
        ["number", "a"],
        ["number", "b"],
        ["number", "c"]
      ])
      const rounds = 150
      const pushes = Array.from({ length: rounds }, (_, i) => [
        write(
          p!,
          [
            [x!, delta(1)],
            [y!, delta(1)]
          ],
          i
        ),
        write(
          q!,
          [
            [y!, delta(1)],
            [x!, delta(1)]
          ],
          i
        ),
        write(
          i % 2 === 0 ? p! : q!,
          [
            [z!, delta(1)],
            [y!, delta(1)],
            [x!, delta(1)]
          ],
          i
        )
      ]).flat()
      yield* Effect.all(pushes, { concurrency: "unbounded", discard: true })
      for (const w of [x!, y!]) {
        const all = yield* readAll(p!, w)
        assert.strictEqual(all.length, rounds * 3)
        assert.strictEqual(all[all.length - 1]!.point.number, rounds * 3)
      }
      assert.strictEqual((yield* readAll(q!, z!)).length, rounds)
    })
  )

  it.scopedLive("the decimation pass lock is exclusive across processes and released when its holder ends", () =>
    Effect.gen(function* () {
      const [p, q] = yield* processes(url, freshSchema("p"), 2)
      const lockOf = (on: Stores) => Context.get(on, DecimationStore).withPassLock
      const entered = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(
        lockOf(p!)(Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(release)))
      )
      yield* Deferred.await(entered)
      assert.isTrue(Option.isNone(yield* lockOf(q!)(Effect.void)))
      assert.isTrue(Option.isNone(yield* lockOf(p!)(Effect.void)))
      yield* Deferred.succeed(release, undefined)
      assert.isTrue(Option.isSome(yield* Fiber.join(holder)))
      assert.isTrue(Option.isSome(yield* lockOf(q!)(Effect.void)))
      // Another schema is another storage, with its own pass lock.
      const [other] = yield* processes(url, freshSchema("p"), 1)
      const both = yield* lockOf(p!)(lockOf(other!)(Effect.succeed(1)))
      assert.deepStrictEqual(both, Option.some(Option.some(1)))
    })
  )

  it.scopedLive("decimation deletes racing multi-stream writes neither deadlock nor lose the newest entry", () =>
    Effect.gen(function* () {
      const [p, q] = yield* processes(url, freshSchema("x"), 2, { connect_timeout_ms: "60000" })
      const [a, b] = yield* widgets(p!, [
        ["sparkline", "a"],
        ["sparkline", "b"]
      ])
      const decimation = Context.get(q!, DecimationStore)
      const prune = (w: Widget) =>
        Effect.flatMap(
          decimation.entries(w.id, { after: null, before: micros(Number.MAX_SAFE_INTEGER), limit: 1_000 }),
          (all) =>
            decimation.deleteEntries(
              w.id,
              all.map((e) => e.id)
            )
        )
      const rounds = 100
      yield* Effect.all(
        Array.from({ length: rounds }, (_, i) => [
          write(
            p!,
            [
              [a!, put(i)],
              [b!, put(i)]
            ],
            i
          ),
          write(
            q!,
            [
              [b!, put(i)],
              [a!, put(i)]
            ],
            i
          ),
          prune(i % 2 === 0 ? a! : b!)
        ]).flat(),
        { concurrency: "unbounded", discard: true }
      )
      for (const w of [a!, b!]) {
        const all = yield* readAll(p!, w)
        // The newest entry is never pruned: the stream keeps the last write's entry.
        assert.isAbove(all.length, 0)
        assert.strictEqual(all[all.length - 1]!.ts, Math.max(...all.map((e) => e.ts)))
        yield* prune(w)
        assert.strictEqual((yield* readAll(p!, w)).length, 1)
      }
    })
  )
})
