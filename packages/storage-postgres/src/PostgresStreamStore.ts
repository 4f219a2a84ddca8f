import {
  applyOp,
  type EntryWrite,
  type InvalidPoint,
  type Micros,
  needsLatest,
  pageOfRendered,
  type StoredEntry,
  type StoredPoint,
  StorageUnavailable,
  streamDeleted,
  type StreamNotFound,
  type StreamStore,
  type StreamWrite
} from "@dashstream/core"
import { Effect, Either } from "effect"
import { sql } from "kysely"
import type pg from "pg"
import { toStorageFailure } from "./internal/errors.js"
import { db, run, transaction } from "./internal/sql.js"

/** How long `ping` waits for `SELECT 1` before reporting the storage unavailable. */
export const PING_TIMEOUT_MS = 2_000

/** What one write transaction has made of a stream so far, starting from the locked row. */
interface StreamChange {
  readonly startTs: Micros | null
  lastTs: Micros | null
  /** The entry with the highest `ts` stored; `undefined` when not loaded (no write to the stream needs it). */
  latest: { readonly ts: Micros; readonly point: StoredPoint } | null | undefined
  cleared: boolean
  /** Entries to upsert, by `ts`: a later write replaces an earlier one with the same `ts`. */
  readonly entries: Map<number, EntryWrite>
}

const lockStreams = (client: pg.PoolClient, ids: ReadonlyArray<number>) =>
  // Rows are locked in the order the query returns them, so every transaction takes its locks in ascending id
  // order and two pushes touching the same streams in different orders cannot deadlock.
  run(
    client,
    db
      .selectFrom("streams")
      .select(["id", "last_ts"])
      .where("id", "in", ids as Array<number>)
      .orderBy("id")
      .forUpdate()
      .compile()
  )

const latestPoints = (client: pg.PoolClient, ids: ReadonlyArray<number>) =>
  run(
    client,
    sql<{ stream_id: number; ts: number; point: string }>`
      select s.id as stream_id, e.ts, e.point
      from unnest(${ids}::bigint[]) as s(id)
      cross join lateral (
        select ts, point from entries where stream_id = s.id order by ts desc limit 1
      ) e`.compile(db)
  )

/**
 * Computes every write's mutation against the locked state, folding several writes to one stream into one net
 * change. Fails with the first `InvalidPoint`, or `StreamNotFound` for a deleted widget; nothing has been written
 * yet at that point.
 */
const plan = (
  writes: ReadonlyArray<StreamWrite>,
  changes: ReadonlyMap<number, StreamChange>,
  now: Micros
): Either.Either<void, InvalidPoint | StreamNotFound> => {
  for (const write of writes) {
    const change = changes.get(write.widget.id)
    // The widget was deleted after the push looked it up (its row is gone; ids are never reused).
    if (change === undefined) return Either.left(streamDeleted(write))
    const mutation = applyOp(
      write.widget.type,
      write.op,
      { lastTs: change.lastTs, latest: needsLatest(write.op) ? (change.latest?.point ?? null) : null },
      now,
      write.path
    )
    if (Either.isLeft(mutation)) return Either.left(mutation.left)
    const m = mutation.right
    if (m.clear) {
      change.cleared = true
      change.entries.clear()
      change.latest = null
    }
    for (const entry of m.entries) {
      change.entries.set(entry.ts, entry)
      if (change.latest === null || (change.latest !== undefined && entry.ts >= change.latest.ts)) {
        change.latest = { ts: entry.ts, point: entry.point }
      }
    }
    change.lastTs = m.lastTs
  }
  return Either.void
}

/** Stores the net changes: deletes of cleared streams, then one upsert of every entry with the new `last_ts`. */
const store = async (client: pg.PoolClient, changes: ReadonlyMap<number, StreamChange>) => {
  const cleared: Array<number> = []
  const streamIds: Array<number> = []
  const tss: Array<number> = []
  const values: Array<number | null> = []
  const points: Array<string> = []
  const moved: Array<number> = []
  const lastTss: Array<number> = []
  for (const [id, change] of changes) {
    if (change.cleared) cleared.push(id)
    for (const entry of change.entries.values()) {
      streamIds.push(id)
      tss.push(entry.ts)
      values.push(entry.value)
      points.push(entry.json)
    }
    if (change.lastTs !== change.startTs && change.lastTs !== null) {
      moved.push(id)
      lastTss.push(change.lastTs)
    }
  }
  if (cleared.length > 0) {
    await run(client, db.deleteFrom("entries").where("stream_id", "in", cleared).compile())
  }
  if (streamIds.length === 0 && moved.length === 0) return
  // One statement, one round trip, whatever the number of entries: the entries as four array parameters
  // (PostgreSQL allows 65535 parameters per statement), and the streams whose highest ts moved.
  await run(
    client,
    sql`
      with upserted as (
        insert into entries (stream_id, ts, value, point)
        select * from unnest(${streamIds}::bigint[], ${tss}::bigint[], ${values}::float8[], ${points}::text[])
        on conflict (stream_id, ts) do update set value = excluded.value, point = excluded.point
      )
      update streams set last_ts = v.last_ts
      from unnest(${moved}::bigint[], ${lastTss}::bigint[]) as v(id, last_ts)
      where streams.id = v.id`.compile(db)
  )
}

/** The body of one `write` transaction; resolves to the domain error to roll back with, if any. */
const writeTransaction = async (
  client: pg.PoolClient,
  writes: ReadonlyArray<StreamWrite>,
  now: Micros
): Promise<{ readonly commit: boolean; readonly value: Either.Either<void, InvalidPoint | StreamNotFound> }> => {
  const ids = [...new Set(writes.map((w) => w.widget.id as number))].sort((a, b) => a - b)
  const changes = new Map<number, StreamChange>()
  for (const row of await lockStreams(client, ids)) {
    const lastTs = row.last_ts as Micros | null
    changes.set(row.id, { startTs: lastTs, lastTs, latest: undefined, cleared: false, entries: new Map() })
  }
  // Read after the locks are held: in READ COMMITTED each statement sees what was committed before it started, so
  // this sees every write that held the locks before this one.
  const loading = [...new Set(writes.filter((w) => needsLatest(w.op)).map((w) => w.widget.id as number))].filter((id) =>
    changes.has(id)
  )
  if (loading.length > 0) {
    for (const id of loading) changes.get(id)!.latest = null
    for (const row of await latestPoints(client, loading)) {
      changes.get(row.stream_id)!.latest = { ts: row.ts as Micros, point: JSON.parse(row.point) as StoredPoint }
    }
  }
  const planned = plan(writes, changes, now)
  if (Either.isLeft(planned)) return { commit: false, value: planned }
  await store(client, changes)
  return { commit: true, value: planned }
}

const write =
  (pool: pg.Pool): StreamStore["Type"]["write"] =>
  (writes, now) =>
    writes.length === 0
      ? Effect.void
      : Effect.flatten(
          Effect.tryPromise({
            try: () => transaction(pool, (client) => writeTransaction(client, writes, now)),
            catch: toStorageFailure
          })
        )

const read =
  (pool: pg.Pool): StreamStore["Type"]["read"] =>
  (stream, query) =>
    Effect.tryPromise({
      try: async (): Promise<ReadonlyArray<StoredEntry>> => {
        const base = db.selectFrom("entries").select(["ts", "point"]).where("stream_id", "=", stream)
        const rows =
          query.since === null
            ? await run(pool, base.orderBy("ts", "desc").limit(1).compile())
            : await run(
                pool,
                (query.limit === null ? base : base.limit(query.limit))
                  .where("ts", ">", query.since)
                  .orderBy("ts", "asc")
                  .compile()
              )
        return rows.map((row) => ({ ts: row.ts as Micros, json: row.point }))
      },
      catch: toStorageFailure
    })

/**
 * The oldest `$3` entries of stream `$1` with `ts > $2`, ascending, each rendered as a read body's `data` element
 * (`renderEntries` of the core port), one text column per row: `formatTs`'s text for `ts` (whole seconds, or
 * seconds, a dot and the microseconds without trailing zeros; `ts` is never negative) and the stored JSON text.
 * Named, so each connection prepares it once.
 */
const pageQuery = {
  name: "dashstream_read_page",
  text:
    `SELECT '{"ts":' || CASE WHEN ts % 1000000 = 0 THEN (ts / 1000000)::text ` +
    `ELSE rtrim((ts / 1000000)::text || '.' || lpad((ts % 1000000)::text, 6, '0'), '0') END ` +
    `|| ',"point":' || point || '}' FROM entries WHERE stream_id = $1 AND ts > $2 ORDER BY ts LIMIT $3`,
  rowMode: "array"
} as const

const readPage =
  (pool: pg.Pool): StreamStore["Type"]["readPage"] =>
  (stream, since, limit) =>
    Effect.tryPromise({
      try: async () => {
        const result = await pool.query<[string]>({ ...pageQuery, values: [stream, since, limit] })
        return pageOfRendered(result.rows.map((row) => row[0]))
      },
      catch: toStorageFailure
    })

const ping = (pool: pg.Pool): StreamStore["Type"]["ping"] =>
  Effect.tryPromise({ try: () => pool.query("SELECT 1"), catch: toStorageFailure }).pipe(
    Effect.timeoutFail({
      duration: PING_TIMEOUT_MS,
      onTimeout: () => new StorageUnavailable({ cause: new Error(`SELECT 1 took longer than ${PING_TIMEOUT_MS} ms`) })
    }),
    Effect.asVoid
  )

/**
 * The `StreamStore` port on a `pg` pool (contract sections 3, 4, 6). `write` runs in one transaction that first
 * locks every stream row it touches (`SELECT ... FOR UPDATE`, ascending id), so concurrent writes to a stream from
 * any number of processes are serialised: no lost delta, no duplicate `ts`. Errors: `InvalidPoint` from `applyOp`
 * and `StreamNotFound` for a widget deleted since the caller looked it up (nothing stored), `StorageUnavailable` when the server is unreachable or the connection broke (nothing
 * acknowledged), `StorageError` otherwise. `ping` fails with `StorageUnavailable` after {@link PING_TIMEOUT_MS}.
 */
export const makeStreamStore = (pool: pg.Pool): StreamStore["Type"] => ({
  write: write(pool),
  read: read(pool),
  readPage: readPage(pool),
  ping: ping(pool)
})
