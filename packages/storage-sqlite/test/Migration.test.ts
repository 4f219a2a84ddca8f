import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import Database from "better-sqlite3"
import { type AccountId, type EntryId, micros, type StreamId } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { Kysely, Migrator, SqliteDialect } from "kysely"
import * as SqliteStore from "../src/index.js"
import { migrationNames } from "../src/Migrations.js"
import * as M0001 from "../src/migrations/0001_initial.js"
import * as M0002 from "../src/migrations/0002_live.js"
import * as M0003 from "../src/migrations/0003_dashboards.js"
import * as M0004 from "../src/migrations/0004_live_sequence.js"
import * as M0005 from "../src/migrations/0005_console_sessions.js"
import * as M0006 from "../src/migrations/0006_rotations.js"
import { type EntryRow, entryRows } from "./fixtures/entryRows.js"

/**
 * Migration 0007 (the entries in packed blocks) converts a database made by the code before it in place:
 * every entry is kept (stream, ts, value, point text), in blocks of at most 32 entries or 16 KiB of data with
 * disjoint ranges, the `entries` table is gone, and the stores read, replace, back-fill, append, decimate and delete
 * widgets on it.
 */

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-sqlite-migration-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

const T0 = 1_700_000_000_000_000

/** The migrations of the code before the layout in blocks: the schema its databases have. */
const before = {
  "0001_initial": M0001,
  "0002_live": M0002,
  "0003_dashboards": M0003,
  "0004_live_sequence": M0004,
  "0005_console_sessions": M0005,
  "0006_rotations": M0006
}

// Entries as the earlier write path stored them: stream 1 ("n", a sparkline) 70 entries, stream 2 ("x", an
// xy-graph) 3 with a non-ASCII label and a null value, stream 3 ("gone") 1, stream 4 ("empty") none, stream 5
// ("feed", a text feed) 5 of ~6 KB (blocks of 2: a block closes at 16 KiB of data) and 6 of ~24 KB (a block each).
// The large ones leave enough free pages after the conversion for it to compact the file even once the later
// migrations' tables have taken some of them.
const earlierEntries: Array<EntryRow> = [
  ...Array.from({ length: 70 }, (_, k) => ({
    stream_id: 1,
    ts: T0 + k * 1_000_000,
    value: k,
    point: `{"number":${k}}`
  })),
  { stream_id: 2, ts: T0 + 5, value: -4, point: '{"x":1,"y":-4}' },
  { stream_id: 2, ts: T0 + 6, value: null, point: '{"x":2,"y":null,"l":"é ✓"}' },
  { stream_id: 2, ts: T0 + 7, value: 0.5, point: '{"x":3,"y":0.5}' },
  { stream_id: 3, ts: T0, value: 1, point: '{"number":1}' },
  ...Array.from({ length: 5 }, (_, k) => ({
    stream_id: 5,
    ts: T0 + k,
    value: null,
    point: JSON.stringify({ title: `t${k}`, msg: "é".repeat(3_000) })
  })),
  ...Array.from({ length: 6 }, (_, k) => ({
    stream_id: 5,
    ts: T0 + 5 + k,
    value: null,
    point: JSON.stringify({ title: `big${k}`, msg: "é".repeat(12_000) })
  }))
]

/** What `migrate` applies to a database of the earlier schema: 0007 and every migration after it. */
const fromBlocksOn = migrationNames.filter((name) => name >= "0007")

const makeEarlierDatabase = async (filename: string) => {
  const db = new Database(filename)
  db.pragma("journal_mode = WAL")
  db.pragma("foreign_keys = ON")
  const kysely = new Kysely<any>({ dialect: new SqliteDialect({ database: db }) })
  try {
    const { error } = await new Migrator({
      db: kysely,
      provider: { getMigrations: async () => before }
    }).migrateToLatest()
    if (error !== undefined) throw error
    db.prepare("INSERT INTO accounts (id, name, created_at) VALUES ('acc', 'a', ?)").run(T0)
    const stream = db.prepare(
      "INSERT INTO streams (id, account_id, name, type, created_at, last_ts) VALUES (?, 'acc', ?, ?, ?, ?)"
    )
    stream.run(1, "n", "sparkline", T0, T0 + 69_000_000)
    stream.run(2, "x", "xy-graph", T0, T0 + 7)
    stream.run(3, "gone", "number", T0, T0)
    stream.run(4, "empty", "number", T0, null)
    stream.run(5, "feed", "text-feed", T0, T0 + 10)
    const entry = db.prepare("INSERT INTO entries (stream_id, ts, value, point) VALUES (?, ?, ?, ?)")
    // Not in ts order, as replacements and back-fills leave rows.
    for (const e of [...earlierEntries].reverse()) entry.run(e.stream_id, e.ts, e.value, e.point)
  } finally {
    await kysely.destroy()
  }
}

describe("migration 0007 (entries in blocks)", () => {
  it.scopedLive("logs its progress: when it starts and when it ends (every million entries between)", () =>
    Effect.gen(function* () {
      const filename = Path.join(dir, "progress.db")
      yield* Effect.promise(() => makeEarlierDatabase(filename))
      const messages: Array<unknown> = []
      const capture = Logger.replace(
        Logger.defaultLogger,
        Logger.make(({ message }) => messages.push(message))
      )
      assert.deepStrictEqual(yield* Effect.provide(SqliteStore.migrate({ filename }), capture), fromBlocksOn)
      const total = earlierEntries.length
      const told = messages.flat().map(String)
      assert.deepStrictEqual(told.slice(0, 2), [
        `migration 0007_entry_blocks: 0 of ${total} entries converted into blocks`,
        `migration 0007_entry_blocks: ${total} of ${total} entries converted into blocks`
      ])
      // 0013 summarises the blocks of more than 4 entries.
      const raw = new Database(filename, { readonly: true })
      const blocks = (raw.prepare("SELECT count(*) FROM entry_blocks WHERE n > 4").pluck().get() as number) ?? 0
      const missing = raw.prepare("SELECT count(*) FROM entry_blocks WHERE n > 4 AND summary IS NULL").pluck().get()
      raw.close()
      assert.isAbove(blocks, 0)
      assert.strictEqual(missing, 0)
      assert.deepStrictEqual(told.slice(2, 4), [
        `migration 0013_block_summaries: 0 of ${blocks} blocks summarised`,
        `migration 0013_block_summaries: ${blocks} of ${blocks} blocks summarised`
      ])
      // The dropped entries left free pages: the file is compacted, and says so.
      assert.match(told[4]!, /^migration 0007_entry_blocks: compacting the file \(\d+ KiB of \d+ KiB free\)$/)
      assert.match(told[5]!, /^migration 0007_entry_blocks: compacted the file from \d+ KiB to \d+ KiB in \d+\.\d s$/)
      assert.strictEqual(told.length, 6)
    })
  )

  it.scopedLive("converts a database of the earlier schema in place; the stores work on it", () =>
    Effect.gen(function* () {
      const filename = Path.join(dir, "earlier.db")
      yield* Effect.promise(() => makeEarlierDatabase(filename))

      assert.deepStrictEqual(yield* SqliteStore.migrate({ filename }), fromBlocksOn)
      const raw = new Database(filename, { readonly: true })
      try {
        // Every entry kept, ascending per stream; the blocks well formed (entryRows checks them) and at most 32.
        assert.deepStrictEqual(entryRows(raw), earlierEntries)
        assert.deepStrictEqual(
          raw.prepare("SELECT stream_id, n FROM entry_blocks ORDER BY stream_id, first_ts").raw().all(),
          [
            [1, 32],
            [1, 32],
            [1, 6],
            [2, 3],
            [3, 1],
            [5, 2],
            [5, 2],
            [5, 1],
            [5, 1],
            [5, 1],
            [5, 1],
            [5, 1],
            [5, 1],
            [5, 1]
          ]
        )
        assert.isUndefined(raw.prepare("SELECT name FROM sqlite_master WHERE name = 'entries'").get())
        // Compacted after the conversion: no free pages left by the dropped table.
        assert.strictEqual(raw.pragma("freelist_count", { simple: true }), 0)
      } finally {
        raw.close()
      }

      const stores = yield* SqliteStore.make({ filename })
      const widgets = yield* stores.accountStore.findWidgets("acc" as AccountId, ["n", "gone"])
      const n = widgets.get("n")!
      assert.strictEqual(n.id, 1)
      const readAll = (id: number) => stores.streamStore.read(id as StreamId, { since: micros(0), limit: null })
      assert.deepStrictEqual(yield* stores.streamStore.read(2 as StreamId, { since: null, limit: null }), [
        { ts: micros(T0 + 7), json: '{"x":3,"y":0.5}' }
      ])
      assert.deepStrictEqual(
        (yield* stores.streamStore.read(2 as StreamId, { since: micros(T0 + 5), limit: 1 })).map((e) => e.json),
        ['{"x":2,"y":null,"l":"é ✓"}']
      )

      // One write: a replacement in the first block, a back-fill between two entries of the second, a new entry.
      yield* stores.streamStore.write(
        [
          {
            widget: n,
            op: {
              _tag: "Put",
              entries: [
                { point: { number: 100 }, ts: micros(T0 + 3_000_000) },
                { point: { number: 200 }, ts: micros(T0 + 40_500_000) },
                { point: { number: 300 }, ts: micros(T0 + 80_000_000) }
              ]
            },
            path: "point"
          }
        ],
        micros(T0 + 90_000_000)
      )
      const after = (yield* readAll(1)).map((e) => [e.ts - T0, JSON.parse(e.json).number])
      const expected = earlierEntries
        .filter((e) => e.stream_id === 1)
        .map((e) => [e.ts - T0, e.ts === T0 + 3_000_000 ? 100 : JSON.parse(e.point).number])
      expected.splice(41, 0, [40_500_000, 200])
      expected.push([80_000_000, 300])
      assert.deepStrictEqual(after, expected)

      // Decimation's ids name entries by stream and ts; the newest entry is never deleted.
      const chunk = yield* stores.decimationStore.entries(1 as StreamId, {
        after: null,
        before: micros(T0 + 2_500_000),
        limit: 10
      })
      assert.deepStrictEqual(
        chunk.map((e) => [e.ts - T0, e.value]),
        [
          [0, 0],
          [1_000_000, 1],
          [2_000_000, 2]
        ]
      )
      const deleted = yield* stores.decimationStore.deleteEntries(1 as StreamId, [
        ...chunk.map((e) => e.id),
        `1/${T0 + 80_000_000}` as EntryId,
        `2/${T0 + 5}` as EntryId
      ])
      assert.strictEqual(deleted, 3)
      assert.deepStrictEqual(
        (yield* readAll(1)).slice(0, 2).map((e) => e.ts - T0),
        [3_000_000, 4_000_000]
      )
      assert.strictEqual((yield* readAll(1)).at(-1)!.ts, micros(T0 + 80_000_000))
      assert.strictEqual((yield* readAll(2)).length, 3)

      // Deleting a widget deletes its blocks.
      yield* stores.accountStore.deleteWidget("acc" as AccountId, "gone")
      const check = new Database(filename, { readonly: true })
      try {
        assert.deepStrictEqual(check.prepare("SELECT count(*) FROM entry_blocks WHERE stream_id = 3").pluck().get(), 0)
        assert.strictEqual(entryRows(check, 1).length, 70 + 2 - 3)
      } finally {
        check.close()
      }
    })
  )
})
