import type pg from "pg"
import { Batcher } from "./batcher.js"
import { fromBlockSql } from "./blockReads.js"

/** One read of a notification's range: stream id, `ts` from `from` to `to` (microseconds, inclusive). */
interface Pending {
  readonly stream: number
  readonly from: number
  readonly to: number
  readonly resolve: (blocks: Array<Buffer>) => void
  readonly reject: (error: unknown) => void
}

/**
 * The blocks that hold the entries of each range `n` (1-based position in the arrays): stream `$1[n]`, `ts` from
 * `$2[n]` to `$3[n]` (inclusive), as `n, data`, each range's blocks ascending (the block holding `$2[n]` and those
 * starting up to `$3[n]`; two index probes of `(stream_id, first_ts)` per range). Named, so each pooled connection
 * prepares it once.
 */
const batchStatement = {
  name: "dashstream_live_read_ranges",
  text:
    "SELECT r.n::int, b.data FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) WITH ORDINALITY AS r(s, f, t, n) " +
    `CROSS JOIN LATERAL (SELECT first_ts, data FROM entry_blocks WHERE stream_id = r.s AND ${fromBlockSql("r.s", "r.f")} ` +
    "AND first_ts <= r.t) b ORDER BY r.n, b.first_ts",
  rowMode: "array"
} as const

/**
 * The change feed's reads of the entries its notifications name (`listener.ts`), batched: the ranges asked for while
 * a query runs go together in the next one, so at most one such query is in flight per listener, and the reads of a
 * burst of notifications (the streams of a group commit, or many groups while a query runs) cost ONE query. Why: on a
 * server whose streams are all followed (alert rules on every stream), one query per notification was most of the
 * extra CPU of a push (sending a query and parsing its answer in `pg`, a socket write each). A range asked for while
 * nothing runs is sent at the end of the event loop's turn (`setImmediate`), with the others asked in that turn.
 *
 * A read sees everything committed before its query starts, so everything its notification named (PostgreSQL
 * delivers a notification after its transaction committed). A failed query rejects every read of its batch, and only
 * those. The batching is a {@link Batcher} with one query in flight.
 */
export class NoticeReads {
  private readonly batcher: Batcher<Pending>

  constructor(
    private readonly pool: pg.Pool,
    maxBatch: number = 256
  ) {
    this.batcher = new Batcher((batch, settled) => void this.send(batch).finally(settled), { maxBatch, maxInFlight: 1 })
  }

  /** Queries sent so far (reads / batches is the mean batch). */
  get batches(): number {
    return this.batcher.batches
  }

  /** The blocks (`data`, ascending) that hold stream `stream`'s entries with `from <= ts <= to` (see the class). */
  read(stream: number, from: number, to: number): Promise<Array<Buffer>> {
    return new Promise((resolve, reject) => this.batcher.add({ stream, from, to, resolve, reject }))
  }

  private async send(batch: ReadonlyArray<Pending>): Promise<void> {
    const streams: Array<number> = []
    const froms: Array<number> = []
    const tos: Array<number> = []
    for (const p of batch) {
      streams.push(p.stream)
      froms.push(p.from)
      tos.push(p.to)
    }
    let rows: Array<[number, Buffer]>
    try {
      rows = (await this.pool.query<[number, Buffer]>({ ...batchStatement, values: [streams, froms, tos] })).rows
    } catch (error) {
      for (const p of batch) p.reject(error)
      return
    }
    const blocks: Array<Array<Buffer>> = batch.map(() => [])
    for (const row of rows) blocks[row[0] - 1]!.push(row[1])
    for (let i = 0; i < batch.length; i++) batch[i]!.resolve(blocks[i]!)
  }
}
