import {
  type Micros,
  pageOfRendered,
  type StoredEntry,
  StorageUnavailable,
  type StreamStore,
  withEffectForms
} from "@dashstream/core"
import { Effect, Option } from "effect"
import type pg from "pg"
import { toStorageFailure } from "./internal/errors.js"
import type { GroupCommit } from "./internal/groupCommit.js"
import { LatestReads } from "./internal/latestReads.js"
import { db, run } from "./internal/sql.js"

/** How long `ping` waits for `SELECT 1` before reporting the storage unavailable. */
export const PING_TIMEOUT_MS = 2_000

/** The entries of a read with `since` (see `StreamStore.read`); rejects with the `pg` error. */
const readSince = async (pool: pg.Pool, stream: number, since: Micros, limit: number | null) => {
  const base = db.selectFrom("entries").select(["ts", "point"]).where("stream_id", "=", stream)
  const rows = await run(
    pool,
    (limit === null ? base : base.limit(limit)).where("ts", ">", since).orderBy("ts", "asc").compile()
  )
  return rows.map((row): StoredEntry => ({ ts: row.ts as Micros, json: row.point }))
}

const noEntries: ReadonlyArray<StoredEntry> = []

/** `StreamStore.readDirect`: a latest-entry read joins a batch of `latest` (see `LatestReads`). */
const readDirect =
  (pool: pg.Pool, latest: LatestReads): StreamStore["Type"]["readDirect"] =>
  (stream, query, done) => {
    if (query.since === null) return latest.read(stream, done)
    void readSince(pool, stream, query.since, query.limit).then(
      (entries) => done(undefined, entries),
      (cause: unknown) => done(toStorageFailure(cause), noEntries)
    )
  }

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

/**
 * Stream `$1`'s `cleared_ts` with its entries `ts > $2` (at most `$3`, ascending) in ONE statement, so that both are
 * of one snapshot; one row with null `ts` when no entry matches, no row when the stream does not exist.
 */
const liveSinceQuery = {
  name: "dashstream_read_live_since",
  text: `SELECT s.cleared_ts, e.ts, e.point FROM streams s LEFT JOIN LATERAL (
      SELECT ts, point FROM entries WHERE stream_id = s.id AND ts > $2 ORDER BY ts LIMIT $3) e ON true
    WHERE s.id = $1 ORDER BY e.ts`
} as const

/**
 * As {@link liveSinceQuery}, with the oldest `$3` of the stream's `$2` most recent entries (all of them when `$3` is
 * `$2`): the first page of a snapshot, read a page at a time.
 */
const liveRecentQuery = {
  name: "dashstream_read_live_recent_page",
  text: `SELECT s.cleared_ts, e.ts, e.point FROM streams s LEFT JOIN LATERAL (
      SELECT ts, point FROM (
        SELECT ts, point FROM entries WHERE stream_id = s.id ORDER BY ts DESC LIMIT $2) r ORDER BY ts LIMIT $3) e ON true
    WHERE s.id = $1 ORDER BY e.ts`
} as const

const readLive =
  (pool: pg.Pool): StreamStore["Type"]["readLive"] =>
  (stream, query) =>
    Effect.tryPromise({
      try: async () => {
        const result = await pool.query<{ cleared_ts: number | null; ts: number | null; point: string | null }>(
          query._tag === "Recent"
            ? { ...liveRecentQuery, values: [stream, query.count, Math.min(query.count, query.limit ?? query.count)] }
            : { ...liveSinceQuery, values: [stream, query.since, query.limit] }
        )
        const rows = result.rows
        if (rows.length === 0) return Option.none()
        const entries: Array<StoredEntry> = []
        for (const row of rows) if (row.ts !== null) entries.push({ ts: row.ts as Micros, json: row.point! })
        return Option.some({ lastClear: rows[0]!.cleared_ts as Micros | null, entries })
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
 * The `StreamStore` port on a `pg` pool (contract sections 3, 4, 6). `write` joins a group commit (see
 * `internal/groupCommit.ts`): the calls arriving together run in one transaction that first locks every stream row
 * the group touches (`SELECT ... FOR UPDATE`, ascending id), so concurrent writes to a stream from any number of
 * processes are serialised: no lost delta, no duplicate `ts`; each call is acknowledged only after the COMMIT. Errors: `InvalidPoint` from `applyOp`
 * and `StreamNotFound` for a widget deleted since the caller looked it up (nothing stored), `StorageUnavailable` when the server is unreachable or the connection broke (nothing
 * acknowledged), `StorageError` otherwise. `readLive` reads entries with the stream's `cleared_ts` (the `ts` of its last
 * clear, integer microseconds; contract section 10) in one statement, `None` when the widget no longer exists. `ping` fails with
 * `StorageUnavailable` after {@link PING_TIMEOUT_MS}.
 */
export const makeStreamStore = (pool: pg.Pool, groupCommit: GroupCommit): StreamStore["Type"] =>
  withEffectForms({
    writeDirect: (writes, now, done) => {
      if (writes.length > 0) return groupCommit.writeDirect(writes, now, done)
      done(undefined)
      return undefined
    },
    readDirect: readDirect(pool, new LatestReads(pool)),
    readPage: readPage(pool),
    readLive: readLive(pool),
    ping: ping(pool)
  })
