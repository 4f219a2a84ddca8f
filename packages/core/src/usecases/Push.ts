import { Effect, Either, Option } from "effect"
import type { AccountId } from "../Account.js"
import { AccountStore } from "../AccountStore.js"
import { AccountNotFound, quoted, type PushRejection, type StorageFailure, StreamNotFound } from "../Errors.js"
import type { IngestColumns, IngestPart, IngestRequest, IngestResult, SkippedStreams } from "../Ingest.js"
import type { Limits } from "../Limits.js"
import { decodeJsonPart, decodePushRequest, type JsonPart } from "../PushRequest.js"
import { isStreamName } from "../StreamName.js"
import { StreamStore, type StreamWrite, type Withdrawable } from "../StreamStore.js"
import { type Micros, nowMicros } from "../Time.js"
import type { Widget } from "../Widget.js"
import { mergePuts, PutMerger } from "../WritePlan.js"
import { authenticate } from "./Authenticate.js"

/**
 * The push use cases (spec sections 4.2-4.4, docs/api.md sections 5 and 13): a decoded request of any protocol stored
 * in one transaction, as an effect ({@link ingest}) and without a fiber ({@link ingestDirect}).
 */

/**
 * The distinct stream names a request names, in order of first appearance. One pass into a `Set`, without an
 * intermediate array of every part's name: a line protocol batch names its series once per line (10,000 parts for
 * 1,000 Telegraf lines; this function was 14 % of the `telegraf` benchmark's profile, with the array and the spread).
 */
const namesOf = (request: IngestRequest): ReadonlyArray<string> => {
  if (request.columns !== undefined) return request.columns.names
  const parts = request.parts
  if (parts.length === 1) return [parts[0]!.streamName]
  const names = new Set<string>()
  for (let i = 0; i < parts.length; i++) names.add(parts[i]!.streamName)
  return [...names]
}

/**
 * The writes of a request once its account's widgets are known (spec sections 4.2-4.4, docs/api.md section 13): for each part
 * in request order, its widget and its content decoded against the widget type by the request's decoder
 * (`InvalidPoint`, `PayloadTooLarge`, `UnsupportedCommand`, `InvalidRequest`). A part whose stream is not in
 * `widgets` (or `null` there) is refused with `StreamNotFound` (`undeclared: "reject"`) or left out (`"skip"`: then
 * the skipped count is `parts.length - written`). Every other part gives one write, except with `request.decodeEntry`:
 * then each part is one entry, merged into its stream's writes as it comes (`PutMerger`: already what `mergePuts`
 * would make of them, `merged` is true), and `request.decoded` is called once they all are. The first error wins;
 * nothing is stored here. Shared by {@link ingest} and {@link ingestDirect}, so both refuse the same request with the
 * same error. A request with `columns` is read through them (see {@link columnWrites}), to the same writes.
 */
export const writesOf = (
  request: IngestRequest,
  widgets: ReadonlyMap<string, Widget | null>,
  limits: Limits
): Either.Either<RequestWrites, PushRejection> => {
  if (request.columns !== undefined && request.decodeEntry !== undefined) {
    return columnWrites(request, request.columns, widgets, limits)
  }
  const parts = request.parts
  const merger = request.decodeEntry !== undefined ? new PutMerger() : undefined
  const writes: Array<StreamWrite> = []
  let written = 0
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    const widget = widgets.get(part.streamName)
    if (widget == null) {
      if (request.undeclared === "skip") continue
      return Either.left(streamNotFound(request, part))
    }
    if (merger !== undefined) {
      const entry = request.decodeEntry!(widget.type, part.value, part.path, limits)
      if ("_tag" in entry) return Either.left(entry)
      merger.add(widget, entry, part.path)
    } else {
      const op = request.decode(widget.type, part.value, part.path, limits)
      if (Either.isLeft(op)) return Either.left(op.left)
      writes.push({ widget, op: op.right, path: part.path })
    }
    written++
  }
  if (merger !== undefined) request.decoded?.()
  return Either.right(
    merger !== undefined ? { writes: merger.writes, written, merged: true } : { writes, written, merged: false }
  )
}

/**
 * {@link writesOf} of a request read through its columns (`IngestRequest.columns`): each distinct stream's widget
 * looked up once, each part decoded by `columns.entry` and merged as it comes (`PutMerger.addAt`), a part's path made
 * only when it starts a write or is refused. The same writes, count and first error as reading `parts`.
 */
const columnWrites = (
  request: IngestRequest,
  columns: IngestColumns,
  widgets: ReadonlyMap<string, Widget | null>,
  limits: Limits
): Either.Either<RequestWrites, PushRejection> => {
  const names = columns.names
  const widgetOf = new Array<Widget | null | undefined>(names.length)
  for (let k = 0; k < names.length; k++) widgetOf[k] = widgets.get(names[k]!)
  const streamOf = columns.streamOf
  const size = columns.size
  const merger = new PutMerger()
  let written = 0
  for (let i = 0; i < size; i++) {
    const widget = widgetOf[streamOf[i]!]
    if (widget == null) {
      if (request.undeclared === "skip") continue
      return Either.left(streamNotFound(request, { streamName: names[streamOf[i]!]!, path: columns.path(i) }))
    }
    const entry = columns.entry(widget.type, i, limits)
    if ("_tag" in entry) return Either.left(entry)
    merger.addAt(widget, entry, columns, i)
    written++
  }
  request.decoded?.()
  return Either.right({ writes: merger.writes, written, merged: true })
}

/**
 * What {@link writesOf} makes of a request: its `writes` in order, how many parts they hold (`written`: the others
 * were skipped), and whether they are already merged (see `mergePuts`).
 */
export interface RequestWrites {
  readonly writes: Array<StreamWrite>
  readonly written: number
  readonly merged: boolean
}

const streamNotFound = (request: IngestRequest, part: Omit<IngestPart, "value">): StreamNotFound =>
  new StreamNotFound({
    message: `no widget with stream name ${quoted(part.streamName)} in this account`,
    path: request.streamNamePath?.(part.path)
  })

/** The number of parts of `request` (its columns' size when it has columns: its `parts` are then not read). */
const partCount = (request: IngestRequest): number =>
  request.columns !== undefined ? request.columns.size : request.parts.length

const noneSkipped: IngestResult = Object.freeze({ skipped: 0 })

/**
 * Account `accountId`'s request's skipped streams: the distinct stream names of the parts of `request` that `writes`
 * left out (every written part's stream name is its widget's), in order of first appearance; gathered when called.
 */
const skippedStreamsOf =
  (accountId: AccountId, request: IngestRequest, writes: ReadonlyArray<StreamWrite>) => (): SkippedStreams => {
    const seen = new Set<string>()
    for (const write of writes) seen.add(write.widget.streamName)
    const names: Array<string> = []
    if (request.columns !== undefined) {
      for (const name of request.columns.names) if (!seen.has(name)) names.push(name)
      return { accountId, names }
    }
    for (const part of request.parts) {
      if (seen.has(part.streamName)) continue
      seen.add(part.streamName)
      names.push(part.streamName)
    }
    return { accountId, names }
  }

/**
 * The step of a push after the lookups, written once for {@link ingest} and {@link ingestDirect}: each part decoded
 * against its widget ({@link writesOf}), then every write in one `StreamStore.writeDirect`. `distinct` says that no
 * two parts name the same stream (then no write can merge with another: `mergePuts` is skipped, a 100-stream push
 * saves its map of runs). Answers `done` once: at
 * once for a refused request or one with nothing to write, after the commit for a stored one. Returns the write's
 * {@link Withdrawable} when it waits in a queue.
 */
const storeRequest = (
  accountId: AccountId,
  request: IngestRequest,
  widgets: ReadonlyMap<string, Widget | null>,
  distinct: boolean,
  limits: Limits,
  streams: StreamStore["Type"],
  now: Micros,
  done: IngestDone
): Withdrawable | void => {
  const result = writesOf(request, widgets, limits)
  if (Either.isLeft(result)) return done(result.left)
  const writes = result.right.writes
  const skipped = partCount(request) - result.right.written
  if (writes.length === 0) {
    return done(undefined, skipped, skipped === 0 ? undefined : skippedStreamsOf(accountId, request, writes))
  }
  // A request's Puts to one stream are stored as one write (see `mergePuts`): the same entries and changes. Without
  // skipped parts (every push of the original protocol) `done` is handed on as it is: no closure per push.
  const merged = distinct || result.right.merged ? writes : mergePuts(writes)
  if (skipped === 0) return streams.writeDirect(merged, now, done)
  const skippedStreams = skippedStreamsOf(accountId, request, writes)
  return streams.writeDirect(merged, now, (error) =>
    error === undefined ? done(undefined, skipped, skippedStreams) : done(error)
  )
}

/**
 * Stores a decoded request of any protocol (see {@link IngestRequest}): the key's account, its widgets of
 * the request's stream names, each part decoded against its widget type, then every write in one transaction
 * (docs/api.md section 5: all or nothing, and durable once this succeeds). `now` is the receive time in microseconds.
 * Succeeds with how many parts were skipped (undeclared streams, `undeclared: "skip"`). Fails with `Forbidden` for
 * an empty or unknown key, `StreamNotFound` for an undeclared stream (`undeclared: "reject"`), the decoder's
 * refusals (each with `path`), or a storage failure.
 */
export const ingest = (
  request: IngestRequest,
  limits: Limits,
  now: Micros = nowMicros()
): Effect.Effect<IngestResult, PushRejection | StorageFailure, AccountStore | StreamStore> =>
  Effect.flatMap(authenticate(request.accessKey), (accountId) => ingestFor(accountId, request, limits, now))

/** The steps of {@link ingest} once the account is known: its widgets, then {@link storeRequest}. */
const ingestFor = (
  accountId: AccountId,
  request: IngestRequest,
  limits: Limits,
  now: Micros
): Effect.Effect<IngestResult, PushRejection | StorageFailure, AccountStore | StreamStore> =>
  Effect.gen(function* () {
    // A name that cannot be a stream name is no widget on any backend: it is not looked up (see `isStreamName`).
    const names = namesOf(request)
    const widgets = yield* Effect.flatMap(AccountStore, (store) =>
      store.findWidgets(accountId, names.filter(isStreamName))
    )
    const streams = yield* StreamStore
    const distinct = names.length === partCount(request)
    return yield* Effect.async<IngestResult, PushRejection | StorageFailure>((resume) => {
      const queued = storeRequest(
        accountId,
        request,
        widgets,
        distinct,
        limits,
        streams,
        now,
        (error, skipped, skippedStreams) =>
          resume(
            error !== undefined
              ? Effect.fail(error)
              : Effect.succeed(skipped === undefined || skipped === 0 ? noneSkipped : { skipped, skippedStreams })
          )
      )
      if (queued) return Effect.sync(() => queued.withdraw())
    })
  })

/**
 * Pushes `point` to stream `streamName` of account `accountId` on the admin API's behalf (docs/api.md section 14,
 * `POST /admin/accounts/<id>/widgets/<stream>/points`): the request a push `{"accessKey": <a key of that account>,
 * "streamName", "point"}` decodes to, stored by the same steps as {@link ingest} (section 3's rules, live updates,
 * durability) and refused with the same errors, their paths starting at `point` as in that push's body; a stream
 * that is not a widget of the account is `StreamNotFound` without a path (its name came from the URL). `now` is the
 * receive time in microseconds. Fails with `AccountNotFound` for an unknown account, otherwise as {@link ingest}
 * does (except `Forbidden`: no key is involved).
 */
export const pushPoint = (
  accountId: string,
  streamName: string,
  point: unknown,
  limits: Limits,
  now: Micros = nowMicros()
): Effect.Effect<void, AccountNotFound | PushRejection | StorageFailure, AccountStore | StreamStore> =>
  Effect.gen(function* () {
    const store = yield* AccountStore
    if (Option.isNone(yield* store.getAccount(accountId as AccountId))) {
      return yield* new AccountNotFound({ message: `no account with id ${quoted(accountId)}` })
    }
    const request: IngestRequest<JsonPart> = {
      accessKey: "",
      parts: [{ streamName, path: "point", value: { point } }],
      undeclared: "reject",
      decode: decodeJsonPart
    }
    yield* ingestFor(accountId as AccountId, request, limits, now)
  })

/**
 * Pushes a parsed JSON body (spec sections 4.2-4.4): one point, a clear command, or a multi-stream push; the
 * original protocol's parser ({@link decodePushRequest}) then {@link ingest}. The whole body is validated before
 * anything is stored, then every stream's write is stored in one transaction (docs/api.md section 5). `now` is the
 * receive time in microseconds. Fails with the contract's validation errors (`InvalidRequest`, `InvalidPoint`,
 * `UnsupportedCommand`, `PayloadTooLarge`, each with `path`), `Forbidden` for an unknown key, `StreamNotFound` for a
 * stream the account does not have, or a storage failure.
 */
export const push = (
  body: unknown,
  limits: Limits,
  now: Micros = nowMicros()
): Effect.Effect<void, PushRejection | StorageFailure, AccountStore | StreamStore> =>
  Effect.flatMap(decodePushRequest(body, limits), (request) => Effect.asVoid(ingest(request, limits, now)))

/**
 * How {@link ingestDirect} answers: `undefined` once stored (durably), with the number of skipped parts and their
 * stream names when some were skipped (see {@link IngestResult}; absent means none); else the error {@link ingest}
 * fails with.
 */
export type IngestDone = (
  error: PushRejection | StorageFailure | undefined,
  skipped?: number,
  skippedStreams?: () => SkippedStreams
) => void

/**
 * {@link ingest} without an effect, for the push hot path (no fiber per push): the same request gets the
 * same answer, through the same steps (the account, the widgets, then the same {@link storeRequest}), but only when
 * the key's account and every widget are at hand without an effect, from `AccountStore.peekAccount`/`peekWidget`
 * (the account cache, or SQLite's synchronous lookups). Every stream name must be known found or known absent
 * (`peekWidget` answers `null`: a remembered absence, docs/api.md section 13.1's skipped names), so that skip, refuse or write is
 * decided here; a store with `AccountStore.lookupWidget` (PostgreSQL) has the names no peek answered looked up through
 * it instead, so that a push of a widget the cache does not hold needs no fiber either (the store's failure answers
 * `done`). Then it answers `done` (at once for a refused request or one with nothing to write, after the commit for a stored
 * one) and returns `true`. Otherwise it returns `false` having done nothing and called nothing, and the caller runs
 * {@link ingest}, which looks up what is missing (and then fills the cache). `now` is the receive time in
 * microseconds.
 */
export const ingestDirect = (
  request: IngestRequest,
  limits: Limits,
  accounts: AccountStore["Type"],
  streams: StreamStore["Type"],
  done: IngestDone,
  now: Micros = nowMicros()
): boolean => {
  const accountId = accounts.peekAccount(request.accessKey)
  if (accountId === undefined) return false
  // Each distinct name once: its widget, or `null` when it has none (a line protocol batch names each of its series
  // once per line). A name that cannot be a stream name is no widget on any backend (see `isStreamName`).
  const widgets = new Map<string, Widget | null>()
  const clock = Date.now()
  // The names no peek could answer, looked up with `lookupWidget` when the store has it (else the effect path).
  const lookup = accounts.lookupWidget
  const missing = new Set<string>()
  const peek = (name: string): boolean => {
    const widget = isStreamName(name) ? accounts.peekWidget(accountId, name, clock) : null
    if (widget !== undefined) widgets.set(name, widget)
    else if (lookup === undefined) return false
    else missing.add(name)
    return true
  }
  if (request.columns !== undefined) {
    // The distinct names at hand: each looked up once, without a pass over the parts.
    for (const name of request.columns.names) if (!peek(name)) return false
  } else {
    const parts = request.parts
    for (let i = 0; i < parts.length; i++) {
      const name = parts[i]!.streamName
      if (!widgets.has(name) && !missing.has(name) && !peek(name)) return false
    }
  }
  const distinct = widgets.size + missing.size === partCount(request)
  if (missing.size === 0 || lookup === undefined) {
    storeRequest(accountId, request, widgets, distinct, limits, streams, now, done)
    return true
  }
  // PostgreSQL, a widget the cache does not hold: looked up without a fiber (the store batches such lookups), then
  // the same `storeRequest`. The first failed lookup answers the request; nothing is written.
  let left = missing.size
  let failed = false
  for (const name of missing) {
    lookup(accountId, name, (error, widget) => {
      if (failed) return
      if (error !== undefined) {
        failed = true
        return done(error)
      }
      widgets.set(name, widget)
      if (--left === 0) storeRequest(accountId, request, widgets, distinct, limits, streams, now, done)
    })
  }
  return true
}

/** How {@link pushDirect} answers a push: `undefined` once stored (durably), else the error {@link push} fails with. */
export type PushDone = (error: PushRejection | StorageFailure | undefined) => void

/**
 * {@link push} without an effect: {@link decodePushRequest} then {@link ingestDirect} (see there for when it returns
 * `false`, having called nothing, so that the caller runs {@link push}). A body that fails to decode is refused here
 * either way, as `push` would refuse it first. `now` is the receive time in microseconds.
 */
export const pushDirect = (
  body: unknown,
  limits: Limits,
  accounts: AccountStore["Type"],
  streams: StreamStore["Type"],
  done: PushDone,
  now: Micros = nowMicros()
): boolean => {
  const request = decodePushRequest(body, limits)
  if (Either.isLeft(request)) {
    done(request.left)
    return true
  }
  return ingestDirect(request.right, limits, accounts, streams, done, now)
}
