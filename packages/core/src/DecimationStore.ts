import { Context, type Effect, type Option } from "effect"
import type { StorageFailure } from "./Errors.js"
import type { Micros } from "./Time.js"
import type { StreamId } from "./Widget.js"
import type { WidgetType } from "./WidgetType.js"

/**
 * The storage id of a stored entry; opaque outside the adapter that made it (a number or a string), distinct across
 * streams, never reused within a stream.
 */
export type EntryId = (number | string) & { readonly EntryId: unique symbol }

/** A stream a decimation pass visits: its id and the widget type that decides what a bucket keeps. */
export interface DecimationStream {
  readonly id: StreamId
  readonly type: WidgetType
}

/**
 * A stored entry as the decimation pass sees it (docs/api.md section 9): its id, `ts` in integer microseconds since
 * the UNIX epoch, and `value`, the number decimation ranks it by as stored at write time (`number` of numeric
 * widgets, `y` of xy-graph; `null` for other types, see `decimationValue`).
 */
export interface DecimationEntry {
  readonly id: EntryId
  readonly ts: Micros
  readonly value: number | null
}

/**
 * A page of streams to visit: streams with `id > after` (`null`: from the first), ascending by id, at most `limit`
 * (a positive integer), keeping only streams holding at least one entry with `ts < olderThan` (microseconds).
 */
export interface StreamPage {
  readonly after: StreamId | null
  readonly olderThan: Micros
  readonly limit: number
}

/**
 * A chunk of one stream's entries: `ts` strictly between `after` (`null`: no lower bound) and `before`, in
 * microseconds, ascending by `ts`, at most `limit` (a positive integer). Keyset paging: the next chunk starts
 * after the last `ts` of this one, so deletions between two chunks do not shift it.
 */
export interface EntryChunk {
  readonly after: Micros | null
  readonly before: Micros
  readonly limit: number
}

/**
 * The storage port of the decimation pass (docs/api.md section 9): what a pass over every stream needs, in pieces
 * small enough that concurrent pushes wait milliseconds, never the whole pass. Adapters (memory, SQLite,
 * PostgreSQL) implement it beside `StreamStore`; `decimationSuite` in `@dashstream/core/testing` checks that they
 * agree. Every operation fails with `StorageFailure` only.
 */
export class DecimationStore extends Context.Tag("@dashstream/core/DecimationStore")<
  DecimationStore,
  {
    /** The next page of streams to visit (see {@link StreamPage}); `[]` once past the last one. */
    readonly streams: (page: StreamPage) => Effect.Effect<ReadonlyArray<DecimationStream>, StorageFailure>
    /**
     * The next chunk of one stream's entries in ascending `ts` (see {@link EntryChunk}); `[]` past the last one or
     * for a deleted stream.
     */
    readonly entries: (
      stream: StreamId,
      chunk: EntryChunk
    ) => Effect.Effect<ReadonlyArray<DecimationEntry>, StorageFailure>
    /**
     * Deletes these entries of `stream` in one short transaction and returns how many it deleted. Ids that are not
     * the stream's (another stream's, already deleted) are skipped. The stream's newest entry (highest `ts`) is
     * never deleted, even when listed (docs/api.md section 9: "the newest entry of every stream is always kept"), so
     * a push racing the pass cannot leave a stream without its latest value.
     */
    readonly deleteEntries: (stream: StreamId, ids: ReadonlyArray<EntryId>) => Effect.Effect<number, StorageFailure>
    /**
     * Runs `effect` while holding the pass lock, exclusive across every process on this storage (PostgreSQL: a
     * session advisory lock; SQLite and memory: within the process), and releases it when `effect` ends, however
     * it ends. Succeeds with `None`, without running `effect`, when the lock is already held: another pass is
     * running. The lock is not reentrant.
     */
    readonly withPassLock: <A, E, R>(
      effect: Effect.Effect<A, E, R>
    ) => Effect.Effect<Option.Option<A>, E | StorageFailure, R>
  }
>() {}
