import {
  type ChangeSink,
  Fanout,
  storageContext,
  type StorageFailure,
  type StoragePorts,
  type StorageServices,
  type WriteObserver
} from "@dashstream/core"
import { Effect, Layer, type Scope } from "effect"
import { acquire, type SqliteConfig } from "./internal/database.js"
import { storageFailure } from "./internal/errors.js"
import { Sql } from "./internal/statements.js"
import { runMigrations } from "./Migrations.js"
import * as SqliteAccountStore from "./SqliteAccountStore.js"
import * as SqliteAlertStore from "./SqliteAlertStore.js"
import * as SqliteDecimationStore from "./SqliteDecimationStore.js"
import * as SqliteViewStore from "./SqliteViewStore.js"
import * as SqliteSessionStore from "./SqliteSessionStore.js"
import * as SqliteStreamStore from "./SqliteStreamStore.js"

export type { SqliteConfig } from "./internal/database.js"

/** The storage ports over one SQLite connection. */
export type SqliteStores = StorageServices

/**
 * Opens the database file (creating it and its directory if missing; WAL, `synchronous=FULL` unless
 * `config.synchronous` says otherwise, `busy_timeout`, foreign keys), brings its schema up to date, and prepares the
 * ports over the one connection, the stream store with group commit unless `config.groupCommit` is `false`. When the
 * scope closes, queued writes are committed (or failed), then the connection is checkpointed and closed; calls after
 * that fail with `StorageUnavailable`. Fails with `StorageError` (not a database, unknown newer migration, ...) or
 * `StorageUnavailable` (locked). `observer`, if given, is told of every group commit (for metrics).
 *
 * Live updates: by default one process owns the file and the changes are fanned out in process (a core `Fanout`).
 * When several processes share the file (`serve --workers N`), `relay` is the sink that carries every process's
 * changes to every process's subscribers, in commit order (see `ChangeSink`); the change feed is then its feed.
 */
export const make = (
  config: SqliteConfig,
  observer?: WriteObserver,
  relay?: ChangeSink
): Effect.Effect<SqliteStores, StorageFailure, Scope.Scope> =>
  Effect.gen(function* () {
    const { db, kysely } = yield* acquire(config)
    yield* runMigrations({ db, kysely })
    // Published by the write path once durable.
    const sink = relay ?? new Fanout()
    if (sink.sequenced && sink.sequenceReader !== undefined) {
      const lastSeq = yield* Effect.try({
        try: () => db.prepare<[], number>(Sql.lastSeq).pluck(),
        catch: storageFailure
      })
      sink.sequenceReader(() => lastSeq.get()!)
    }
    const accountStore = yield* Effect.try({
      try: () => SqliteAccountStore.make(db, kysely, sink),
      catch: storageFailure
    })
    // Acquired after the connection, so released before it: pending writes are flushed while it is still open.
    const streamStore = yield* SqliteStreamStore.make(db, {
      groupCommit: config.groupCommit ?? true,
      sink,
      observer,
      lockWait: config.lockWait
    })
    const decimationStore = yield* Effect.try({ try: () => SqliteDecimationStore.make(db), catch: storageFailure })
    const dashboardStore = yield* Effect.try({ try: () => SqliteViewStore.make(db), catch: storageFailure })
    const sessionStore = yield* Effect.try({ try: () => SqliteSessionStore.make(db), catch: storageFailure })
    const alertStore = yield* Effect.try({ try: () => SqliteAlertStore.make(db), catch: storageFailure })
    return {
      accountStore,
      streamStore,
      decimationStore,
      dashboardStore,
      changeFeed: sink.feed(),
      sessionStore,
      alertStore
    }
  })

/**
 * Provides `AccountStore`, `StreamStore`, `DecimationStore`, `DashboardStore`, `ChangeFeed`, `SessionStore` and
 * `AlertStore` backed by the SQLite file `config.filename` (see {@link make}); the database is closed when the layer is released. `observer`, if given,
 * is told of every group commit; `relay`, if given, carries live updates between processes (see {@link make}).
 */
export const layer = (
  config: SqliteConfig,
  observer?: WriteObserver,
  relay?: ChangeSink
): Layer.Layer<StoragePorts, StorageFailure> =>
  Layer.scopedContext(Effect.map(make(config, observer, relay), storageContext))
