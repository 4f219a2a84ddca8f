import { blockSize, type EntryRef, renderEntry } from "@dashstream/core/entryBlocks"
import {
  type Micros,
  type PackedBlocks,
  pageOfRendered,
  readRangeFrom,
  type StoredEntry,
  type SummaryBuckets,
  StorageUnavailable,
  type StreamStore,
  withEffectForms
} from "@dashstream/core"
import { Effect, Option } from "effect"
import type pg from "pg"
import { toStorageFailure } from "./internal/errors.js"
import type { GroupCommit } from "./internal/groupCommit.js"
import {
  blocksAfterSql,
  entriesBetweenOf,
  entriesSince,
  fromBlockSql,
  recentEntries,
  storedEntry
} from "./internal/blockReads.js"
import { answerQuery } from "./internal/direct.js"
import { LatestReads } from "./internal/latestReads.js"

/** How long `ping` waits for `SELECT 1` before reporting the storage unavailable. */
export const PING_TIMEOUT_MS = 2_000

/**
 * The blocks of stream `$1` a read of at most `$3` entries (null: all) with `ts > $2` needs, ascending (see
 * `blocksAfterSql`). Named, so each connection prepares it once.
 */
const sinceQuery = {
  name: "dashstream_read_since_blocks",
  text: `SELECT data FROM (${blocksAfterSql("$1", "$2", "$3::bigint")}) AS r`,
  rowMode: "array"
} as const

/** The blocks of a read with `since` (see {@link sinceQuery}); rejects with the `pg` error. */
const sinceBlocks = async (pool: pg.Pool, stream: number, since: number, limit: number | null) => {
  const result = await pool.query<[Buffer]>({ ...sinceQuery, values: [stream, since, limit] })
  return result.rows.map((row) => row[0])
}

const noEntries: ReadonlyArray<StoredEntry> = []

/**
 * `StreamStore.readDirect`: a latest-entry read joins a batch of `latest` (see `LatestReads`); both answer through
 * core's `answerGuarded` (`internal/direct.ts`), so a throw from `done` is answered 500, never a crash.
 */
const readDirect =
  (pool: pg.Pool, latest: LatestReads): StreamStore["Type"]["readDirect"] =>
  (stream, query, done) => {
    if (query.since === null) return latest.read(stream, done)
    const { since, limit } = query
    answerQuery(
      sinceBlocks(pool, stream, since, limit),
      done,
      (blocks) => entriesSince(blocks, since, limit, storedEntry),
      noEntries
    )
  }

/**
 * The oldest `limit` entries of `stream` with `ts > since`, ascending, each rendered as a read body's `data` element
 * (`renderEntries` of the core port; `renderEntry` of the block codec), decoded from the blocks that hold them.
 */
const readPage =
  (pool: pg.Pool): StreamStore["Type"]["readPage"] =>
  (stream, since, limit) =>
    Effect.tryPromise({
      try: async () =>
        pageOfRendered(entriesSince(await sinceBlocks(pool, stream, since, limit), since, limit, renderEntry)),
      catch: toStorageFailure
    })

/**
 * At most `$3` blocks of stream `$1` from the one holding `$2` on (see `fromBlockSql`), none starting after `$4`
 * (null: no bound), ascending: a range read's page is a few such chunks at most, each one index range scan.
 */
const rangeBlocksQuery = {
  name: "dashstream_read_range_blocks",
  text:
    `SELECT data FROM entry_blocks WHERE stream_id = $1 AND ${fromBlockSql("$1", "$2")} ` +
    "AND ($4::bigint IS NULL OR first_ts <= $4::bigint) ORDER BY first_ts LIMIT $3",
  rowMode: "array"
} as const

/**
 * `RangeSource.page`: the oldest `limit` entries with `after < ts <= to`, decoded from chunks of blocks sized for
 * them (a block holds `blockSize` entries when full, fewer after a decimation pass): when a chunk of full count comes
 * back short of `limit` entries, the next chunk is read after its last entry, so a page is short only at the end.
 */
const rangePage = async (
  pool: pg.Pool,
  stream: number,
  after: number,
  to: number | null,
  limit: number
): Promise<Array<EntryRef>> => {
  const out: Array<EntryRef> = []
  let cursor = after
  for (;;) {
    const wanted = limit - out.length
    // The first block may hold nothing after the cursor: one more than the entries wanted fill.
    const blocks = Math.ceil(wanted / blockSize) + 1
    const result = await pool.query<[Buffer]>({ ...rangeBlocksQuery, values: [stream, cursor, blocks, to] })
    const found = entriesBetweenOf(
      result.rows.map((row) => row[0]),
      cursor,
      to,
      wanted
    )
    for (const e of found) out.push(e)
    if (out.length >= limit || result.rows.length < blocks || found.length === 0) return out
    cursor = found[found.length - 1]!.ts
  }
}

/**
 * The first `$4` blocks of stream `$1` holding entries with `$2 < ts <= $3`, ascending, as rows `[data]`: from the
 * block holding `$2` (`fromBlockSql`) unless it ends at or before `$2`. One row a block: concatenated in the query
 * (`string_agg`), a page arrives as one hexadecimal text value that costs pg 2.5-3.5x the CPU of the rows to parse.
 */
const packedBlocksQuery = {
  name: "dashstream_read_range_packed",
  text:
    `SELECT data FROM entry_blocks WHERE stream_id = $1 AND ${fromBlockSql("$1", "$2")} AND last_ts > $2 ` +
    "AND first_ts <= $3 ORDER BY first_ts LIMIT $4",
  rowMode: "array"
} as const

/**
 * {@link packedBlocksQuery} with summaries (migration 0014, core's `BlockSummary.ts`): a block inside the read
 * (`first_ts > $2`, `first_ts >= $5`, `last_ts <= $3`) whose first and last entries lie in one bucket of `$7` over
 * `[$5, $5 + $6]` (`readsAsSummary`: bucket `(ts - lower) * n / span` in bigint arithmetic, the last bucket also
 * holding the upper bound) gives its `summary` instead of its `data`, unless it has none. The CASE tests the bounds
 * first, so the products are only taken for `lower <= ts <= upper`, where core's `summaryBuckets` keeps them below
 * 2^62.
 */
const packedSummariesQuery = {
  name: "dashstream_read_range_summaries",
  text:
    "SELECT CASE WHEN summary IS NULL OR first_ts <= $2 OR first_ts < $5::bigint OR last_ts > $3 THEN data " +
    "WHEN (first_ts - $5::bigint) * $7::bigint / $6::bigint = (last_ts - $5::bigint) * $7::bigint / $6::bigint " +
    "OR (first_ts - $5::bigint) * $7::bigint / $6::bigint >= $7::bigint - 1 THEN summary ELSE data END " +
    `FROM entry_blocks WHERE stream_id = $1 AND ${fromBlockSql("$1", "$2")} AND last_ts > $2 ` +
    "AND first_ts <= $3 ORDER BY first_ts LIMIT $4",
  rowMode: "array"
} as const

/** `RangeSource.blocks`: see {@link packedBlocksQuery} and {@link packedSummariesQuery}. */
const packedBlocks = async (
  pool: pg.Pool,
  stream: number,
  after: number,
  to: number,
  limit: number,
  buckets: SummaryBuckets | null
): Promise<PackedBlocks> => {
  const result =
    buckets === null
      ? await pool.query<[Buffer]>({ ...packedBlocksQuery, values: [stream, after, to, limit] })
      : await pool.query<[Buffer]>({
          ...packedSummariesQuery,
          values: [stream, after, to, limit, buckets.lower, buckets.span, buckets.n]
        })
  return { blocks: result.rows.length, data: result.rows.map((row) => row[0]) }
}

/** The `ts` of stream `$1`'s newest entry (its last block's `last_ts`); no row for an empty stream. */
const newestQuery = {
  name: "dashstream_read_newest_ts",
  text: "SELECT last_ts FROM entry_blocks WHERE stream_id = $1 ORDER BY first_ts DESC LIMIT 1",
  rowMode: "array"
} as const

/** `StreamStore.readRange`: core's range read over pages of blocks. */
const readRange =
  (pool: pg.Pool): StreamStore["Type"]["readRange"] =>
  (stream, query) =>
    readRangeFrom(
      {
        page: (after, to, limit) =>
          Effect.tryPromise({ try: () => rangePage(pool, stream, after, to, limit), catch: toStorageFailure }),
        newest: Effect.tryPromise({
          try: async () => {
            const result = await pool.query<[number]>({ ...newestQuery, values: [stream] })
            return result.rows.length === 0 ? null : Number(result.rows[0]![0])
          },
          catch: toStorageFailure
        }),
        blocks: (after, to, limit, buckets) =>
          Effect.tryPromise({
            try: () => packedBlocks(pool, stream, after, to, limit, buckets),
            catch: toStorageFailure
          })
      },
      query
    )

/**
 * Stream `$1`'s `cleared_ts` with the blocks that hold its oldest `$3` entries `ts > $2` (ascending; see
 * `blocksAfterSql`) in ONE statement, so that both are of one snapshot; one row with null `data` when no block
 * matches, no row when the stream does not exist.
 */
const liveSinceQuery = {
  name: "dashstream_read_live_since_blocks",
  text: `SELECT s.cleared_ts, b.n, b.data FROM streams s LEFT JOIN LATERAL (
      ${blocksAfterSql("s.id", "$2", "$3::bigint")}) b ON true
    WHERE s.id = $1 ORDER BY b.first_ts`
} as const

/**
 * As {@link liveSinceQuery}, with the blocks that hold the oldest `$3` of the stream's `$2` most recent entries,
 * newest first, each with `newer`, the number of entries in the blocks newer than it. The stream's newest `$2` blocks
 * at most (each holds at least one entry) are counted by `n` newest first (a window over the index scan); of those,
 * `total` is how many of the `$2` most recent entries exist, and only the blocks holding positions `total - $3` to
 * `total - 1` (0 the newest) are sent: a snapshot's first page of 8 of 100,000 entries sends one or two blocks.
 */
const liveRecentQuery = {
  name: "dashstream_read_live_recent_page_blocks",
  text: `SELECT s.cleared_ts, b.n, b.newer, b.data FROM streams s LEFT JOIN LATERAL (
      SELECT first_ts, n, newer, data FROM (
        SELECT first_ts, n, newer, data, least($2, max(newer + n) OVER ()) AS total FROM (
          SELECT first_ts, n, data, sum(n) OVER w - n AS newer FROM entry_blocks WHERE stream_id = s.id
          WINDOW w AS (ORDER BY first_ts DESC ROWS UNBOUNDED PRECEDING) ORDER BY first_ts DESC LIMIT $2) AS r
        WHERE r.newer < $2) AS c
      WHERE c.newer < c.total AND c.newer + c.n > c.total - $3) b ON true
    WHERE s.id = $1 ORDER BY b.first_ts DESC`
} as const

const readLive =
  (pool: pg.Pool): StreamStore["Type"]["readLive"] =>
  (stream, query) =>
    Effect.tryPromise({
      try: async () => {
        const result = await pool.query<{
          cleared_ts: number | null
          n: number | null
          newer: number | null
          data: Buffer | null
        }>(
          query._tag === "Recent"
            ? { ...liveRecentQuery, values: [stream, query.count, Math.min(query.count, query.limit ?? query.count)] }
            : { ...liveSinceQuery, values: [stream, query.since, query.limit] }
        )
        const rows = result.rows
        if (rows.length === 0) return Option.none()
        const blocks = rows.filter((row) => row.data !== null) as Array<{ n: number; newer: number; data: Buffer }>
        const entries =
          query._tag === "Recent"
            ? recentEntries(blocks, query.count, Math.min(query.count, query.limit ?? query.count))
            : entriesSince(
                blocks.map((b) => b.data),
                query.since,
                query.limit,
                storedEntry
              )
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
 * The `StreamStore` port on a `pg` pool (docs/api.md sections 3, 4, 6). `write` joins a group commit (see
 * `internal/groupCommit.ts`): the calls arriving together run in one transaction that first locks every stream row
 * the group touches (`SELECT ... FOR UPDATE`, ascending id), so concurrent writes to a stream from any number of
 * processes are serialised: no lost delta, no duplicate `ts`; each call is acknowledged only after the COMMIT. Errors: `InvalidPoint` from `applyOp`
 * and `StreamNotFound` for a widget deleted since the caller looked it up (nothing stored), `StorageUnavailable` when the server is unreachable or the connection broke (nothing
 * acknowledged), `StorageError` otherwise. `readLive` reads entries with the stream's `cleared_ts` (the `ts` of its last
 * clear, integer microseconds; docs/api.md section 10) in one statement, `None` when the widget no longer exists. `ping` fails with
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
    readRange: readRange(pool),
    readLive: readLive(pool),
    ping: ping(pool)
  })
