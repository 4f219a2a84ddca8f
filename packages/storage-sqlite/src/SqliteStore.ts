import {
  AccountStore,
  ChangeFeed,
  DashboardStore,
  DecimationStore,
  Fanout,
  type StorageFailure,
  StreamStore,
  type WriteObserver
} from "@dashstream/core"
import { Context, Effect, Layer, type Scope } from "effect"
import { acquire, type SqliteConfig } from "./internal/database.js"
import { storageFailure } from "./internal/errors.js"
import { runMigrations } from "./Migrations.js"
import * as SqliteAccountStore from "./SqliteAccountStore.js"
import * as SqliteDashboardStore from "./SqliteDashboardStore.js"
import * as SqliteDecimationStore from "./SqliteDecimationStore.js"
import * as SqliteStreamStore from "./SqliteStreamStore.js"

export type { SqliteConfig } from "./internal/database.js"

/** The storage ports over one SQLite connection. */
export interface SqliteStores {
  readonly accountStore: Context.Tag.Service<AccountStore>
  readonly streamStore: Context.Tag.Service<StreamStore>
  readonly decimationStore: Context.Tag.Service<DecimationStore>
  readonly dashboardStore: Context.Tag.Service<DashboardStore>
  readonly changeFeed: Context.Tag.Service<ChangeFeed>
}

/**
 * Opens the database file (creating it and its directory if missing; WAL, `synchronous=FULL` unless
 * `config.synchronous` says otherwise, `busy_timeout`, foreign keys), brings its schema up to date, and prepares the
 * ports over the one connection (the change feed fans out in process), the stream store with group commit unless `config.groupCommit` is `false`. When the
 * scope closes, queued writes are committed (or failed), then the connection is checkpointed and closed; calls after
 * that fail with `StorageUnavailable`. Fails with `StorageError` (not a database, unknown newer migration, ...) or
 * `StorageUnavailable` (locked). `observer`, if given, is told of every group commit (for metrics).
 */
export const make = (
  config: SqliteConfig,
  observer?: WriteObserver
): Effect.Effect<SqliteStores, StorageFailure, Scope.Scope> =>
  Effect.gen(function* () {
    const { db, kysely } = yield* acquire(config)
    yield* runMigrations(kysely)
    // One process owns the file, so its changes are fanned out in process: published by the write path once durable.
    const fanout = new Fanout()
    const accountStore = yield* Effect.try({
      try: () => SqliteAccountStore.make(db, kysely, fanout),
      catch: storageFailure
    })
    // Acquired after the connection, so released before it: pending writes are flushed while it is still open.
    const streamStore = yield* SqliteStreamStore.make(db, { groupCommit: config.groupCommit ?? true, fanout, observer })
    const decimationStore = yield* Effect.try({ try: () => SqliteDecimationStore.make(db), catch: storageFailure })
    const dashboardStore = SqliteDashboardStore.make(kysely)
    return { accountStore, streamStore, decimationStore, dashboardStore, changeFeed: fanout.feed() }
  })

/**
 * Provides `AccountStore`, `StreamStore`, `DecimationStore`, `DashboardStore` and `ChangeFeed` backed by the SQLite
 * file `config.filename` (see {@link make}); the database is closed when the layer is released. `observer`, if given,
 * is told of every group commit.
 */
export const layer = (
  config: SqliteConfig,
  observer?: WriteObserver
): Layer.Layer<AccountStore | StreamStore | DecimationStore | DashboardStore | ChangeFeed, StorageFailure> =>
  Layer.scopedContext(
    Effect.map(make(config, observer), (stores) =>
      Context.make(AccountStore, stores.accountStore).pipe(
        Context.add(StreamStore, stores.streamStore),
        Context.add(DecimationStore, stores.decimationStore),
        Context.add(DashboardStore, stores.dashboardStore),
        Context.add(ChangeFeed, stores.changeFeed)
      )
    )
  )
