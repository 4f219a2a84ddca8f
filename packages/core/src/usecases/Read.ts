import { Effect, Either, Option, Stream } from "effect"
import type { AccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import { resolveView, type ResolvedTile } from "../Dashboards.js"
import { type Forbidden, InvalidRequest, InvalidSince, quoted, type StorageFailure, StreamNotFound } from "../Errors.js"
import { isStreamName } from "../StreamName.js"
import { badLimit, isRangeRead, limitFromText, type RangeParams, rangeQueryOf } from "../RangeParams.js"
import {
  type RangeQuery,
  type ReadQuery,
  type RenderedPage,
  renderPage,
  type StoredEntry,
  StreamStore
} from "../StreamStore.js"
import { resolveRotationView } from "../Rotations.js"
import { decimationMode } from "../WidgetType.js"
import { type Micros, sinceFromText } from "../Time.js"
import type { ViewKind } from "../ViewToken.js"
import type { StreamId, Widget } from "../Widget.js"
import { authenticate } from "./Authenticate.js"

/**
 * The read use cases (spec section 4.1, docs/api.md section 6): a stream's entries for an access key, whole
 * ({@link read}), a page at a time ({@link readPages}), and the latest entry without a fiber ({@link readLatestDirect}).
 */

/**
 * The query of an export read as it arrives in the URL (README, "API"): every parameter optional, all strings. With
 * any of `from`, `to` or `points` it is a range read (README, "Range reads"; see {@link rangeQueryOf}).
 */
export type ReadParams = RangeParams

/**
 * A read resolved against the account: the stream to read and the query, validated: an export read's
 * {@link ReadQuery}, or a range read's {@link RangeQuery}.
 */
type ResolvedRead =
  | { readonly stream: StreamId; readonly range: false; readonly query: ReadQuery }
  | { readonly stream: StreamId; readonly range: true; readonly query: RangeQuery }

const resolveRead = (
  accessKey: string,
  streamName: string,
  params: ReadParams
): Effect.Effect<
  ResolvedRead,
  Forbidden | InvalidSince | InvalidRequest | StreamNotFound | StorageFailure,
  AccountStore
> => Effect.flatMap(authenticate(accessKey), (accountId) => resolveQuery(params, findWidget(accountId, streamName)))

/**
 * The query of a read, validated, and the stream it reads, found by `widget` once the query is valid (so a bad
 * parameter is 400 whether or not the stream exists; a range read takes its bucket rule from the widget's type); the
 * keyed read and a view token's read answer the same errors in the same order.
 */
const resolveQuery = <E, R>(
  params: ReadParams,
  widget: Effect.Effect<Widget, E, R>
): Effect.Effect<ResolvedRead, InvalidSince | InvalidRequest | E, R> =>
  Effect.gen(function* () {
    if (isRangeRead(params)) {
      const window = rangeQueryOf(params)
      if (Either.isLeft(window)) return yield* window.left
      const found = yield* widget
      return { stream: found.id, range: true, query: { ...window.right, mode: decimationMode(found.type) } }
    }
    let since: Micros | null = null
    if (params.since !== undefined) {
      const bound = sinceFromText(params.since)
      if (bound === undefined) {
        return yield* new InvalidSince({
          message: `since must be a non-negative number of seconds, got ${quoted(params.since)}`
        })
      }
      since = bound
    }
    let limit: number | null = null
    if (params.limit !== undefined) {
      const decoded = limitFromText(params.limit)
      if (decoded === undefined) return yield* new InvalidRequest({ message: badLimit(params.limit), path: "limit" })
      limit = decoded
    }
    const found = yield* widget
    return { stream: found.id, range: false, query: { since, limit } }
  })

/**
 * Reads a stream as the export API does (spec section 4.1, docs/api.md section 6), for programs that embed the core:
 * without `since` the latest entry only; `since=0` every entry; `since=T` the entries with `ts > T` (T in UNIX
 * seconds), ascending by `ts`, at most `limit` (1..100000) of them, oldest first; with any of `from`, `to` or
 * `points`, a range read (README, "Range reads"; `StreamStore.readRange`). `ts` of the result in microseconds,
 * the point as its stored JSON text. Fails with `Forbidden`, `InvalidSince`, `InvalidRequest` (bad `limit`; for a
 * range read, any bad parameter, see `rangeQueryOf`),
 * `StreamNotFound` (also when the stream exists in another account) or a storage failure. The whole result is in
 * memory at once; {@link readPages} delivers the same entries a page at a time (what the HTTP server uses).
 */
export const read = (
  accessKey: string,
  streamName: string,
  params: ReadParams
): Effect.Effect<
  ReadonlyArray<StoredEntry>,
  Forbidden | InvalidSince | InvalidRequest | StreamNotFound | StorageFailure,
  AccountStore | StreamStore
> =>
  Effect.flatMap(resolveRead(accessKey, streamName, params), (resolved) =>
    Effect.flatMap(StreamStore, (store) =>
      resolved.range ? store.readRange(resolved.stream, resolved.query) : store.read(resolved.stream, resolved.query)
    )
  )

/** Entries per page of {@link readPages} by default: ~40 KB of JSON for number points. */
export const defaultReadPageSize = 1000

/**
 * A read delivered in pages: the first page, already fetched, and `rest`, the pages after it (`undefined` when the
 * first page is all there is). Each page is rendered (see {@link RenderedPage}) and holds at most the page size of
 * entries; the pages of `rest` are non-empty and follow each other in `ts` order, so the body's `data` array is the
 * pages' texts joined by `,`.
 */
export interface ReadPages {
  readonly first: RenderedPage
  readonly rest: Stream.Stream<RenderedPage, StorageFailure> | undefined
}

/**
 * Reads a stream (spec section 4.1, docs/api.md section 6): without `since` the latest entry only; `since=0` every
 * entry; `since=T` the entries with `ts > T` (T in UNIX seconds), ascending by `ts`, at most `limit` (1..100000) of
 * them, oldest first; a page of at most `pageSize` entries at a time, rendered by the storage, so that a reader of a
 * large stream holds one page in memory, not the stream. With any of `from`, `to` or `points` it is a range read
 * (README, "Range reads"): without `points` paged the same way through `StreamStore.readRange`, with `points` one
 * page of what the buckets keep (at most 4 entries a bucket).
 *
 * Everything that can refuse the read is decided by the returned effect, before any entry is delivered: `Forbidden`,
 * `InvalidSince` (`since` not a non-negative decimal number), `InvalidRequest` (bad `limit`; for a range read any
 * bad parameter, with `path` naming it, see `rangeQueryOf`), `StreamNotFound` (also
 * when the stream exists in another account), and a storage failure on the first page. Each later page is fetched when `rest` is pulled,
 * as a keyset query (`StreamStore.readPage`: `ts >` the last `ts` delivered, at most the page size, within `limit`),
 * so no storage connection or cursor is held between pages and pushes to the stream go on while it is read. `rest`
 * fails with a `StorageFailure` when a later page cannot be read; what was delivered before stays valid.
 *
 * A paged read is not a snapshot: entries stored or decimated while `rest` is being pulled may or may not be
 * included, but no entry is delivered twice and the order stays ascending (`ts` is unique per stream).
 */
export const readPages = (
  accessKey: string,
  streamName: string,
  params: ReadParams,
  pageSize: number = defaultReadPageSize
): Effect.Effect<
  ReadPages,
  Forbidden | InvalidSince | InvalidRequest | StreamNotFound | StorageFailure,
  AccountStore | StreamStore
> => Effect.flatMap(resolveRead(accessKey, streamName, params), (resolved) => pagesOfRead(resolved, pageSize))

/** The pages of a resolved read: {@link readPages}' and {@link readViewPages}'. */
const pagesOfRead = (resolved: ResolvedRead, pageSize: number): Effect.Effect<ReadPages, StorageFailure, StreamStore> =>
  Effect.gen(function* () {
    const store = yield* StreamStore
    if (resolved.range) return yield* rangePages(store, resolved.stream, resolved.query, pageSize)
    const { stream, query } = resolved
    if (query.since === null) {
      const first = yield* Effect.async<RenderedPage, StorageFailure>((resume) =>
        readLatest(store, stream, (error, page) =>
          resume(error === undefined ? Effect.succeed(page!) : Effect.fail(error))
        )
      )
      return { first, rest: undefined }
    }
    return yield* pagesOf((since, asked) => store.readPage(stream, since ?? query.since!, asked), query.limit, pageSize)
  })

/** The query of a view token's read: a keyed read's ({@link ReadParams}) and `stream`, the stream name to read. */
export interface ViewReadParams extends ReadParams {
  readonly stream?: string | undefined
}

/**
 * The pages of a read of a stream that `tiles` (a view token's tiles, with their widgets) show: see
 * {@link readViewPages}. `view` names the view in the `StreamNotFound` message.
 */
const readShownPages = <E, R>(
  view: string,
  tiles: Effect.Effect<ReadonlyArray<ResolvedTile>, E, R>,
  params: ViewReadParams,
  pageSize: number
): Effect.Effect<ReadPages, E | InvalidSince | InvalidRequest | StreamNotFound | StorageFailure, R | StreamStore> =>
  Effect.gen(function* () {
    const shown = yield* tiles
    const streamName = params.stream
    if (streamName === undefined) {
      return yield* new InvalidRequest({ message: "stream is required: the stream name to read", path: "stream" })
    }
    const widget = shown.find((t) => t.tile.streamName === streamName && t.widget !== null)?.widget
    const found =
      widget === undefined || widget === null
        ? Effect.fail(new StreamNotFound({ message: `this ${view} shows no stream named ${quoted(streamName)}` }))
        : Effect.succeed(widget)
    return yield* pagesOfRead(yield* resolveQuery(params, found), pageSize)
  })

// A kind's read of a stream its view shows, from the tiles a view token opens (see `readViewPages`).
const viewPages =
  <E, R>(kind: ViewKind, tilesOf: (viewToken: string) => Effect.Effect<ReadonlyArray<ResolvedTile>, E, R>) =>
  (
    viewToken: string,
    params: ViewReadParams,
    pageSize: number = defaultReadPageSize
  ): Effect.Effect<ReadPages, E | InvalidSince | InvalidRequest | StreamNotFound | StorageFailure, R | StreamStore> =>
    readShownPages(kind, tilesOf(viewToken), params, pageSize)

/**
 * A read of a stream a shared view shows, through its view token (README, "Range reads"; docs/api.md section 6.1,
 * `GET /d/<viewToken>/range?stream=<STREAM>&...` and `GET /r/<viewToken>/range?...`), one per kind: the same pages
 * and the same refusals as {@link readPages} with the account's key (range reads, `since` and `limit` included), but
 * the kind's not-found error (404: `DashboardNotFound`, `RotationNotFound`) for an unknown or rotated token or a
 * deleted view instead of `Forbidden`, `InvalidRequest` with `path` `"stream"` when `stream` is missing, and
 * `StreamNotFound` for a stream no tile shows (or whose widget was deleted). A rotation's read is of a stream any of
 * its dashboards shows.
 */
export const readViewPages = {
  dashboard: viewPages("dashboard", (viewToken) => Effect.map(resolveView(viewToken), (resolved) => resolved.tiles)),
  rotation: viewPages("rotation", (viewToken) =>
    Effect.map(resolveRotationView(viewToken), (resolved) => resolved.dashboards.flatMap((d) => d.tiles))
  )
} satisfies { readonly [K in ViewKind]: unknown }

/**
 * Pages of at most `pageSize` entries within `limit` (`null`: none): `fetch(null, n)` gives the first page,
 * `fetch(ts, n)` the page after `ts`, the last `ts` delivered (a keyset cursor), each at most `n` entries. The first
 * page is fetched at once; the others when `rest` is pulled, until a page comes back short.
 */
const pagesOf = (
  fetch: (since: Micros | null, asked: number) => Effect.Effect<RenderedPage, StorageFailure>,
  limit: number | null,
  pageSize: number
): Effect.Effect<ReadPages, StorageFailure> =>
  Effect.gen(function* () {
    type Cursor = { readonly since: Micros; readonly remaining: number } | undefined
    // After a page: where the next one starts and how many entries `limit` still allows, or undefined at the end.
    const after = (page: RenderedPage, asked: number, remaining: number): Cursor =>
      page.count < asked || remaining <= 0 || page.lastTs === null ? undefined : { since: page.lastTs, remaining }
    const budget = limit ?? Number.POSITIVE_INFINITY
    const firstAsked = Math.min(pageSize, budget)
    const first = yield* fetch(null, firstAsked)
    const start = after(first, firstAsked, budget - first.count)
    if (start === undefined) return { first, rest: undefined }
    const rest = Stream.unfoldEffect<Cursor, RenderedPage, StorageFailure, never>(start, (cursor) => {
      if (cursor === undefined) return Effect.succeed(Option.none())
      const asked = Math.min(pageSize, cursor.remaining)
      return Effect.map(fetch(cursor.since, asked), (page) =>
        page.count === 0 ? Option.none() : Option.some([page, after(page, asked, cursor.remaining - page.count)])
      )
    })
    return { first, rest }
  })

/**
 * The pages of a range read (see {@link readPages}): with `points`, one page of everything the read keeps (4N entries
 * at most); without, pages of at most `pageSize` entries, each the next `StreamStore.readRange` after the last `ts`
 * delivered (`since`), up to `to` and within `limit`.
 */
const rangePages = (
  store: StreamStore["Type"],
  stream: StreamId,
  query: RangeQuery,
  pageSize: number
): Effect.Effect<ReadPages, StorageFailure> =>
  Effect.gen(function* () {
    if (query.points !== null) return { first: renderPage(yield* store.readRange(stream, query)), rest: undefined }
    const page = (since: Micros | null, asked: number) =>
      Effect.map(
        store.readRange(
          stream,
          since === null ? { ...query, limit: asked } : { ...query, from: null, since, limit: asked }
        ),
        renderPage
      )
    return yield* pagesOf(page, query.limit, pageSize)
  })

/** How {@link readLatestDirect} answers: the storage failure, or the rendered page of at most one entry. */
export type ReadLatestDone = (error: StorageFailure | undefined, page: RenderedPage | undefined) => void

/** The query of a latest-entry read: no `since`, no `limit` (docs/api.md section 6). */
export const latestOnly: ReadQuery = { since: null, limit: null }

/**
 * The latest-entry read (no `since`, no `limit`) of {@link readPages} without an effect, for the read lane's hot path
 * (no fiber per read): the same answer, through the same last step, when the key's account and the widget
 * are at hand without waiting, from `AccountStore.peekAccount`/`peekWidget` (the cache, or synchronous lookups). Then
 * it returns `true` and answers `done` once (with the first page `readPages` would give, or its storage failure; at
 * once on SQLite, when the query returns on PostgreSQL); otherwise it returns `false` having called nothing, and the caller runs {@link readPages}, which also
 * gives every refusal (`Forbidden`, `StreamNotFound`).
 *
 * With `declined` given and a store with `AccountStore.lookupWidget` (PostgreSQL), a widget `peekWidget` cannot tell
 * is looked up through it (no fiber): it returns `true` and then either answers `done` as above (the lookup's own
 * storage failure included, as `readPages` would fail with it) or, when the account has no such widget, calls
 * `declined` instead, once, and the caller runs {@link readPages} for the refusal.
 */
export const readLatestDirect = (
  accessKey: string,
  streamName: string,
  accounts: AccountStore["Type"],
  streams: StreamStore["Type"],
  done: ReadLatestDone,
  declined?: () => void
): boolean => {
  if (!isStreamName(streamName)) return false
  const accountId = accounts.peekAccount(accessKey)
  if (accountId === undefined) return false
  // An absent widget (`null`) is declined too: `readPages` refuses it.
  const widget = accounts.peekWidget(accountId, streamName)
  if (widget === null) return false
  if (widget !== undefined) {
    readLatest(streams, widget.id, done)
    return true
  }
  if (accounts.lookupWidget === undefined || declined === undefined) return false
  accounts.lookupWidget(accountId, streamName, (error, found) => {
    if (error !== undefined) done(error, undefined)
    else if (found === null) declined()
    else readLatest(streams, found.id, done)
  })
  return true
}

/** The step of a latest-entry read after the lookups, for {@link readPages} and {@link readLatestDirect} alike. */
const readLatest = (streams: StreamStore["Type"], stream: StreamId, done: ReadLatestDone): void =>
  streams.readDirect(stream, latestOnly, (error, entries) =>
    error === undefined ? done(undefined, renderPage(entries)) : done(error, undefined)
  )

const findWidget = (accountId: AccountId, streamName: string) =>
  Effect.flatMap(AccountStore, (store) =>
    Effect.flatMap(
      isStreamName(streamName) ? store.findWidgets(accountId, [streamName]) : Effect.succeed(new Map<string, Widget>()),
      (found) => {
        const widget = found.get(streamName)
        return widget === undefined
          ? Effect.fail(
              new StreamNotFound({
                message: `no widget with stream name ${quoted(streamName)} in this account`
              })
            )
          : Effect.succeed(widget)
      }
    )
  )
