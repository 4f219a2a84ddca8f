import { Context, type Effect } from "effect"
import { type InvalidPoint, type StorageFailure, StreamNotFound } from "./Errors.js"
import type { PointOp } from "./Point.js"
import type { Micros } from "./Time.js"
import type { StreamId, Widget } from "./Widget.js"

/**
 * One stream's part of a push: the widget it goes to, the decoded operation, and the JSON path of its point in
 * the request body (`point` or `streams[3].point`), used to locate errors found against the stored state.
 */
export interface StreamWrite {
  readonly widget: Widget
  readonly op: PointOp
  readonly path: string
}

/** A stored entry as the read path returns it: `ts` in microseconds and the point's JSON text, ready to send. */
export interface StoredEntry {
  readonly ts: Micros
  readonly json: string
}

/**
 * A read of one stream (contract section 6). `since` is the strict lower bound in microseconds (entries with
 * `ts > since`; 0 reads everything), or `null` for "the latest entry only". `limit` caps the number of entries,
 * the oldest first; `null` means no cap. `limit` is ignored when `since` is `null`.
 */
export interface ReadQuery {
  readonly since: Micros | null
  readonly limit: number | null
}

/**
 * The storage port of stream data. Adapters (memory, SQLite, PostgreSQL) implement it; the storage contract suite
 * in `@dashstream/core/testing` checks that they agree.
 */
export class StreamStore extends Context.Tag("@dashstream/core/StreamStore")<
  StreamStore,
  {
    /**
     * Applies the writes in order, all in one transaction: for each write, read the stream's state
     * (highest `ts` ever assigned and, where {@link needsLatest} says so, the latest point) inside the transaction,
     * compute the mutation with `applyOp`, store it. Either every write is stored or none is.
     * Concurrent `write` calls touching the same stream are serialised (no lost delta, no duplicate `ts`).
     * Fails with `InvalidPoint` when a write does not fit the stored state (e.g. a table row of the wrong width),
     * and with `StreamNotFound` (see {@link streamDeleted}) when a write's widget was deleted after the caller
     * looked it up. `now` is the receive time in microseconds.
     */
    readonly write: (
      writes: ReadonlyArray<StreamWrite>,
      now: Micros
    ) => Effect.Effect<void, InvalidPoint | StreamNotFound | StorageFailure>
    /** Entries of one stream in ascending `ts` (see {@link ReadQuery}); `[]` for an empty stream. */
    readonly read: (stream: StreamId, query: ReadQuery) => Effect.Effect<ReadonlyArray<StoredEntry>, StorageFailure>
    /** Succeeds when the storage answers a trivial query (used by `/readyz`). */
    readonly ping: Effect.Effect<void, StorageFailure>
  }
>() {}

/**
 * The error of a write whose widget no longer exists (deleted between the push's widget lookup and its write).
 * Adapters never reuse a `StreamId`, so a write for a deleted widget cannot land in a newer widget of that name.
 * The push then fails as if the lookup had not found it (404 `stream_not_found`), with `path` pointing at the
 * `streamName` beside the write's `point`, and nothing is stored.
 */
export const streamDeleted = (write: StreamWrite): StreamNotFound =>
  new StreamNotFound({
    message: `no widget with stream name ${JSON.stringify(write.widget.streamName)} in this account`,
    path: write.path === "point" ? "streamName" : write.path.replace(/\.point$/, ".streamName")
  })
