import { Context, Effect, type Option } from "effect"
import type { SelectionMode } from "./BucketSelection.js"
import { type InvalidPoint, quoted, type StorageFailure, StreamNotFound } from "./Errors.js"
import type { PointOp } from "./Point.js"
import { formatTs, MICROS_PER_SECOND, type Micros } from "./Time.js"
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
 * A page of entries rendered for the wire by the storage itself (see `readPage`), so that a large read costs one
 * string per page, not one object per entry.
 */
export interface RenderedPage {
  /**
   * The entries, ascending by `ts`, as the elements of a read body's `data` array (docs/api.md section 6):
   * `{"ts":<seconds>,"point":<stored JSON>}` joined by `,`, with `ts` printed as `formatTs` prints it (exact to the
   * microsecond, no trailing zeros). `""` when `count` is 0.
   */
  readonly text: string
  /** The number of entries in `text`. */
  readonly count: number
  /** The `ts` of the last entry in microseconds (the keyset cursor of the next page); `null` when `count` is 0. */
  readonly lastTs: Micros | null
}

/**
 * A read of one stream (docs/api.md section 6). `since` is the strict lower bound in microseconds (entries with
 * `ts > since`; 0 reads everything), or `null` for "the latest entry only". `limit` caps the number of entries,
 * the oldest first; `null` means no cap. `limit` is ignored when `since` is `null`.
 */
export interface ReadQuery {
  readonly since: Micros | null
  readonly limit: number | null
}

/**
 * A range read of one stream. Times are integer microseconds; every bound may be `null` (no bound).
 * - `from`: inclusive lower bound; `since`: exclusive lower bound (a paging cursor, as in the export read). At most
 *   one of the two is given.
 * - `to`: inclusive upper bound.
 * - `points`: `null` for every entry in the window, ascending, at most `limit` (`null`: no cap), the oldest first;
 *   or N (2..10,000) to keep only what the bucket rule keeps of N buckets over the window (`readRangeFrom` in
 *   `RangeRead.ts`) (`limit` must then be
 *   `null`).
 * - `mode`: what a bucket keeps with `points` (`decimationMode` of the stream's widget type); ignored without.
 */
export interface RangeQuery {
  readonly from: Micros | null
  readonly since: Micros | null
  readonly to: Micros | null
  readonly points: number | null
  readonly mode: SelectionMode
  readonly limit: number | null
}

/**
 * What `StreamStore.readLive` reads: the `count` (>= 1) most recent entries (the highest `ts`), or with `limit`
 * (>= 1) only the oldest `limit` of those (the first page of them; the next pages are `After` its last `ts`); or the
 * oldest `limit` (>= 1) entries with `ts > since` (microseconds). Either way returned in ascending `ts`.
 */
export type LiveQuery =
  | { readonly _tag: "Recent"; readonly count: number; readonly limit?: number | undefined }
  | { readonly _tag: "After"; readonly since: Micros; readonly limit: number }

/**
 * A read for a live event stream (see `StreamStore.readLive`): the entries and the `ts` of the stream's last clear
 * (`Mutation.clearedAt`, microseconds; `null` if it was never cleared), both as of one moment.
 */
export interface LivePage {
  readonly lastClear: Micros | null
  readonly entries: ReadonlyArray<StoredEntry>
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
     * compute the mutation with `applyOp`, store it (the core's `WritePlan` is that loop: an adapter loads state and
     * stores what it plans). Either every write is stored or none is.
     * Concurrent calls touching the same stream are serialised (no lost delta, no duplicate `ts`).
     * `done` is called exactly once, with `undefined` when every write is stored (durably), or with `InvalidPoint`
     * when a write does not fit the stored state (e.g. a table row of the wrong width), `StreamNotFound` (see
     * {@link streamDeleted}) when a write's widget was deleted after the caller looked it up, or a storage failure.
     * `now` is the receive time in microseconds. No effect and no fiber: the push hot path calls it directly (issue
     * 12). Returns a {@link Withdrawable} when the call waits in a queue (a group commit), else nothing.
     */
    readonly writeDirect: (
      writes: ReadonlyArray<StreamWrite>,
      now: Micros,
      done: (error: InvalidPoint | StreamNotFound | StorageFailure | undefined) => void
    ) => Withdrawable | void
    /**
     * {@link writeDirect} as an effect, derived from it by {@link withEffectForms} (never written by an adapter):
     * succeeds or fails as `done` is answered; interrupting the fiber before the call's group starts withdraws it
     * (nothing stored).
     */
    readonly write: (
      writes: ReadonlyArray<StreamWrite>,
      now: Micros
    ) => Effect.Effect<void, InvalidPoint | StreamNotFound | StorageFailure>
    /**
     * Entries of one stream in ascending `ts` (see {@link ReadQuery}); `[]` for an empty stream. Answers `done`
     * exactly once, with the entries or the storage failure: before returning where the adapter reads synchronously
     * (SQLite, memory), once the query returns otherwise (PostgreSQL). No effect: the latest-entry read's hot path
     * calls it directly.
     */
    readonly readDirect: (
      stream: StreamId,
      query: ReadQuery,
      done: (error: StorageFailure | undefined, entries: ReadonlyArray<StoredEntry>) => void
    ) => void
    /** {@link readDirect} as an effect, derived from it by {@link withEffectForms} (never written by an adapter). */
    readonly read: (stream: StreamId, query: ReadQuery) => Effect.Effect<ReadonlyArray<StoredEntry>, StorageFailure>
    /**
     * The oldest `limit` (>= 1) entries of one stream with `ts > since` (microseconds), rendered (see
     * {@link RenderedPage}); what `read(stream, { since, limit })` returns, as text. The export read's pages.
     */
    readonly readPage: (stream: StreamId, since: Micros, limit: number) => Effect.Effect<RenderedPage, StorageFailure>
    /**
     * A range read (README, "Range reads"; see {@link RangeQuery}): the entries of one stream in a time window,
     * ascending by `ts`, each a stored entry unchanged; with `points`, only what the bucket rule keeps of each of
     * N buckets. `[]` for an empty window or stream. Adapters implement it with `readRangeFrom` (`RangeRead.ts`) over
     * pages of their stored entries, so a window of any size is read in one pass holding one page and the kept
     * entries (at most 4N), never the window.
     */
    readonly readRange: (
      stream: StreamId,
      query: RangeQuery
    ) => Effect.Effect<ReadonlyArray<StoredEntry>, StorageFailure>
    /**
     * The entries `query` names (see {@link LiveQuery}) together with the `ts` of the stream's last clear, read as of
     * ONE moment (one statement or one synchronous read), so that a live event stream can tell whether the entries
     * it reads come before or after a clear (docs/api.md section 10). `None` when the widget no longer exists.
     */
    readonly readLive: (stream: StreamId, query: LiveQuery) => Effect.Effect<Option.Option<LivePage>, StorageFailure>
    /** Succeeds when the storage answers a trivial query (used by `/readyz`). */
    readonly ping: Effect.Effect<void, StorageFailure>
  }
>() {}

/**
 * A queued {@link StreamStore} `writeDirect` call that can still be taken back: `withdraw` before the call's group
 * starts stores nothing and `done` is never called; later it does nothing.
 */
export interface Withdrawable {
  readonly withdraw: () => void
}

/** What a storage adapter writes of the {@link StreamStore} port: every method but the derived effect forms. */
export type DirectStreamStore = Omit<StreamStore["Type"], "write" | "read">

/**
 * The {@link StreamStore} port from an adapter's direct forms: `write` and `read` are `writeDirect` and
 * `readDirect` as effects, so each step is written once, by the adapter, in its callback form, and both forms give
 * the same answers by construction.
 */
export const withEffectForms = (direct: DirectStreamStore): StreamStore["Type"] => ({
  ...direct,
  write: (writes, now) =>
    Effect.async((resume) => {
      const queued = direct.writeDirect(writes, now, (error) =>
        resume(error === undefined ? Effect.void : Effect.fail(error))
      )
      if (queued) return Effect.sync(() => queued.withdraw())
    }),
  read: (stream, query) =>
    Effect.async((resume) =>
      direct.readDirect(stream, query, (error, entries) =>
        resume(error === undefined ? Effect.succeed(entries) : Effect.fail(error))
      )
    )
})

/**
 * The error of a write whose widget no longer exists (deleted between the push's widget lookup and its write).
 * Adapters never reuse a `StreamId`, so a write for a deleted widget cannot land in a newer widget of that name.
 * The push then fails as if the lookup had not found it (404 `stream_not_found`), with `path` pointing at the
 * `streamName` beside the write's `point`, and nothing is stored.
 */
export const streamDeleted = (write: StreamWrite): StreamNotFound =>
  new StreamNotFound({
    message: `no widget with stream name ${quoted(write.widget.streamName)} in this account`,
    path: write.path === "point" ? "streamName" : write.path.replace(/\.point$/, ".streamName")
  })

/**
 * Entries rendered as the elements of a read body's `data` array, joined by `,` (see {@link RenderedPage}): the
 * stored JSON text pasted in, no parse, no re-stringify. The reference rendering that SQL renderings must match.
 */
export const renderEntries = (entries: ReadonlyArray<StoredEntry>): string => {
  let out = ""
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    out += (i === 0 ? '{"ts":' : ',{"ts":') + formatTs(entry.ts) + ',"point":' + entry.json + "}"
  }
  return out
}

/** Renders entries as a {@link RenderedPage}. */
export const renderPage = (entries: ReadonlyArray<StoredEntry>): RenderedPage => ({
  text: renderEntries(entries),
  count: entries.length,
  lastTs: entries.length === 0 ? null : entries[entries.length - 1]!.ts
})

/**
 * The `ts` in microseconds of one entry rendered as {@link renderEntries} renders it (`{"ts":1700000000.5,...`):
 * the inverse of `formatTs`, exact (integer arithmetic on the digits, no floating point). Adapters that render in
 * SQL use it to take a page's keyset cursor from its last element.
 */
export const renderedTs = (element: string): Micros => {
  const end = element.indexOf(',"point":')
  const text = element.slice(6, end)
  const dot = text.indexOf(".")
  if (dot === -1) return (Number(text) * MICROS_PER_SECOND) as Micros
  return (Number(text.slice(0, dot)) * MICROS_PER_SECOND + Number(text.slice(dot + 1).padEnd(6, "0"))) as Micros
}

/** A {@link RenderedPage} of entries each rendered alone (see {@link renderEntries}), in ascending `ts`. */
export const pageOfRendered = (elements: ReadonlyArray<string>): RenderedPage => ({
  text: elements.join(","),
  count: elements.length,
  lastTs: elements.length === 0 ? null : renderedTs(elements[elements.length - 1]!)
})
