import { blockSize } from "@dashstream/core/entryBlocks"

/**
 * SQL of the hot paths (push, read, key and widget lookup), run as better-sqlite3 statements prepared once per
 * connection. Each is an index lookup (checked by EXPLAIN QUERY PLAN in the tests).
 */
export const Sql = {
  /** The stream's highest assigned ts; no row when the stream was deleted. */
  lastTs: "SELECT last_ts FROM streams WHERE id = ?",
  /** Sets the stream's highest assigned ts. */
  setLastTs: "UPDATE streams SET last_ts = ? WHERE id = ?",
  /** Deletes every entry of a stream (clear). */
  clear: "DELETE FROM entry_blocks WHERE stream_id = ?",
  /** Records the ts of the stream's last clear. */
  setClearedTs: "UPDATE streams SET cleared_ts = ? WHERE id = ?",
  /** The ts of the stream's last clear (`NULL`: never); no row when the stream was deleted. */
  clearedTs: "SELECT cleared_ts FROM streams WHERE id = ?",
  /**
   * `[data_version, total_changes()]`: the first moves when another connection committed to the file, the second
   * counts the rows this connection changed since it opened (read as a raw row).
   */
  changeCounts: "SELECT data_version, total_changes() FROM pragma_data_version()",
  /** Takes the next number of the commit sequence (see migration 0004), inside a write transaction. */
  nextSeq: "UPDATE live_sequence SET seq = seq + 1 WHERE id = 1 RETURNING seq",
  /** The last number of the commit sequence taken. */
  lastSeq: "SELECT seq FROM live_sequence WHERE id = 1",
  /**
   * The stream's latest entry as `[ts, point JSON]`: its last block's `last_ts` and the JSON text of that block's
   * last entry, which runs from 20 bytes past `last_at` to the block's end (`substr` of a BLOB counts bytes; the
   * UTF-8 bytes cast to TEXT), so nothing is decoded in JavaScript. Entries live in blocks (migration 0007, `entryBlocks.js`); the blocks of a stream hold
   * disjoint `ts` ranges, so ascending by `first_ts` is ascending by `ts`.
   */
  latest:
    "SELECT last_ts, CAST(substr(data, last_at + 21) AS TEXT) FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts DESC LIMIT 1",
  /**
   * The blocks holding entries with `ts > after` of a stream, ascending by `ts`: from the last block starting at or
   * before `after` on (a seek for it, then a range scan). Parameters: stream, stream, after, after (better-sqlite3
   * binds no numbered parameters from a list). Read with `iterate`, stopped once a page is full.
   */
  blocksFrom:
    "SELECT data FROM entry_blocks WHERE stream_id = ? AND first_ts >= coalesce((SELECT first_ts FROM entry_blocks " +
    "WHERE stream_id = ? AND first_ts <= ? ORDER BY first_ts DESC LIMIT 1), ?) ORDER BY first_ts",
  /**
   * The first `?` blocks of a stream holding entries with `after < ts <= to`, ascending, as one raw row
   * `[count, data]`: the number of blocks and their `data` laid end to end (`NULL` when none), in one statement, so a
   * page of a 30-day range read is one row rather than 256 (each row, and each Buffer, cost about as much as ranking
   * its 32 entries). From the block holding `after` (as {@link Sql.blocksFrom}) unless it ends at or before `after`.
   * `group_concat` reads each BLOB as text without converting it (the database is UTF-8) and the CAST gives the bytes
   * back as they are. It concatenates in the order the ordered subquery yields its rows; `group_concat(... ORDER BY
   * first_ts)`, which says so, sorts the blocks again and cost 2.5-3x as much. The range read checks that the entries
   * it gets ascend (`RangeRead.ts`), so a different order would fail the read, not change its answer. Parameters:
   * stream, stream, after, after, after, to, limit.
   */
  packedBlocks:
    "SELECT count(*), CAST(group_concat(data, '') AS BLOB) FROM (SELECT first_ts, data " +
    "FROM entry_blocks WHERE stream_id = ? AND first_ts >= coalesce((SELECT first_ts FROM entry_blocks " +
    "WHERE stream_id = ? AND first_ts <= ? ORDER BY first_ts DESC LIMIT 1), ?) AND last_ts > ? AND first_ts <= ? " +
    "ORDER BY first_ts LIMIT ?)",
  /**
   * {@link Sql.packedBlocks} with summaries (migration 0013, core's `BlockSummary.ts`): a block inside the read
   * (`first_ts > @after`, `first_ts >= @lower`, `last_ts <= @to`) whose first and last entries lie in one bucket of
   * `@n` over `[@lower, @lower + @span]` (`readsAsSummary`: bucket `(ts - lower) * n / span` in 64-bit integers,
   * the last bucket also holding the upper bound) gives its `summary` instead of its `data`, unless it has none. The
   * numbers are cast to INTEGER (better-sqlite3 binds a number as REAL, and REAL division is not the bucket's);
   * the CASE tests the bounds first, so the products are only taken for `lower <= ts <= upper`, where core's
   * `summaryBuckets` keeps them below 2^62. Named parameters: stream, after, to, limit, lower, span, n.
   */
  packedSummaries:
    "SELECT count(*), CAST(group_concat(d, '') AS BLOB) FROM (SELECT first_ts, CASE WHEN summary IS NULL OR " +
    "first_ts <= @after OR first_ts < CAST(@lower AS INTEGER) OR last_ts > @to THEN data " +
    "WHEN (first_ts - CAST(@lower AS INTEGER)) * CAST(@n AS INTEGER) / CAST(@span AS INTEGER) = " +
    "(last_ts - CAST(@lower AS INTEGER)) * CAST(@n AS INTEGER) / CAST(@span AS INTEGER) " +
    "OR (first_ts - CAST(@lower AS INTEGER)) * CAST(@n AS INTEGER) / CAST(@span AS INTEGER) >= @n - 1 " +
    "THEN summary ELSE data END AS d " +
    "FROM entry_blocks WHERE stream_id = @stream AND first_ts >= coalesce((SELECT first_ts FROM entry_blocks " +
    "WHERE stream_id = @stream AND first_ts <= @after ORDER BY first_ts DESC LIMIT 1), @after) AND last_ts > @after " +
    "AND first_ts <= @to ORDER BY first_ts LIMIT @limit)",
  /**
   * The stream's blocks as raw rows `[first_ts, n]`, newest first, their data not read: how far back the `count` most
   * recent entries start (the live snapshot), counted without decoding a block.
   */
  blockCountsNewestFirst: "SELECT first_ts, n FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts DESC",
  /** The stream's blocks starting at or after `?`, ascending. Read with `iterate`, stopped once a page is full. */
  blocksStartingAt: "SELECT data FROM entry_blocks WHERE stream_id = ? AND first_ts >= ? ORDER BY first_ts",
  /** The stream's tail block as a raw row `[first_ts, n, last_ts, bytes of data]`. */
  tail: "SELECT first_ts, n, last_ts, length(data) FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts DESC LIMIT 1",
  /** The block of stream `?` whose range starts at or before `?` (the last such), as `{ id, first_ts, data }`. */
  blockAt:
    "SELECT id, first_ts, last_ts, data FROM entry_blocks WHERE stream_id = ? AND first_ts <= ? ORDER BY first_ts DESC LIMIT 1",
  /** The stream's first block, as `{ id, first_ts, last_ts, data }`. */
  firstBlock: "SELECT id, first_ts, last_ts, data FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts LIMIT 1",
  /** The `first_ts` of the stream's block after the one starting at `?`. */
  nextFirst: "SELECT first_ts FROM entry_blocks WHERE stream_id = ? AND first_ts > ? ORDER BY first_ts LIMIT 1",
  /** Rewrites a block by id: first ts, last ts, count, offset of the last entry, data, summary (or NULL). */
  updateBlock:
    "UPDATE entry_blocks SET first_ts = ?, last_ts = ?, n = ?, last_at = ?, data = ?, summary = ? WHERE id = ?",
  /** Inserts a block: stream id, first ts, last ts, count, offset of the last entry, data, summary (or NULL). */
  insertBlock:
    "INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data, summary) VALUES (?, ?, ?, ?, ?, ?, ?)",
  /** Deletes a block by id. */
  deleteBlock: "DELETE FROM entry_blocks WHERE id = ?",
  /** The account of a working (unrevoked) key digest. */
  accountByKey: "SELECT account_id FROM access_keys WHERE digest = ? AND revoked_at IS NULL",
  /** One widget of an account by stream name. */
  widgetByName: "SELECT id, account_id, name, type, created_at FROM streams WHERE account_id = ? AND name = ?",
  /** The widgets of an account among the names of a JSON array. */
  widgetsByNames:
    "SELECT id, account_id, name, type, created_at FROM streams " +
    "WHERE account_id = ? AND name IN (SELECT value FROM json_each(?))",
  /** A trivial query for readiness. */
  ping: "SELECT 1"
} as const

/** The SQL function (registered on each writing connection, see `writePath.ts`) of core's `summarizeBlock`. */
export const summaryFunction = "dashstream_block_summary"

/**
 * Stores `rows` blocks in one statement ({@link appendRowWidth} parameters each: stream id, first ts, last ts, count,
 * byte offset of the last entry, data, summary or NULL): a row with a new `(stream_id, first_ts)` is a new block; a
 * row naming an existing block's `(stream_id, first_ts)` appends its entries to that block (its `last_at` then counts
 * from the block's old end), and the block is summarised again ({@link summaryFunction}) once it holds 32 entries or
 * more, else left without a summary (an open tail block is read whole). Rows are applied one after another.
 */
export const appendRowsSql = (rows: number): string =>
  "INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data, summary) VALUES " +
  Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?, ?)").join(", ") +
  " ON CONFLICT (stream_id, first_ts) DO UPDATE SET last_ts = excluded.last_ts, n = n + excluded.n, " +
  "last_at = length(data) + excluded.last_at, data = CAST(data || excluded.data AS BLOB), " +
  `summary = CASE WHEN n + excluded.n >= ${blockSize} THEN ${summaryFunction}(CAST(data || excluded.data AS BLOB)) END`

/** Parameters per row of {@link appendRowsSql}. */
export const appendRowWidth = 7

/**
 * SQL of the decimation pass (docs/api.md section 9), prepared once per connection. Each is served by an index
 * (checked by EXPLAIN QUERY PLAN in the tests). Times are integer microseconds.
 */
export const DecimationSql = {
  /**
   * A page of streams with `id > ?` holding an entry with `ts < ?`, ascending by id, at most `?`. The EXISTS probe
   * is one seek in `entry_blocks_stream_ts`: the stream's first block decides.
   */
  streams:
    "SELECT id, type FROM streams AS s WHERE id > ? " +
    "AND EXISTS (SELECT 1 FROM entry_blocks AS e WHERE e.stream_id = s.id AND e.first_ts < ?) ORDER BY id LIMIT ?",
  /** The `ts` of the stream's newest entry (the last block's `last_ts`). */
  newest: "SELECT last_ts FROM entry_blocks WHERE stream_id = ? ORDER BY first_ts DESC LIMIT 1"
} as const
