import { Effect, Either, Fiber, Option, Runtime, Schema } from "effect"
import { AccountStore } from "./AccountStore.js"
import { ChangeFeed, type StreamChange } from "./ChangeFeed.js"
import { type Forbidden, InvalidSince, type StorageFailure, StreamNotFound } from "./Errors.js"
import { renderEntries, type StoredEntry, StreamStore } from "./StreamStore.js"
import { type Micros, micros, sinceBound } from "./Time.js"
import { authenticate } from "./UseCases.js"
import type { StreamId } from "./Widget.js"

/**
 * Following a stream live (contract section 10): the backlog a subscriber asked for, then every change as it is
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
}

/** A running subscription. */
export interface Follower {
  /** Ends it (the client went away): no more callbacks. Idempotent. */
  readonly close: () => void
}

/** Where a subscription starts (contract section 10, "Start"). */
export type FollowStart =
  /** Neither `Last-Event-ID` nor `since`: the latest entry (if any), then new ones. */
  | { readonly _tag: "Latest" }
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

/** Entries read per backlog page. */
export const followPageSize = 1000

/**
 * Changes a subscriber buffers while it reads the backlog. Beyond this many, it drops them and reads the storage
 * once more after the backlog (as after a `Gap`), so memory stays bounded however fast the stream is written.
 */
export const maxPendingChanges = 10_000

/** The bound below every `ts` (entries with `ts > -1` are all of them, `ts` 0 included). */
const beforeAll = micros(-1)

const decodeSeconds = Schema.decodeUnknownEither(Schema.NumberFromString.pipe(Schema.finite(), Schema.nonNegative()))

const parseCursor = (text: string, what: string): Either.Either<Micros, InvalidSince> => {
  const decoded = decodeSeconds(text.trim() === "" ? "x" : text)
  return Either.isLeft(decoded)
    ? Either.left(new InvalidSince({ message: `${what} must be a non-negative number of seconds, got ${JSON.stringify(text)}` }))
    : Either.right(sinceBound(decoded.right))
}

/**
 * Where a subscription starts from what the client sent (contract section 10): `Last-Event-ID` wins over `since`.
 * Fails with `InvalidSince` when the one used is not a non-negative number of seconds.
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
 * Resolves a live subscription to a stream (contract section 10). Everything that refuses it is decided here, before
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
        message: `no widget with stream name ${JSON.stringify(streamName)} in this account`
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
        return this.catchUp(start)
      }),
      Effect.onExit((exit) => (exit._tag === "Success" ? Effect.void : Effect.sync(() => this.close()))),
      Effect.as<Follower>({ close: () => this.close() })
    )
  }

  private readonly onChange = (change: StreamChange): void => {
    if (this.mode === "live") return this.apply(change)
    if (this.mode === "closed") return
    if (this.pending.length >= maxPendingChanges) {
      this.pending = []
      this.overflowed = true
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
    this.unsubscribe()
    if (this.fiber !== undefined) {
      const fiber = this.fiber
      this.fiber = undefined
      Runtime.runFork(this.runtime)(Fiber.interrupt(fiber))
    }
  }

  private send(entry: StoredEntry): void {
    if (this.sentMax === null || entry.ts > this.sentMax) this.sentMax = entry.ts
    this.sink.entry(entry.ts, renderEntries([entry]))
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
          if (e.fresh && this.sentMax !== null && e.ts <= this.sentMax) continue
          this.send(e)
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
        this.fiber = Runtime.runFork(this.runtime)(
          this.catchUp({ _tag: "Resume", after: this.sentMax ?? beforeAll }).pipe(
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

  // Reads what the client is missing from the storage, then applies the changes buffered meanwhile and goes live.
  private catchUp(start: FollowStart): Effect.Effect<void, StorageFailure> {
    return Effect.gen(this, function* () {
      for (let round = start, first = true; ; round = { _tag: "Resume", after: this.sentMax ?? beforeAll }, first = false) {
        this.overflowed = false
        const state = yield* this.store.liveState(this.stream)
        if (this.closed) return
        if (Option.isNone(state)) return this.end()
        const lastClear = state.value.lastClear
        let cursor: Micros | null
        if (round._tag === "Latest") {
          cursor = null
          this.knownClear = lastClear
          const latest = yield* this.store.read(this.stream, { since: null, limit: null })
          if (this.closed) return
          for (const e of latest) this.send(e)
        } else if (
          round._tag === "Resume" &&
          lastClear !== null &&
          // A client resuming by its own id missed a clear newer than that id; a subscriber catching up again (after a
          // Gap) missed one newer than the last it knows of.
          (first ? round.after < lastClear : this.knownClear === null || lastClear > this.knownClear)
        ) {
          // The client missed a clear: it gets the clear, then every entry stored since.
          this.sendClear(lastClear)
          this.sentMax = beforeAll
          cursor = beforeAll
        } else {
          if (this.knownClear === null || (lastClear !== null && lastClear > this.knownClear)) {
            this.knownClear = lastClear
          }
          cursor = round._tag === "Since" ? round.since : round.after
          if (this.sentMax === null || cursor > this.sentMax) this.sentMax = cursor
        }
        while (cursor !== null) {
          const page = yield* this.store.read(this.stream, { since: cursor, limit: this.pageSize })
          if (this.closed) return
          for (const e of page) this.send(e)
          cursor = page.length < this.pageSize ? null : page[page.length - 1]!.ts
          if (cursor !== null) yield* this.sink.writable
        }
        if (this.drain()) return
      }
    })
  }

  // Applies the changes buffered while catching up and goes live; false when another catch-up round is needed.
  private drain(): boolean {
    while (this.mode === "catchingUp") {
      if (this.overflowed) return false
      const batch = this.pending
      this.pending = []
      let from = 0
      for (let i = 0; i < batch.length; i++) {
        const change = batch[i]!
        if (change._tag === "Cleared" && this.knownClear !== null && change.at <= this.knownClear) from = i + 1
      }
      for (let i = from; i < batch.length; i++) {
        const change = batch[i]!
        if (change._tag === "Gap") {
          this.pending = batch.slice(i + 1).concat(this.pending)
          return false
        }
        this.apply(change)
        if (this.closed) return true
      }
      if (this.pending.length === 0) this.mode = "live"
    }
    return true
  }
}
