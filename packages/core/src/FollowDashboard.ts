import { Effect, type Runtime } from "effect"
import type { ChangeFeed } from "./ChangeFeed.js"
import type { StorageFailure } from "./Errors.js"
import { type Follower, followStream, type LiveSink } from "./Follow.js"
import type { StreamStore } from "./StreamStore.js"
import type { StreamId } from "./Widget.js"

/**
 * A dashboard's one event stream (contract section 11): `event: snapshot` with the recent entries of every tile, then
 * `entry` and `clear` events of every tile's stream as they are stored. Built on {@link followStream}, one
 * subscription per stream, so each tile gets the backlog-then-live hand-over of contract section 10: nothing stored
 * after the snapshot's reads is missed, nothing in the snapshot is sent again.
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
  /** `{"tiles":{"<streamName>":[{"ts","point"}...]}}`, entries ascending; once, first. */
  readonly snapshot: (data: string) => void
  /** `{"streamName","ts","point"}`: an entry stored (or replaced, same `ts`) after the snapshot. */
  readonly entry: (data: string) => void
  /** `{"streamName"}`: the stream was cleared. */
  readonly clear: (data: string) => void
  /** `{"streamName"}`: the tile's widget was deleted; nothing more comes for it. */
  readonly deleted: (data: string) => void
  /** Catching up a stream from the storage failed; every subscription has ended (the page reconnects). */
  readonly failed: (error: StorageFailure) => void
}

/** A running dashboard subscription. */
export interface DashboardFollower {
  /** Ends every subscription (the client went away). Idempotent. */
  readonly close: () => void
}

const nameField = (streamName: string): string => `{"streamName":${JSON.stringify(streamName)}`

/** An entry's `{"ts","point"}` text with the stream name in front: `{"streamName":"s","ts":...,"point":...}`. */
export const dashboardEntryData = (streamName: string, entryData: string): string =>
  `${nameField(streamName)},${entryData.slice(1)}`

/** `{"streamName":"s"}`. */
export const streamNameData = (streamName: string): string => `${nameField(streamName)}}`

interface Held {
  readonly ts: number
  readonly data: string
}

/** One stream's state while the snapshot is being gathered, and its subscription. */
class TileFeed {
  held: Array<Held> = []
  deleted: boolean
  follower: Follower | undefined = undefined

  constructor(
    readonly streamName: string,
    readonly stream: StreamId | null,
    /** The largest snapshot size of the tiles showing this stream. */
    public recent: number
  ) {
    this.deleted = stream === null
  }

  // An entry stored before the snapshot is sent: replaces the held one with its ts, keeps the `recent` newest.
  hold(ts: number, data: string): void {
    const held = this.held
    let i = held.length
    while (i > 0 && held[i - 1]!.ts > ts) i--
    if (i > 0 && held[i - 1]!.ts === ts) held[i - 1] = { ts, data }
    else held.splice(i, 0, { ts, data })
    if (held.length > this.recent) held.splice(0, held.length - this.recent)
  }
}

/**
 * Follows the streams of a dashboard's tiles (see the module comment): subscribes to each distinct stream with the
 * most recent `recent` entries as its backlog (the largest `recent` of the tiles that show it), gathers them into
 * the snapshot, sends it, then forwards each stream's changes. A tile whose widget is deleted before the snapshot is
 * left out of it and announced by `deleted` after it. Fails with a storage failure while reading (nothing is left
 * subscribed); interrupting it ends the subscriptions too.
 */
export const followDashboard = (
  feeds: ReadonlyArray<DashboardFeed>,
  runtime: Runtime.Runtime<StreamStore | ChangeFeed>,
  sink: DashboardSink
): Effect.Effect<DashboardFollower, StorageFailure> =>
  Effect.suspend(() => {
    const tiles = new Map<string, TileFeed>()
    for (const feed of feeds) {
      const known = tiles.get(feed.streamName)
      if (known === undefined)
        tiles.set(feed.streamName, new TileFeed(feed.streamName, feed.stream, Math.max(1, feed.recent)))
      else known.recent = Math.max(known.recent, feed.recent)
    }
    let sent = false
    let closed = false
    const close = () => {
      if (closed) return
      closed = true
      for (const tile of tiles.values()) tile.follower?.close()
    }
    const sinkOf = (tile: TileFeed): LiveSink => ({
      entry: (ts, data) => {
        if (closed) return
        if (!sent) return tile.hold(ts, data)
        sink.entry(dashboardEntryData(tile.streamName, data))
      },
      clear: () => {
        if (closed) return
        if (!sent) tile.held = []
        else sink.clear(streamNameData(tile.streamName))
      },
      deleted: () => {
        if (closed) return
        if (!sent) {
          tile.deleted = true
          tile.held = []
        } else sink.deleted(streamNameData(tile.streamName))
      },
      failed: (error) => {
        if (closed) return
        close()
        sink.failed(error)
      },
      writable: Effect.void
    })
    const subscribe = Effect.forEach(
      [...tiles.values()].filter((tile) => tile.stream !== null),
      (tile) =>
        Effect.map(
          followStream(tile.stream!, { _tag: "Recent", count: tile.recent }, runtime).start(sinkOf(tile)),
          (follower) => {
            tile.follower = follower
          }
        ),
      { discard: true }
    )
    return subscribe.pipe(
      Effect.onExit((exit) => (exit._tag === "Success" ? Effect.void : Effect.sync(close))),
      Effect.map((): DashboardFollower => {
        let text = '{"tiles":{'
        let first = true
        for (const tile of tiles.values()) {
          if (tile.deleted) continue
          text += `${first ? "" : ","}${JSON.stringify(tile.streamName)}:[${tile.held.map((h) => h.data).join(",")}]`
          first = false
        }
        sent = true
        sink.snapshot(`${text}}}`)
        for (const tile of tiles.values()) {
          tile.held = []
          if (tile.deleted && tile.stream !== null) sink.deleted(streamNameData(tile.streamName))
        }
        return { close }
      })
    )
  })
