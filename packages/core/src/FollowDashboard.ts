import { Cause, Effect, Exit, Fiber, Option, Runtime } from "effect"
import type { FiringRule } from "./alerts/AlertStore.js"
import type { RuleWatch } from "./alerts/RuleWatch.js"
import type { ChangeFeed } from "./ChangeFeed.js"
import { StorageError, type StorageFailure } from "./Errors.js"
import { type Follower, followPageSize, followStream, type LiveSink } from "./Follow.js"
import type { StreamStore } from "./StreamStore.js"
import { formatTs, nowMicros } from "./Time.js"
import type { StreamId } from "./Widget.js"

/**
 * A dashboard's one event stream (docs/api.md section 11): `event: snapshot` with the recent entries of every tile, then
 * `entry` and `clear` events of every tile's stream as they are stored. Built on {@link followStream}, one
 * subscription per stream, so each tile gets the backlog-then-live hand-over of docs/api.md section 10: nothing stored
 * after the snapshot's reads is missed, nothing in the snapshot is sent again.
 *
 * The snapshot is written as the client takes it: tile after tile, a storage page at a time, each page
 * read once the sink can take more (`DashboardSink.writable`), so a client that does not read holds about a page of
 * the server's memory, whatever the dashboard holds. A snapshot is one event: what the tiles already written send
 * meanwhile waits until it ends, and when more than `maxHeldBytes` wait, the client is too slow and is let go
 * (`DashboardSink.overflowed`, docs/api.md section 10's bound).
 *
 * A layout change re-scopes the subscription at once (docs/api.md section 14, "Layout changes reach open pages"): the
 * streams no longer on the dashboard stop (nothing more of them is sent, also of what waited behind a snapshot), then
 * `event: layout` says the new name and tiles and a snapshot follows with the tiles it did not show before.
 *
 * Firing alert rules (docs/api.md section 11.5), when a {@link FiringSource} is given: the snapshot's `firing` names
 * the firing rules of every tile's stream, and `event: alerts` says them all again whenever they change (a rule of a
 * tile's stream fires, resolves, is renamed or deleted, in any process), after any snapshot being written.
 */

/** One stream a dashboard shows. */
export interface DashboardFeed {
  readonly streamName: string
  /** The widget's stream, or `null` when the tile's widget does not exist (any more). */
  readonly stream: StreamId | null
  /** How many of the most recent entries the snapshot holds (the snapshot rule: 1 for state tiles, ...). */
  readonly recent: number
  /** The widget's type (`null` without a widget): a widget made again with another type changes the layout. */
  readonly type?: string | null | undefined
  /**
   * A rotation's stream (docs/api.md section 15): the dashboards that show this stream, in the rotation's order. Each of
   * its `entry`, `clear` and `deleted` events then names them (`"dashboardId"`: the first, `"dashboardIds"`: all).
   * Absent for a dashboard's own stream.
   */
  readonly dashboardIds?: ReadonlyArray<string> | undefined
}

/**
 * A dashboard's layout as its event stream follows it: the `data` of its `layout` event and the streams it shows.
 * Made by `Dashboards.dashboardLayout` from the dashboard as its view token resolves it.
 */
export interface DashboardLayout {
  /** `{"name","tiles":[{"streamName","title"?,"x","y","w","h","type"}]}` (`type` `null` for a tile with no widget). */
  readonly data: string
  /** The dashboard's name and tiles as stored: a different key is a layout change. */
  readonly key: string
  /**
   * A short digest of `key` (URL-safe): a page names the layout it shows by it (`/d/<viewToken>/events?layout=`), and
   * a stream opened with another one starts with `event: layout`.
   */
  readonly version: string
  readonly feeds: ReadonlyArray<DashboardFeed>
}

/** Where a dashboard's events are written; each callback gets the event's `data` text. Synchronous. */
export interface DashboardSink {
  /**
   * A piece of a snapshot event's data; the pieces of one snapshot, joined in order, are
   * `{"tiles":{"<streamName>":[{"ts","point"}...],...},"deleted":["<streamName>",...]}`: each tile's entries
   * ascending, and in `deleted` the tiles whose widget does not exist (any more), which show "stream deleted" (issue
   * 22, item 6). `last` is true on its last piece. Nothing else is written between the first piece of a snapshot and
   * its last.
   */
  readonly snapshot: (part: string, last: boolean) => void
  /** `{"streamName","ts","point"}`: an entry stored (or replaced, same `ts`) after the snapshot. */
  readonly entry: (data: string) => void
  /** `{"streamName"}`: the stream was cleared. */
  readonly clear: (data: string) => void
  /** `{"streamName"}`: the tile's widget was deleted; nothing more comes for it. */
  readonly deleted: (data: string) => void
  /** The dashboard's name or tiles changed: {@link DashboardLayout}'s `data`. A snapshot of the new tiles follows. */
  readonly layout: (data: string) => void
  /**
   * `{"firing":{"<streamName>":["<rule name>",...],...}}`: the firing rules of the tiles' streams changed (see
   * {@link firingData}); sent only with a {@link FiringSource}.
   */
  readonly alerts?: (data: string) => void
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
  /** Bytes of events held while a snapshot is written, beyond which the client is let go (docs/api.md section 10). */
  readonly maxHeldBytes: number
  /** The most entries of one storage read (default {@link followPageSize}). */
  readonly pageSize?: number
  /**
   * The {@link DashboardLayout.version} of the layout the client shows, when it says: when it is not the layout's,
   * `event: layout` comes first, before the snapshot (a page reconnecting after a layout change it missed).
   */
  readonly shown?: string | undefined
  /** Where the firing rules of the tiles' streams come from; without it, neither `firing` nor `event: alerts`. */
  readonly firing?: FiringSource | undefined
}

/**
 * The firing alert rules a page shows (docs/api.md section 11.5): `read` answers the firing rules of some streams
 * (`AlertStore.firingRules`), `watch` tells which streams' rules changed (any process, within a quarter second).
 */
export interface FiringSource {
  readonly read: (streams: ReadonlyArray<StreamId>) => Effect.Effect<ReadonlyArray<FiringRule>, StorageFailure>
  readonly watch: RuleWatch
}

/**
 * The `firing` object of a snapshot and of `event: alerts`: `{"<streamName>":["<rule name>",...]}` with the names of
 * `rules` (as `AlertStore.firingRules` orders them) under the name of their stream (`names`); a stream without a
 * firing rule is absent.
 */
export const firingData = (rules: ReadonlyArray<FiringRule>, names: ReadonlyMap<StreamId, string>): string => {
  const firing: Record<string, Array<string>> = {}
  for (const rule of rules) {
    const name = names.get(rule.streamId)
    if (name !== undefined) (firing[name] ??= []).push(rule.name)
  }
  return JSON.stringify(firing)
}

/** A running dashboard subscription. */
export interface DashboardFollower {
  /**
   * Follows `layout` from now on, when it differs from the one followed: the streams it no longer shows stop at once;
   * `event: layout` (when its name or tiles changed) and a snapshot of the tiles it did not show before (a tile's
   * widget made again counts as new) follow once any snapshot being written is out. Does nothing once closed.
   */
  readonly relayout: (layout: DashboardLayout) => void
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

// The head of a stream's event data: `{"streamName":"s"`, and for a rotation's stream the dashboards showing it.
const eventHead = (streamName: string, dashboardIds: ReadonlyArray<string> | undefined): string =>
  dashboardIds === undefined
    ? nameField(streamName)
    : `${nameField(streamName)},"dashboardId":${JSON.stringify(dashboardIds[0] ?? null)},"dashboardIds":${JSON.stringify(dashboardIds)}`

/**
 * The `entry` data of live entries, made once for all the dashboards that show their stream under the same head (see
 * `eventHead`): by the entry's data (the same text for every subscriber, see `Follow.ts`), with the head it was made
 * for. At most {@link sharedEntriesMax} are kept (emptied when full): they only need to outlive one change's fan-out.
 */
const sharedEntries = new Map<string, { readonly head: string; readonly data: string }>()
const sharedEntriesMax = 256

const entryData = (head: string, data: string): string => {
  const known = sharedEntries.get(data)
  if (known !== undefined && known.head === head) return known.data
  if (sharedEntries.size >= sharedEntriesMax) sharedEntries.clear()
  const made = `${head},${data.slice(1)}`
  sharedEntries.set(data, { head, data: made })
  return made
}

/** One stream of the dashboard: its subscription, and its part of the snapshot being written. */
class TileFeed {
  follower: Follower | undefined = undefined
  closed = false
  /** Entries of its snapshot member written so far, and the `ts` (microseconds) of the last. */
  written = 0
  lastTs = -Infinity
  /** Its widget was found deleted while its member was written: it goes in the snapshot's `deleted`. */
  deleted = false
  /** One of its events went to the held ones while its member was written: the rest follow it there, in order. */
  diverted = false
  /** The head of its events' data (see `eventHead`). */
  head: string

  constructor(
    readonly streamName: string,
    readonly stream: StreamId | null,
    /** The largest snapshot size of the tiles showing this stream. */
    public recent: number,
    readonly type: string | null,
    public dashboardIds: Array<string> | undefined
  ) {
    this.head = eventHead(streamName, dashboardIds)
  }

  /** Follows the dashboards that show it now (a rotation's edit). */
  renamed(dashboardIds: Array<string> | undefined): void {
    this.dashboardIds = dashboardIds
    this.head = eventHead(this.streamName, dashboardIds)
  }
}

type EventKind = "entry" | "clear" | "deleted"

// The distinct streams of a layout's tiles, each with the largest snapshot size of the tiles showing it.
const tilesOf = (feeds: ReadonlyArray<DashboardFeed>): Map<string, TileFeed> => {
  const tiles = new Map<string, TileFeed>()
  for (const feed of feeds) {
    const known = tiles.get(feed.streamName)
    if (known === undefined)
      tiles.set(
        feed.streamName,
        new TileFeed(
          feed.streamName,
          feed.stream,
          Math.max(1, feed.recent),
          feed.type ?? null,
          feed.dashboardIds === undefined ? undefined : [...feed.dashboardIds]
        )
      )
    else {
      known.recent = Math.max(known.recent, feed.recent)
      if (feed.dashboardIds !== undefined) {
        const ids = known.dashboardIds ?? []
        for (const id of feed.dashboardIds) if (!ids.includes(id)) ids.push(id)
        known.renamed(ids)
      }
    }
  }
  return tiles
}

/** An event held while a snapshot is written. */
interface Held {
  readonly tile: TileFeed
  readonly kind: EventKind
  readonly data: string
}

// What a held event weighs beyond its text.
const heldOverhead = 48

class DashboardFollow implements DashboardFollower {
  /** The streams followed, by name. */
  private tiles: Map<string, TileFeed>
  private layoutKey: string
  /** What a layout change left to send: the `layout` event's data, and the tiles it added. */
  private pendingLayout: string | undefined = undefined
  private pendingTiles: Array<TileFeed> = []
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
  /** The `firing` last sent (in a snapshot or `event: alerts`); a watched change to send; the watch's end. */
  private firingSent: string | undefined = undefined
  private firingDirty = false
  private unwatch: (() => void) | undefined = undefined

  constructor(
    layout: DashboardLayout,
    private readonly runtime: Runtime.Runtime<StreamStore | ChangeFeed>,
    private readonly sink: DashboardSink,
    private readonly options: DashboardFollowOptions
  ) {
    this.pageSize = options.pageSize ?? followPageSize
    this.layoutKey = layout.key
    this.tiles = tilesOf(layout.feeds)
    if (options.shown !== undefined && options.shown !== layout.version) sink.layout(layout.data)
    this.run(this.snapshot([...this.tiles.values()]))
  }

  relayout(layout: DashboardLayout): void {
    if (this.closed) return
    const next = tilesOf(layout.feeds)
    let changed = false
    let retyped = false
    for (const [name, tile] of this.tiles) {
      const now = next.get(name)
      // The same stream; or its widget was deleted, which its own `deleted` event tells.
      if (now !== undefined && (now.stream === tile.stream || now.stream === null)) continue
      if (now !== undefined && now.type !== tile.type) retyped = true
      // Off the dashboard, or its widget made again: it stops now, and what it left waiting goes too.
      tile.closed = true
      tile.follower?.close()
      this.tiles.delete(name)
      changed = true
    }
    for (const [name, tile] of next) {
      const known = this.tiles.get(name)
      if (known !== undefined) {
        known.recent = Math.max(known.recent, tile.recent)
        if (JSON.stringify(known.dashboardIds) !== JSON.stringify(tile.dashboardIds)) known.renamed(tile.dashboardIds)
        continue
      }
      this.tiles.set(name, tile)
      this.pendingTiles.push(tile)
      changed = true
    }
    if (changed) this.dropClosed()
    if (layout.key !== this.layoutKey || retyped) {
      this.layoutKey = layout.key
      this.pendingLayout = layout.data
    } else if (!changed) return
    if (this.fiber === undefined) this.run(this.relayouts())
  }

  // Forgets the held events of the tiles no longer followed.
  private dropClosed(): void {
    this.held = this.held.filter((h) => !h.tile.closed)
    this.heldBytes = this.held.reduce((sum, h) => sum + h.data.length + heldOverhead, 0)
    this.pendingTiles = this.pendingTiles.filter((t) => !t.closed)
  }

  // Sends what layout changes left to send: each time the `layout` event, then the snapshot of the tiles added.
  private relayouts(): Effect.Effect<void, StorageFailure> {
    return Effect.gen(this, function* () {
      while (!this.closed && (this.pendingLayout !== undefined || this.pendingTiles.length > 0)) {
        const data = this.pendingLayout
        const added = this.pendingTiles.filter((t) => !t.closed)
        this.pendingLayout = undefined
        this.pendingTiles = []
        if (data !== undefined) this.sink.layout(data)
        yield* this.snapshot(added)
      }
    })
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
    this.unwatch?.()
    const fiber = this.fiber
    if (fiber !== undefined) Runtime.runFork(this.runtime)(Fiber.interrupt(fiber))
    else this.wakeIdlers()
  }

  private wakeIdlers(): void {
    const idlers = this.idlers
    this.idlers = []
    for (const idler of idlers) idler()
  }

  // Runs snapshots on a fiber of its own, one at a time; a storage failure (or a defect) ends the whole subscription.
  // A layout change that came while it ran is sent after it.
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
      if (
        !this.closed &&
        this.fiber === undefined &&
        (this.pendingLayout !== undefined || this.pendingTiles.length > 0)
      )
        return this.run(this.relayouts())
      if (!this.closed && this.fiber === undefined && this.firingDirty) return this.run(this.refreshFiring())
      if (this.fiber === undefined) this.wakeIdlers()
    })
  }

  /** Writes the snapshot of `tiles`, one storage page at a time, then the events held meanwhile. */
  private snapshot(tiles: ReadonlyArray<TileFeed>): Effect.Effect<void, StorageFailure> {
    return Effect.gen(this, function* () {
      this.holding = true
      this.members = 0
      this.sink.live(false)
      this.sink.snapshot('{"tiles":{', false)
      const deleted: Array<string> = []
      for (const tile of tiles) {
        if (tile.closed) continue
        if (tile.stream === null) {
          deleted.push(tile.streamName)
          continue
        }
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
        if (tile.deleted) deleted.push(tile.streamName)
        if (tile.written > 0) this.sink.snapshot("]", false)
        else if (!tile.deleted && !tile.closed)
          this.sink.snapshot(`${this.members++ > 0 ? "," : ""}${JSON.stringify(tile.streamName)}:[]`, false)
        yield* this.sink.writable
      }
      const firing = yield* this.readFiring()
      // The server's clock as the snapshot ends: a page measures its own clock's offset by it (stale ages).
      this.sink.snapshot(`},"deleted":${JSON.stringify(deleted)}${firing},"now":${formatTs(nowMicros())}}`, true)
      yield* this.release()
    })
  }

  /**
   * The snapshot's `,"firing":{...}` member ('' without a source): watches rule changes from the first snapshot on
   * (before its read, so that no change after it is missed), then reads the firing rules of every tile's stream.
   */
  private readFiring(): Effect.Effect<string, StorageFailure> {
    const source = this.options.firing
    if (source === undefined) return Effect.succeed("")
    return Effect.gen(this, function* () {
      if (this.unwatch === undefined) {
        this.unwatch = yield* source.watch.subscribe((streams) => this.firingChanged(streams))
        if (this.closed) this.unwatch()
      }
      this.firingDirty = false
      this.firingSent = yield* this.currentFiring(source)
      return `,"firing":${this.firingSent}`
    })
  }

  private currentFiring(source: FiringSource): Effect.Effect<string, StorageFailure> {
    const names = new Map<StreamId, string>()
    for (const tile of this.tiles.values())
      if (tile.stream !== null && !tile.closed) names.set(tile.stream, tile.streamName)
    return Effect.map(source.read([...names.keys()]), (rules) => firingData(rules, names))
  }

  // The rules of some streams changed: the firing rules are read again when one is a tile's, after any snapshot.
  private firingChanged(streams: ReadonlyArray<StreamId>): void {
    if (this.closed || this.firingDirty) return
    let shown = false
    for (const tile of this.tiles.values()) if (tile.stream !== null && streams.includes(tile.stream)) shown = true
    if (!shown) return
    this.firingDirty = true
    if (this.fiber === undefined) this.run(this.refreshFiring())
  }

  // Sends `event: alerts` when the firing rules differ from those last sent.
  private refreshFiring(): Effect.Effect<void, StorageFailure> {
    const source = this.options.firing
    if (source === undefined) return Effect.void
    return Effect.gen(this, function* () {
      this.firingDirty = false
      const firing = yield* this.currentFiring(source)
      if (this.closed || firing === this.firingSent) return
      this.firingSent = firing
      this.sink.alerts?.(`{"firing":${firing}}`)
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
        this.send(tile, "entry", entryData(tile.head, data))
      },
      clear: () => {
        if (tile.closed) return
        // Before any entry of its member: the member holds what follows the clear.
        if (this.current === tile && !tile.diverted && tile.written === 0) return
        this.send(tile, "clear", `${tile.head}}`)
      },
      deleted: () => {
        if (tile.closed) return
        // While its member is written (and none of its events wait behind the snapshot): in the snapshot's `deleted`.
        if (this.current === tile && !tile.diverted) tile.deleted = true
        else this.send(tile, "deleted", `${tile.head}}`)
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
 * Follows the streams of a dashboard's `layout` (see the module comment) on `runtime`: subscribes to each distinct
 * stream in turn with its most recent `recent` entries as its backlog (the largest `recent` of the tiles that show
 * it), writes them into the snapshot as they are read, then forwards each stream's changes. A tile whose widget does
 * not exist, or is found deleted when its turn comes, is named in the snapshot's `deleted` (not in its `tiles`); one
 * deleted later is announced by `event: deleted`. Returns at once; a storage failure while reading ends every
 * subscription and is told to `sink.failed`. Layout changes are given to `relayout`.
 */
export const followDashboard = (
  layout: DashboardLayout,
  runtime: Runtime.Runtime<StreamStore | ChangeFeed>,
  sink: DashboardSink,
  options: DashboardFollowOptions
): DashboardFollower => new DashboardFollow(layout, runtime, sink, options)
