import { Effect, Either, Fiber, Option, Runtime } from "effect"
import { AccountStore } from "./AccountStore.js"
import { ChangeFeed, type StreamChange } from "./ChangeFeed.js"
import { type Forbidden, InvalidSince, quoted, type StorageFailure, StreamNotFound } from "./Errors.js"
import { renderEntries, type StoredEntry, StreamStore } from "./StreamStore.js"
import { MAX_SECONDS, type Micros, MICROS_PER_SECOND, micros, sinceFromText } from "./Time.js"
import { authenticate } from "./usecases/Authenticate.js"
import type { StreamId } from "./Widget.js"

/**
 * Following a stream live (docs/api.md section 10): the backlog a subscriber asked for, then every change as it is
 * stored, handed over so that no entry is missed or sent twice. Written once here; the HTTP adapter only turns what
 * a {@link LiveSink} receives into Server-Sent Events, and the storage adapters only publish changes.
 */

/**
 * Where a subscriber writes what it is sent. Every callback is synchronous. The HTTP adapter writes each as one
 * Server-Sent Event.
 */
export interface LiveSink {
  /** An entry: `ts` in microseconds (the event `id`) and its data, `{"ts":<seconds>,"point":<point>}` as in a read. */
  readonly entry: (ts: Micros, data: string) => void
  /** The stream was cleared; `id` (microseconds) is greater than every `ts` it cleared. */
  readonly clear: (id: Micros) => void
  /** The widget was deleted. Nothing follows; the subscription has ended. */
  readonly deleted: () => void
  /** Catching up from the storage failed; the subscription has ended (the client may resume from its last id). */
  readonly failed: (error: StorageFailure) => void
  /**
   * Completes when the sink can take more of the backlog: the backlog is read a page at a time, and the next page is
   * read only once this completes, so a slow client holds at most about a page in memory.
   */
  readonly writable: Effect.Effect<void>
  /**
   * Told `true` when the subscriber starts sending live changes (the backlog is done) and `false` when it goes back to
   * reading the storage (after a `Gap`). While live, nothing paces the sends: the HTTP adapter bounds what it holds
   * for a slow client then (docs/api.md section 10, 1 MiB).
   */
  readonly live?: (isLive: boolean) => void
}

/** A running subscription. */
export interface Follower {
  /** Ends it (the client went away): no more callbacks. Idempotent. */
  readonly close: () => void
}

/** Where a subscription starts (docs/api.md section 10, "Start"). */
export type FollowStart =
  /** Neither `Last-Event-ID` nor `since`: the latest entry (if any), then new ones. */
  | { readonly _tag: "Latest" }
  /** The `count` (>= 1) most recent entries, then new ones (a dashboard tile's snapshot, docs/api.md section 11). */
  | { readonly _tag: "Recent"; readonly count: number }
  /** `since`: entries with `ts > since` (microseconds, see `sinceBound`), then new ones. */
  | { readonly _tag: "Since"; readonly since: Micros }
  /**
   * `Last-Event-ID`: as `since`, and if the stream was cleared after that id, a clear first and then every entry
   * stored since the clear.
   */
  | { readonly _tag: "Resume"; readonly after: Micros }

/** A stream resolved for following: call `start` once the client is ready to receive. */
export interface Following {
  readonly stream: StreamId
  /**
   * Subscribes to the stream's changes, sends the backlog (pacing it by `sink.writable`), hands over to live changes,
   * and succeeds with the running subscription. Fails with a storage failure while reading the backlog (nothing is
   * left subscribed); interrupting it ends the subscription too.
   */
  readonly start: (sink: LiveSink) => Effect.Effect<Follower, StorageFailure>
}

/** What the client sent: the `since` query parameter and the `Last-Event-ID` header, as they arrived. */
export interface FollowParams {
  readonly since?: string | undefined
  readonly lastEventId?: string | undefined
}

/** The most entries read per backlog page. */
export const followPageSize = 1000

/**
 * The bytes of stored points a backlog page aims at: after each page, the next one asks for as many entries as
 * would fill this many bytes at the page's average entry size (at most the page size, at least 1). With the
 * pacing of `LiveSink.writable`, a client that does not read holds about one page in memory, whatever its entries
 * weigh (docs/api.md section 10's bound applies to every event stream). 128 KiB: with PostgreSQL's entries
 * in blocks, 30 clients that never read a snapshot of ~6 KB entries grew the server by 124-131 MiB at
 * 256 KiB pages against 41-43 MiB at 128 KiB (not in proportion: see docs/benchmarks.md); entries of a few hundred
 * bytes still fill a page of `followPageSize` (1,000).
 */
export const followPageBytes = 128 * 1024

/** The entries of a catch-up's first page, before the size of the stream's entries is known. */
const firstPageSize = 8

/**
 * Changes a subscriber buffers while it reads the backlog. Beyond this many, or beyond {@link maxPendingBytes} of
 * stored points, it drops them and reads the storage once more after the backlog (as after a `Gap`), so memory stays
 * bounded however fast the stream is written and however slowly the client reads.
 */
export const maxPendingChanges = 10_000

/** The bytes of stored points a subscriber buffers while it reads the backlog (see {@link maxPendingChanges}). */
export const maxPendingBytes = 1024 * 1024

/** About what an entry weighs in memory and on the wire beyond its point's JSON text. */
const entryOverhead = 32

// What a buffered change weighs (see `maxPendingBytes`).
const changeBytes = (change: StreamChange): number => {
  if (change._tag !== "Stored") return entryOverhead
  let bytes = 0
  for (let i = 0; i < change.entries.length; i++) bytes += change.entries[i]!.json.length + entryOverhead
  return bytes
}

// The entries of the next backlog page: about `followPageBytes` at the average size of the page just read.
const nextPageSize = (entries: ReadonlyArray<StoredEntry>, pageSize: number): number => {
  let bytes = 0
  for (let i = 0; i < entries.length; i++) bytes += entries[i]!.json.length + entryOverhead
  const average = bytes / Math.max(1, entries.length)
  return Math.max(1, Math.min(pageSize, Math.floor(followPageBytes / average)))
}

/**
 * The `{"ts","point"}` text of entries of live changes, rendered once for all the subscribers of their stream: the
 * feed gives each of them the same entry object, and the same text lets the HTTP adapter serialise the event once.
 */
const renderedLive = new WeakMap<StoredEntry, string>()

const renderLive = (entry: StoredEntry): string => {
  let text = renderedLive.get(entry)
  if (text === undefined) renderedLive.set(entry, (text = renderEntries([entry])))
  return text
}

/** The bound below every `ts` (entries with `ts > -1` are all of them, `ts` 0 included). */
const beforeAll = micros(-1)

// The largest cursor that can still deliver something: no entry has a `ts` above MAX_SECONDS.
const maxCursor = MAX_SECONDS * MICROS_PER_SECOND

const parseCursor = (text: string, what: string): Either.Either<Micros, InvalidSince> => {
  // The same rule as the export read's `since` (a decimal number of seconds; `0x10` is refused), and no larger than
  // the largest `ts`: a stream following from beyond it would stay silent for ever.
  const bound = sinceFromText(text)
  if (bound === undefined) {
    return Either.left(
      new InvalidSince({ message: `${what} must be a non-negative decimal number of seconds, got ${quoted(text)}` })
    )
  }
  if (bound > maxCursor) {
    return Either.left(
      new InvalidSince({
        message: `${what} must be at most ${MAX_SECONDS} seconds (the largest ts there can be), got ${quoted(text)}`
      })
    )
  }
  return Either.right(bound)
}

/**
 * Where a subscription starts from what the client sent (docs/api.md section 10): `Last-Event-ID` wins over `since`.
 * Fails with `InvalidSince` when the one used is not a non-negative number of seconds, or is above `MAX_SECONDS`
 * (nothing could ever follow it).
 */
export const followStart = (params: FollowParams): Either.Either<FollowStart, InvalidSince> => {
  if (params.lastEventId !== undefined) {
    return Either.map(parseCursor(params.lastEventId, "Last-Event-ID"), (after) => ({ _tag: "Resume", after }))
  }
  if (params.since !== undefined) {
    return Either.map(parseCursor(params.since, "since"), (since) => ({ _tag: "Since", since }))
  }
  return Either.right({ _tag: "Latest" })
}

/**
 * Resolves a live subscription to a stream (docs/api.md section 10). Everything that refuses it is decided here, before
 * anything is sent: `Forbidden` (unknown key), `InvalidSince` (bad `since` or `Last-Event-ID`), `StreamNotFound`, a
 * storage failure.
 */
export const follow = (
  accessKey: string,
  streamName: string,
  params: FollowParams
): Effect.Effect<
  Following,
  Forbidden | InvalidSince | StreamNotFound | StorageFailure,
  AccountStore | StreamStore | ChangeFeed
> =>
  Effect.gen(function* () {
    const accountId = yield* authenticate(accessKey)
    const start = yield* followStart(params)
    const widget = (yield* Effect.flatMap(AccountStore, (s) => s.findWidgets(accountId, [streamName]))).get(streamName)
    if (widget === undefined) {
      return yield* new StreamNotFound({
        message: `no widget with stream name ${quoted(streamName)} in this account`
      })
    }
    return followStream(widget.id, start, yield* Effect.runtime<StreamStore | ChangeFeed>())
  })

/**
 * The subscription of one stream from `start`, without the account checks of {@link follow} (for callers that
 * resolved the stream themselves, such as a dashboard's event stream).
 */
export const followStream = (
  stream: StreamId,
  start: FollowStart,
  runtime: Runtime.Runtime<StreamStore | ChangeFeed>,
  pageSize: number = followPageSize
): Following => ({
  stream,
  start: (sink) =>
    Effect.suspend(() => {
      const subscriber = new Subscriber(stream, sink, runtime, pageSize)
      return subscriber.begin(start)
    })
})

/**
 * One subscriber's hand-over state machine. It subscribes first, then reads the backlog while buffering the changes
 * that arrive meanwhile ("catching up"), then applies the buffered changes and every later one as it comes ("live").
 *
 * What makes the hand-over exact:
 * - `sentMax` is the highest `ts` the client holds since its last clear. A fresh entry (see `ChangedEntry.fresh`) at
 *   or below it was read by the backlog (it was above every `ts` when stored, so the backlog page that reached past
 *   it was read after it was stored) and is skipped; every other change is sent. Entries that are not fresh (a
 *   timestamped push replacing or back-filling) are always sent: the contract sends a replaced entry again.
 * - `knownClear` is the last clear the client's view reflects. Buffered changes up to a clear at or below the one the
 *   catch-up read are dropped: the backlog was read after them. A later clear is sent, and resets `sentMax` to its
 *   id, because the client drops what it held: entries after it are sent (again).
 * - A `Gap`, or more buffered changes than {@link maxPendingChanges}, starts another catch-up from `sentMax`.
 */
class Subscriber {
  private mode: "catchingUp" | "live" | "closed" = "catchingUp"
  private pending: Array<StreamChange> = []
  private pendingBytes = 0
  private overflowed = false
  private sentMax: Micros | null = null
  private knownClear: Micros | null = null
  private unsubscribe: () => void = () => {}
  private fiber: Fiber.RuntimeFiber<void, StorageFailure> | undefined = undefined
  private readonly store: StreamStore["Type"]

  constructor(
    private readonly stream: StreamId,
    private readonly sink: LiveSink,
    private readonly runtime: Runtime.Runtime<StreamStore | ChangeFeed>,
    private readonly pageSize: number
  ) {
    this.store = Runtime.runSync(runtime)(StreamStore)
  }

  begin(start: FollowStart): Effect.Effect<Follower, StorageFailure> {
    const feed = Runtime.runSync(this.runtime)(ChangeFeed)
    return feed.subscribe(this.stream, this.onChange).pipe(
      Effect.flatMap((unsubscribe) => {
        this.unsubscribe = unsubscribe
        return this.catchUp(start, true)
      }),
      Effect.onExit((exit) => (exit._tag === "Success" ? Effect.void : Effect.sync(() => this.close()))),
      Effect.as<Follower>({ close: () => this.close() })
    )
  }

  private readonly onChange = (change: StreamChange): void => {
    if (this.mode === "live") return this.apply(change)
    if (this.mode === "closed") return
    this.pendingBytes += changeBytes(change)
    if (this.pending.length >= maxPendingChanges || this.pendingBytes > maxPendingBytes) {
      // What is dropped (this change too) is read again from the storage after the backlog.
      this.pending = []
      this.pendingBytes = 0
      this.overflowed = true
      return
    }
    this.pending.push(change)
  }

  // A method, not a field read, so that TypeScript does not narrow `mode` across the awaits of a catch-up.
  private get closed(): boolean {
    return this.mode === "closed"
  }

  close(): void {
    if (this.mode === "closed") return
    this.mode = "closed"
    this.pending = []
    this.pendingBytes = 0
    this.unsubscribe()
    if (this.fiber !== undefined) {
      const fiber = this.fiber
      this.fiber = undefined
      Runtime.runFork(this.runtime)(Fiber.interrupt(fiber))
    }
  }

  // Sends an entry read from the storage, or one of a live change (`live`: its text is shared, see `renderLive`).
  private send(entry: StoredEntry, live = false): void {
    if (this.sentMax === null || entry.ts > this.sentMax) this.sentMax = entry.ts
    this.sink.entry(entry.ts, live ? renderLive(entry) : renderEntries([entry]))
  }

  private sendClear(at: Micros): void {
    this.knownClear = at
    this.sentMax = at
    this.sink.clear(at)
  }

  private end(): void {
    this.close()
    this.sink.deleted()
  }

  // Applies one change to a live (or just caught-up) subscriber. A Gap switches back to catching up.
  private apply(change: StreamChange): void {
    switch (change._tag) {
      case "Stored": {
        const entries = change.entries
        for (let i = 0; i < entries.length; i++) {
          const e = entries[i]!
          // A fresh entry at or below what the client holds was sent by a read; one at or below the last clear it knows
          // of was stored before that clear and deleted by it (its notice may arrive late, after a read saw the clear).
          if (e.fresh && this.sentMax !== null && e.ts <= this.sentMax) continue
          if (e.fresh && this.knownClear !== null && e.ts <= this.knownClear) continue
          this.send(e, true)
        }
        return
      }
      case "Cleared":
        if (this.knownClear === null || change.at > this.knownClear) this.sendClear(change.at)
        return
      case "Deleted":
        return this.end()
      case "Gap":
        this.mode = "catchingUp"
        this.sink.live?.(false)
        this.fiber = Runtime.runFork(this.runtime)(
          this.catchUp({ _tag: "Resume", after: this.sentMax ?? beforeAll }, false).pipe(
            Effect.catchAll((error) =>
              Effect.sync(() => {
                if (this.mode === "closed") return
                this.close()
                this.sink.failed(error)
              })
            ),
            Effect.asVoid
          )
        )
        return
    }
  }

  /**
   * Reads what the client is missing from the storage, then applies the changes buffered meanwhile and goes live.
   * `opening` is true for the first catch-up of a connection, when the client's view is only known from `start`.
   *
   * Every read returns the stream's last clear as of the same moment as its entries (`StreamStore.readLive`), so a
   * clear committed between two backlog pages is noticed: the client is sent the clear and the backlog is read again
   * from the start (everything it held was deleted), rather than the clear arriving after entries that follow it.
   */
  private catchUp(start: FollowStart, opening: boolean): Effect.Effect<void, StorageFailure> {
    return Effect.gen(this, function* () {
      let round = start
      let first = opening
      for (;;) {
        this.overflowed = false
        let cursor: Micros | null =
          round._tag === "Latest" || round._tag === "Recent" ? null : round._tag === "Since" ? round.since : round.after
        if (cursor !== null && (this.sentMax === null || cursor > this.sentMax)) this.sentMax = cursor
        const recent = round._tag === "Recent" ? round.count : 1
        let limit = Math.min(this.pageSize, firstPageSize)
        for (;;) {
          // The most recent entries are read a page at a time too: the oldest `limit` of them, then the pages after.
          const asked = cursor === null ? Math.min(recent, limit) : limit
          const read = yield* this.store.readLive(
            this.stream,
            cursor === null
              ? { _tag: "Recent", count: recent, limit: asked }
              : { _tag: "After", since: cursor, limit: asked }
          )
          if (this.closed) return
          if (Option.isNone(read)) return this.end()
          const { entries, lastClear } = read.value
          if (first) {
            first = false
            this.knownClear = lastClear
            // A client resuming by its own id missed a clear newer than that id: the clear, then everything since.
            if (round._tag === "Resume" && lastClear !== null && round.after < lastClear) {
              this.restartAfterClear(lastClear)
              cursor = beforeAll
              continue
            }
          } else if (lastClear !== null && (this.knownClear === null || lastClear > this.knownClear)) {
            // Cleared since the client's view was last brought up to date: it drops what it holds; read it all again.
            this.restartAfterClear(lastClear)
            cursor = beforeAll
            continue
          }
          for (const e of entries) this.send(e)
          // A short page is the last; so is a read of the most recent entries that asked for all of them.
          if (entries.length < asked || (cursor === null && asked === recent)) break
          cursor = entries[entries.length - 1]!.ts
          limit = nextPageSize(entries, this.pageSize)
          yield* this.sink.writable
        }
        if (this.drain()) return
        round = { _tag: "Resume", after: this.sentMax ?? beforeAll }
      }
    })
  }

  // The client is sent a clear; what it holds after that is what the catch-up reads next, from the first entry.
  private restartAfterClear(at: Micros): void {
    this.sendClear(at)
    this.sentMax = beforeAll
  }

  // Applies the changes buffered while catching up and goes live; false when another catch-up round is needed.
  private drain(): boolean {
    while (this.mode === "catchingUp") {
      if (this.overflowed) return false
      const batch = this.pending
      this.pending = []
      this.pendingBytes = 0
      let from = 0
      for (let i = 0; i < batch.length; i++) {
        const change = batch[i]!
        if (change._tag === "Cleared" && this.knownClear !== null && change.at <= this.knownClear) from = i + 1
      }
      for (let i = from; i < batch.length; i++) {
        const change = batch[i]!
        if (change._tag === "Gap") {
          this.pending = batch.slice(i + 1).concat(this.pending)
          this.pendingBytes = this.pending.reduce((sum, c) => sum + changeBytes(c), 0)
          return false
        }
        this.apply(change)
        if (this.closed) return true
      }
      if (this.pending.length === 0) {
        this.mode = "live"
        this.sink.live?.(true)
      }
    }
    return true
  }
}
