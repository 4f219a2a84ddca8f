import * as Fs from "node:fs"
import type Database from "better-sqlite3"
import {
  type AccessKeyRecord,
  type AccountRecord,
  alertCopyTables,
  type AlertRowRecord,
  type AlertTable,
  type CopySource,
  type CopyTarget,
  type DashboardRecord,
  type EntryRecord,
  type RotationRecord,
  schemaProblem,
  type StorageFailure,
  type StoreCopy,
  type StoreCounts,
  type StreamId,
  type StreamRecord,
  SourceRefused
} from "@dashstream/core"
import { type Context, Effect, type Scope } from "effect"
import { acquire, acquireReadOnly, type SqliteConfig } from "./internal/database.js"
import { entriesAfter } from "@dashstream/core/entryBlocks"
import { Sql } from "./internal/statements.js"
import { EntryBatch, prepareBlockStatements } from "./internal/writePath.js"
import { storageFailure } from "./internal/errors.js"
import { appliedMigrations, migrationNames, runMigrations } from "./Migrations.js"

// Below every valid key: stream ids start at 1, `ts` at 0 (or slightly below, for clients' own timestamps).
const NO_LOWER_BOUND = Number.MIN_SAFE_INTEGER

const attempt = <A>(f: () => A): Effect.Effect<A, StorageFailure> => Effect.try({ try: f, catch: storageFailure })

/**
 * The `StoreCopy` port over an open, migrated better-sqlite3 connection (docs/api.md section 12).
 *
 * `read` holds one read transaction (`BEGIN`, then the first statement fixes the snapshot; in WAL mode writers of
 * other connections go on meanwhile and are not seen). `write` holds one `BEGIN IMMEDIATE` transaction, committed
 * (one WAL sync with `synchronous=FULL`) only when its body succeeded. Inserts are prepared statements run row by
 * row inside it; explicit stream ids advance the `AUTOINCREMENT` counter, so streams created later get higher ids.
 * Throws when the statements cannot be prepared (schema missing).
 */
export const make = (db: Database.Database): Context.Tag.Service<StoreCopy> => {
  const begin = db.prepare("BEGIN")
  const beginImmediate = db.prepare("BEGIN IMMEDIATE")
  const commit = db.prepare("COMMIT")
  const rollback = db.prepare("ROLLBACK")
  const countRow = db.prepare<
    [],
    { accounts: number; accessKeys: number; widgets: number; dashboards: number; rotations: number }
  >(
    `SELECT (SELECT count(*) FROM accounts) AS accounts, (SELECT count(*) FROM access_keys) AS accessKeys,
       (SELECT count(*) FROM streams) AS widgets, (SELECT count(*) FROM dashboards) AS dashboards,
       (SELECT count(*) FROM rotations) AS rotations`
  )
  const entryCounts = db
    .prepare<[], [number, number]>("SELECT stream_id, sum(n) FROM entry_blocks GROUP BY stream_id")
    .raw(true)
  const countAccounts = db.prepare<[], number>("SELECT count(*) FROM accounts").pluck(true)
  const accounts = db.prepare<[string, number], AccountRecord>(
    "SELECT id, name, created_at AS createdAt FROM accounts WHERE id > ? ORDER BY id LIMIT ?"
  )
  const accessKeys = db.prepare<[string, number], AccessKeyRecord>(
    `SELECT digest, account_id AS accountId, created_at AS createdAt, revoked_at AS revokedAt
       FROM access_keys WHERE digest > ? ORDER BY digest LIMIT ?`
  )
  const streams = db.prepare<[number, number], StreamRecord>(
    `SELECT id, account_id AS accountId, name, type, created_at AS createdAt, last_ts AS lastTs,
       cleared_ts AS clearedTs FROM streams WHERE id > ? ORDER BY id LIMIT ?`
  )
  const dashboards = db.prepare<[string, number], DashboardRecord>(
    `SELECT id, account_id AS accountId, name, tiles, view_token AS viewToken, view_token_text AS viewTokenText,
       created_at AS createdAt FROM dashboards WHERE id > ? ORDER BY id LIMIT ?`
  )
  const rotations = db.prepare<[string, number], Omit<RotationRecord, "dashboardIds"> & { dashboardIds: string }>(
    `SELECT id, account_id AS accountId, name, interval_seconds AS intervalSeconds, view_token AS viewToken,
       view_token_text AS viewTokenText, created_at AS createdAt,
       (SELECT json_group_array(dashboard_id ORDER BY position) FROM rotation_dashboards
         WHERE rotation_id = rotations.id) AS dashboardIds
       FROM rotations WHERE id > ? ORDER BY id LIMIT ?`
  )
  const blocksFrom = db.prepare<[number, number, number, number], Buffer>(Sql.blocksFrom).pluck()
  const entries = {
    all: (stream: number, after: number, limit: number): Array<EntryRecord> =>
      entriesAfter(
        blocksFrom.iterate(stream, stream, after, after),
        after,
        limit,
        (e) => ({ ts: e.ts, value: e.value, point: e.json }) as EntryRecord
      )
  }
  const insertAccount = db.prepare<[string, string, number]>(
    "INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)"
  )
  const insertAccessKey = db.prepare<[string, string, number, number | null]>(
    "INSERT INTO access_keys (digest, account_id, created_at, revoked_at) VALUES (?, ?, ?, ?)"
  )
  const insertStream = db.prepare<[number, string, string, string, number, number | null, number | null]>(
    "INSERT INTO streams (id, account_id, name, type, created_at, last_ts, cleared_ts) VALUES (?, ?, ?, ?, ?, ?, ?)"
  )
  const insertDashboard = db.prepare<[string, string, string, string, string, string | null, number]>(
    `INSERT INTO dashboards (id, account_id, name, tiles, view_token, view_token_text, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`
  )
  const insertRotation = db.prepare<[string, string, string, number, string, string | null, number]>(
    `INSERT INTO rotations (id, account_id, name, interval_seconds, view_token, view_token_text, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`
  )
  const insertRotationDashboard = db.prepare<[string, number, string]>(
    "INSERT INTO rotation_dashboards (rotation_id, position, dashboard_id) VALUES (?, ?, ?)"
  )
  // Entries arrive ascending by ts, page by page, into an empty stream: the write path's batch appends them to blocks.
  const insertBatch = new EntryBatch(prepareBlockStatements(db))

  // The alert tables by name (names from core's fixed list, never from input): their reads, counts and inserts.
  const alertReads = new Map(
    alertCopyTables.map(({ table, order }) => [
      table,
      db.prepare<[number, number], AlertRowRecord>(`SELECT * FROM ${table} ORDER BY ${order} LIMIT ? OFFSET ?`)
    ])
  )
  const alertCounts = new Map(
    alertCopyTables.map(({ table }) => [table, db.prepare<[], number>(`SELECT count(*) FROM ${table}`).pluck(true)])
  )
  const alertInserts = new Map<string, Database.Statement>()
  const insertAlertRow = (table: AlertTable, row: AlertRowRecord) => {
    const columns = Object.keys(row)
    const key = `${table}(${columns.join(",")})`
    let statement = alertInserts.get(key)
    if (statement === undefined) {
      statement = db.prepare(
        `INSERT INTO ${table} (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`
      )
      alertInserts.set(key, statement)
    }
    // A PostgreSQL source reads bigint columns as decimal text: SQLite's strict integer columns take it as the number.
    statement.run(...columns.map((column) => row[column]))
  }

  const counts = attempt((): StoreCounts => {
    const row = countRow.get()!
    const byStream = new Map<StreamId, number>()
    for (const [stream, n] of entryCounts.all()) byStream.set(stream as StreamId, n)
    return {
      accounts: row.accounts,
      accessKeys: row.accessKeys,
      widgets: row.widgets,
      dashboards: row.dashboards,
      rotations: row.rotations,
      alertRows: Object.fromEntries(
        alertCopyTables.map(({ table }) => [table, alertCounts.get(table)!.get()!])
      ) as StoreCounts["alertRows"],
      entries: byStream
    }
  })

  const source: CopySource = {
    counts,
    accounts: (after, limit) => attempt(() => accounts.all(after ?? "", limit)),
    accessKeys: (after, limit) => attempt(() => accessKeys.all(after ?? "", limit)),
    streams: (after, limit) => attempt(() => streams.all(after ?? NO_LOWER_BOUND, limit)),
    dashboards: (after, limit) => attempt(() => dashboards.all(after ?? "", limit)),
    rotations: (after, limit) =>
      attempt(() =>
        rotations
          .all(after ?? "", limit)
          .map((r) => ({ ...r, dashboardIds: JSON.parse(r.dashboardIds) as RotationRecord["dashboardIds"] }))
      ),
    entries: (stream, after, limit) => attempt(() => entries.all(stream, after ?? NO_LOWER_BOUND, limit)),
    alertRows: (table, offset, limit) => attempt(() => alertReads.get(table)!.all(limit, offset))
  }

  const target: CopyTarget = {
    countAccounts: attempt(() => countAccounts.get()!),
    insertAccounts: (rows) =>
      attempt(() => {
        for (const r of rows) insertAccount.run(r.id, r.name, r.createdAt)
      }),
    insertAccessKeys: (rows) =>
      attempt(() => {
        for (const r of rows) insertAccessKey.run(r.digest, r.accountId, r.createdAt, r.revokedAt)
      }),
    insertStreams: (rows) =>
      attempt(() => {
        for (const r of rows) insertStream.run(r.id, r.accountId, r.name, r.type, r.createdAt, r.lastTs, r.clearedTs)
      }),
    insertDashboards: (rows) =>
      attempt(() => {
        for (const r of rows)
          insertDashboard.run(r.id, r.accountId, r.name, r.tiles, r.viewToken, r.viewTokenText, r.createdAt)
      }),
    insertRotations: (rows) =>
      attempt(() => {
        for (const r of rows) {
          insertRotation.run(r.id, r.accountId, r.name, r.intervalSeconds, r.viewToken, r.viewTokenText, r.createdAt)
          r.dashboardIds.forEach((d, position) => insertRotationDashboard.run(r.id, position, d))
        }
      }),
    insertEntries: (stream, rows) =>
      attempt(() => {
        for (const r of rows) insertBatch.add(stream, r.ts, r.value, r.point)
        insertBatch.flush()
      }),
    insertAlertRows: (table, rows) =>
      attempt(() => {
        for (const row of rows) insertAlertRow(table, row)
      })
  }

  // Rolls back whatever transaction is still open (a failed or interrupted body); never fails.
  const end = Effect.sync(() => {
    try {
      if (db.open && db.inTransaction) rollback.run()
    } catch {
      // The connection is closing or the transaction is gone: nothing stays uncommitted either way.
    }
  })

  return {
    read: (use) =>
      Effect.acquireUseRelease(
        attempt(() => begin.run()),
        () => use(source),
        () => end
      ),
    write: (use) =>
      Effect.acquireUseRelease(
        attempt(() => beginImmediate.run()),
        () => Effect.tap(use(target), () => attempt(() => commit.run())),
        () => end
      )
  }
}

/**
 * Opens the database file for copying (creating it if missing, with the adapter's pragmas), brings its schema up to
 * date, and provides the `StoreCopy` port over it until the scope closes (then checkpoints and closes the file).
 * Fails with `StorageError` or `StorageUnavailable` as the store's `make` does.
 */
export const open = (
  config: SqliteConfig
): Effect.Effect<Context.Tag.Service<StoreCopy>, StorageFailure, Scope.Scope> =>
  Effect.gen(function* () {
    const connection = yield* acquire(config)
    yield* runMigrations(connection)
    return yield* attempt(() => make(connection.db))
  })

/**
 * Opens an existing Dashstream database file as the source of a copy (docs/api.md section 12), read-only: nothing in
 * the file is written (its schema is not migrated, no WAL checkpoint), and a missing file is not created. Provides
 * the `StoreCopy` port over it until the scope closes; use only its `read` (a `write` fails: the connection is
 * read-only).
 *
 * Fails with `SourceRefused` when the file does not exist (`missing`), holds no Dashstream schema (an empty file,
 * another application's database, a file that is not a database: `not-dashstream`), or a Dashstream schema other
 * than this version's (`older`, `newer`); with `StorageError` or `StorageUnavailable` when it cannot be read.
 */
export const openSource = (
  config: Pick<SqliteConfig, "filename" | "busyTimeoutMillis">
): Effect.Effect<Context.Tag.Service<StoreCopy>, StorageFailure | SourceRefused, Scope.Scope> =>
  Effect.gen(function* () {
    if (!Fs.existsSync(config.filename)) return yield* new SourceRefused({ problem: "missing" })
    const db = yield* acquireReadOnly(config)
    const problem = schemaProblem(yield* attempt(() => appliedMigrations(db)), migrationNames)
    if (problem !== undefined) return yield* new SourceRefused({ problem })
    return yield* attempt(() => make(db))
  })
