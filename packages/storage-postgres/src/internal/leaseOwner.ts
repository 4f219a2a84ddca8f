import { type LeaseOwner, newLeaseOwner, type StorageFailure } from "@dashstream/core"
import { Duration, Effect, Schedule, type Scope } from "effect"
import pg from "pg"
import type { PostgresConfig } from "../PostgresConfig.js"
import { toStorageFailure } from "./errors.js"
import { clientConfig } from "./pool.js"

/**
 * The first key of every alert lease owner's advisory lock (`pg_advisory_lock(int4, int4)`), the second being the
 * owner: "DsAl". `pg_locks` shows such a lock with `classid` this key, `objid` the owner and `objsubid` 2.
 */
export const OWNER_LOCK_SPACE = 0x4473416c

/** The condition, in SQL over a delivery `d`, that its lease owner's lock is held by a live session. */
export const ownerAlive = `EXISTS (SELECT 1 FROM pg_locks l
  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = ${OWNER_LOCK_SPACE}::oid AND l.objid = d.lease_owner::oid)`

/** How long to wait before connecting again after the lock's connection broke or could not be made. */
const RECONNECT_AFTER = Duration.seconds(1)

/** The suffix of the lock connection's `application_name` (`dashstream-alerts` unless the URL names one). */
const ownerSuffix = "-alerts"

// Connects and takes `owner`'s lock; `false` when another session holds it. The client is ended on any failure.
const connectAndLock = async (config: PostgresConfig, owner: LeaseOwner): Promise<pg.Client | undefined> => {
  const base = clientConfig(config, true)
  const url = new URL(base.connectionString!)
  url.searchParams.set("application_name", `${url.searchParams.get("application_name") || "dashstream"}${ownerSuffix}`)
  const client = new pg.Client({ ...base, connectionString: url.toString(), keepAliveInitialDelayMillis: 10_000 })
  // A connection that breaks emits `error`; unheard, it would crash the process. `ended` below sees it.
  client.on("error", () => {})
  try {
    await client.connect()
    const { rows } = await client.query<{ held: boolean }>("SELECT pg_try_advisory_lock($1, $2) AS held", [
      OWNER_LOCK_SPACE,
      owner
    ])
    if (rows[0]?.held === true) return client
    await client.end()
    return undefined
  } catch (cause) {
    await client.end().catch(() => {})
    throw cause
  }
}

const ended = (client: pg.Client): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    const done = () => resume(Effect.void)
    client.once("end", done)
    client.once("error", done)
    return Effect.sync(() => {
      client.off("end", done)
      client.off("error", done)
    })
  })

/**
 * Makes a lease owner that lives as long as the scope (`AlertStore.openDeliveryOwner` on PostgreSQL): a new owner
 * whose session-level advisory lock ({@link OWNER_LOCK_SPACE}, owner) is held on a connection of its own. Fails with
 * `StorageUnavailable` / `StorageError` when the first connection cannot be made. When that connection breaks later,
 * the lock is taken again on a new one (every second until it succeeds; meanwhile other processes may claim the
 * owner's leased deliveries, which is why an attempt's outcome is recorded only on a delivery still `pending`). When
 * the scope closes, `release` runs (the owner's leases lifted) and then the connection is ended, which frees the lock.
 */
export const holdLeaseOwner = (
  config: PostgresConfig,
  release: (owner: LeaseOwner) => Effect.Effect<void>
): Effect.Effect<LeaseOwner, StorageFailure, Scope.Scope> =>
  Effect.gen(function* () {
    // A random owner is almost never held already; one that is, is drawn again.
    let owner = newLeaseOwner()
    let client: pg.Client | undefined
    for (let tries = 0; client === undefined; tries++) {
      if (tries > 0) owner = newLeaseOwner()
      client = yield* Effect.tryPromise({ try: () => connectAndLock(config, owner), catch: toStorageFailure })
    }
    let current: pg.Client = client
    yield* Effect.addFinalizer(() =>
      Effect.zipRight(
        release(owner),
        Effect.promise(() => current.end().catch(() => {}))
      )
    )
    const relock: Effect.Effect<void> = Effect.tryPromise(() => connectAndLock(config, owner)).pipe(
      Effect.flatMap((next) => (next === undefined ? Effect.fail("held") : Effect.succeed(next))),
      Effect.retry(Schedule.spaced(RECONNECT_AFTER)),
      Effect.flatMap((next) =>
        Effect.sync(() => {
          current = next
        })
      ),
      Effect.zipRight(Effect.logInfo("alert lease owner's lock taken again on a new connection")),
      Effect.orDie
    )
    yield* Effect.forkScoped(
      Effect.forever(
        Effect.gen(function* () {
          yield* ended(current)
          yield* Effect.logWarning("alert lease owner's connection broke; its lock is taken again shortly")
          yield* Effect.sleep(RECONNECT_AFTER)
          yield* relock
        })
      )
    )
    return owner
  })
