import { type Kysely, sql } from "kysely"

/**
 * 0013: per-block summaries: `entry_blocks.summary` (BLOB, nullable), the entries the bucket rule keeps of the block
 * alone, packed as `data` is (see core's `BlockSummary.ts`); a range read with `points` reads a block that lies inside
 * one bucket as its summary. `NULL` is always correct: such a block is read from `data`. {@link up} adds the column
 * only; {@link addSummaries} also fills it for every block of more than 4 entries. Frozen in time: it takes
 * `Kysely<any>` and imports no application code (the summary is computed by the function it is given).
 */
export const up = async (db: Kysely<any>): Promise<void> => {
  await sql`ALTER TABLE entry_blocks ADD COLUMN summary BLOB`.execute(db)
}

/**
 * Told how far {@link addSummaries} is: `done` of `total` blocks summarised. At the start, every 100,000 and at the
 * end; never when there is no block to summarise.
 */
export type Progress = (done: number, total: number) => void

/** The summary of a block's `data` (core's `summarizeBlock`). */
export type Summarize = (data: Buffer) => Buffer

/**
 * {@link up}, then the summaries of the stored blocks of more than 4 entries, in batches of 1,000 blocks by id,
 * telling `progress` (about 1-2 µs per entry). In the migration's transaction: stopped part-way, none is kept and the
 * migration runs again.
 */
export const addSummaries = async (db: Kysely<any>, summarize: Summarize, progress: Progress): Promise<void> => {
  await up(db)
  const total = (await sql<{ n: number }>`SELECT count(*) AS n FROM entry_blocks WHERE n > 4`.execute(db)).rows[0]!.n
  if (total > 0) progress(0, total)
  let done = 0
  let told = 0
  let after = Number.MIN_SAFE_INTEGER
  for (;;) {
    const page = await sql<{ id: number; data: Uint8Array }>`SELECT id, data FROM entry_blocks
      WHERE id > ${after} AND n > 4 ORDER BY id LIMIT 1000`.execute(db)
    for (const row of page.rows) {
      const data = Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength)
      await sql`UPDATE entry_blocks SET summary = ${summarize(data)} WHERE id = ${row.id}`.execute(db)
    }
    done += page.rows.length
    if (done - told >= 100_000 && done < total) progress((told = done), total)
    if (page.rows.length < 1000) break
    after = page.rows[page.rows.length - 1]!.id
  }
  if (total > 0) progress(total, total)
}

/** Drops the column. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`ALTER TABLE entry_blocks DROP COLUMN summary`.execute(db)
}
