import type { DecimationEntry, DecimationStore, EntryId, Micros, StreamId, WidgetType } from "@dashstream/core"
import { type BlockEntry, decodeBlock } from "@dashstream/core/entryBlocks"
import { Effect } from "effect"
import { sql } from "kysely"
import pg from "pg"
import { blocksAfterSql } from "./internal/blockReads.js"
import { toStorageFailure } from "./internal/errors.js"
import { clientConfig } from "./internal/pool.js"
import { db, run, transaction } from "./internal/sql.js"
import { blockArrays, pushBlocks } from "./internal/changePlan.js"
import { insertBlocksQuery } from "./internal/storeSql.js"
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

// Below every valid bound: microsecond timestamps start at 0 (or slightly below, for clients' own).
const NO_LOWER_BOUND = Number.MIN_SAFE_INTEGER

/**
 * The blocks of stream `$1` that hold its oldest `$4` entries with `$2 < ts < $3`, ascending (see `blocksAfterSql`).
 * Named, so each connection prepares it once.
 */
const entriesQuery = {
  name: "dashstream_decimation_blocks",
  text: `SELECT data FROM (${blocksAfterSql("$1", "$2", "$4::bigint", " AND first_ts < $3")}) AS r`,
  rowMode: "array"
} as const

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
 * The `DecimationStore` port on a `pg` pool (docs/api.md section 9). Every operation is one short statement or
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
            // Served by the (stream_id, first_ts) index: the stream's first block decides.
            .where(({ exists, selectFrom }) =>
              exists(
                selectFrom("entry_blocks as b")
                  .select(sql`1`.as("one"))
                  .whereRef("b.stream_id", "=", "s.id")
                  .where("b.first_ts", "<", olderThan)
              )
            )
            .orderBy("s.id")
            .limit(limit)
            .compile()
        )
      ).pipe(Effect.map((rows) => rows.map((row) => ({ id: row.id as StreamId, type: row.type as WidgetType })))),

    entries: (stream, { after, before, limit }) =>
      attempt(async () => {
        const from = after ?? NO_LOWER_BOUND
        const result = await pool.query<[Buffer]>({
          ...entriesQuery,
          values: [stream, from, before, limit]
        })
        const out: Array<DecimationEntry> = []
        if (limit <= 0) return out
        for (const row of result.rows) {
          for (const e of decodeBlock(row[0])) {
            if (e.ts <= from) continue
            if (e.ts >= before || out.length === limit) return out
            out.push({ id: entryId(stream, e.ts), ts: e.ts as Micros, value: e.value })
          }
        }
        return out
      }),

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
              // Under the stream's lock no write can add a newer entry: the last block's last_ts is the newest.
              const blocks = await client.query<{ first_ts: number; data: Buffer; newest: number }>(
                `SELECT DISTINCT b.first_ts, b.data, (SELECT last_ts FROM entry_blocks WHERE stream_id = $1
                   ORDER BY first_ts DESC LIMIT 1) AS newest
                 FROM unnest($2::bigint[]) AS d(ts) CROSS JOIN LATERAL (SELECT first_ts, last_ts, data FROM entry_blocks
                   WHERE stream_id = $1 AND first_ts <= d.ts ORDER BY first_ts DESC LIMIT 1) b
                 WHERE b.last_ts >= d.ts`,
                [stream, tss]
              )
              if (blocks.rows.length === 0) return { commit: false, value: 0 }
              const newest = blocks.rows[0]!.newest
              const doomed = new Set(tss.filter((ts) => ts < newest))
              const rewritten = blockArrays()
              const gone: Array<number> = []
              let deleted = 0
              for (const block of blocks.rows) {
                const entries = decodeBlock(block.data)
                const kept: Array<BlockEntry> = []
                for (const e of entries)
                  if (doomed.has(e.ts)) deleted++
                  else kept.push(e)
                if (kept.length === entries.length) continue
                gone.push(block.first_ts)
                pushBlocks(rewritten, stream, kept)
              }
              if (deleted === 0) return { commit: false, value: 0 }
              await client.query("DELETE FROM entry_blocks WHERE stream_id = $1 AND first_ts = ANY($2::bigint[])", [
                stream,
                gone
              ])
              const insert = insertBlocksQuery(rewritten)
              await client.query(insert.text, insert.values)
              return { commit: true, value: deleted }
            })
          )
    },

    withPassLock: withPassLock(config)
  }
}
