import * as Path from "node:path"
import {
  type ChangeSink,
  type SourceRefused,
  StorageError,
  type StorageFailure,
  StorageUnavailable,
  type StoragePorts,
  type StoreCopy,
  type WriteObserver
} from "@dashstream/core"
import type * as PostgresAdapter from "@dashstream/storage-postgres"
import type * as SqliteAdapter from "@dashstream/storage-sqlite"
import { Effect, Either, Layer, Redacted, type Scope } from "effect"
import { CommandFailed, UsageError } from "./Errors.js"
import { errorMessage } from "./internal/errorMessage.js"

/**
 * The one place that names a storage adapter: the backend registry, one entry per `--db` URL scheme (README,
 * "Configuration" and "Running on PostgreSQL"). An entry recognises its URLs ({@link parseUrl}, which `Config.ts`
 * reads `--db` with) and answers every question about its databases; every function here looks up the entry of the
 * database's `_tag`, so a third backend is one more entry (and one more {@link Database} case).
 */

/** A SQLite file: its path as given, relative to the working directory. */
export interface SqliteDatabase {
  readonly _tag: "Sqlite"
  readonly filename: string
}

/** A PostgreSQL database: its URL, which may hold a password. */
export interface PostgresDatabase {
  readonly _tag: "Postgres"
  readonly url: Redacted.Redacted<string>
}

/** Which database to use, as a `--db` URL names it (README, "Configuration"). */
export type Database = SqliteDatabase | PostgresDatabase

/** The storage ports a backend's layer provides. */
export type Ports = StoragePorts

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
 * One database, its adapter loaded and its settings accepted: the adapter's operations, failing with the adapter's
 * own errors (the functions below turn them into {@link failure}).
 */
interface OpenedDatabase {
  /** The scoped storage ports, the schema brought up to date first (see {@link layer}). */
  readonly layer: (observer?: WriteObserver, shared?: SharedFile) => Layer.Layer<Ports, StorageFailure>
  /** Brings the schema up to date; the names of the migrations applied. */
  readonly migrate: () => Effect.Effect<ReadonlyArray<string>, StorageFailure>
  /** The `StoreCopy` port as a copy's target, schema brought up to date first. */
  readonly storeCopy: () => Effect.Effect<StoreCopy["Type"], StorageFailure, Scope.Scope>
  /** The `StoreCopy` port as a copy's source: read-only, never created or migrated. */
  readonly storeCopySource: () => Effect.Effect<StoreCopy["Type"], SourceRefused | StorageFailure, Scope.Scope>
}

/** A storage backend: one entry of {@link backends}, for the databases of one `_tag`. */
interface Backend<D extends Database> {
  /** Its URL form as error messages show it: `sqlite:<path> (for example sqlite:./data/dashstream.db)`. */
  readonly form: string
  /**
   * The database of `url` (trimmed) when its scheme is this backend's, else `undefined`; the sentence for stderr when
   * the scheme is this backend's but the rest is not (`name` is the flag or variable, the URL is never echoed).
   */
  recognise(url: string, name: string): Either.Either<D, string> | undefined
  /** A text equal for two databases of this backend exactly when they are one database (`copy` refuses those). */
  identity(database: D): string
  /** True when the URL holds a secret (a password) that must not be printed, not even back to its user. */
  holdsSecret(database: D): boolean
  /**
   * True when several processes writing the database share one file, which each must open with a {@link SharedFile}
   * (`serve --workers N`); false when the backend serves several processes as it is.
   */
  readonly sharedFile: boolean
  /**
   * Loads the adapter (imported when a command first opens a database of its kind) and checks the database's
   * settings; fails with `UsageError` when the adapter refuses them.
   */
  open(database: D): Effect.Effect<OpenedDatabase, UsageError>
  /** The database as {@link describe} prints it: no user or password. */
  describe(database: D): string
}

// Each adapter (and its driver) is imported when a command first opens a database of its kind: a SQLite command never
// loads pg, a PostgreSQL one never loads better-sqlite3, and `help` loads neither (startup time, see bench/startup).
const loadSqlite: Effect.Effect<typeof SqliteAdapter> = Effect.promise(() => import("@dashstream/storage-sqlite"))
const loadPostgres: Effect.Effect<typeof PostgresAdapter> = Effect.promise(() => import("@dashstream/storage-postgres"))

const sqliteForm = "sqlite:<path> (for example sqlite:./data/dashstream.db)"

const sqlite: Backend<SqliteDatabase> = {
  form: sqliteForm,
  recognise: (url, name) => {
    if (!url.startsWith("sqlite:")) return undefined
    const filename = url.slice("sqlite:".length)
    return filename === ""
      ? Either.left(`${name} sqlite: needs a file path, as in ${sqliteForm}`)
      : Either.right({ _tag: "Sqlite", filename })
  },
  identity: (database) => Path.resolve(database.filename),
  holdsSecret: () => false,
  sharedFile: true,
  open: (database) =>
    Effect.map(loadSqlite, (Sqlite) => {
      const config = { filename: database.filename }
      return {
        // The SQLite layer migrates the file when it opens it.
        layer: (observer, shared) =>
          Sqlite.layer(
            shared === undefined ? config : { ...config, lockWait: shared.lockWait },
            observer,
            shared?.relay
          ),
        migrate: () => Sqlite.migrate(config),
        storeCopy: () => Sqlite.openStoreCopy(config),
        storeCopySource: () => Sqlite.openStoreCopySource(config)
      }
    }),
  describe: (database) => `SQLite file ${database.filename}`
}

const postgres: Backend<PostgresDatabase> = {
  form: "a postgres:// or postgresql:// URL",
  recognise: (url, name) =>
    !/^postgres(ql)?:\/\//i.test(url)
      ? undefined
      : URL.canParse(url)
        ? Either.right({ _tag: "Postgres", url: Redacted.make(url) })
        : Either.left(`${name} is not a valid URL; expected postgres://user:password@host:port/database`),
  identity: (database) => Redacted.value(database.url),
  holdsSecret: (database) => new URL(Redacted.value(database.url)).password !== "",
  sharedFile: false,
  open: (database) =>
    Effect.flatMap(loadPostgres, (Postgres) =>
      Effect.map(
        Either.mapLeft(Postgres.parseUrl(database.url), (error) => new UsageError({ message: error.message })),
        (config) => ({
          // The PostgreSQL layer connects lazily and does not migrate (the SQLite one does, on open): migrate first
          // so every command works on a new database, not only `serve` and `migrate`.
          layer: (observer) =>
            Layer.unwrapEffect(Effect.as(Postgres.migrate(config), Postgres.layer(config, observer))),
          migrate: () => Postgres.migrate(config),
          storeCopy: () => Postgres.openStoreCopy(config),
          storeCopySource: () => Postgres.openStoreCopySource(config)
        })
      )
    ),
  describe: (database) => {
    const url = new URL(Redacted.value(database.url))
    const name = decodeURIComponent(url.pathname.replace(/^\//, ""))
    return `PostgreSQL database ${name === "" ? "(default)" : name} at ${url.hostname || "local socket"}${url.port === "" ? "" : `:${url.port}`}`
  }
}

/** The backend registry: the entry of each kind of {@link Database}. */
const backends: { readonly [T in Database["_tag"]]: Backend<Extract<Database, { _tag: T }>> } = {
  Sqlite: sqlite,
  Postgres: postgres
}

// `Backend`'s methods are bivariant in `D`, so the entry of `database._tag` takes `database` itself.
const backendOf = (database: Database): Backend<Database> => backends[database._tag]

const registered: ReadonlyArray<Backend<Database>> = Object.values(backends)

/** The URL forms `--db` accepts, for error messages: `sqlite:<path> (...) or a postgres:// or postgresql:// URL`. */
const forms = registered.map((backend) => backend.form).join(" or ")

/**
 * Parses a database URL (trimmed) with the backend whose scheme it has: `sqlite:<path>` or `postgres://...` /
 * `postgresql://...` (the URL must parse; the adapter checks the rest when it opens it). Fails with the sentence for
 * stderr, naming `name` (the flag or variable) and never echoing the value (it may hold a password), only its scheme.
 */
export const parseUrl = (value: string, name: string): Either.Either<Database, string> => {
  const url = value.trim()
  for (const backend of registered) {
    const recognised = backend.recognise(url, name)
    if (recognised !== undefined) return recognised
  }
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]
  const got = url === "" ? "an empty value" : scheme === undefined ? "a value without a scheme" : `a ${scheme}: URL`
  return Either.left(`${name} must be ${forms}, got ${got}`)
}

/** True when `a` and `b` are one database: the same SQLite file (path resolved) or the same PostgreSQL URL. */
export const same = (a: Database, b: Database): boolean =>
  a._tag === b._tag && backendOf(a).identity(a) === backendOf(b).identity(b)

/** True when the database's URL holds a secret (a PostgreSQL password), so the URL is never printed. */
export const holdsSecret = (database: Database): boolean => backendOf(database).holdsSecret(database)

/**
 * True when several processes writing the database share one file (SQLite), each opening it with a
 * {@link SharedFile} under `serve --workers N`.
 */
export const sharesFile = (database: Database): boolean => backendOf(database).sharedFile

/** `database` opened by its backend, for `use`; a failure of `use` becomes {@link failure}. */
const withOpened = <A, R>(
  database: Database,
  use: (opened: OpenedDatabase) => Effect.Effect<A, StorageFailure, R>
): Effect.Effect<A, CommandFailed | UsageError, R> =>
  Effect.flatMap(backendOf(database).open(database), (opened) =>
    use(opened).pipe(Effect.mapError((cause) => failure(database, cause)))
  )

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
): Layer.Layer<Ports, CommandFailed | UsageError> =>
  Layer.unwrapEffect(
    Effect.map(backendOf(database).open(database), (opened) =>
      opened.layer(observer, shared).pipe(Layer.mapError((cause) => failure(database, cause)))
    )
  )

/**
 * Brings the database schema up to date and returns the names of the migrations it applied (`[]` when the schema
 * was already up to date; a second run does nothing). Fails like {@link layer}.
 */
export const migrate = (database: Database): Effect.Effect<ReadonlyArray<string>, CommandFailed | UsageError> =>
  withOpened(database, (opened) => opened.migrate())

/**
 * The `StoreCopy` port of a database (`dashstream copy`), its schema brought up to date first, open until the scope
 * closes. Fails like {@link layer}.
 */
export const storeCopy = (
  database: Database
): Effect.Effect<StoreCopy["Type"], CommandFailed | UsageError, Scope.Scope> =>
  withOpened(database, (opened) => opened.storeCopy())

/**
 * The `StoreCopy` port of a database as the source of a copy, open until the scope closes: read-only, never created
 * or migrated. Fails with `SourceRefused` when it is not a Dashstream database at this version's schema (see the
 * adapters' `openStoreCopySource`), otherwise like {@link layer}.
 */
export const storeCopySource = (
  database: Database
): Effect.Effect<StoreCopy["Type"], SourceRefused | CommandFailed | UsageError, Scope.Scope> =>
  Effect.flatMap(backendOf(database).open(database), (opened) =>
    opened.storeCopySource().pipe(Effect.catchIf(isStorageFailure, (cause) => Effect.fail(failure(database, cause))))
  )

const isStorageFailure = (error: unknown): error is StorageFailure =>
  error instanceof StorageError || error instanceof StorageUnavailable

/**
 * A description of the database safe to print and log: the SQLite file path, or the PostgreSQL host, port and
 * database name without user or password.
 */
export const describe = (database: Database): string => backendOf(database).describe(database)

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
