import type { DecimationStore, EntryId, Micros, StreamId, WidgetType } from "@dashstream/core"
import { Effect } from "effect"
import { sql } from "kysely"
import pg from "pg"
import { toStorageFailure } from "./internal/errors.js"
import { clientConfig } from "./internal/pool.js"
import { affected, db, run, transaction } from "./internal/sql.js"
import type { PostgresConfig } from "./PostgresConfig.js"

/**
 * An entry is named by its stream and its `ts` (unique per stream; the table has no other key): its {@link EntryId}
 * is the text `<stream id>/<ts>`, distinct across streams.
 */
const entryId = (stream: StreamId, ts: number): EntryId => `${stream}/${ts}` as EntryId

/** The `ts` of the ids of `ids` that name entries of `stream` (see {@link entryId}); the others name none of its. */
const tssOf = (stream: StreamId, ids: ReadonlyArray<EntryId>): Array<number> => {
  const prefix = `${stream}/`
  const tss: Array<number> = []
  for (const id of ids) {
    if (typeof id === "string" && id.startsWith(prefix)) {
      const ts = Number(id.slice(prefix.length))
      if (Number.isSafeInteger(ts)) tss.push(ts)
    }
  }
  return tss
}

/** The advisory lock key of the decimation pass: one per schema, so each Dashstream storage has its own pass lock. */
const passLockKey = (config: PostgresConfig) => `dashstream decimation ${config.schema}`

/**
 * Holds the pass lock on a connection of its own, outside the pool: the pass keeps the whole pool for its queries,
 * and if that connection dies the server releases the lock with it. `None` when another session holds the lock.
 */
const withPassLock =
  (config: PostgresConfig): DecimationStore["Type"]["withPassLock"] =>
  (effect) =>
    Effect.acquireUseRelease(
      Effect.tryPromise({
        try: async () => {
          const client = new pg.Client(clientConfig(config, false))
          client.on("error", () => {})
          try {
            await client.connect()
            const result = await client.query<{ locked: boolean }>(
              "SELECT pg_try_advisory_lock(hashtextextended($1, 0)) AS locked",
              [passLockKey(config)]
            )
            return { client, locked: result.rows[0]?.locked === true }
          } catch (error) {
            await client.end().catch(() => undefined)
            throw error
          }
        },
        catch: toStorageFailure
      }),
      ({ locked }) => (locked ? Effect.asSome(effect) : Effect.succeedNone),
      ({ client, locked }) =>
        Effect.promise(async () => {
          if (locked) {
            await client
              .query("SELECT pg_advisory_unlock(hashtextextended($1, 0))", [passLockKey(config)])
              .catch(() => undefined)
          }
          // Ending the session releases the lock in any case.
          await client.end().catch(() => undefined)
        })
    )

/**
 * The `DecimationStore` port on a `pg` pool (contract section 9). Every operation is one short statement or
 * transaction, so pushes wait milliseconds at most while a pass runs. `deleteEntries` locks the stream's row first
 * (the order `write` takes its locks in, so the two cannot deadlock) and never deletes the stream's newest entry.
 * `withPassLock` is a session-level `pg_try_advisory_lock`, exclusive across every process on this database and
 * schema. Errors: `StorageUnavailable` when the server is unreachable, `StorageError` otherwise.
 */
export const makeDecimationStore = (pool: pg.Pool, config: PostgresConfig): DecimationStore["Type"] => {
  const attempt = <A>(f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: toStorageFailure })
  return {
    streams: ({ after, olderThan, limit }) =>
      attempt(() =>
        run(
          pool,
          db
            .selectFrom("streams as s")
            .select(["s.id", "s.type"])
            .$if(after !== null, (q) => q.where("s.id", ">", after!))
            // Served by the (stream_id, ts) index: the stream's first entry decides.
            .where(({ exists, selectFrom }) =>
              exists(
                selectFrom("entries as e")
                  .select(sql`1`.as("one"))
                  .whereRef("e.stream_id", "=", "s.id")
                  .where("e.ts", "<", olderThan)
              )
            )
            .orderBy("s.id")
            .limit(limit)
            .compile()
        )
      ).pipe(Effect.map((rows) => rows.map((row) => ({ id: row.id as StreamId, type: row.type as WidgetType })))),

    entries: (stream, { after, before, limit }) =>
      attempt(() =>
        run(
          pool,
          db
            .selectFrom("entries")
            .select(["ts", "value"])
            .where("stream_id", "=", stream)
            .$if(after !== null, (q) => q.where("ts", ">", after!))
            .where("ts", "<", before)
            .orderBy("ts")
            .limit(limit)
            .compile()
        )
      ).pipe(
        Effect.map((rows) =>
          rows.map((row) => ({ id: entryId(stream, row.ts), ts: row.ts as Micros, value: row.value }))
        )
      ),

    deleteEntries: (stream, ids) => {
      const tss = tssOf(stream, ids)
      return tss.length === 0
        ? Effect.succeed(0)
        : attempt(() =>
            transaction(pool, async (client) => {
              const locked = await run(
                client,
                db.selectFrom("streams").select("id").where("id", "=", stream).forUpdate().compile()
              )
              if (locked.length === 0) return { commit: false, value: 0 }
              // Under the stream's lock no write can add a newer entry, so max(ts) is the newest for the whole delete.
              const deleted = await affected(
                client,
                sql`
                  delete from entries
                  where stream_id = ${stream}
                    and ts = any(${tss}::bigint[])
                    and ts < (select max(ts) from entries where stream_id = ${stream})`.compile(db)
              )
              return { commit: true, value: deleted }
            })
          )
    },

    withPassLock: withPassLock(config)
  }
}
