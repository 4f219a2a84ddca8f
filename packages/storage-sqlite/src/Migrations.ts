import { schemaProblem, type StorageFailure, StorageUnavailable, summarizeBlock } from "@dashstream/core"
import type Database from "better-sqlite3"
import * as Fs from "node:fs"
import { Effect, Runtime, Schedule } from "effect"
import { type Kysely, type Migration, type MigrationResultSet, Migrator, sql } from "kysely"
import { acquire, type Connection, type SqliteConfig } from "./internal/database.js"
import { sqliteCode, storageFailure } from "./internal/errors.js"
import * as M0001 from "./migrations/0001_initial.js"
import * as M0002 from "./migrations/0002_live.js"
import * as M0003 from "./migrations/0003_dashboards.js"
import * as M0004 from "./migrations/0004_live_sequence.js"
import * as M0005 from "./migrations/0005_console_sessions.js"
import * as M0006 from "./migrations/0006_rotations.js"
import * as M0007 from "./migrations/0007_entry_blocks.js"
import * as M0008 from "./migrations/0008_view_token_text.js"
import * as M0009 from "./migrations/0009_alerts.js"
import * as M0010 from "./migrations/0010_alert_leases.js"
import * as M0011 from "./migrations/0011_rule_signals.js"
import * as M0012 from "./migrations/0012_rule_receiver_signals.js"
import * as M0013 from "./migrations/0013_block_summaries.js"

/**
 * Every migration, by name; applied in name order. Static (no file-system scan), so a bundled or tsx-run server
 * migrates the same way.
 */
const migrations: Readonly<Record<string, Migration>> = {
  "0001_initial": M0001,
  "0002_live": M0002,
  "0003_dashboards": M0003,
  "0004_live_sequence": M0004,
  "0005_console_sessions": M0005,
  "0006_rotations": M0006,
  "0007_entry_blocks": M0007,
  "0008_view_token_text": M0008,
  "0009_alerts": M0009,
  "0010_alert_leases": M0010,
  "0011_rule_signals": M0011,
  "0012_rule_receiver_signals": M0012,
  "0013_block_summaries": M0013
}

/** The names of every migration this version knows, in the order they run. */
export const migrationNames: ReadonlyArray<string> = Object.keys(migrations).sort()

/**
 * How long a process waits for the file's write lock before it gives up migrating, in milliseconds: another process
 * holds it while it migrates the file (a new file takes well under a second; 0007 on a large one, minutes).
 */
const migrationWaitMillis = 30_000

/**
 * Brings the schema of an open database up to date with Kysely's `Migrator` and returns the names of the migrations
 * it applied (empty when already up to date). Fails with `StorageError`, e.g. when the database holds a migration
 * this code does not know (a newer version wrote it); the migrations are then all rolled back.
 *
 * Safe when several processes open a file at once (`serve` and a CLI command on a new file): Kysely takes no
 * migration lock on SQLite, so the check of what is applied and the migrations run in one `BEGIN IMMEDIATE`
 * transaction, which holds the file's write lock. The others wait for it (busy timeout, then retries) and then find
 * the migrations applied. A file already up to date is recognised by a read, without the lock. After
 * {@link migrationWaitMillis} of waiting, fails with `StorageUnavailable` saying so (docs/api.md section 8.2). 0007 on a large file thus converts in one transaction: until its commit the WAL holds
 * the new blocks (disk space about the size of the compacted file), then {@link compactAfterBlocks} runs.
 */
export const runMigrations = (connection: Connection): Effect.Effect<ReadonlyArray<string>, StorageFailure> =>
  Effect.runtime<never>().pipe(
    Effect.flatMap((runtime) => {
      // 0007 converts every entry (minutes on a large database): its progress is logged.
      const told: M0007.Progress = (converted, total) =>
        Runtime.runSync(runtime)(
          Effect.logInfo(`migration 0007_entry_blocks: ${converted} of ${total} entries converted into blocks`)
        )
      // 0013 summarises every stored block (core's rule, given to it): its progress is logged too.
      const summarised: M0013.Progress = (done, total) =>
        Runtime.runSync(runtime)(
          Effect.logInfo(`migration 0013_block_summaries: ${done} of ${total} blocks summarised`)
        )
      const all = {
        ...migrations,
        "0007_entry_blocks": { ...M0007, up: (db: Kysely<any>) => M0007.convert(db, told) },
        "0013_block_summaries": {
          ...M0013,
          up: (db: Kysely<any>) => M0013.addSummaries(db, summarizeBlock, summarised)
        }
      }
      return Effect.tryPromise({ try: () => migrateLocked(connection, all), catch: storageFailure })
    }),
    Effect.flatMap(({ error, results }) =>
      error === undefined
        ? Effect.succeed((results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName))
        : Effect.fail(storageFailure(error))
    ),
    Effect.retry({
      while: (e) => e._tag === "StorageUnavailable",
      schedule: Schedule.spaced("100 millis").pipe(Schedule.upTo(`${migrationWaitMillis} millis`))
    }),
    Effect.catchTag("StorageUnavailable", ({ cause }) =>
      Effect.fail(
        new StorageUnavailable({
          cause: new Error(
            `another process held the file's write lock for over ${migrationWaitMillis / 1000} s while this one ` +
              `waited to bring its schema up to date (${errorText(cause)}); run the command again once the other ` +
              "has finished migrating"
          )
        })
      )
    ),
    Effect.tap((applied) =>
      applied.includes("0007_entry_blocks") ? compactAfterBlocks(connection.kysely) : Effect.void
    )
  )

/**
 * Kysely's `Migrator` inside one `BEGIN IMMEDIATE` transaction on the connection (see {@link runMigrations}):
 * committed when every migration succeeded, rolled back otherwise. Rejects with SQLite's `SQLITE_BUSY` when another
 * connection held the write lock past the busy timeout.
 */
const migrateLocked = (
  { db, kysely }: Connection,
  all: Readonly<Record<string, Migration>>
): Promise<MigrationResultSet> =>
  kysely.connection().execute(async (connection) => {
    // A file already up to date (the same rule as a copy's source check) is opened without the lock.
    if (schemaProblem(appliedMigrations(db), migrationNames) === undefined) return { results: [] }
    await sql`BEGIN IMMEDIATE`.execute(connection)
    let committed = false
    try {
      const outcome = await new Migrator({
        db: connection,
        provider: { getMigrations: () => Promise.resolve(all) }
      }).migrateToLatest()
      if (outcome.error === undefined) {
        await sql`COMMIT`.execute(connection)
        committed = true
      }
      return outcome
    } finally {
      // A statement that failed may have ended the transaction already: then there is nothing to roll back.
      if (!committed) await sql`ROLLBACK`.execute(connection).catch(() => undefined)
    }
  })

/**
 * The migrations recorded in the file `db`; none when it has no migration table or is not a database at all. Read
 * without the write lock: {@link migrateLocked} takes the lock only when they differ from the ones this version knows.
 */
export const appliedMigrations = (db: Database.Database): Array<string> => {
  try {
    const table = db
      .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'")
      .pluck(true)
      .get()
    return table === undefined ? [] : db.prepare<[], string>("SELECT name FROM kysely_migration").pluck(true).all()
  } catch (cause) {
    if (sqliteCode(cause) === "SQLITE_NOTADB") return []
    throw cause
  }
}

const errorText = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/** How much of a file must be free pages before {@link compactAfterBlocks} rewrites it: a tenth. */
const compactFreeShare = 0.1

/**
 * After 0007 converted a file's entries into blocks, the dropped `entries` table leaves its pages free (57% of a
 * 20,000,000-entry file, docs/benchmarks.md): the file keeps its size and random reads of a cold file touch more of
 * the disk. When at least a tenth of the file is free pages, this runs `VACUUM` (which rewrites the file: 8 s for
 * that file, 2.27 GB to 0.98 GB) and truncates the WAL, logging before and after.
 *
 * `VACUUM` writes the compacted file into the WAL, then copies it back, so it needs about twice the compacted size
 * free on the file's disk. When the disk has less (`statfs`), or `VACUUM` fails, nothing is lost: the file is
 * left as it is, usable, and a warning tells how to compact it later. Never fails. `:memory:` is skipped.
 */
const compactAfterBlocks = (kysely: Kysely<any>): Effect.Effect<void> =>
  Effect.gen(function* () {
    const pragma = <A>(text: string) =>
      Effect.tryPromise(() => sql.raw<A>(text).execute(kysely)).pipe(Effect.map((r) => r.rows))
    const [file] = yield* pragma<{ file: string }>("PRAGMA main.database_list")
    const filename = file?.file ?? ""
    if (filename === "") return
    const [{ page_count: pages = 0 } = {}] = yield* pragma<{ page_count: number }>("PRAGMA page_count")
    const [{ freelist_count: free = 0 } = {}] = yield* pragma<{ freelist_count: number }>("PRAGMA freelist_count")
    const [{ page_size: pageSize = 4096 } = {}] = yield* pragma<{ page_size: number }>("PRAGMA page_size")
    if (pages === 0 || free / pages < compactFreeShare) return
    const size = (bytes: number) =>
      bytes < 1048576 ? `${Math.ceil(bytes / 1024)} KiB` : `${(bytes / 1048576).toFixed(1)} MiB`
    const mib = (pageCount: number) => size(pageCount * pageSize)
    const needed = 2 * (pages - free) * pageSize
    const stats = yield* Effect.try(() => Fs.statfsSync(filename))
    const available = stats.bavail * stats.bsize
    const later = `stop the server and run: sqlite3 ${JSON.stringify(filename)} VACUUM`
    if (available < needed) {
      return yield* Effect.logWarning(
        `migration 0007_entry_blocks: ${mib(free)} of the ${mib(pages)} file are free pages; compacting it needs ` +
          `about ${size(needed)} free on its disk and ${size(available)} are: left as it is (it works; to compact it later, ${later})`
      )
    }
    yield* Effect.logInfo(`migration 0007_entry_blocks: compacting the file (${mib(free)} of ${mib(pages)} free)`)
    const started = Date.now()
    yield* pragma("VACUUM")
    yield* pragma("PRAGMA wal_checkpoint(TRUNCATE)")
    const [{ page_count: after = 0 } = {}] = yield* pragma<{ page_count: number }>("PRAGMA page_count")
    yield* Effect.logInfo(
      `migration 0007_entry_blocks: compacted the file from ${mib(pages)} to ${mib(after)} in ` +
        `${((Date.now() - started) / 1000).toFixed(1)} s`
    )
  }).pipe(
    Effect.catchAllCause((cause) =>
      Effect.logWarning("migration 0007_entry_blocks: compacting the file failed; it is left as it is and works", cause)
    )
  )

/**
 * Opens the database (creating the file and its directory if missing), brings its schema up to date and closes it:
 * the CLI's `dashstream migrate` (docs/api.md section 8). Succeeds with the names of the migrations applied, in order
 * (empty when the schema was already current). Fails with `StorageError` or `StorageUnavailable`.
 */
export const migrate = (config: SqliteConfig): Effect.Effect<ReadonlyArray<string>, StorageFailure> =>
  Effect.scoped(Effect.flatMap(acquire(config), runMigrations))
