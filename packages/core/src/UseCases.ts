import { Effect, Either, Option, Schema, Stream } from "effect"
import { type Account, type AccountId, digestAccessKey, type KeyDigest, newAccessKey, newAccountId } from "./Account.js"
import { AccountStore } from "./AccountStore.js"
import {
  AccountNotFound,
  Forbidden,
  InvalidRequest,
  InvalidSince,
  quoted,
  type PushRejection,
  type StorageFailure,
  StreamNotFound
} from "./Errors.js"
import type { Limits } from "./Limits.js"
import type { IngestPart, IngestRequest, IngestResult } from "./Ingest.js"
import { decodeJsonPart, decodePushRequest, type JsonPart } from "./PushRequest.js"
import { isStreamName, StreamName } from "./StreamName.js"
import { longerThan } from "./TextLength.js"
import {
  type ReadQuery,
  type RenderedPage,
  renderPage,
  type StoredEntry,
  StreamStore,
  type StreamWrite
} from "./StreamStore.js"
import { type Micros, nowMicros, sinceFromText } from "./Time.js"
import type { StreamId, Widget } from "./Widget.js"
import { isWidgetType, widgetTypes } from "./WidgetType.js"
import { mergePuts } from "./WritePlan.js"

/**
 * The use cases of Dashstream: what the HTTP adapter and the CLI call. Each asks for the storage ports it needs;
 * none knows about HTTP or about a particular database.
 */

const forbidden = new Forbidden({ message: "the access key is missing or unknown" })

/**
 * The account an access key belongs to (spec section 5). Fails with `Forbidden` for an empty, unknown or revoked
 * key.
 */
export const authenticate = (accessKey: string): Effect.Effect<AccountId, Forbidden | StorageFailure, AccountStore> =>
  accessKey === ""
    ? Effect.fail(forbidden)
    : Effect.flatMap(AccountStore, (store) =>
        Effect.flatMap(store.findAccountByKey(digestAccessKey(accessKey)), (found) =>
          Option.match(found, { onNone: () => Effect.fail(forbidden), onSome: Effect.succeed })
        )
      )

export { decodeCommand } from "./PushRequest.js"

/**
 * The distinct stream names a request names, in order of first appearance. One pass into a `Set`, without an
 * intermediate array of every part's name: a line protocol batch names its series once per line (10,000 parts for
 * 1,000 Telegraf lines; this function was 14 % of the `telegraf` benchmark's profile, with the array and the spread).
 */
const namesOf = (request: IngestRequest): ReadonlyArray<string> => {
  const parts = request.parts
  if (parts.length === 1) return [parts[0]!.streamName]
  const names = new Set<string>()
  for (let i = 0; i < parts.length; i++) names.add(parts[i]!.streamName)
  return [...names]
}

/**
 * The writes of a request once its account's widgets are known (spec sections 4.2-4.4, contract 13): for each part
 * in request order, its widget and its content decoded against the widget type by the request's decoder
 * (`InvalidPoint`, `PayloadTooLarge`, `UnsupportedCommand`, `InvalidRequest`). A part whose stream is not in
 * `widgets` (or `null` there) is refused with `StreamNotFound` (`undeclared: "reject"`) or left out (`"skip"`: then the skipped count is
 * `parts.length - writes.length`, every other part giving exactly one write). The first error wins; nothing is stored
 * here. Shared by {@link ingest} and {@link ingestDirect}, so both refuse the same request with the same error.
 */
const writesOf = (
  request: IngestRequest,
  widgets: ReadonlyMap<string, Widget | null>,
  limits: Limits
): Either.Either<Array<StreamWrite>, PushRejection> => {
  const writes: Array<StreamWrite> = []
  const parts = request.parts
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    const widget = widgets.get(part.streamName)
    if (widget == null) {
      if (request.undeclared === "skip") continue
      return Either.left(streamNotFound(request, part))
    }
    const op = request.decode(widget.type, part.value, part.path, limits)
    if (Either.isLeft(op)) return Either.left(op.left)
    writes.push({ widget, op: op.right, path: part.path })
  }
  return Either.right(writes)
}

const streamNotFound = (request: IngestRequest, part: IngestPart): StreamNotFound =>
  new StreamNotFound({
    message: `no widget with stream name ${quoted(part.streamName)} in this account`,
    path: request.streamNamePath?.(part.path)
  })

const noneSkipped: IngestResult = Object.freeze({ skipped: 0 })

/**
 * The distinct stream names of the parts of `request` that `writes` left out (every written part's stream name is its
 * widget's), in order of first appearance; gathered when called.
 */
const skippedStreamsOf = (request: IngestRequest, writes: ReadonlyArray<StreamWrite>) => (): ReadonlyArray<string> => {
  const seen = new Set<string>()
  for (const write of writes) seen.add(write.widget.streamName)
  const names: Array<string> = []
  for (const part of request.parts) {
    if (seen.has(part.streamName)) continue
    seen.add(part.streamName)
    names.push(part.streamName)
  }
  return names
}

const resultOf = (request: IngestRequest, writes: ReadonlyArray<StreamWrite>): IngestResult => {
  const skipped = request.parts.length - writes.length
  return skipped === 0 ? noneSkipped : { skipped, skippedStreams: skippedStreamsOf(request, writes) }
}

/**
 * Stores a decoded request of any protocol (issue 23; see {@link IngestRequest}): the key's account, its widgets of
 * the request's stream names, each part decoded against its widget type, then every write in one transaction
 * (contract section 5: all or nothing, and durable once this succeeds). `now` is the receive time in microseconds.
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

/** The steps of {@link ingest} once the account is known: its widgets, the writes, one `StreamStore.write`. */
const ingestFor = (
  accountId: AccountId,
  request: IngestRequest,
  limits: Limits,
  now: Micros
): Effect.Effect<IngestResult, PushRejection | StorageFailure, AccountStore | StreamStore> =>
  Effect.gen(function* () {
    // A name that cannot be a stream name is no widget on any backend: it is not looked up (see `isStreamName`).
    const widgets = yield* Effect.flatMap(AccountStore, (store) =>
      store.findWidgets(accountId, namesOf(request).filter(isStreamName))
    )
    const writes = yield* writesOf(request, widgets, limits)
    // A request's Puts to one stream are stored as one write (see `mergePuts`): the same entries and changes.
    if (writes.length > 0) yield* Effect.flatMap(StreamStore, (store) => store.write(mergePuts(writes), now))
    return resultOf(request, writes)
  })

/**
 * Pushes `point` to stream `streamName` of account `accountId` on the admin API's behalf (contract section 14,
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
 * anything is stored, then every stream's write is stored in one transaction (contract section 5). `now` is the
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

/** At most this many access keys have their digest remembered by {@link peekAccountOfKey}; past it, it starts again. */
const maxRememberedDigests = 10_000
const rememberedDigests = new Map<string, KeyDigest>()

/**
 * The account of an access key when `peekAccount` knows it without an effect (see
 * `AccountStore.peekAccountByKey`), else `undefined`: an empty or unknown key is left to {@link authenticate}, which
 * refuses it. The digest of a known key is remembered ({@link digestAccessKey}, a SHA-256 per push, was ~4% of the
 * push path's CPU, issue 12); only known keys are, so unknown keys sent over and over cannot fill the memory, which
 * holds nothing a request does not carry anyway.
 */
const peekAccountOfKey = (
  accessKey: string,
  peekAccount: (key: KeyDigest) => AccountId | undefined
): AccountId | undefined => {
  if (accessKey === "") return undefined
  const digest = rememberedDigests.get(accessKey) ?? digestAccessKey(accessKey)
  const accountId = peekAccount(digest)
  if (accountId === undefined) return undefined
  if (rememberedDigests.size >= maxRememberedDigests) rememberedDigests.clear()
  rememberedDigests.set(accessKey, digest)
  return accountId
}

/**
 * How {@link ingestDirect} answers: `undefined` once stored (durably), with the number of skipped parts and their
 * stream names when some were skipped (see {@link IngestResult}; absent means none); else the error {@link ingest}
 * fails with.
 */
export type IngestDone = (
  error: PushRejection | StorageFailure | undefined,
  skipped?: number,
  skippedStreams?: () => ReadonlyArray<string>
) => void

/**
 * {@link ingest} without an effect, for the push hot path (issue 12: no fiber per push): the same request gets the
 * same answer, through the same steps (the account, the widgets, `writesOf`, one `StreamStore.write`), but only when
 * everything it needs is at hand without an effect: the key's account and every widget from
 * `AccountStore.peekAccountByKey`/`peekWidget` (the account cache, or SQLite's synchronous lookups) and a store that
 * takes direct writes (`StreamStore.writeDirect`). Every stream name must be known found or known absent (`peekWidget`
 * answers `null`: a remembered absence, contract 13.1's skipped names), so that skip, refuse or write is decided here.
 * Then it answers `done` (at once for a refused request or one with nothing to write, after the commit for a stored
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
  const writeDirect = streams.writeDirect
  const peekAccount = accounts.peekAccountByKey
  const peekWidget = accounts.peekWidget
  if (writeDirect === undefined || peekAccount === undefined || peekWidget === undefined) return false
  const accountId = peekAccountOfKey(request.accessKey, peekAccount)
  if (accountId === undefined) return false
  // Each distinct name once: its widget, or `null` when it has none (a line protocol batch names each of its series
  // once per line). A name that cannot be a stream name is no widget on any backend (see `isStreamName`).
  const widgets = new Map<string, Widget | null>()
  const parts = request.parts
  for (let i = 0; i < parts.length; i++) {
    const name = parts[i]!.streamName
    if (widgets.has(name)) continue
    const widget = isStreamName(name) ? peekWidget(accountId, name) : null
    if (widget === undefined) return false
    widgets.set(name, widget)
  }
  const writes = writesOf(request, widgets, limits)
  if (Either.isLeft(writes)) {
    done(writes.left)
    return true
  }
  const skipped = parts.length - writes.right.length
  if (writes.right.length === 0) {
    done(undefined, skipped, skipped === 0 ? undefined : skippedStreamsOf(request, writes.right))
    return true
  }
  // Without skipped parts (every push of the original protocol) `done` is handed on as it is: no closure per push.
  if (skipped === 0) writeDirect(mergePuts(writes.right), now, done)
  else {
    const skippedStreams = skippedStreamsOf(request, writes.right)
    writeDirect(mergePuts(writes.right), now, (error) =>
      error === undefined ? done(undefined, skipped, skippedStreams) : done(error)
    )
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

/** The query of an export read as it arrives in the URL (contract section 6): both optional, both strings. */
export interface ReadParams {
  readonly since?: string | undefined
  readonly limit?: string | undefined
}

const decodeLimit = Schema.decodeUnknownEither(
  Schema.String.pipe(Schema.pattern(/^\d+$/), Schema.compose(Schema.NumberFromString), Schema.between(1, 100_000))
)

/** A read resolved against the account: the stream to read and the query, validated (see {@link ReadQuery}). */
interface ResolvedRead {
  readonly stream: StreamId
  readonly query: ReadQuery
}

const resolveRead = (
  accessKey: string,
  streamName: string,
  params: ReadParams
): Effect.Effect<
  ResolvedRead,
  Forbidden | InvalidSince | InvalidRequest | StreamNotFound | StorageFailure,
  AccountStore
> =>
  Effect.gen(function* () {
    const accountId = yield* authenticate(accessKey)
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
      const decoded = decodeLimit(params.limit)
      if (Either.isLeft(decoded)) {
        return yield* new InvalidRequest({
          message: `limit must be a whole number from 1 to 100000, got ${quoted(params.limit)}`,
          path: "limit"
        })
      }
      limit = decoded.right
    }
    const widget = yield* findWidget(accountId, streamName)
    return { stream: widget.id, query: { since, limit } }
  })

/**
 * Reads a stream as the export API does (spec section 4.1, contract section 6), for programs that embed the core:
 * without `since` the latest entry only; `since=0` every entry; `since=T` the entries with `ts > T` (T in UNIX
 * seconds), ascending by `ts`, at most `limit` (1..100000) of them, oldest first. `ts` of the result in microseconds,
 * the point as its stored JSON text. Fails with `Forbidden`, `InvalidSince`, `InvalidRequest` (bad `limit`),
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
  Effect.flatMap(resolveRead(accessKey, streamName, params), ({ stream, query }) =>
    Effect.flatMap(StreamStore, (store) => store.read(stream, query))
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
 * Reads a stream (spec section 4.1, contract section 6): without `since` the latest entry only; `since=0` every
 * entry; `since=T` the entries with `ts > T` (T in UNIX seconds), ascending by `ts`, at most `limit` (1..100000) of
 * them, oldest first; a page of at most `pageSize` entries at a time, rendered by the storage, so that a reader of a
 * large stream holds one page in memory, not the stream (issue "ingest and read performance").
 *
 * Everything that can refuse the read is decided by the returned effect, before any entry is delivered: `Forbidden`,
 * `InvalidSince` (`since` not a non-negative decimal number), `InvalidRequest` (bad `limit`), `StreamNotFound` (also
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
> =>
  Effect.gen(function* () {
    const { stream, query } = yield* resolveRead(accessKey, streamName, params)
    const store = yield* StreamStore
    if (query.since === null) return { first: renderPage(yield* store.read(stream, query)), rest: undefined }
    type Cursor = { readonly since: Micros; readonly remaining: number } | undefined
    // After a page: where the next one starts and how many entries `limit` still allows, or undefined at the end.
    const after = (page: RenderedPage, asked: number, remaining: number): Cursor =>
      page.count < asked || remaining <= 0 || page.lastTs === null ? undefined : { since: page.lastTs, remaining }
    const budget = query.limit ?? Number.POSITIVE_INFINITY
    const firstAsked = Math.min(pageSize, budget)
    const first = yield* store.readPage(stream, query.since, firstAsked)
    const start = after(first, firstAsked, budget - first.count)
    if (start === undefined) return { first, rest: undefined }
    const rest = Stream.unfoldEffect<Cursor, RenderedPage, StorageFailure, never>(start, (cursor) => {
      if (cursor === undefined) return Effect.succeed(Option.none())
      const asked = Math.min(pageSize, cursor.remaining)
      return Effect.map(store.readPage(stream, cursor.since, asked), (page) =>
        page.count === 0 ? Option.none() : Option.some([page, after(page, asked, cursor.remaining - page.count)])
      )
    })
    return { first, rest }
  })

/** How {@link readLatestDirect} answers: the storage failure, or the rendered page of at most one entry. */
export type ReadLatestDone = (error: StorageFailure | undefined, page: RenderedPage | undefined) => void

const latestOnly: ReadQuery = { since: null, limit: null }

/**
 * The latest-entry read (no `since`, no `limit`) of {@link readPages} without an effect, for the read lane's hot path
 * (issue 12: no fiber per read): the same answer, when everything it needs is at hand without waiting: the key's
 * account and the widget from `AccountStore.peekAccountByKey`/`peekWidget` (the cache, or synchronous lookups) and a
 * store that reads without an effect (`StreamStore.readDirect`). Then it returns `true` and answers `done` once (with
 * the first page `readPages` would give, or its storage failure; at once on SQLite, when the query returns on
 * PostgreSQL); otherwise it returns `false` having called nothing, and the caller runs {@link readPages}, which also
 * gives every refusal (`Forbidden`, `StreamNotFound`).
 */
export const readLatestDirect = (
  accessKey: string,
  streamName: string,
  accounts: AccountStore["Type"],
  streams: StreamStore["Type"],
  done: ReadLatestDone
): boolean => {
  const readDirect = streams.readDirect
  const peekAccount = accounts.peekAccountByKey
  const peekWidget = accounts.peekWidget
  if (readDirect === undefined || peekAccount === undefined || peekWidget === undefined) return false
  if (!isStreamName(streamName)) return false
  const accountId = peekAccountOfKey(accessKey, peekAccount)
  if (accountId === undefined) return false
  // An absent widget (`null`) is declined too: `readPages` refuses it.
  const widget = peekWidget(accountId, streamName)
  if (widget == null) return false
  readDirect(widget.id, latestOnly, (error, entries) =>
    error === undefined ? done(undefined, renderPage(entries)) : done(error, undefined)
  )
  return true
}

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

/** A new account as the admin API and CLI show it: the access key is shown only here (contract section 7). */
export interface CreatedAccount {
  readonly id: AccountId
  readonly name: string
  readonly accessKey: string
}

/** The longest account name, in characters (code points). */
export const MAX_ACCOUNT_NAME_LENGTH = 200

/**
 * Creates an account with a fresh random access key (256 bits; stored only as its SHA-256 digest). Fails with
 * `InvalidRequest` (path `name`) for a name over {@link MAX_ACCOUNT_NAME_LENGTH} characters.
 */
export const createAccount = (
  name: string = ""
): Effect.Effect<CreatedAccount, InvalidRequest | StorageFailure, AccountStore> =>
  Effect.gen(function* () {
    if (longerThan(name, MAX_ACCOUNT_NAME_LENGTH)) {
      return yield* new InvalidRequest({
        message: `account name must be at most ${MAX_ACCOUNT_NAME_LENGTH} characters`,
        path: "name"
      })
    }
    const store = yield* AccountStore
    const id = newAccountId()
    const accessKey = newAccessKey()
    yield* store.createAccount({ id, name, createdAt: nowMicros() }, digestAccessKey(accessKey))
    return { id, name, accessKey }
  })

/**
 * Adds a new access key to an account and returns it (contract section 7); with `revokeOthers` every older key
 * stops working. Fails with `AccountNotFound`.
 */
export const addAccessKey = (
  accountId: string,
  revokeOthers: boolean
): Effect.Effect<{ readonly accessKey: string }, AccountNotFound | StorageFailure, AccountStore> =>
  Effect.gen(function* () {
    const store = yield* AccountStore
    const accessKey = newAccessKey()
    yield* store.addAccessKey(accountId as AccountId, digestAccessKey(accessKey), nowMicros(), revokeOthers)
    return { accessKey }
  })

/**
 * Declares a widget (contract section 7). Fails with `InvalidRequest` for a bad stream name (contract section 2) or
 * an unknown type (the message lists the 20 types), `Conflict` if the name is taken, `AccountNotFound`.
 */
export const createWidget = (accountId: string, streamName: unknown, type: unknown) =>
  Effect.gen(function* () {
    const name = Schema.decodeUnknownEither(StreamName)(streamName)
    if (Either.isLeft(name)) {
      const message = typeof streamName === "string" ? messageOf(name.left) : "streamName must be a string"
      return yield* new InvalidRequest({ message, path: "streamName" })
    }
    if (typeof type !== "string" || !isWidgetType(type)) {
      return yield* new InvalidRequest({
        message: `unknown widget type ${typeof type === "string" ? quoted(type) : JSON.stringify(type)}; the types are: ${widgetTypes.join(", ")}`,
        path: "type"
      })
    }
    const store = yield* AccountStore
    return yield* store.createWidget(accountId as AccountId, name.right, type, nowMicros())
  })

const messageOf = (error: { readonly message: string }): string => {
  const lines = error.message.split("\n")
  return lines[lines.length - 1]!.trim().replace(/^└─ /, "")
}

/** The account's widgets, ordered by stream name. Fails with `AccountNotFound`. */
export const listWidgets = (
  accountId: string
): Effect.Effect<ReadonlyArray<Widget>, AccountNotFound | StorageFailure, AccountStore> =>
  Effect.flatMap(AccountStore, (store) => store.listWidgets(accountId as AccountId))

/**
 * Every account, oldest first (contract section 14, `GET /admin/accounts`): id, name and creation time (integer
 * microseconds). Access keys exist only as digests and are never part of it.
 */
export const listAccounts: Effect.Effect<ReadonlyArray<Account>, StorageFailure, AccountStore> = Effect.flatMap(
  AccountStore,
  (store) => store.listAccounts
)

/** A widget and the latest entry of its stream (`null` when the stream is empty). */
export interface WidgetWithLatest {
  readonly widget: Widget
  readonly latest: StoredEntry | null
}

/**
 * The account's widgets, ordered by stream name, each with the latest entry of its stream (contract section 14:
 * the console shows each widget's latest value and its age), as an export read without `since` would give it. The
 * latest entries are read together (PostgreSQL answers latest-entry reads asked at once with one query). Fails with
 * `AccountNotFound`.
 */
export const listWidgetsWithLatest = (
  accountId: string
): Effect.Effect<ReadonlyArray<WidgetWithLatest>, AccountNotFound | StorageFailure, AccountStore | StreamStore> =>
  Effect.gen(function* () {
    const widgets = yield* listWidgets(accountId)
    const streams = yield* StreamStore
    return yield* Effect.forEach(
      widgets,
      (widget) =>
        Effect.map(streams.read(widget.id, latestOnly), (entries) => ({ widget, latest: entries[0] ?? null })),
      { concurrency: 256 }
    )
  })

/** Deletes a widget and its stream's data (contract section 7). Fails with `AccountNotFound` or `StreamNotFound`. */
export const deleteWidget = (
  accountId: string,
  streamName: string
): Effect.Effect<void, AccountNotFound | StreamNotFound | StorageFailure, AccountStore> =>
  Effect.flatMap(AccountStore, (store) => store.deleteWidget(accountId as AccountId, streamName))
