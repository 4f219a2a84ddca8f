import { AccountStore, DecimationStore, StreamStore } from "@dashstream/core"
import { Context, Effect, Layer, type Scope } from "effect"
import { defaultGroupLimits, GroupCommit } from "./internal/groupCommit.js"
import { makePool } from "./internal/pool.js"
import { makeAccountStore } from "./PostgresAccountStore.js"
import { makeDecimationStore } from "./PostgresDecimationStore.js"
import type { PostgresConfig } from "./PostgresConfig.js"
import { makeStreamStore } from "./PostgresStreamStore.js"

/** The storage ports on one connection pool. */
export interface PostgresStores {
  readonly streamStore: Context.Tag.Service<StreamStore>
  readonly accountStore: Context.Tag.Service<AccountStore>
  readonly decimationStore: Context.Tag.Service<DecimationStore>
}

/**
 * Opens a connection pool for `config` and builds the three storage ports on it; the pool is closed when the scope closes
 * (waiting up to 5 s for connections in use). Does not migrate: run `migrate` first (the CLI's `serve` does).
 * Never fails and does not connect yet, so a server that is down at startup is reported by each operation as
 * `StorageUnavailable` (and by `ping`, for `/readyz`); the pool reconnects by itself when the server is back.
 */
export const make = (config: PostgresConfig): Effect.Effect<PostgresStores, never, Scope.Scope> =>
  Effect.gen(function* () {
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => makePool(config)),
      (pool) => Effect.promise(() => pool.end().catch(() => undefined)).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    )
    // Closed before the pool ends (finalizers run in reverse order): every queued write is answered first.
    const groupCommit = yield* Effect.acquireRelease(
      Effect.sync(() => new GroupCommit(pool, { ...defaultGroupLimits, maxWaitMs: config.connectTimeoutMs })),
      (groupCommit) => Effect.promise(() => groupCommit.close()).pipe(Effect.timeout("5 seconds"), Effect.ignore)
    )
    return {
      streamStore: makeStreamStore(pool, groupCommit),
      accountStore: makeAccountStore(pool),
      decimationStore: makeDecimationStore(pool, config)
    }
  })

/**
 * Provides `StreamStore`, `AccountStore` and `DecimationStore` on PostgreSQL (see {@link make}; the schema must have been migrated);
 * the pool lives as long as the layer.
 */
export const layer = (config: PostgresConfig): Layer.Layer<StreamStore | AccountStore | DecimationStore> =>
  Layer.scopedContext(
    Effect.map(make(config), (stores) =>
      Context.make(StreamStore, stores.streamStore).pipe(
        Context.add(AccountStore, stores.accountStore),
        Context.add(DecimationStore, stores.decimationStore)
      )
    )
  )
