import {
  type AccountStore,
  type ChangeFeed,
  type ChangeSink,
  type DashboardStore,
  type DecimationStore,
  type SessionStore,
  type SourceRefused,
  StorageError,
  type StorageFailure,
  StorageUnavailable,
  type StoreCopy,
  type StreamStore,
  type WriteObserver
} from "@dashstream/core"
import type * as PostgresAdapter from "@dashstream/storage-postgres"
import type * as SqliteAdapter from "@dashstream/storage-sqlite"
import { Effect, Either, Layer, Redacted, type Scope } from "effect"
import type { Database } from "./Config.js"
import { CommandFailed, UsageError } from "./Errors.js"
import { errorMessage } from "./internal/errorMessage.js"

/**
 * The one place that names a storage adapter: picks SQLite or PostgreSQL from the `--db` URL (contract section 8).
 */

// Each adapter (and its driver) is imported when a command first opens a database of its kind: a SQLite command never
// loads pg, a PostgreSQL one never loads better-sqlite3, and `help` loads neither (startup time, see bench/startup).
const loadSqlite: Effect.Effect<typeof SqliteAdapter> = Effect.promise(() => import("@dashstream/storage-sqlite"))
const loadPostgres: Effect.Effect<typeof PostgresAdapter> = Effect.promise(() => import("@dashstream/storage-postgres"))

/**
 * How one of several processes writing the same SQLite file opens it (`serve --workers N`): `relay` carries the live
 * updates between them (see `ChangeSink`), `lockWait` says how a group commit waits for the write lock another holds
 * (on the event loop, see the adapter's `LockWait`). PostgreSQL needs neither: its pool and `LISTEN`/`NOTIFY` serve
 * several processes as they are.
 */
export interface SharedFile {
  readonly relay: ChangeSink
  readonly lockWait: SqliteAdapter.LockWait
}

/**
 * The storage ports for a database (accounts, stream data, decimation, stored-change notifications, dashboards, console
 * sign-outs). The layer is scoped: the SQLite file or the PostgreSQL pool is closed when the
 * scope that built it closes (on `serve` shutdown, after the HTTP server has finished its requests). Fails with
 * {@link CommandFailed} when the database cannot be opened or reached, {@link UsageError} when the PostgreSQL URL
 * is not one the adapter accepts. `observer`, if given, is told of every group commit (`serve`'s metrics); `shared`,
 * if given, is how a SQLite file shared by several processes is opened (see {@link SharedFile}).
 */
export const layer = (
  database: Database,
  observer?: WriteObserver,
  shared?: SharedFile
): Layer.Layer<
  AccountStore | StreamStore | DecimationStore | ChangeFeed | DashboardStore | SessionStore,
  CommandFailed | UsageError
> =>
  database._tag === "Sqlite"
    ? Layer.unwrapEffect(
        Effect.map(loadSqlite, (Sqlite) =>
          Sqlite.layer(
            shared === undefined
              ? { filename: database.filename }
              : { filename: database.filename, lockWait: shared.lockWait },
            observer,
            shared?.relay
          ).pipe(Layer.mapError((cause) => failure(database, cause)))
        )
      )
    : Layer.unwrapEffect(
        Effect.flatMap(loadPostgres, (Postgres) =>
          Effect.flatMap(postgresConfig(Postgres, database), (config) =>
            // The PostgreSQL layer connects lazily and does not migrate (the SQLite one does, on open): migrate first
            // so every command works on a new database, not only `serve` and `migrate`.
            Postgres.migrate(config).pipe(
              Effect.mapError((cause) => failure(database, cause)),
              Effect.as(Postgres.layer(config, observer))
            )
          )
        )
      )

/**
 * Brings the database schema up to date and returns the names of the migrations it applied (`[]` when the schema
 * was already up to date; a second run does nothing). Fails like {@link layer}.
 */
export const migrate = (database: Database): Effect.Effect<ReadonlyArray<string>, CommandFailed | UsageError> =>
  database._tag === "Sqlite"
    ? Effect.flatMap(loadSqlite, (Sqlite) =>
        Sqlite.migrate({ filename: database.filename }).pipe(Effect.mapError((cause) => failure(database, cause)))
      )
    : Effect.flatMap(loadPostgres, (Postgres) =>
        Effect.flatMap(postgresConfig(Postgres, database), (config) =>
          Postgres.migrate(config).pipe(Effect.mapError((cause) => failure(database, cause)))
        )
      )

/**
 * The `StoreCopy` port of a database (`dashstream copy`), its schema brought up to date first, open until the scope
 * closes. Fails like {@link layer}.
 */
export const storeCopy = (
  database: Database
): Effect.Effect<StoreCopy["Type"], CommandFailed | UsageError, Scope.Scope> =>
  database._tag === "Sqlite"
    ? Effect.flatMap(loadSqlite, (Sqlite) =>
        Sqlite.openStoreCopy({ filename: database.filename }).pipe(Effect.mapError((cause) => failure(database, cause)))
      )
    : Effect.flatMap(loadPostgres, (Postgres) =>
        Effect.flatMap(postgresConfig(Postgres, database), (config) =>
          Postgres.openStoreCopy(config).pipe(Effect.mapError((cause) => failure(database, cause)))
        )
      )

/**
 * The `StoreCopy` port of a database as the source of a copy, open until the scope closes: read-only, never created
 * or migrated. Fails with `SourceRefused` when it is not a Dashstream database at this version's schema (see the
 * adapters' `openStoreCopySource`), otherwise like {@link layer}.
 */
export const storeCopySource = (
  database: Database
): Effect.Effect<StoreCopy["Type"], SourceRefused | CommandFailed | UsageError, Scope.Scope> =>
  database._tag === "Sqlite"
    ? Effect.flatMap(loadSqlite, (Sqlite) =>
        Sqlite.openStoreCopySource({ filename: database.filename }).pipe(
          Effect.catchIf(isStorageFailure, (cause) => Effect.fail(failure(database, cause)))
        )
      )
    : Effect.flatMap(loadPostgres, (Postgres) =>
        Effect.flatMap(postgresConfig(Postgres, database), (config) =>
          Postgres.openStoreCopySource(config).pipe(
            Effect.catchIf(isStorageFailure, (cause) => Effect.fail(failure(database, cause)))
          )
        )
      )

const isStorageFailure = (error: unknown): error is StorageFailure =>
  error instanceof StorageError || error instanceof StorageUnavailable

/**
 * A description of the database safe to print and log: the SQLite file path, or the PostgreSQL host, port and
 * database name without user or password.
 */
export const describe = (database: Database): string => {
  if (database._tag === "Sqlite") return `SQLite file ${database.filename}`
  const url = new URL(Redacted.value(database.url))
  const name = decodeURIComponent(url.pathname.replace(/^\//, ""))
  return `PostgreSQL database ${name === "" ? "(default)" : name} at ${url.hostname || "local socket"}${url.port === "" ? "" : `:${url.port}`}`
}

const postgresConfig = (Postgres: typeof PostgresAdapter, database: Extract<Database, { _tag: "Postgres" }>) =>
  Either.mapLeft(Postgres.parseUrl(database.url), (error) => new UsageError({ message: error.message }))

/**
 * A storage failure as one sentence for stderr: "the <database> failed: <reason>" for a `StorageError`, "the
 * <database> is unreachable: <reason>" otherwise (`StorageUnavailable`, or a failure to open it). The reason is the
 * innermost error's first line; the full cause is kept for `DASHSTREAM_DEBUG=1`.
 */
export const failure = (database: Database, cause: unknown): CommandFailed =>
  new CommandFailed({
    message: `the ${describe(database)} ${cause instanceof StorageError ? "failed" : "is unreachable"}: ${errorMessage(cause)}`,
    cause
  })
