import { type Micros, storesSummary, summarizeBlock } from "@dashstream/core"
import type { BlockArrays, Merged, StoreArrays } from "./changePlan.js"
import { byteaArrayBinary, numberArray, numberArrayBinary, sqlLiteral, textArray, textArrayText } from "./wireCodec.js"

/**
 * The statements of the PostgreSQL group commit (see `groupCommit.ts`): the SQL that stores what a group's planned
 * writes change (planned in `changePlan.ts`; texts and arrays encoded by `wireCodec.ts`).
 *
 * A group costs one round trip when it is planned on guessed `last_ts` (one prepared statement, {@link guessedSql})
 * or two: simple queries of several statements each, `BEGIN`, the row locks and the latest points in one, the
 * changes and `COMMIT` in the other ({@link storeSql}). A simple query takes no parameters: the stream ids and times
 * are integers, inlined as such; texts (points, notification payloads) are inlined as escaped literals
 * ({@link textArray}).
 *
 * Entries are stored in blocks (`entry_blocks`, migration 0007; the packed encoding of `@dashstream/core/entryBlocks`,
 * up to 32 entries or 16 KiB a row). A group's new entries of a stream (`ts` above its `last_ts` before the group, or
 * all of them after a clear of the group) become new blocks, plainly inserted: a new block cannot collide with a
 * stored one, since `last_ts` is the highest `ts` ever assigned to the stream and every write holds the stream's row
 * lock, so no stored block reaches above it. The others (replacing or back-filling, "old") are grouped into runs of
 * disjoint `ts` ranges: a run that no stored block overlaps is inserted as new blocks too (a back-filled request of
 * 1,000 points, typically); otherwise the blocks it overlaps are read, merged with it and written again
 * ({@link mergeOld}).
 */

/**
 * The SQL that reads the stored blocks old entries must be merged into (see {@link mergeOld}), as
 * `stream_id, first_ts, last_ts, data`: per run of old entries ({@link StoreArrays}), the blocks overlapping its range
 * (the block starting before the range and reaching into it, then those starting in it; two index probes). A block
 * overlapping two runs comes twice.
 */
export const overlappedSql = (a: StoreArrays): string =>
  `SELECT b.stream_id, b.first_ts, b.last_ts, b.data FROM unnest(${numberArray(a.runStreams, "bigint")}, ` +
  `${numberArray(a.runLos, "bigint")}, ${numberArray(a.runHis, "bigint")}) AS r(id, lo, hi) CROSS JOIN LATERAL (` +
  "(SELECT stream_id, first_ts, last_ts, data FROM entry_blocks WHERE stream_id = r.id AND first_ts < r.lo " +
  "ORDER BY first_ts DESC LIMIT 1) UNION ALL (SELECT stream_id, first_ts, last_ts, data FROM entry_blocks " +
  "WHERE stream_id = r.id AND first_ts BETWEEN r.lo AND r.hi)) b WHERE b.last_ts >= r.lo"

/** The latest entry of each stream in `ids` (inlined integers), as `stream_id, ts, point` (see {@link lastEntrySql}). */
export const latestSql = (ids: ReadonlyArray<number>): string =>
  `SELECT s.id AS stream_id, b.last_ts AS ts, ${lastEntrySql("b")} AS point FROM unnest('{${ids.join(",")}}'::bigint[]) AS s(id) ` +
  "CROSS JOIN LATERAL (SELECT last_ts, last_at, data FROM entry_blocks WHERE stream_id = s.id ORDER BY first_ts DESC LIMIT 1) b"

/**
 * The SQL expression of the JSON text of the last entry of the block `alias` (an `entry_blocks` row): its bytes after
 * `last_at` and the entry's 20-byte header, as text. Nothing is decoded in JavaScript.
 */
export const lastEntrySql = (alias: string): string =>
  `convert_from(substring(${alias}.data from ${alias}.last_at + 21), 'UTF8')`

/**
 * The summaries `blocks` are stored with (migration 0014, core's `BlockSummary.ts`): each block's `summarizeBlock`
 * when it holds more than 4 entries, else `null`. Every block written on PostgreSQL is a new row (appends, merges,
 * a decimation pass's rewrites, imports), so each is summarised here, once, as it is written.
 */
const summariesOf = (blocks: BlockArrays): Array<Buffer | null> =>
  blocks.datas.map((d, i) => (storesSummary(blocks.ns[i]!) ? summarizeBlock(d) : null))

/**
 * The SQL of `blocks` as the rows of an `INSERT INTO entry_blocks ... SELECT *`, inlined: the numbers as array
 * literals and every block's bytes in ONE hex `bytea` literal, cut by offset, the summaries likewise in another
 * (size -1: NULL), since a simple query takes no parameters.
 */
const blocksRowsSql = (blocks: BlockArrays): string => {
  const offsets: Array<number> = []
  let at = 0
  for (const d of blocks.datas) {
    offsets.push(at)
    at += d.length
  }
  const summaries = summariesOf(blocks)
  const summaryAts: Array<number> = []
  const summarySizes: Array<number> = []
  at = 0
  for (const d of summaries) {
    summaryAts.push(at)
    summarySizes.push(d === null ? -1 : d.length)
    at += d?.length ?? 0
  }
  const hex = Buffer.concat(blocks.datas).toString("hex")
  const summaryHex = Buffer.concat(summaries.filter((d): d is Buffer => d !== null)).toString("hex")
  return (
    `SELECT v.stream_id, v.first_ts, v.last_ts, v.n, v.last_at, substring(a.bytes from v.at::int + 1 for v.size::int), ` +
    `CASE WHEN v.ssize >= 0 THEN substring(a.summaries from v.sat::int + 1 for v.ssize::int) END ` +
    `FROM (SELECT '\\x${hex}'::bytea AS bytes, '\\x${summaryHex}'::bytea AS summaries) a, ` +
    `unnest(${numberArray(blocks.streamIds, "bigint")}, ` +
    `${numberArray(blocks.firstTss, "bigint")}, ${numberArray(blocks.lastTss, "bigint")}, ` +
    `${numberArray(blocks.ns, "bigint")}, ${numberArray(blocks.lastAts, "bigint")}, ${numberArray(offsets, "bigint")}, ` +
    `${numberArray(
      blocks.datas.map((d) => d.length),
      "bigint"
    )}, ${numberArray(summaryAts, "bigint")}, ${numberArray(summarySizes, "bigint")}) ` +
    `AS v(stream_id, first_ts, last_ts, n, last_at, at, size, sat, ssize)`
  )
}

/** The blocks of `a` and `b` as one {@link BlockArrays} (no copy of the bytes). */
const concatBlocks = (a: BlockArrays, b: BlockArrays): BlockArrays => ({
  streamIds: a.streamIds.concat(b.streamIds),
  firstTss: a.firstTss.concat(b.firstTss),
  lastTss: a.lastTss.concat(b.lastTss),
  ns: a.ns.concat(b.ns),
  lastAts: a.lastAts.concat(b.lastAts),
  datas: a.datas.concat(b.datas)
})

/**
 * The SQL that stores the net changes of a group planned on the rows, its stream rows locked: deletes of cleared
 * streams, deletes of the blocks the old entries were merged into (`merged`, see {@link mergeOld}; none without
 * old entries), then one statement inserting the new blocks and the merged ones, setting the new `last_ts` and
 * `cleared_ts`, and notifying `channel` once per changed stream (see `notify.ts`; PostgreSQL delivers the
 * notifications on COMMIT only). An empty string when there is nothing to store.
 */
export const storeSql = (a: StoreArrays, merged: Merged | undefined, channel: string): string => {
  let sql = ""
  if (a.cleared.length > 0)
    sql += `DELETE FROM entry_blocks WHERE stream_id = ANY(${numberArray(a.cleared, "bigint")});\n`
  if (merged !== undefined && merged.deleteStreams.length > 0) {
    sql +=
      `DELETE FROM entry_blocks WHERE (stream_id, first_ts) IN (SELECT * FROM ` +
      `unnest(${numberArray(merged.deleteStreams, "bigint")}, ${numberArray(merged.deleteFirstTss, "bigint")}));\n`
  }
  const blocks = merged === undefined ? a.blocks : concatBlocks(a.blocks, merged.blocks)
  if (blocks.datas.length === 0 && a.moved.length === 0) return sql
  // One statement whatever the number of blocks. The data-modifying CTEs always run to completion; the final SELECT
  // sends the notifications.
  const insert =
    blocks.datas.length === 0
      ? ""
      : `inserted AS (
      INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data, summary) ${blocksRowsSql(blocks)}
    ), `
  return (
    sql +
    `WITH ${insert}moved AS (
      UPDATE streams SET last_ts = v.last_ts, cleared_ts = coalesce(v.cleared_ts, streams.cleared_ts)
      FROM unnest(${numberArray(a.moved, "bigint")}, ${numberArray(a.lastTss, "bigint")}, ${numberArray(a.clearedTss, "bigint")}) AS v(id, last_ts, cleared_ts)
      WHERE streams.id = v.id
    )
    SELECT pg_notify(${sqlLiteral(channel)}, p) FROM unnest(${textArray(a.payloads)}) AS p;\n`
  )
}

/**
 * The one statement of a group planned on guessed `last_ts` (see `runTransaction` in `groupTransaction.ts`),
 * prepared once per connection: `$1` the group's stream ids (ascending) and `$2` their guessed `last_ts`; the new
 * blocks as `$3`-`$8` (stream, `first_ts`, `last_ts`, `n`, `last_at`, `data`); the moved streams and their new
 * `last_ts` as `$9`, `$10`; the channel and the payloads as `$11`, `$12`; the runs of the old entries as
 * `$13`-`$15` (stream, lowest and highest `ts`) and their blocks as `$16`-`$21` (see {@link StoreArrays}); the
 * summaries (migration 0014) of the new blocks as `$22` and of the runs' blocks as `$23`.
 *
 * `inserted` stores the new blocks first, before any lock: while another group of the same streams holds their row
 * locks (and waits for its COMMIT to reach the disk), this one inserts its rows on another core. `locked` then takes
 * the row locks in ascending id (as the two-round-trip path does, so that no two groups deadlock on them; `locked`
 * reads `inserted`, so the insert has run to completion before the first lock is asked for). `guard` calls
 * `dashstream_stale_guess()` (migration 0008: it raises {@link staleGuessState} with a message of its own, see
 * `isStaleGuess`) unless every row exists with its guessed `last_ts`; in READ COMMITTED a locked
 * row is read as last committed, so a group that held the lock before this one is seen. The final SELECT always
 * reads `guard`, so it is always evaluated, and the statement is its own transaction: an error anywhere leaves
 * nothing stored, the early inserts included.
 *
 * The runs of old entries wait for the guard (`WHERE guard = 1`, so after the locks). `vacant` checks each run with
 * `dashstream_blocks_overlap` (migration 0007), a VOLATILE function: its query takes a snapshot of its own, so it
 * sees every block committed by the groups that held the locks before this one (the statement's own snapshot was
 * taken before it waited for them); one index probe per run. When no run overlaps a stored block, their blocks are
 * plainly inserted (`backfilled`: a late request's points, typically); when one does, `vacant` calls
 * `dashstream_occupied()` (migration 0008: it raises {@link occupiedState}, see `isOccupied`) and the group is
 * planned again on the rows, which merges old entries into the
 * blocks they overlap. A new block can only collide with a stored one (`first_ts`, 23505; or a deadlock, 40P01,
 * between two such inserts) or overlap one when a guess was wrong, and then the guard fails. No clear: a statement
 * cannot both delete a stream's blocks and insert the same rows.
 */
export const guessedSql = guessedStatement(true)

/**
 * The SQLSTATE `dashstream_stale_guess()` raises (migration 0008, which holds its own frozen copy): a guessed
 * `last_ts` was wrong, the statement stored nothing. What the server's log shows for it: docs/running.md, "The
 * PostgreSQL log".
 */
export const staleGuessState = "DS001"

/**
 * The SQLSTATE `dashstream_occupied()` raises (migration 0008, which holds its own frozen copy): entries replacing or
 * back-filling stored ones overlap stored blocks; the statement stored nothing and the group is merged on the rows.
 */
export const occupiedState = "DS002"

/**
 * {@link guessedSql} without the runs of old entries (`$13`-`$21` and `$23` absent, the new blocks' summaries `$13`):
 * the statement of a group whose entries are
 * all new (single points, appends), which has no `vacant` check and no second insert to plan and run.
 */
export const guessedNewSql = guessedStatement(false)

/** The text of {@link guessedSql} (`withRuns`) or of {@link guessedNewSql}. */
function guessedStatement(withRuns: boolean): string {
  const runs = `vacant AS (
  SELECT CASE WHEN count(*) = 0 THEN 2147483647 ELSE dashstream_occupied() END AS free
  FROM unnest($13::bigint[], $14::bigint[], $15::bigint[]) AS r(id, lo, hi)
  WHERE CASE WHEN (SELECT ok FROM guard) = 1 THEN dashstream_blocks_overlap(r.id, r.lo, r.hi) END
), backfilled AS (
  INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data, summary)
  SELECT * FROM unnest($16::bigint[], $17::bigint[], $18::bigint[], $19::bigint[], $20::bigint[], $21::bytea[], $23::bytea[])
  WHERE (SELECT free FROM vacant) = 2147483647
), `
  // The new blocks' summaries come last: $13 without the runs, $22 with them (a prepared statement's parameters have
  // no gaps).
  return `WITH inserted AS (
  INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data, summary)
  SELECT * FROM unnest($3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bytea[], ${withRuns ? "$22" : "$13"}::bytea[]) RETURNING 1
), locked AS (
  SELECT id, last_ts FROM streams WHERE id = ANY($1::bigint[]) AND (SELECT count(*) FROM inserted) >= 0
  ORDER BY id FOR UPDATE
), guard AS (
  SELECT CASE WHEN (SELECT count(*) FROM locked JOIN unnest($1::bigint[], $2::bigint[]) AS v(id, last_ts)
    ON locked.id = v.id AND locked.last_ts IS NOT DISTINCT FROM v.last_ts) = cardinality($1::bigint[])
    THEN 1 ELSE dashstream_stale_guess() END AS ok
), ${withRuns ? runs : ""}moved AS (
  UPDATE streams SET last_ts = v.last_ts FROM unnest($9::bigint[], $10::bigint[]) AS v(id, last_ts)
  WHERE streams.id = v.id AND (SELECT ok FROM guard) = 1
)
SELECT (SELECT ok FROM guard) AS ok, ${withRuns ? "(SELECT free FROM vacant) AS free, " : ""}(SELECT count(pg_notify($11, p)) FROM unnest($12::text[]) AS p) AS notified`
}

/**
 * {@link guessedSql} with its values, as a named (prepared) query; {@link guessedNewSql} when the group has no old
 * entries. The number arrays and the blocks go in the binary format ({@link numberArrayBinary},
 * {@link byteaArrayBinary}), the payloads as the text of a PostgreSQL array ({@link textArrayText}: one native
 * `JSON.stringify`).
 */
export const guessedQuery = (
  ids: ReadonlyArray<number>,
  expected: ReadonlyArray<Micros | null>,
  a: StoreArrays,
  channel: string
): { readonly name: string; readonly text: string; readonly values: Array<unknown> } => {
  const values: Array<unknown> = [
    numberArrayBinary(ids, "bigint"),
    numberArrayBinary(expected, "bigint"),
    ...blockValues(a.blocks),
    numberArrayBinary(a.moved, "bigint"),
    numberArrayBinary(a.lastTss, "bigint"),
    channel,
    textArrayText(a.payloads)
  ]
  const summaries = byteaArrayBinary(summariesOf(a.blocks))
  if (a.runStreams.length === 0) {
    values.push(summaries)
    return { name: "dashstream_store_guessed_new", text: guessedNewSql, values }
  }
  values.push(
    numberArrayBinary(a.runStreams, "bigint"),
    numberArrayBinary(a.runLos, "bigint"),
    numberArrayBinary(a.runHis, "bigint"),
    ...blockValues(a.runBlocks),
    summaries,
    byteaArrayBinary(summariesOf(a.runBlocks))
  )
  return { name: "dashstream_store_guessed_blocks", text: guessedSql, values }
}

/**
 * An insert of `blocks` as its SQL and values (one statement whatever the number of blocks; the arrays in the binary
 * format), for a client's `query`.
 */
export const insertBlocksQuery = (blocks: BlockArrays): { readonly text: string; readonly values: Array<Buffer> } => ({
  text: `INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data, summary)
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bytea[], $7::bytea[])`,
  values: [...blockValues(blocks), byteaArrayBinary(summariesOf(blocks))]
})

const blockValues = (b: BlockArrays): Array<Buffer> => [
  numberArrayBinary(b.streamIds, "bigint"),
  numberArrayBinary(b.firstTss, "bigint"),
  numberArrayBinary(b.lastTss, "bigint"),
  numberArrayBinary(b.ns, "bigint"),
  numberArrayBinary(b.lastAts, "bigint"),
  byteaArrayBinary(b.datas)
]
