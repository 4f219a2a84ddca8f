import { type Kysely, sql } from "kysely"

/**
 * 0007: the entries in blocks (issue 26), as on SQLite: `entry_blocks(stream_id, first_ts, last_ts, n, last_at,
 * data)`, the primary key `(stream_id, first_ts)`; the blocks of a stream hold disjoint `ts` ranges. `data` is packed:
 * each entry is `ts` (float64 LE), the decimation value (float64 LE, NaN for null), the point's UTF-8 length (uint32
 * LE) and the point's JSON text; `last_at` is the byte offset of the last entry (a latest read takes the JSON after
 * `last_at + 20` in SQL). Why: PostgreSQL spends about 1.8 µs of its own CPU per inserted row (heap tuple and index
 * entry); a block of up to 32 entries is one row.
 *
 * Converts `entries` in place, set-based in one statement: each stream's entries in `ts` order, a block closed after
 * 32 entries or when the entries before one reach the next multiple of 16 KiB of `data` (so a block holds at most
 * 32 entries and at most 16 KiB plus its last entry), then drops `entries`. The little-endian numbers are the
 * big-endian `float8send`/`int4send` bytes reversed (in hex). The statement trigger of migration 0006 now deletes a
 * deleted stream's blocks. `dashstream_blocks_overlap` (below) serves the group commit. Frozen in time: it takes `Kysely<any>` and imports no application code.
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`CREATE TABLE entry_blocks (
    stream_id bigint NOT NULL,
    first_ts bigint NOT NULL,
    last_ts bigint NOT NULL,
    n integer NOT NULL,
    last_at integer NOT NULL,
    data bytea NOT NULL,
    PRIMARY KEY (stream_id, first_ts))`.execute(db)
  // Little-endian hex of a big-endian byte string's hex: bytes reversed (the text reversed, then each pair's digits
  // swapped back).
  const le = (hex: ReturnType<typeof sql>) => sql`regexp_replace(reverse(${hex}), '(.)(.)', '\\2\\1', 'g')`
  const ts = le(sql`encode(float8send(ts::float8), 'hex')`)
  const value = le(sql`encode(float8send(coalesce(value, 'NaN'::float8)), 'hex')`)
  const length = le(sql`encode(int4send(octet_length(convert_to(point, 'UTF8'))), 'hex')`)
  await sql`INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data)
    SELECT stream_id, min(ts), max(ts), count(*)::int, (max(before) - min(before))::int,
      string_agg(bytes, ''::bytea ORDER BY ts)
    FROM (
      SELECT stream_id, ts, bytes, before, (row_number() OVER w - 1) / 32 AS by_count, before / 16384 AS by_bytes
      FROM (
        SELECT stream_id, ts, bytes, sum(octet_length(bytes)) OVER w - octet_length(bytes) AS before
        FROM (
          SELECT stream_id, ts, decode(${ts} || ${value} || ${length}, 'hex') || convert_to(point, 'UTF8') AS bytes
          FROM entries
        ) AS e
        WINDOW w AS (PARTITION BY stream_id ORDER BY ts)
      ) AS sized
      WINDOW w AS (PARTITION BY stream_id ORDER BY ts)
    ) AS numbered
    GROUP BY stream_id, by_count, by_bytes`.execute(db)
  await sql`DROP TABLE entries`.execute(db)
  // Whether a stored block of `stream` overlaps [lo, hi]: the block starting last at or before `hi` reaches `lo`
  // (blocks hold disjoint ranges). VOLATILE: called by a statement, its query takes a snapshot of its own (READ
  // COMMITTED), so it sees what was committed after the statement started (the group commit's guessed statement
  // calls it once it holds its row locks).
  await sql`CREATE FUNCTION dashstream_blocks_overlap(stream bigint, lo bigint, hi bigint) RETURNS boolean
    LANGUAGE sql VOLATILE SET search_path FROM CURRENT AS $$
      SELECT coalesce((SELECT last_ts >= lo FROM entry_blocks WHERE stream_id = stream AND first_ts <= hi
        ORDER BY first_ts DESC LIMIT 1), false)
    $$`.execute(db)
  await deleteWithStreams(db, "entry_blocks")
}

/** Points the streams-delete trigger's function (migration 0006) at `table`: a deleted stream's rows of it go too. */
const deleteWithStreams = (db: Kysely<any>, table: "entries" | "entry_blocks") =>
  sql`CREATE OR REPLACE FUNCTION dashstream_delete_entries_of_streams() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
    BEGIN
      DELETE FROM ${sql.raw(table)} WHERE stream_id IN (SELECT id FROM deleted_streams);
      RETURN NULL;
    END $$`.execute(db)

/**
 * Undoes {@link up}: `entries` made again (as migration 0006 left it) from the blocks, decoded here (its own copy of
 * the decoder), 1,000 blocks a page; the trigger deletes from it again; `entry_blocks` dropped.
 */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`CREATE TABLE entries (stream_id bigint NOT NULL, ts bigint NOT NULL, value double precision,
    point text NOT NULL, UNIQUE (stream_id, ts))`.execute(db)
  let after: [number, number] = [Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]
  for (;;) {
    const page = await sql<{ stream_id: string; first_ts: string; data: Buffer }>`SELECT stream_id, first_ts, data
      FROM entry_blocks WHERE (stream_id, first_ts) > (${after[0]}, ${after[1]})
      ORDER BY stream_id, first_ts LIMIT 1000`.execute(db)
    if (page.rows.length === 0) break
    const streams: Array<number> = []
    const tss: Array<number> = []
    const values: Array<number | null> = []
    const points: Array<string> = []
    for (const row of page.rows) {
      const buf = row.data
      for (let at = 0; at < buf.length; at += 20 + buf.readUInt32LE(at + 16)) {
        const v = buf.readDoubleLE(at + 8)
        streams.push(Number(row.stream_id))
        tss.push(buf.readDoubleLE(at))
        values.push(Number.isNaN(v) ? null : v)
        points.push(buf.toString("utf8", at + 20, at + 20 + buf.readUInt32LE(at + 16)))
      }
    }
    await sql`INSERT INTO entries (stream_id, ts, value, point)
      SELECT * FROM unnest(${streams}::bigint[], ${tss}::bigint[], ${values}::float8[], ${points}::text[])`.execute(db)
    const last = page.rows[page.rows.length - 1]!
    after = [Number(last.stream_id), Number(last.first_ts)]
  }
  await deleteWithStreams(db, "entries")
  await sql`DROP FUNCTION dashstream_blocks_overlap(bigint, bigint, bigint)`.execute(db)
  await sql`DROP TABLE entry_blocks`.execute(db)
}
