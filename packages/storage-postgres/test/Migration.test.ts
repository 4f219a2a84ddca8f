import { AccountStore, DecimationStore, micros, StreamStore } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Kysely, Migrator, PostgresDialect, sql } from "kysely"
import { layer, migrate, migrations, parseUrl } from "../src/index.js"
import { makePool } from "../src/internal/pool.js"
import { openTestDatabase, withSchema } from "../src/testing/index.js"
import { freshSchema, readAll, T0 } from "./fixtures.js"

const db = await openTestDatabase()
afterAll(() => db?.close())

/** The migrations the code before issue 26 shipped: the schema its databases have. */
const before = ["0001_initial", "0002_live", "0003_dashboards", "0004_console_sessions"]

describe.skipIf(db === undefined)("migration 0006 (entries without id and foreign key)", () => {
  it.scopedLive(
    "converts a database of the earlier schema in place: entries, reads, writes, decimation and widget deletion",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("m")
        const config = yield* parseUrl(withSchema(db!.url, schema))
        // A database as the earlier code made it: its migrations only, then rows as its write path stored them.
        yield* Effect.promise(async () => {
          const kysely = new Kysely<any>({ dialect: new PostgresDialect({ pool: makePool(config, { max: 1 }) }) })
          try {
            await sql`create schema ${sql.id(schema)}`.execute(kysely)
            const earlier = Object.fromEntries(before.map((name) => [name, migrations[name]!]))
            const { error } = await new Migrator({
              db: kysely,
              provider: { getMigrations: async () => earlier },
              migrationTableSchema: schema
            }).migrateToLatest()
            if (error !== undefined) throw error
            await sql`insert into accounts (id, name, created_at) values ('acc', 'a', ${T0})`.execute(kysely)
            await sql`insert into streams (account_id, name, type, created_at, last_ts)
              values ('acc', 'n', 'sparkline', ${T0}, ${T0 + 2}), ('acc', 'gone', 'number', ${T0}, ${T0})`.execute(
              kysely
            )
            await sql`insert into entries (stream_id, ts, value, point)
              select s.id, ${T0}::bigint + k, k, '{"number":' || k || '}' from streams s, generate_series(0, 2) k
              where s.name = 'n' or k = 0`.execute(kysely)
          } finally {
            await kysely.destroy()
          }
        })
        const applied = yield* migrate(config)
        assert.deepStrictEqual(
          applied,
          Object.keys(migrations).filter((name) => !before.includes(name))
        )
        assert.include(applied, "0006_entries_without_id")
        const stores = yield* Layer.build(layer(config))
        const accounts = Context.get(stores, AccountStore)
        const widgets = yield* accounts.findWidgets("acc" as never, ["n", "gone"] as never)
        const n = widgets.get("n")!
        const gone = widgets.get("gone")!
        assert.deepStrictEqual(
          (yield* readAll(stores, n)).map((e) => [e.ts - T0, e.point.number]),
          [
            [0, 0],
            [1, 1],
            [2, 2]
          ]
        )
        // A replacement of an old entry and a new one, in one write: the upsert and the plain insert.
        yield* Context.get(stores, StreamStore).write(
          [
            {
              widget: n!,
              op: {
                _tag: "Put",
                entries: [
                  { point: { number: 10 }, ts: micros(T0 + 1) },
                  { point: { number: 30 }, ts: micros(T0 + 3) }
                ]
              },
              path: "point"
            }
          ],
          micros(T0 + 10)
        )
        assert.deepStrictEqual(
          (yield* readAll(stores, n)).map((e) => [e.ts - T0, e.point.number]),
          [
            [0, 0],
            [1, 10],
            [2, 2],
            [3, 30]
          ]
        )
        // Decimation names entries across streams distinctly and deletes by those names.
        const decimation = Context.get(stores, DecimationStore)
        const listed = yield* decimation.entries(n.id, { after: null, before: micros(T0 + 3), limit: 10 })
        assert.strictEqual(yield* decimation.deleteEntries(n.id, [listed[1]!.id]), 1)
        assert.deepStrictEqual(
          (yield* readAll(stores, n)).map((e) => e.ts - T0),
          [0, 2, 3]
        )
        // A deleted widget's entries go with it (the trigger that replaced ON DELETE CASCADE).
        yield* accounts.deleteWidget(gone.accountId, gone.streamName)
        const left = yield* Effect.promise(async () => {
          const kysely = new Kysely<any>({ dialect: new PostgresDialect({ pool: makePool(config, { max: 1 }) }) })
          try {
            const rows = await sql<{
              n: number
            }>`select count(*)::int as n from entries where stream_id = ${gone.id}`.execute(kysely)
            const columns = await sql<{ column_name: string }>`select column_name from information_schema.columns
              where table_schema = ${schema} and table_name = 'entries' order by column_name`.execute(kysely)
            return { entries: rows.rows[0]!.n, columns: columns.rows.map((r) => r.column_name) }
          } finally {
            await kysely.destroy()
          }
        })
        assert.deepStrictEqual(left, { entries: 0, columns: ["point", "stream_id", "ts", "value"] })
        assert.deepStrictEqual(yield* migrate(config), [])
      }),
    60_000
  )
})
