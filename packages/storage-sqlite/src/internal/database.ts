import * as Fs from "node:fs"
import * as Path from "node:path"
import Database from "better-sqlite3"
import type { StorageFailure } from "@dashstream/core"
import { Effect, type Scope } from "effect"
import { Kysely, SqliteDialect } from "kysely"
import { storageFailure } from "./errors.js"
import type { LockWait } from "./groupCommit.js"
import type { Tables } from "./tables.js"

/** Where and how to open the database. */
export interface SqliteConfig {
  /**
   * Path of the database file; its parent directory is created if missing. `:memory:` opens a private in-memory
   * database (no WAL, nothing durable).
   */
  readonly filename: string
  /**
   * How long a statement waits for a lock held by another process (the CLI beside a running server) before failing
   * with `StorageUnavailable`, in milliseconds; default 5000. better-sqlite3 is synchronous, so the wait blocks
   * the event loop: keep it short.
   */
  readonly busyTimeoutMillis?: number
  /**
   * SQLite's `synchronous` pragma; default `"full"`. `"full"` syncs the WAL to disk on every commit, so an
   * acknowledged write survives a power cut (docs/api.md section 5: a 200 means the data is durably stored).
   * `"normal"` skips that sync: a commit survives a crash of the process but may be lost on a power cut or OS crash.
   * Only for benchmarks and throwaway data.
   */
  readonly synchronous?: "full" | "normal"
  /**
   * Group commit; default `true`. `StreamStore.write` calls that arrive together (in the same event-loop turn) are
   * applied in one transaction, each in its own savepoint, and acknowledged after its one commit. With
   * `synchronous` FULL, that commit does not sync on the event loop: the WAL file is `fsync`ed on the thread pool,
   * one sync for every group committed while the previous one ran, and the group's calls are acknowledged after
   * it (see `internal/walSync.ts`). `false` commits each call on its own, syncing on the event loop (for
   * comparison in benchmarks).
   */
  readonly groupCommit?: boolean
  /**
   * How a group commit waits for the write lock while another process holds it (`serve --workers N`: every worker
   * writes the file); default SQLite's busy handler, which sleeps on the event loop up to `busyTimeoutMillis`. See
   * `LockWait`.
   */
  readonly lockWait?: LockWait
}

/** An open database: the better-sqlite3 connection and a Kysely instance over the same connection. */
export interface Connection {
  readonly db: Database.Database
  readonly kysely: Kysely<Tables>
}

/**
 * The largest part of the database file, in bytes, a connection reads through a memory map (SQLite's `mmap_size`
 * pragma): 2 GiB less 64 KiB, the most the bundled SQLite allows (`SQLITE_MAX_MMAP_SIZE`; a larger value is capped
 * to it). Pages past it are read with `pread` as without a map.
 */
export const mmapSizeBytes = 0x7fff0000

const isMemory = (filename: string) => filename === ":memory:" || filename === ""

/**
 * Creates `dir` and its missing parents, one level at a time. Not `mkdirSync(dir, { recursive: true })`: where
 * `mkdir` answers ENOENT although the parent exists (under `/proc`), Node's recursive form retries forever on the
 * event loop (100% CPU, no output, SIGTERM never handled). Here that ENOENT is thrown: the command fails with it.
 */
const makeDirectory = (dir: string): void => {
  const missing: Array<string> = []
  for (let current = dir; !Fs.existsSync(current); current = Path.dirname(current)) {
    missing.push(current)
    if (Path.dirname(current) === current) break
  }
  for (const directory of missing.reverse()) {
    try {
      Fs.mkdirSync(directory)
    } catch (error) {
      // Made meanwhile by another process opening the same file (`serve --workers N`): fine.
      if ((error as { code?: unknown }).code !== "EEXIST") throw error
    }
  }
}

const open = (config: SqliteConfig): Database.Database => {
  if (!isMemory(config.filename)) makeDirectory(Path.dirname(Path.resolve(config.filename)))
  const db = new Database(config.filename, { timeout: config.busyTimeoutMillis ?? 5000 })
  try {
    db.pragma("journal_mode = WAL")
    // FULL syncs the WAL on every commit: a 200 means the data survives a power cut (docs/api.md section 5).
    db.pragma(config.synchronous === "normal" ? "synchronous = NORMAL" : "synchronous = FULL")
    db.pragma("foreign_keys = ON")
    // Statement journals in memory: a multi-row upsert that changes more than 64 KiB of existing pages (a 32-row
    // statement over 32 streams) would otherwise spill its journal to a temporary file, created and written for
    // every such statement (100-stream pushes 1.3-1.7x faster without, measured). At most the pages one statement
    // touches, about 1 MiB for the largest push the contract allows.
    db.pragma("temp_store = MEMORY")
    // Pages read through a memory map of the file instead of a `pread` into SQLite's page cache each: a read of a
    // stream no cache holds (a widget lookup and the latest entry: four B-tree leaves out of a 1 GB file at a million
    // streams) costs no system call once the page is mapped. Server CPU per latest read of random streams among
    // 1,000,000: 151-169 µs against 183-202 (docs/benchmarks.md, scalelatest). Reads only: writes still go through
    // the WAL and checkpoints with `pwrite` (SQLite maps read-only), so durability is unchanged. Costs: the mapped
    // pages (the OS's file cache) count in the process's RSS, and a disk read error under a mapped page ends the
    // process (SIGBUS) where a `pread` would have failed one request.
    db.pragma(`mmap_size = ${mmapSizeBytes}`)
    return db
  } catch (cause) {
    db.close()
    throw cause
  }
}

const close = (db: Database.Database): void => {
  if (!db.open) return
  try {
    // Fold the WAL back into the database file, so a copy of the file alone is complete.
    db.pragma("wal_checkpoint(TRUNCATE)")
  } finally {
    db.close()
  }
}

/**
 * Opens an existing database file read-only, for `dashstream copy`'s source (docs/api.md section 12): no pragma that
 * writes (the file keeps its WAL mode), no directory or file created (`fileMustExist`), and it is closed without a
 * checkpoint when the scope closes, so the database file is never written. Fails with `StorageError` (e.g. the file
 * is missing or is not a database) or `StorageUnavailable` (locked).
 */
export const acquireReadOnly = (
  config: Pick<SqliteConfig, "filename" | "busyTimeoutMillis">
): Effect.Effect<Database.Database, StorageFailure, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: () =>
        new Database(config.filename, {
          readonly: true,
          fileMustExist: true,
          timeout: config.busyTimeoutMillis ?? 5000
        }),
      catch: storageFailure
    }),
    (db) => Effect.sync(() => db.close())
  )

/**
 * Opens the database with the adapter's pragmas (WAL, `synchronous` FULL unless configured otherwise, `busy_timeout`,
 * foreign keys, reads through a memory map of {@link mmapSizeBytes}) and closes it, after a WAL checkpoint, when the
 * scope closes. Fails with `StorageError` (e.g. the file is not a database or the directory cannot be created) or
 * `StorageUnavailable` (locked).
 */
export const acquire = (config: SqliteConfig): Effect.Effect<Connection, StorageFailure, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.try({
      try: (): Connection => {
        const db = open(config)
        return { db, kysely: new Kysely<Tables>({ dialect: new SqliteDialect({ database: db }) }) }
      },
      catch: storageFailure
    }),
    ({ db }) =>
      Effect.try(() => close(db)).pipe(
        Effect.catchAll((error) => Effect.logWarning("closing the SQLite database failed", error.error))
      )
  )
