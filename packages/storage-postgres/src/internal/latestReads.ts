import { answerGuarded, type Micros, type StorageFailure, type StoredEntry } from "@dashstream/core"
import type pg from "pg"
import { Batcher } from "./batcher.js"
import { answerQuery } from "./direct.js"
import { lastEntrySql } from "./storeSql.js"

/** Called once with the stream's latest entry (none when it is empty), or with the failure of the batch's query. */
export type LatestDone = (error: StorageFailure | undefined, entries: ReadonlyArray<StoredEntry>) => void

/**
 * The latest entry of each stream `$1[n]`, as `n` (1-based position in `$1`), `ts`, `point`; no row for an empty
 * stream. One index probe per position (the stream's last block, `(stream_id, first_ts)` newest first): its
 * `last_ts` and its last entry's JSON, cut out of the block in SQL (`lastEntrySql`). Named, so each connection
 * prepares it once.
 */
const batchQuery = (streams: ReadonlyArray<number>): pg.QueryArrayConfig<[ReadonlyArray<number>]> => ({
  name: "dashstream_read_latest_blocks",
  text:
    `SELECT s.n, b.last_ts, ${lastEntrySql("b")} FROM unnest($1::bigint[]) WITH ORDINALITY AS s(id, n) ` +
    "CROSS JOIN LATERAL (SELECT last_ts, last_at, data FROM entry_blocks WHERE stream_id = s.id " +
    "ORDER BY first_ts DESC LIMIT 1) b",
  values: [streams],
  rowMode: "array" as const
})

interface Pending {
  readonly stream: number
  readonly done: LatestDone
}

const none: ReadonlyArray<StoredEntry> = []
const noneFound: ReadonlyArray<ReadonlyArray<StoredEntry> | undefined> = []

/**
 * Latest-entry reads (`StreamStore.read` without `since`) batched per turn of the event loop: the reads
 * asked for while the loop handles one batch of I/O (the requests parsed together) are answered by ONE query, sent
 * at the end of that turn (`setImmediate`), instead of one query each. Under load most of the cost of a read on
 * PostgreSQL is sending its query (a write on the socket that wakes the server's backend): 27 us of the event loop
 * per query, against 8 us to answer the HTTP request (profile of the latest-read load). At most `maxBatch` reads go
 * in one query; the rest form the next one, sent at once (a {@link Batcher} with no bound on the queries in flight).
 *
 * A read sees everything committed before its batch's query starts, so everything acknowledged before the read was
 * asked for (a batch is sent after its reads were asked). A failed query answers every read of its batch with the
 * failure (`StorageUnavailable` when the server is unreachable, `StorageError` otherwise). Each read is answered
 * through `answer` (`direct.ts`): a continuation that throws is answered again with a `StorageError`, alone.
 */
export class LatestReads {
  private readonly batcher: Batcher<Pending>

  constructor(
    private readonly pool: pg.Pool,
    maxBatch: number = 256
  ) {
    this.batcher = new Batcher((batch, settled) => this.send(batch, settled), { maxBatch, maxInFlight: Infinity })
  }

  /** Queries sent so far (reads / batches is the mean batch). */
  get batches(): number {
    return this.batcher.batches
  }

  /** Reads the latest entry of `stream` (its id) and calls `done` once. */
  read(stream: number, done: LatestDone): void {
    this.batcher.add({ stream, done })
  }

  private send(batch: ReadonlyArray<Pending>, settled: () => void): void {
    const streams = batch.map((p) => p.stream)
    // One answer per read, each through `answer`: a read whose continuation throws is answered 500 alone.
    answerQuery(
      this.pool.query<[number, number, string], [ReadonlyArray<number>]>(batchQuery(streams)),
      (error: StorageFailure | undefined, found: ReadonlyArray<ReadonlyArray<StoredEntry> | undefined>) => {
        for (let i = 0; i < batch.length; i++) answerGuarded(batch[i]!.done, error, found[i] ?? none, none)
        settled()
      },
      (result) => {
        const found: Array<ReadonlyArray<StoredEntry> | undefined> = new Array(batch.length)
        for (const row of result.rows) found[Number(row[0]) - 1] = [{ ts: row[1] as Micros, json: row[2] }]
        return found
      },
      noneFound
    )
  }
}
