import { Cause, Effect, Exit, Fiber, Option, Runtime } from "effect"
import type { ChangeFeed } from "./ChangeFeed.js"
import { StorageError, type StorageFailure } from "./Errors.js"
import { type Follower, followPageSize, followStream, type LiveSink } from "./Follow.js"
import type { StreamStore } from "./StreamStore.js"
import type { StreamId } from "./Widget.js"

/**
 * A dashboard's one event stream (contract section 11): `event: snapshot` with the recent entries of every tile, then
 * `entry` and `clear` events of every tile's stream as they are stored. Built on {@link followStream}, one
 * subscription per stream, so each tile gets the backlog-then-live hand-over of contract section 10: nothing stored
 * after the snapshot's reads is missed, nothing in the snapshot is sent again.
 *
 * The snapshot is written as the client takes it (issue 22): tile after tile, a storage page at a time, each page
 * read once the sink can take more (`DashboardSink.writable`), so a client that does not read holds about a page of
 * the server's memory, whatever the dashboard holds. A snapshot is one event: what the tiles already written send
 * meanwhile waits until it ends, and when more than `maxHeldBytes` wait, the client is too slow and is let go
 * (`DashboardSink.overflowed`, contract section 10's bound).
 */

/** One stream a dashboard shows. */
export interface DashboardFeed {
  readonly streamName: string
  /** The widget's stream, or `null` when the tile's widget does not exist (any more). */
  readonly stream: StreamId | null
  /** How many of the most recent entries the snapshot holds (the snapshot rule: 1 for state tiles, ...). */
  readonly recent: number
}

/** Where a dashboard's events are written; each callback gets the event's `data` text. Synchronous. */
export interface DashboardSink {
  /**
   * A piece of a snapshot event's data; the pieces of one snapshot, joined in order, are
   * `{"tiles":{"<streamName>":[{"ts","point"}...],...}}` with each tile's entries ascending. `last` is true on its last
   * piece. Nothing else is written between the first piece of a snapshot and its last.
   */
  readonly snapshot: (part: string, last: boolean) => void
  /** `{"streamName","ts","point"}`: an entry stored (or replaced, same `ts`) after the snapshot. */
  readonly entry: (data: string) => void
  /** `{"streamName"}`: the stream was cleared. */
  readonly clear: (data: string) => void
  /** `{"streamName"}`: the tile's widget was deleted; nothing more comes for it. */
  readonly deleted: (data: string) => void
  /** Catching up a stream from the storage failed; every subscription has ended (the page reconnects). */
  readonly failed: (error: StorageFailure) => void
  /**
   * More than `maxHeldBytes` of events waited for a snapshot the client was not taking: every subscription has ended;
   * the adapter lets the client go (it reconnects and gets a fresh snapshot).
   */
  readonly overflowed: () => void
  /** Completes when the sink can take more: the snapshot's next storage page is read only then. */
  readonly writable: Effect.Effect<void>
  /**
   * `false` while a snapshot is being written (paced by {@link writable}), `true` once it and the events held behind
   * it are out: from then on nothing paces the writes, and the adapter bounds what it holds for a slow client.
   */
  readonly live: (isLive: boolean) => void
}

/** How a dashboard subscription bounds what it holds for its client. */
export interface DashboardFollowOptions {
  /** Bytes of events held while a snapshot is written, beyond which the client is let go (contract section 10). */
  readonly maxHeldBytes: number
  /** The most entries of one storage read (default {@link followPageSize}). */
  readonly pageSize?: number
}

/** A running dashboard subscription. */
export interface DashboardFollower {
  /** Ends every subscription (the client went away). Idempotent. */
  readonly close: () => void
  /** Completes once no snapshot is being written (at once when none is), or the subscription has ended. */
  readonly idle: Effect.Effect<void>
}

const nameField = (streamName: string): string => `{"streamName":${JSON.stringify(streamName)}`

/** An entry's `{"ts","point"}` text with the stream name in front: `{"streamName":"s","ts":...,"point":...}`. */
export const dashboardEntryData = (streamName: string, entryData: string): string =>
  `${nameField(streamName)},${entryData.slice(1)}`

/** `{"streamName":"s"}`. */
export const streamNameData = (streamName: string): string => `${nameField(streamName)}}`

/** One stream of the dashboard: its subscription, and its part of the snapshot being written. */
class TileFeed {
  follower: Follower | undefined = undefined
  closed = false
  /** Entries of its snapshot member written so far, and the `ts` (microseconds) of the last. */
  written = 0
  lastTs = -Infinity
  /** Its widget was found deleted while its member was written. */
  deleted = false
  /** One of its events went to the held ones while its member was written: the rest follow it there, in order. */
  diverted = false

  constructor(
    readonly streamName: string,
    readonly stream: StreamId | null,
    /** The largest snapshot size of the tiles showing this stream. */
    public recent: number
  ) {}
}

type EventKind = "entry" | "clear" | "deleted"

/** An event held while a snapshot is written. */
interface Held {
  readonly tile: TileFeed
  readonly kind: EventKind
  readonly data: string
}

// What a held event weighs beyond its text.
const heldOverhead = 48

class DashboardFollow implements DashboardFollower {
  private readonly tiles = new Map<string, TileFeed>()
  private readonly pageSize: number
  /** The tile whose snapshot member is being written. */
  private current: TileFeed | undefined = undefined
  /** Snapshot members written so far. */
  private members = 0
  /** True from a snapshot's first piece until the events held behind it are out. */
  private holding = false
  private held: Array<Held> = []
  private heldBytes = 0
  private closed = false
  private fiber: Fiber.RuntimeFiber<void, StorageFailure> | undefined = undefined
  private idlers: Array<() => void> = []

  constructor(
    feeds: ReadonlyArray<DashboardFeed>,
    private readonly runtime: Runtime.Runtime<StreamStore | ChangeFeed>,
    private readonly sink: DashboardSink,
    private readonly options: DashboardFollowOptions
  ) {
    this.pageSize = options.pageSize ?? followPageSize
    for (const feed of feeds) {
      const known = this.tiles.get(feed.streamName)
      if (known === undefined) {
        this.tiles.set(feed.streamName, new TileFeed(feed.streamName, feed.stream, Math.max(1, feed.recent)))
      } else known.recent = Math.max(known.recent, feed.recent)
    }
    this.run(this.snapshot([...this.tiles.values()]))
  }

  readonly idle: Effect.Effect<void> = Effect.async<void>((resume) => {
    if (this.fiber === undefined) return resume(Effect.void)
    this.idlers.push(() => resume(Effect.void))
  })

  close(): void {
    if (this.closed) return
    this.closed = true
    this.holding = false
    this.held = []
    this.heldBytes = 0
    for (const tile of this.tiles.values()) {
      tile.closed = true
      tile.follower?.close()
    }
    const fiber = this.fiber
    if (fiber !== undefined) Runtime.runFork(this.runtime)(Fiber.interrupt(fiber))
    else this.wakeIdlers()
  }

  private wakeIdlers(): void {
    const idlers = this.idlers
    this.idlers = []
    for (const idler of idlers) idler()
  }

  // Runs a snapshot on a fiber of its own; a storage failure (or a defect) ends the whole subscription.
  private run(job: Effect.Effect<void, StorageFailure>): void {
    const fiber = Runtime.runFork(this.runtime)(job)
    this.fiber = fiber
    fiber.addObserver((exit) => {
      if (this.fiber === fiber) this.fiber = undefined
      if (Exit.isFailure(exit) && !this.closed && !Cause.isInterruptedOnly(exit.cause)) {
        const failure = Cause.failureOption(exit.cause)
        this.close()
        this.sink.failed(Option.isSome(failure) ? failure.value : new StorageError({ cause: Cause.squash(exit.cause) }))
      }
      this.wakeIdlers()
    })
  }

  /** Writes the snapshot of `tiles`, one storage page at a time, then the events held meanwhile. */
  private snapshot(tiles: ReadonlyArray<TileFeed>): Effect.Effect<void, StorageFailure> {
    return Effect.gen(this, function* () {
      this.holding = true
      this.members = 0
      this.sink.live(false)
      this.sink.snapshot('{"tiles":{', false)
      for (const tile of tiles) {
        if (tile.closed || tile.stream === null) continue
        this.current = tile
        const follower = yield* followStream(
          tile.stream,
          { _tag: "Recent", count: tile.recent },
          this.runtime,
          this.pageSize
        ).start(this.tileSink(tile))
        this.current = undefined
        if (tile.closed) follower.close()
        else tile.follower = follower
        // A tile whose widget was deleted is left out; `deleted` follows the snapshot.
        if (tile.written > 0) this.sink.snapshot("]", false)
        else if (!tile.deleted)
          this.sink.snapshot(`${this.members++ > 0 ? "," : ""}${JSON.stringify(tile.streamName)}:[]`, false)
        yield* this.sink.writable
      }
      this.sink.snapshot("}}", true)
      yield* this.release()
    })
  }

  // Sends the events held while the snapshot was written, paced as the snapshot was; then the stream is live.
  private release(): Effect.Effect<void> {
    return Effect.gen(this, function* () {
      while (this.held.length > 0) {
        const batch = this.held
        this.held = []
        this.heldBytes = 0
        for (const { tile, kind, data } of batch) {
          if (this.closed) return
          if (tile.closed) continue
          this.sink[kind](data)
          yield* this.sink.writable
        }
      }
      if (this.closed) return
      this.holding = false
      this.sink.live(true)
    })
  }

  // An event of a tile outside its snapshot member: held while a snapshot is written, else sent.
  private send(tile: TileFeed, kind: EventKind, data: string): void {
    if (!this.holding) return this.sink[kind](data)
    if (this.current === tile) tile.diverted = true
    this.held.push({ tile, kind, data })
    this.heldBytes += data.length + heldOverhead
    if (this.heldBytes > this.options.maxHeldBytes) {
      this.close()
      this.sink.overflowed()
    }
  }

  private tileSink(tile: TileFeed): LiveSink {
    const name = tile.streamName
    return {
      entry: (ts, data) => {
        if (tile.closed) return
        // Into its snapshot member while that is being written: ascending, at most `recent` entries (the backlog and
        // what was stored while it was read); anything else follows the snapshot as an event.
        if (this.current === tile && !tile.diverted && tile.written < tile.recent && ts > tile.lastTs) {
          const head = tile.written === 0 ? `${this.members++ > 0 ? "," : ""}${JSON.stringify(name)}:[` : ","
          tile.written++
          tile.lastTs = ts
          return this.sink.snapshot(head + data, false)
        }
        this.send(tile, "entry", dashboardEntryData(name, data))
      },
      clear: () => {
        if (tile.closed) return
        // Before any entry of its member: the member holds what follows the clear.
        if (this.current === tile && !tile.diverted && tile.written === 0) return
        this.send(tile, "clear", streamNameData(name))
      },
      deleted: () => {
        if (tile.closed) return
        if (this.current === tile) tile.deleted = true
        this.send(tile, "deleted", streamNameData(name))
      },
      failed: (error) => {
        if (this.closed) return
        this.close()
        this.sink.failed(error)
      },
      writable: this.sink.writable
    }
  }
}

/**
 * Follows the streams of a dashboard's tiles (see the module comment) on `runtime`: subscribes to each distinct
 * stream in turn with its most recent `recent` entries as its backlog (the largest `recent` of the tiles that show
 * it), writes them into the snapshot as they are read, then forwards each stream's changes. A tile whose widget does
 * not exist is left out of the snapshot; one deleted while the snapshot is written is announced by `deleted` after
 * it. Returns at once; a storage failure while reading ends every subscription and is told to `sink.failed`.
 */
export const followDashboard = (
  feeds: ReadonlyArray<DashboardFeed>,
  runtime: Runtime.Runtime<StreamStore | ChangeFeed>,
  sink: DashboardSink,
  options: DashboardFollowOptions
): DashboardFollower => new DashboardFollow(feeds, runtime, sink, options)
