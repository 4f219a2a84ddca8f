import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import Database from "better-sqlite3"
import {
  type Account,
  digestAccessKey,
  micros,
  newAccessKey,
  newAccountId,
  type PointOp,
  StreamName,
  type Widget
} from "@dashstream/core"
import {
  blockSummaryFallbackSuite,
  changeFeedSuite,
  dashboardSuite,
  rotationSuite,
  sessionSuite,
  storageSuite
} from "@dashstream/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import * as SqliteStore from "../src/index.js"
import { acquire, mmapSizeBytes } from "../src/internal/database.js"
import { Sql } from "../src/internal/statements.js"
import { entryRows, insertEntryRow } from "./fixtures/entryRows.js"

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-sqlite-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => Path.join(dir, `store-${++files}.db`)

storageSuite("sqlite", () => SqliteStore.layer({ filename: freshFile() }))
storageSuite("sqlite without group commit", () => SqliteStore.layer({ filename: freshFile(), groupCommit: false }))
blockSummaryFallbackSuite("sqlite", () => {
  const filename = freshFile()
  return {
    layer: SqliteStore.layer({ filename }),
    // Another connection to the file, as a backfill part-way or a corrupted summary would leave it.
    change: (change) =>
      Effect.sync(() => {
        const db = new Database(filename)
        try {
          const sql =
            change === "forget"
              ? "UPDATE entry_blocks SET summary = NULL WHERE summary IS NOT NULL"
              : "UPDATE entry_blocks SET summary = (SELECT summary FROM entry_blocks WHERE summary IS NOT NULL " +
                "ORDER BY first_ts LIMIT 1) WHERE summary IS NOT NULL"
          return db.prepare(sql).run().changes
        } finally {
          db.close()
        }
      })
  }
})
changeFeedSuite("sqlite", () => SqliteStore.layer({ filename: freshFile() }))
changeFeedSuite("sqlite without group commit", () => SqliteStore.layer({ filename: freshFile(), groupCommit: false }))
dashboardSuite("sqlite", () => SqliteStore.layer({ filename: freshFile() }))
rotationSuite("sqlite", () => SqliteStore.layer({ filename: freshFile() }))
sessionSuite("sqlite", () => SqliteStore.layer({ filename: freshFile() }))

const T0 = 1_700_000_000_000_000

// An account with one widget, through the ports.
const setup = (stores: SqliteStore.SqliteStores, type: Widget["type"] = "number", name = "s") =>
  Effect.gen(function* () {
    const account: Account = { id: newAccountId(), name: "a", createdAt: T0 }
    const accessKey = newAccessKey()
    yield* stores.accountStore.createAccount(account, digestAccessKey(accessKey))
    const widget = yield* stores.accountStore.createWidget(account.id, StreamName.make(name), type, T0)
    return { account, accessKey, widget }
  })

const push = (stores: SqliteStore.SqliteStores, widget: Widget, op: PointOp, now: number) =>
  stores.streamStore.write([{ widget, op, path: "point" }], micros(now))

// A second connection to the file, as another process would open it.
const withRawDb = <A>(filename: string, f: (db: Database.Database) => A): A => {
  const db = new Database(filename)
  try {
    return f(db)
  } finally {
    db.close()
  }
}

describe("SQLite adapter", () => {
  it.effect(
    "the synchronous lookups answer what findAccountByKey and findWidgets answer; an absent widget is null",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const stores = yield* SqliteStore.make({ filename: freshFile() })
          const { account, accessKey, widget } = yield* setup(stores, "sparkline", "series")
          const accounts = stores.accountStore
          assert.strictEqual(accounts.peekAccount(accessKey), account.id)
          assert.deepStrictEqual(
            accounts.peekWidget(account.id, "series"),
            (yield* accounts.findWidgets(account.id, ["series"])).get("series")
          )
          assert.deepStrictEqual(accounts.peekWidget(account.id, "series"), widget)
          assert.isUndefined(accounts.peekAccount(newAccessKey()))
          assert.isNull(accounts.peekWidget(account.id, "other"))
          // A revoked key and a deleted widget are gone at once (no cache here).
          yield* accounts.addAccessKey(account.id, digestAccessKey(newAccessKey()), T0, true)
          assert.isUndefined(accounts.peekAccount(accessKey))
          yield* accounts.deleteWidget(account.id, "series")
          assert.isNull(accounts.peekWidget(account.id, "series"))
        })
      )
  )

  it.effect("migrate applies every migration once and is idempotent; the layer then opens the file as is", () =>
    Effect.gen(function* () {
      const filename = freshFile()
      assert.deepStrictEqual(yield* SqliteStore.migrate({ filename }), [
        "0001_initial",
        "0002_live",
        "0003_dashboards",
        "0004_live_sequence",
        "0005_console_sessions",
        "0006_rotations",
        "0007_entry_blocks",
        "0008_view_token_text",
        "0009_alerts",
        "0010_alert_leases",
        "0011_rule_signals",
        "0012_rule_receiver_signals",
        "0013_block_summaries"
      ])
      assert.deepStrictEqual(yield* SqliteStore.migrate({ filename }), [])
      const count = yield* Effect.scoped(
        Effect.flatMap(SqliteStore.make({ filename }), (stores) => stores.accountStore.countAccounts)
      )
      assert.strictEqual(count, 0)
      assert.deepStrictEqual(yield* SqliteStore.migrate({ filename }), [])
    })
  )

  it.effect("a database holding a migration this code does not know fails with StorageError", () =>
    Effect.gen(function* () {
      const filename = freshFile()
      yield* SqliteStore.migrate({ filename })
      withRawDb(filename, (db) =>
        db.prepare("INSERT INTO kysely_migration (name, timestamp) VALUES (?, ?)").run("9999_future", "x")
      )
      const error = yield* Effect.flip(SqliteStore.migrate({ filename }))
      assert.strictEqual(error._tag, "StorageError")
    })
  )

  it.effect("creates the database's directory when missing", () =>
    Effect.gen(function* () {
      const filename = Path.join(dir, "nested", "deeper", "dash.db")
      assert.isFalse(Fs.existsSync(Path.dirname(filename)))
      yield* Effect.scoped(SqliteStore.make({ filename }))
      assert.isTrue(Fs.existsSync(filename))
    })
  )

  it.effect("opens with WAL, synchronous=FULL, foreign keys, the busy timeout and the file memory-mapped", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db } = yield* acquire({ filename: freshFile(), busyTimeoutMillis: 1234 })
        assert.strictEqual(db.pragma("journal_mode", { simple: true }), "wal")
        assert.strictEqual(db.pragma("synchronous", { simple: true }), 2)
        assert.strictEqual(db.pragma("foreign_keys", { simple: true }), 1)
        assert.strictEqual(db.pragma("busy_timeout", { simple: true }), 1234)
        // Reads of a large file go through the map (SQLite's default is 0: no map).
        assert.strictEqual(db.pragma("mmap_size", { simple: true }), mmapSizeBytes)
      })
    )
  )

  it.effect("data survives close and reopen, including the stream's highest ts", () =>
    Effect.gen(function* () {
      const filename = freshFile()
      const { accessKey, widget } = yield* Effect.scoped(
        Effect.gen(function* () {
          const stores = yield* SqliteStore.make({ filename })
          const created = yield* setup(stores, "number")
          yield* push(
            stores,
            created.widget,
            { _tag: "Put", entries: [{ point: { number: 1, prefix: "$" } }] },
            T0 + 10
          )
          yield* push(stores, created.widget, { _tag: "Delta", delta: 2 }, T0 + 20)
          return created
        })
      )
      // The checkpoint on close folded the WAL into the database file.
      assert.isFalse(Fs.existsSync(`${filename}-wal`) && Fs.statSync(`${filename}-wal`).size > 0)
      yield* Effect.scoped(
        Effect.gen(function* () {
          const stores = yield* SqliteStore.make({ filename })
          const account = yield* stores.accountStore.findAccountByKey(digestAccessKey(accessKey))
          assert.strictEqual(Option.getOrNull(account), widget.accountId)
          const found = yield* stores.accountStore.findWidgets(widget.accountId, [widget.streamName])
          assert.deepStrictEqual(found.get(widget.streamName), widget)
          yield* push(stores, widget, { _tag: "Delta", delta: 3 }, T0)
          const entries = yield* stores.streamStore.read(widget.id, { since: micros(0), limit: null })
          assert.deepStrictEqual(entries, [
            { ts: micros(T0 + 10), json: '{"number":1,"prefix":"$"}' },
            { ts: micros(T0 + 20), json: '{"number":3,"prefix":"$"}' },
            { ts: micros(T0 + 21), json: '{"number":6,"prefix":"$"}' }
          ])
        })
      )
    })
  )

  it.effect("after the layer is closed, calls fail with StorageUnavailable", () =>
    Effect.gen(function* () {
      const { stores, widget } = yield* Effect.scoped(
        Effect.flatMap(SqliteStore.make({ filename: freshFile() }), (stores) =>
          Effect.map(setup(stores), ({ widget }) => ({ stores, widget }))
        )
      )
      const e1 = yield* Effect.flip(push(stores, widget, { _tag: "Delta", delta: 1 }, T0))
      assert.strictEqual(e1._tag, "StorageUnavailable")
      const e2 = yield* Effect.flip(stores.streamStore.ping)
      assert.strictEqual(e2._tag, "StorageUnavailable")
      const e3 = yield* Effect.flip(stores.accountStore.countAccounts)
      assert.strictEqual(e3._tag, "StorageUnavailable")
    })
  )

  it.effect("a write lock held by another connection past busy_timeout is StorageUnavailable; nothing is stored", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const stores = yield* SqliteStore.make({ filename, busyTimeoutMillis: 50 })
        const { widget } = yield* setup(stores)
        const other = new Database(filename)
        other.prepare("BEGIN IMMEDIATE").run()
        const error = yield* Effect.flip(push(stores, widget, { _tag: "Delta", delta: 1 }, T0))
        other.prepare("ROLLBACK").run()
        other.close()
        assert.strictEqual(error._tag, "StorageUnavailable")
        assert.deepStrictEqual(yield* stores.streamStore.read(widget.id, { since: micros(0), limit: null }), [])
        yield* push(stores, widget, { _tag: "Delta", delta: 1 }, T0)
        assert.strictEqual((yield* stores.streamStore.read(widget.id, { since: null, limit: null })).length, 1)
      })
    )
  )

  it.effect("stores the decimation value (number, xy-graph y, null otherwise) and integer microsecond ts", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const stores = yield* SqliteStore.make({ filename })
        const { account, widget: n } = yield* setup(stores, "number", "n")
        const xy = yield* stores.accountStore.createWidget(account.id, StreamName.make("xy"), "xy-graph", T0)
        const label = yield* stores.accountStore.createWidget(account.id, StreamName.make("l"), "label", T0)
        yield* push(stores, n, { _tag: "Put", entries: [{ point: { number: 2.5 } }] }, T0 + 1)
        yield* push(stores, xy, { _tag: "Put", entries: [{ point: { x: 1, y: -4 } }] }, T0 + 2)
        yield* push(stores, label, { _tag: "Put", entries: [{ point: { label: "hi" } }] }, T0 + 3)
        const rows = withRawDb(filename, (db) => ({
          entries: entryRows(db)
            .map(({ stream_id, ts, value }) => ({ stream_id, ts, value }))
            .sort((a, b) => a.ts - b.ts),
          types: db.prepare("SELECT DISTINCT typeof(first_ts), typeof(last_ts) FROM entry_blocks").raw().all()
        }))
        assert.deepStrictEqual(rows, {
          entries: [
            { stream_id: n.id, ts: T0 + 1, value: 2.5 },
            { stream_id: xy.id, ts: T0 + 2, value: -4 },
            { stream_id: label.id, ts: T0 + 3, value: null }
          ],
          types: [["integer", "integer"]]
        })
      })
    )
  )

  it.effect("reads return the stored JSON text verbatim (no parse and re-stringify)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const stores = yield* SqliteStore.make({ filename })
        const { widget } = yield* setup(stores, "text-feed")
        const text = '{ "title" : "t",  "msg":"\\u00e9" }'
        withRawDb(filename, (db) => insertEntryRow(db, widget.id, T0, null, text))
        assert.deepStrictEqual(yield* stores.streamStore.read(widget.id, { since: null, limit: null }), [
          { ts: micros(T0), json: text }
        ])
      })
    )
  )

  it.effect("hot-path queries are index lookups (EXPLAIN QUERY PLAN)", () =>
    Effect.gen(function* () {
      const filename = freshFile()
      yield* SqliteStore.migrate({ filename })
      const plan = (sql: string, ...params: ReadonlyArray<unknown>) =>
        withRawDb(filename, (db) =>
          (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ readonly detail: string }>).map(
            (row) => row.detail
          )
        )
      const expectIndexed = (details: ReadonlyArray<string>, expected: string) => {
        assert.isTrue(
          details.some((d) => d.includes(expected)),
          `expected "${expected}" in ${JSON.stringify(details)}`
        )
        for (const d of details) {
          assert.isFalse(/^SCAN (entry_blocks|streams|access_keys|accounts)\b/.test(d), `table scan: ${d}`)
          assert.isFalse(d.includes("TEMP B-TREE"), `sort: ${d}`)
        }
      }
      expectIndexed(plan(Sql.latest, 1), "USING INDEX entry_blocks_stream_ts (stream_id=?)")
      expectIndexed(plan(Sql.blocksFrom, 1, 1, 0, 0), "USING INDEX entry_blocks_stream_ts (stream_id=? AND first_ts>?)")
      expectIndexed(plan(Sql.blockCountsNewestFirst, 1), "USING INDEX entry_blocks_stream_ts (stream_id=?)")
      expectIndexed(plan(Sql.blocksStartingAt, 1, 0), "USING INDEX entry_blocks_stream_ts (stream_id=? AND first_ts>?)")
      expectIndexed(plan(Sql.tail, 1), "USING INDEX entry_blocks_stream_ts (stream_id=?)")
      expectIndexed(plan(Sql.clear, 1), "entry_blocks_stream_ts (stream_id=?)")
      expectIndexed(plan(Sql.lastTs, 1), "USING INTEGER PRIMARY KEY (rowid=?)")
      expectIndexed(plan(Sql.accountByKey, "d"), "USING INDEX sqlite_autoindex_access_keys_1 (digest=?)")
      expectIndexed(plan(Sql.widgetByName, "a", "n"), "USING INDEX streams_account_name (account_id=? AND name=?)")
      expectIndexed(
        plan(Sql.widgetsByNames, "a", '["n","m"]'),
        "USING INDEX streams_account_name (account_id=? AND name=?)"
      )
    })
  )
})
