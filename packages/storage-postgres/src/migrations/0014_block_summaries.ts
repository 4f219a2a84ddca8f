import { type Kysely, sql } from "kysely"

/**
 * 0014: per-block summaries, as SQLite's 0013: `entry_blocks.summary` (bytea, nullable), the entries the bucket rule
 * keeps of the block alone, packed as `data` is (see core's `BlockSummary.ts`); a range read with `points` reads a
 * block that lies inside one bucket as its summary. `NULL` is always correct: such a block is read from `data`.
 * {@link up} adds the column only; {@link addSummaries} also fills it for every block of more than 4 entries. Frozen
 * in time: it takes `Kysely<any>` and imports no application code (the summary is computed by the function it is
 * given).
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`ALTER TABLE entry_blocks ADD COLUMN summary bytea`.execute(db)
}

/**
 * Told how far {@link addSummaries} is: `done` of `total` blocks summarised. At the start, every 100,000 and at the
 * end; never when there is no block to summarise.
 */
export type Progress = (done: number, total: number) => void

/** The summary of a block's `data` (core's `summarizeBlock`). */
export type Summarize = (data: Buffer) => Buffer

/**
 * {@link up}, then the summaries of the stored blocks of more than 4 entries, 2,000 blocks a statement in
 * `(stream_id, first_ts)` order, telling `progress`. In the migration's transaction: stopped part-way, none is kept
 * and the migration runs again.
 */
export const addSummaries = async (db: Kysely<any>, summarize: Summarize, progress: Progress): Promise<void> => {
  await up(db)
  const counted = await sql<{ n: string }>`SELECT count(*) AS n FROM entry_blocks WHERE n > 4`.execute(db)
  const total = Number(counted.rows[0]!.n)
  if (total > 0) progress(0, total)
  let done = 0
  let told = 0
  let after: [string, string] | undefined
  for (;;) {
    const page = await sql<{ stream_id: string; first_ts: string; data: Buffer }>`SELECT stream_id, first_ts, data
      FROM entry_blocks WHERE n > 4 ${
        after === undefined
          ? sql``
          : sql`AND (stream_id, first_ts) > (${after[0]}::bigint,
      ${after[1]}::bigint)`
      }
      ORDER BY stream_id, first_ts LIMIT 2000`.execute(db)
    if (page.rows.length > 0) {
      await sql`UPDATE entry_blocks AS b SET summary = v.summary FROM unnest(
        ${page.rows.map((r) => r.stream_id)}::bigint[], ${page.rows.map((r) => r.first_ts)}::bigint[],
        ${page.rows.map((r) => summarize(r.data))}::bytea[]) AS v(stream_id, first_ts, summary)
        WHERE b.stream_id = v.stream_id AND b.first_ts = v.first_ts`.execute(db)
    }
    done += page.rows.length
    if (done - told >= 100_000 && done < total) progress((told = done), total)
    if (page.rows.length < 2000) break
    const last = page.rows[page.rows.length - 1]!
    after = [last.stream_id, last.first_ts]
  }
  if (total > 0) progress(total, total)
}

/** Drops the column. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`ALTER TABLE entry_blocks DROP COLUMN summary`.execute(db)
}
