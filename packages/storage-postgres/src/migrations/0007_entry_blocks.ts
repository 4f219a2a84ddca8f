import { type Kysely, type RawBuilder, sql } from "kysely"

/**
 * 0007: the entries in blocks, as on SQLite: `entry_blocks(stream_id, first_ts, last_ts, n, last_at,
 * data)`, the primary key `(stream_id, first_ts)`; the blocks of a stream hold disjoint `ts` ranges. `data` is packed:
 * each entry is `ts` (float64 LE), the decimation value (float64 LE, NaN for null), the point's UTF-8 length (uint32
 * LE) and the point's JSON text; `last_at` is the byte offset of the last entry (a latest read takes the JSON after
 * `last_at + 20` in SQL). Why: PostgreSQL spends about 1.8 µs of its own CPU per inserted row (heap tuple and index
 * entry); a block of up to 32 entries is one row.
 *
 * Converts `entries` in place, set-based, a range of streams per statement (about {@link entriesPerStatement} entries):
 * each stream's entries in `ts` order, a block closed after 32 entries or when the entries before one reach the next
 * multiple of 16 KiB of `data` (so a block holds at most 32 entries and at most 16 KiB plus its last entry), then
 * drops `entries`. The little-endian numbers are the big-endian `float8send`/`int4send` bytes reversed (in hex). The
 * statement trigger of migration 0006 now deletes a deleted stream's blocks. `dashstream_blocks_overlap` (below)
 * serves the group commit. Frozen in time: it takes `Kysely<any>` and imports no application code.
 */
export const up = (db: Kysely<any>): Promise<void> => convert(db, () => undefined)

/**
 * Told how far the conversion of {@link up} is: `converted` of `total` entries are in blocks. Called when it starts
 * (`converted` 0) and after each statement; never when there are no entries.
 */
export type Progress = (converted: number, total: number) => void

/** About how many entries one statement of {@link convert} converts (a range of whole streams). */
export const entriesPerStatement = 1_000_000

/**
 * {@link up}, telling `progress` how far it is (a large database takes minutes: 435 s for 20,000,000 entries of 20 per
 * stream in one statement on a loaded 2-core machine). `perStatement` (entries, default {@link entriesPerStatement})
 * sizes the ranges of streams: each statement converts the streams after the last one converted up to the stream of
 * the `perStatement`-th entry after it, whole. The blocks do not depend on it.
 */
export const convert = async (
  db: Kysely<any>,
  progress: Progress,
  perStatement: number = entriesPerStatement
): Promise<void> => {
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
  const total = Number((await sql<{ n: string }>`SELECT count(*) AS n FROM entries`.execute(db)).rows[0]!.n)
  if (total > 0) progress(0, total)
  let converted = 0
  // Each statement's streams: ids above `after` (null: from the first) up to `upTo` (null: all the rest).
  let after: string | null = null
  for (;;) {
    const from: RawBuilder<unknown> = after === null ? sql`true` : sql`stream_id > ${after}::bigint`
    const next = await sql<{ stream_id: string }>`SELECT stream_id FROM entries WHERE ${from}
      ORDER BY stream_id, ts OFFSET ${perStatement} LIMIT 1`.execute(db)
    const upTo: string | null = next.rows[0]?.stream_id ?? null
    const range = upTo === null ? from : sql`${from} AND stream_id <= ${upTo}::bigint`
    const inserted = await sql<{ n: string }>`WITH inserted AS (
      INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data)
      SELECT stream_id, min(ts), max(ts), count(*)::int, (max(before) - min(before))::int,
        string_agg(bytes, ''::bytea ORDER BY ts)
      FROM (
        SELECT stream_id, ts, bytes, before, (row_number() OVER w - 1) / 32 AS by_count, before / 16384 AS by_bytes
        FROM (
          SELECT stream_id, ts, bytes, sum(octet_length(bytes)) OVER w - octet_length(bytes) AS before
          FROM (
            SELECT stream_id, ts, decode(${ts} || ${value} || ${length}, 'hex') || convert_to(point, 'UTF8') AS bytes
            FROM entries WHERE ${range}
          ) AS e
          WINDOW w AS (PARTITION BY stream_id ORDER BY ts)
        ) AS sized
        WINDOW w AS (PARTITION BY stream_id ORDER BY ts)
      ) AS numbered
      GROUP BY stream_id, by_count, by_bytes
      RETURNING n
    ) SELECT coalesce(sum(n), 0) AS n FROM inserted`.execute(db)
    converted += Number(inserted.rows[0]!.n)
    if (total > 0) progress(converted, total)
    // The count was taken in this migration's transaction: once every entry is converted, no range is left.
    if (upTo === null || converted >= total) break
    after = upTo
  }
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
