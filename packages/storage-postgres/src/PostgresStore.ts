import { storageContext, type StoragePorts, type StorageServices, type WriteObserver } from "@dashstream/core"
import { Effect, Layer, Runtime, type Scope } from "effect"
import { defaultGroupLimits, GroupCommit } from "./internal/groupCommit.js"
import { defaultListenerOptions, Listener } from "./internal/listener.js"
import { channelName } from "./internal/notify.js"
import { makePool } from "./internal/pool.js"
import { makeAccountStore } from "./PostgresAccountStore.js"
import { makeAlertStore } from "./PostgresAlertStore.js"
import { makeDecimationStore } from "./PostgresDecimationStore.js"
import { makeViewStore } from "./PostgresViewStore.js"
import { makeSessionStore } from "./PostgresSessionStore.js"
import type { PostgresConfig } from "./PostgresConfig.js"
import { makeStreamStore } from "./PostgresStreamStore.js"

/**
 * The storage ports on one connection pool, and the change feed on its own listening connection: the changes and
 * console sign-outs committed by every process on this database and schema.
 */
export type PostgresStores = StorageServices

/**
 * Opens a connection pool for `config` and builds the storage ports on it; the pool is closed when the scope closes
 * (waiting up to 5 s for connections in use). Does not migrate: run `migrate` first (the CLI's `serve` does).
 * Never fails and does not wait for the server, so a server that is down at startup is reported by each operation as
 * `StorageUnavailable` (and by `ping`, for `/readyz`); the pool reconnects by itself when the server is back.
 *
 * The `ChangeFeed` (docs/api.md section 10) starts connecting its own listening connection (`application_name`
 * `dashstream-listener`, or the URL's name with `-listener`) at once, in the background; it `LISTEN`s on the
 * channel of `config.schema` (`dashstream_changes` or `dashstream_changes_<schema>`, see `internal/notify.ts`),
 * reconnects forever with backoff (a warning per failed attempt, through the Effect logger) and publishes a `Gap`
 * to every subscriber each time it listens again (see `internal/listener.ts`). It closes with the scope.
 *
 * `observer`, if given, is told of every group commit of the stream store (for metrics).
 */
export const make = (
  config: PostgresConfig,
  observer?: WriteObserver
): Effect.Effect<PostgresStores, never, Scope.Scope> =>
  Effect.gen(function* () {
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => makePool(config)),
      (pool) => Effect.promise(() => pool.end().catch(() => undefined)).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    )
    const channel = channelName(config.schema)
    const runtime = yield* Effect.runtime<never>()
    const warn = (message: string) => {
      Runtime.runFork(runtime)(Effect.logWarning(message))
    }
    const info = (message: string) => {
      Runtime.runFork(runtime)(Effect.logInfo(message))
    }
    // Closed before the pool ends: its reads use the pool.
    const listener = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const listener = new Listener(config, pool, channel, { ...defaultListenerOptions, warn, info })
        // A new pooled connection means the database answers: the listener need not wait for its next attempt.
        pool.on("connect", () => listener.wake())
        void listener.start()
        return listener
      }),
      (listener) => Effect.promise(() => listener.close()).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    )
    // Closed before the listener and the pool (finalizers run in reverse order): every queued write is answered
    // first. It keeps the changes of the followed streams for the listener (`internal/ownNotices.ts`).
    const groupCommit = yield* Effect.acquireRelease(
      Effect.sync(
        () =>
          new GroupCommit(
            pool,
            { ...defaultGroupLimits, maxWaitMs: config.connectTimeoutMs },
            channel,
            observer,
            listener.own
          )
      ),
      (groupCommit) => Effect.promise(() => groupCommit.close()).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    )
    return {
      streamStore: makeStreamStore(pool, groupCommit),
      accountStore: makeAccountStore(pool, channel),
      decimationStore: makeDecimationStore(pool, config),
      dashboardStore: makeViewStore(pool),
      changeFeed: listener.feed(),
      sessionStore: makeSessionStore(pool),
      alertStore: makeAlertStore(pool, config)
    }
  })

/**
 * Provides `StreamStore`, `AccountStore`, `DecimationStore`, `DashboardStore`, `ChangeFeed`, `SessionStore` and
 * `AlertStore` on PostgreSQL (see {@link make}; the schema must have been migrated); the pool and the listening connection live as
 * long as the layer. `observer`, if given, is told of every group commit.
 */
export const layer = (config: PostgresConfig, observer?: WriteObserver): Layer.Layer<StoragePorts> =>
  Layer.scopedContext(Effect.map(make(config, observer), storageContext))
