import {
  AccountStore,
  DecimationStore,
  micros,
  storesSummary,
  StreamStore,
  summarizeBlock,
  type Widget
} from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { Kysely, Migrator, PostgresDialect, sql } from "kysely"
import { layer, migrate, migrations, parseUrl } from "../src/index.js"
import { makePool } from "../src/internal/pool.js"
import { openTestDatabase, withSchema } from "../src/testing/index.js"
import { convert } from "../src/migrations/0007_entry_blocks.js"
import { freshSchema, readAll, T0 } from "./fixtures.js"

const db = await openTestDatabase()
afterAll(() => db.close())

/** Creates `schema` and applies the migrations `names` only: a database as the code of that time made it. */
const migrateOnly = async (kysely: Kysely<any>, schema: string, names: ReadonlyArray<string>) => {
  await sql`create schema ${sql.id(schema)}`.execute(kysely)
  const earlier = Object.fromEntries(names.map((name) => [name, migrations[name]!]))
  const { error } = await new Migrator({
    db: kysely,
    provider: { getMigrations: async () => earlier },
    migrationTableSchema: schema
  }).migrateToLatest()
  if (error !== undefined) throw error
}

/** Writes entries `[ts - T0, number]` to `widget` in one write, received at `T0 + now`. */
const putTwo = (
  stores: Context.Context<StreamStore>,
  widget: Widget,
  entries: ReadonlyArray<readonly [number, number]>,
  now: number
) =>
  Context.get(stores, StreamStore).write(
    [
      {
        widget,
        op: { _tag: "Put", entries: entries.map(([ts, number]) => ({ point: { number }, ts: micros(T0 + ts) })) },
        path: "point"
      }
    ],
    micros(T0 + now)
  )

/** The migrations the code before migration 0007 shipped: the schema its databases have. */
const before = ["0001_initial", "0002_live", "0003_dashboards", "0004_console_sessions"]

describe("migration 0006 (entries without id and foreign key)", () => {
  it.scopedLive(
    "converts a database of the earlier schema in place: entries, reads, writes, decimation and widget deletion",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("m")
        const config = yield* parseUrl(withSchema(db.url, schema))
        // A database as the earlier code made it: its migrations only, then rows as its write path stored them.
        yield* Effect.promise(async () => {
          const kysely = new Kysely<any>({ dialect: new PostgresDialect({ pool: makePool(config, { max: 1 }) }) })
          try {
            await migrateOnly(kysely, schema, before)
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
        yield* putTwo(
          stores,
          n!,
          [
            [1, 10],
            [3, 30]
          ],
          10
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
            }>`select count(*)::int as n from entry_blocks where stream_id = ${gone.id}`.execute(kysely)
            const columns = await sql<{ column_name: string }>`select column_name from information_schema.columns
              where table_schema = ${schema} and table_name = 'entries' order by column_name`.execute(kysely)
            return { entries: rows.rows[0]!.n, columns: columns.rows.map((r) => r.column_name) }
          } finally {
            await kysely.destroy()
          }
        })
        // Migration 0007 converted the entries into blocks and dropped `entries`.
        assert.deepStrictEqual(left, { entries: 0, columns: [] })
        assert.deepStrictEqual(yield* migrate(config), [])
      }),
    60_000
  )
})

/** The migrations before 0007: the schema a database of the code before PostgreSQL blocks has. */
const beforeBlocks = Object.keys(migrations).filter((name) => name < "0007")

describe("migration 0007 (entries in blocks)", () => {
  it.scopedLive("converts a range of streams per statement, telling its progress; the blocks are the same", () =>
    Effect.gen(function* () {
      // The same entries in two schemas: 0, 1, 10, 40 and 100 entries a stream (with texts of ~2 KB, so bytes close
      // blocks too), converted 7 entries a statement in one and in one statement in the other.
      const convertIn = (perStatement: number) =>
        Effect.gen(function* () {
          const schema = freshSchema("mp")
          const config = yield* parseUrl(withSchema(db.url, schema))
          const kysely = new Kysely<any>({ dialect: new PostgresDialect({ pool: makePool(config, { max: 1 }) }) })
          yield* Effect.addFinalizer(() => Effect.promise(() => kysely.destroy()))
          const told: Array<readonly [number, number]> = []
          const blocks = yield* Effect.promise(async () => {
            await migrateOnly(kysely, schema, beforeBlocks)
            await sql`insert into accounts (id, name, created_at) values ('acc', 'a', ${T0})`.execute(kysely)
            for (const [k, count] of [0, 1, 10, 40, 100].entries()) {
              await sql`insert into streams (account_id, name, type, created_at) values ('acc', ${`s${k}`}, 'text-feed', ${T0})`.execute(
                kysely
              )
              await sql`insert into entries (stream_id, ts, value, point)
                select s.id, ${T0}::bigint + j, null, '{"title":"' || j || '","msg":"' || repeat('é', j * 37 % 1500) || '"}'
                from streams s, generate_series(1, ${count}::int) as j where s.name = ${`s${k}`}`.execute(kysely)
            }
            await convert(kysely, (converted, total) => told.push([converted, total]), perStatement)
            return (
              await sql<Record<string, unknown>>`select s.name, b.first_ts, b.last_ts, b.n, b.last_at, b.data
                from entry_blocks b join streams s on s.id = b.stream_id order by s.name, b.first_ts`.execute(kysely)
            ).rows
          })
          return { told, blocks }
        })
      const inSteps = yield* convertIn(7)
      const inOne = yield* convertIn(1_000_000)
      assert.deepStrictEqual(inSteps.blocks, inOne.blocks)
      assert.isAbove(inOne.blocks.length, 10)
      assert.deepStrictEqual(inOne.told, [
        [0, 151],
        [151, 151]
      ])
      // A statement per range of whole streams: up to the stream of the 7th entry after the last one converted.
      assert.deepStrictEqual(inSteps.told, [
        [0, 151],
        [11, 151],
        [51, 151],
        [151, 151]
      ])
    })
  )

  it.scopedLive(
    "converts entries in place (non-ASCII, large texts, many per stream); reads, writes, deletion and down work",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("mb")
        const config = yield* parseUrl(withSchema(db.url, schema))
        const big = "é✓😀".repeat(3000)
        // 100 numbers (with a null value), 7 texts of ~30 KB, a stream of one entry, an empty stream.
        const expected = {
          n: Array.from({ length: 100 }, (_, k) => [k, `{"number":${k},"label":"ü${k}"}`] as const),
          t: Array.from(
            { length: 7 },
            (_, k) => [k * 10, JSON.stringify({ title: `t${k}`, msg: `${k}${big}` })] as const
          ),
          one: [[5, '{"number":-1.5e-7}'] as const]
        }
        const kysely = new Kysely<any>({ dialect: new PostgresDialect({ pool: makePool(config, { max: 1 }) }) })
        yield* Effect.addFinalizer(() => Effect.promise(() => kysely.destroy()))
        yield* Effect.promise(async () => {
          await migrateOnly(kysely, schema, beforeBlocks)
          await sql`insert into accounts (id, name, created_at) values ('acc', 'a', ${T0})`.execute(kysely)
          for (const [name, type] of [
            ["n", "sparkline"],
            ["t", "text-feed"],
            ["one", "number"],
            ["empty", "number"]
          ] as const) {
            const rows = name === "empty" ? [] : expected[name]
            await sql`insert into streams (account_id, name, type, created_at, last_ts)
              values ('acc', ${name}, ${type}, ${T0}, ${rows.length === 0 ? null : T0 + rows[rows.length - 1]![0]})`.execute(
              kysely
            )
            for (const [k, point] of rows) {
              await sql`insert into entries (stream_id, ts, value, point)
                select id, ${T0 + k}, ${name === "n" && k !== 3 ? k : null}, ${point} from streams where name = ${name}`.execute(
                kysely
              )
            }
          }
        })
        assert.deepStrictEqual(
          yield* migrate(config),
          Object.keys(migrations).filter((name) => name >= "0007")
        )
        const stores = yield* Layer.build(layer(config))
        const accounts = Context.get(stores, AccountStore)
        const widgets = yield* accounts.findWidgets("acc" as never, ["n", "t", "one", "empty"] as never)
        const readJson = (name: string) =>
          Effect.map(
            Context.get(stores, StreamStore).read(widgets.get(name as never)!.id, { since: micros(0), limit: null }),
            (entries) => entries.map((e) => [e.ts - T0, e.json] as const)
          )
        assert.deepStrictEqual(yield* readJson("n"), expected.n)
        assert.deepStrictEqual(yield* readJson("t"), expected.t)
        assert.deepStrictEqual(yield* readJson("one"), expected.one)
        assert.deepStrictEqual(yield* readJson("empty"), [])
        // The latest entry, cut out of the last block in SQL; a since read across blocks.
        const latest = yield* Context.get(stores, StreamStore).read(widgets.get("t" as never)!.id, {
          since: null,
          limit: null
        })
        assert.deepStrictEqual(
          latest.map((e) => [e.ts - T0, e.json]),
          [[...expected.t[6]!]]
        )
        const since = yield* Context.get(stores, StreamStore).read(widgets.get("n" as never)!.id, {
          since: micros(T0 + 40),
          limit: 3
        })
        assert.deepStrictEqual(
          since.map((e) => e.ts - T0),
          [41, 42, 43]
        )
        // Blocks: at most 32 entries, at most 16 KiB plus the last entry; the decimation values kept (null too).
        const blocks = yield* Effect.promise(() =>
          sql<{ name: string; n: number; bytes: number; last_at: number }>`select s.name, b.n,
            octet_length(b.data) as bytes, b.last_at from entry_blocks b join streams s on s.id = b.stream_id
            order by s.name, b.first_ts`.execute(kysely)
        )
        assert.deepStrictEqual(
          blocks.rows.filter((b) => b.name === "n").map((b) => b.n),
          [32, 32, 32, 4]
        )
        assert.isTrue(blocks.rows.filter((b) => b.name === "t").every((b) => b.n === 1))
        // 0014 summarised the blocks of more than 4 entries with core's rule, and no other.
        const summaries = yield* Effect.promise(() =>
          sql<{ n: number; data: Buffer; summary: Buffer | null }>`select n, data, summary from entry_blocks
            order by stream_id, first_ts`.execute(kysely)
        )
        for (const b of summaries.rows) {
          assert.deepStrictEqual(b.summary, storesSummary(b.n) ? summarizeBlock(b.data) : null)
        }
        assert.strictEqual(summaries.rows.filter((b) => b.summary !== null).length, 3)
        const values = yield* Context.get(stores, DecimationStore).entries(widgets.get("n" as never)!.id, {
          after: null,
          before: micros(T0 + 5),
          limit: 10
        })
        assert.deepStrictEqual(
          values.map((e) => e.value),
          [0, 1, 2, null, 4]
        )
        // A write after the conversion: a replacement inside a converted block and a new entry.
        yield* putTwo(
          stores,
          widgets.get("n" as never)!,
          [
            [50, 1000],
            [200, 1001]
          ],
          300
        )
        const after = yield* readJson("n")
        assert.deepStrictEqual(after.length, 101)
        assert.deepStrictEqual(after[50], [50, '{"number":1000}'])
        assert.deepStrictEqual(after[100], [200, '{"number":1001}'])
        // A deleted widget's blocks go with it.
        yield* accounts.deleteWidget("acc" as never, "t" as never)
        const left = yield* Effect.promise(() =>
          sql<{ n: number }>`select count(*)::int as n from entry_blocks b
            where not exists (select 1 from streams s where s.id = b.stream_id)`.execute(kysely)
        )
        assert.strictEqual(left.rows[0]!.n, 0)
        // Down: the entries as rows again, exactly.
        yield* Effect.promise(() => migrations["0007_entry_blocks"]!.down!(kysely))
        const rows = yield* Effect.promise(() =>
          sql<{ name: string; ts: number; value: number | null; point: string }>`select s.name, e.ts - ${T0} as ts,
            e.value, e.point from entries e join streams s on s.id = e.stream_id where s.name in ('n', 'one')
            order by s.name, e.ts`.execute(kysely)
        )
        assert.deepStrictEqual(
          rows.rows.filter((r) => r.name === "one").map((r) => [Number(r.ts), r.point]),
          expected.one.map(([k, p]) => [k, p])
        )
        assert.strictEqual(rows.rows.filter((r) => r.name === "n").length, 101)
        assert.strictEqual(rows.rows.find((r) => r.name === "n" && Number(r.ts) === 3)!.value, null)
      }),
    60_000
  )
})
