import { type Kysely, sql } from "kysely"

/**
 * 0007: the entries in blocks: `entry_blocks(id, stream_id, first_ts, last_ts, n, last_at, data)`, up to
 * 32 entries or 16 KiB of `data` of a stream a row (more after a merge, see `internal/writePath.ts`), the blocks of
 * a stream holding disjoint `ts` ranges; `data` is packed: each entry is `ts` (float64 LE), the decimation value
 * (float64 LE, NaN for null), the point's UTF-8 length (uint32 LE) and the point's JSON text; `last_at` is the byte
 * offset of the last entry. The unique `(stream_id, first_ts)` index serves the latest entry, the `ts > since` range
 * and the blocks a write merges into; the foreign key deletes a deleted widget's blocks. Converts the entries of
 * `entries` in place (each stream's entries in `ts` order, a block closed at 32 entries or before the entry that
 * would take its `data` past 16 KiB, so an entry larger than that is a block alone) and drops `entries`. Frozen in
 * time: it takes `Kysely<any>` and imports no application code (the encoder below is its own copy).
 */
export const up = (db: Kysely<any>): Promise<void> => convert(db, () => {})

/**
 * Told how far the conversion of {@link up} is: `converted` of `total` entries are in blocks. Called when it starts
 * (`converted` 0), after each further million entries and at the end; never when there are no entries.
 */
export type Progress = (converted: number, total: number) => void

/**
 * {@link up}, telling `progress` how far it is: a large database takes minutes (about 3 µs per entry, measured on
 * 1,000,000 entries of 20 per stream).
 */
export const convert = async (db: Kysely<any>, progress: Progress): Promise<void> => {
  await sql`CREATE TABLE entry_blocks (id INTEGER PRIMARY KEY,
    stream_id INTEGER NOT NULL REFERENCES streams(id) ON DELETE CASCADE, first_ts INTEGER NOT NULL,
    last_ts INTEGER NOT NULL, n INTEGER NOT NULL, last_at INTEGER NOT NULL, data BLOB NOT NULL) STRICT`.execute(db)
  await sql`CREATE UNIQUE INDEX entry_blocks_stream_ts ON entry_blocks (stream_id, first_ts)`.execute(db)

  type Row = { stream_id: number; ts: number; value: number | null; point: string }
  let pending: Array<Row> = []
  let pendingBytes = 0
  const flush = async () => {
    if (pending.length === 0) return
    const rows = pending
    pending = []
    pendingBytes = 0
    let bytes = 0
    for (const r of rows) bytes += 20 + Buffer.byteLength(r.point)
    const data = Buffer.alloc(bytes)
    let at = 0
    let lastAt = 0
    for (const r of rows) {
      lastAt = at
      data.writeDoubleLE(r.ts, at)
      data.writeDoubleLE(r.value ?? NaN, at + 8)
      const len = data.write(r.point, at + 20)
      data.writeUInt32LE(len, at + 16)
      at += 20 + len
    }
    blocks.push({
      stream_id: rows[0]!.stream_id,
      first_ts: rows[0]!.ts,
      last_ts: rows[rows.length - 1]!.ts,
      n: rows.length,
      last_at: lastAt,
      data
    })
    if (blocks.length === 100) await insertBlocks()
  }
  // Blocks are inserted 100 to a statement (one statement a block took 1.8-2.2x as long on 1,000,000 entries).
  let blocks: Array<Record<string, number | Buffer>> = []
  const insertBlocks = async () => {
    if (blocks.length === 0) return
    const values = blocks
    blocks = []
    await db.insertInto("entry_blocks").values(values).execute()
  }
  const total = (await sql<{ n: number }>`SELECT count(*) AS n FROM entries`.execute(db)).rows[0]!.n
  const tell: Progress = (converted, total) => (total > 0 ? progress(converted, total) : undefined)
  tell(0, total)
  let converted = 0
  let told = 0
  let after: [number, number] = [Number.MIN_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]
  for (;;) {
    const page = await sql<Row>`SELECT stream_id, ts, value, point FROM entries
      WHERE (stream_id, ts) > (${after[0]}, ${after[1]}) ORDER BY stream_id, ts LIMIT 10000`.execute(db)
    for (const r of page.rows) {
      const size = 20 + Buffer.byteLength(r.point)
      if (
        pending.length > 0 &&
        (pending.length === 32 || pendingBytes + size > 16 * 1024 || pending[0]!.stream_id !== r.stream_id)
      ) {
        await flush()
      }
      pending.push(r)
      pendingBytes += size
    }
    converted += page.rows.length
    if (converted - told >= 1_000_000 && converted < total) tell((told = converted), total)
    if (page.rows.length < 10000) break
    const last = page.rows[page.rows.length - 1]!
    after = [last.stream_id, last.ts]
  }
  await flush()
  await insertBlocks()
  await db.schema.dropTable("entries").execute()
  tell(total, total)
}

/** Puts the entries back in `entries` (0001's table and index) and drops `entry_blocks`. */
export const down = async (db: Kysely<any>): Promise<void> => {
  await sql`CREATE TABLE entries (id INTEGER PRIMARY KEY,
    stream_id INTEGER NOT NULL REFERENCES streams(id) ON DELETE CASCADE, ts INTEGER NOT NULL, value REAL,
    point TEXT NOT NULL) STRICT`.execute(db)
  await sql`CREATE UNIQUE INDEX entries_stream_ts ON entries (stream_id, ts)`.execute(db)
  const blocks = await sql<{ stream_id: number; data: Uint8Array }>`SELECT stream_id, data FROM entry_blocks
    ORDER BY stream_id, first_ts`.execute(db)
  for (const b of blocks.rows) {
    const data = Buffer.from(b.data.buffer, b.data.byteOffset, b.data.byteLength)
    for (let at = 0; at < data.length;) {
      const v = data.readDoubleLE(at + 8)
      const len = data.readUInt32LE(at + 16)
      await db
        .insertInto("entries")
        .values({
          stream_id: b.stream_id,
          ts: data.readDoubleLE(at),
          value: Number.isNaN(v) ? null : v,
          point: data.toString("utf8", at + 20, at + 20 + len)
        })
        .execute()
      at += 20 + len
    }
  }
  await db.schema.dropTable("entry_blocks").execute()
}
