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
  clear: "DELETE FROM entries WHERE stream_id = ?",
  /** Records the ts of the stream's last clear. */
  setClearedTs: "UPDATE streams SET cleared_ts = ? WHERE id = ?",
  /** The ts of the stream's last clear (`NULL`: never); no row when the stream was deleted. */
  clearedTs: "SELECT cleared_ts FROM streams WHERE id = ?",
  /** Stores an entry, replacing the stream's entry with the same ts (contract section 3). */
  upsert:
    "INSERT INTO entries (stream_id, ts, value, point) VALUES (?, ?, ?, ?) " +
    "ON CONFLICT (stream_id, ts) DO UPDATE SET value = excluded.value, point = excluded.point",
  /**
   * `[data_version, total_changes()]`: the first moves when another connection committed to the file, the second
   * counts the rows this connection changed since it opened (read as a raw row).
   */
  changeCounts: "SELECT data_version, total_changes() FROM pragma_data_version()",
  /** Takes the next number of the commit sequence (see migration 0004), inside a write transaction. */
  nextSeq: "UPDATE live_sequence SET seq = seq + 1 WHERE id = 1 RETURNING seq",
  /** The last number of the commit sequence taken. */
  lastSeq: "SELECT seq FROM live_sequence WHERE id = 1",
  /** The entry with the highest ts, as `{ ts, json }`. */
  latest: "SELECT ts, point AS json FROM entries WHERE stream_id = ? ORDER BY ts DESC LIMIT 1",
  /** The `count` most recent entries, as `{ ts, json }`, ascending. */
  recent:
    "SELECT ts, json FROM (SELECT ts, point AS json FROM entries WHERE stream_id = ? ORDER BY ts DESC LIMIT ?) ORDER BY ts",
  /** The oldest `limit` of the `count` most recent entries (`stream_id, count, limit`), as `{ ts, json }`, ascending. */
  recentPage:
    "SELECT ts, json FROM (SELECT ts, point AS json FROM entries WHERE stream_id = ? ORDER BY ts DESC LIMIT ?) ORDER BY ts LIMIT ?",
  /** The oldest `limit` entries with `ts > since` (`limit` -1: all), as `{ ts, json }`, ascending. */
  since: "SELECT ts, point AS json FROM entries WHERE stream_id = ? AND ts > ? ORDER BY ts LIMIT ?",
  /**
   * The oldest `limit` entries with `ts > since`, ascending, each rendered as a read body's `data` element
   * (`renderEntries` of the core port), one text column per row. The `ts` text is `formatTs`'s: whole seconds, or
   * seconds, a dot and the microseconds without trailing zeros (`ts` is never negative). Rendering in SQL spares
   * better-sqlite3 an object per row (2x faster on 100,000 rows); a `group_concat` would need a sort to be ordered.
   */
  page:
    `SELECT '{"ts":' || CASE WHEN ts % 1000000 = 0 THEN ts / 1000000 ` +
    `ELSE rtrim(printf('%d.%06d', ts / 1000000, ts % 1000000), '0') END || ',"point":' || point || '}' ` +
    "FROM entries WHERE stream_id = ? AND ts > ? ORDER BY ts LIMIT ?",
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

/**
 * {@link Sql.upsert} of `rows` entries in one statement (`4 x rows` parameters: stream id, ts, value, point, for each
 * entry in turn). SQLite inserts the rows one after another, so a later row with the same `(stream_id, ts)` replaces
 * an earlier one, as separate statements would.
 */
export const upsertRowsSql = (rows: number): string =>
  "INSERT INTO entries (stream_id, ts, value, point) VALUES " +
  Array.from({ length: rows }, () => "(?, ?, ?, ?)").join(", ") +
  " ON CONFLICT (stream_id, ts) DO UPDATE SET value = excluded.value, point = excluded.point"

/**
 * SQL of the decimation pass (contract section 9), prepared once per connection. Each is served by an index
 * (checked by EXPLAIN QUERY PLAN in the tests). Times are integer microseconds.
 */
export const DecimationSql = {
  /**
   * A page of streams with `id > ?` holding an entry with `ts < ?`, ascending by id, at most `?`. The EXISTS probe
   * is one seek in `entries_stream_ts`: the stream's oldest entry decides.
   */
  streams:
    "SELECT id, type FROM streams AS s WHERE id > ? " +
    "AND EXISTS (SELECT 1 FROM entries AS e WHERE e.stream_id = s.id AND e.ts < ?) ORDER BY id LIMIT ?",
  /** A chunk of one stream's entries with `? < ts < ?`, ascending by ts, at most `?`, as `{ id, ts, value }`. */
  entries: "SELECT id, ts, value FROM entries WHERE stream_id = ? AND ts > ? AND ts < ? ORDER BY ts LIMIT ?",
  /**
   * Deletes the entries whose ids are in the JSON array `?` and belong to stream `?`, except the stream's newest
   * entry (the third parameter is the stream again). One statement: the guard and the delete are atomic. The unary
   * `+` keeps the planner on rowid lookups of the listed ids: by the `(stream_id, ts)` index it would walk every
   * older entry of the stream for each batch.
   */
  deleteEntries:
    "DELETE FROM entries WHERE id IN (SELECT value FROM json_each(?)) AND +stream_id = ? " +
    "AND +ts < (SELECT max(ts) FROM entries WHERE stream_id = ?)"
} as const
