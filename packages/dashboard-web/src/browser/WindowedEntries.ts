import type { Entry } from "../Model.js"
import type { WidgetType } from "../WidgetType.js"
import { serverClockOffset, serverNow } from "./clock.js"
import {
  boundsAt,
  type Bounds,
  dropBefore,
  isLive,
  numberHeadEntries,
  rangeQuery,
  type TimeWindow,
  within
} from "./timeWindow.js"
import { mergeEntries, toEntry } from "./TileData.js"

/** What a {@link WindowedEntries} needs of its tile. */
export interface WindowedTile {
  readonly streamName: string
  readonly type: WidgetType
  /** The path of the page's range read, `/d/<viewToken>/range` or `/r/<viewToken>/range` (docs/api.md section 6.1). */
  readonly rangePath: string
  /** The chart's width in CSS pixels now (the read's `points`). */
  readonly width: () => number
  /** Asks the tile to draw again (the read came back, or entries left the window). */
  readonly redraw: () => void
}

/** Seconds between two looks at a live window (entries that left it go within this and one more draw). */
const slideSeconds = 1

/** Seconds before a failed read is tried again. */
const retrySeconds = 5

// Entries, ascending, with `more` (ascending) added, same `ts` replaced, unbounded: a window holds what the read and
// the live stream gave it, and the slide and the re-read bound it.
const merge = mergeEntries
const ascending = (entries: ReadonlyArray<Entry>): ReadonlyArray<Entry> => [...entries].sort((a, b) => a.ts - b.ts)

/**
 * The entries of one tile's window of time (docs/api.md section 15.1): read once from the page's range read, then
 * extended by the live entries the page's event stream brings, as they come (not re-bucketed). A live window slides
 * with the server's clock: every second, entries older than its start leave it and the tile draws again. A chart
 * reads about one entry per pixel of its width (`rangeQuery`); after more live entries than four a pixel (and at least
 * 2,000) it reads the window again, so a screen left open for weeks holds a bounded number of entries. A number tile reads
 * the first entries of its window, and beside them the stream's latest entry (the first ones may stop short of it, and
 * the page's snapshot may come later than the read); when the slide has taken all of them it reads again, so its
 * first value is always the window's first. A fixed window (`from`..`to`) takes only entries within it. A snapshot's entries join the
 * window; a snapshot after the first (the page connected again) reads the window again, since entries may have been
 * missed meanwhile.
 *
 * The first read starts at once, before the page's event stream has said the server's time: the window's start is
 * then reckoned by the page's own clock, and read again when the first snapshot shows that clock off by more than a
 * pixel of the chart's width. A read that fails (the network, a 404 once the tile left the view) is tried again after
 * 5 seconds.
 */
export class WindowedEntries {
  private held: ReadonlyArray<Entry> = []
  /** The generation of the read under way, `undefined` when none. */
  private reading: number | undefined
  private generation = 0
  /** Entries that arrived while the read was under way: its answer may predate them. */
  private arrived: Array<Entry> = []
  /** Live entries appended since the last read. */
  private appended = 0
  /** The `points` of the last read (charts). */
  private points = 0
  /** A number tile's head: the `ts` of the last entry of a read that did not reach the window's end, else undefined. */
  private headEnd: number | undefined
  private readySince = false
  private readonly slide: ReturnType<typeof setInterval> | undefined
  private retry: ReturnType<typeof setTimeout> | undefined
  private lastDrawnAt = 0
  /** The server's clock offset the last read reckoned with (`clock.ts`). */
  private offsetAtRead = 0
  private snapshots = 0

  constructor(
    readonly window: TimeWindow,
    private readonly tile: WindowedTile,
    /** What the tile held before (its recent entries): shown, within the window, until the read answers. */
    recent: ReadonlyArray<Entry>
  ) {
    const { from, to } = this.accepts()
    this.held = within(recent, from, to)
    this.slide = isLive(window) ? setInterval(() => this.onSlide(), slideSeconds * 1000) : undefined
    this.read()
  }

  /** The window's bounds now, by the server's clock. */
  bounds(): Bounds {
    return boundsAt(this.window, serverNow())
  }

  // The span of `ts` the window takes now: a live one has no end (an entry the server stamped a moment ago may lie
  // ahead of the page's estimate of the server's clock).
  private accepts(): { readonly from: number; readonly to: number } {
    const { from, to } = this.bounds()
    return { from, to: isLive(this.window) ? Number.POSITIVE_INFINITY : to }
  }

  /** True once the first read's answer is held. */
  get ready(): boolean {
    return this.readySince
  }

  /** The entries to draw, ascending. */
  get entries(): ReadonlyArray<Entry> {
    return this.held
  }

  /** Notes that the tile drew the window now (the slide draws again once the axis has moved a pixel). */
  drawn(): void {
    this.lastDrawnAt = serverNow()
  }

  /**
   * A snapshot of the stream: its entries join the window. After the first (the page connected again), or when the
   * read was reckoned with a clock the snapshot shows off by more than a pixel, the window is read again.
   */
  snapshot(entries: ReadonlyArray<Entry>): void {
    const { span } = this.bounds()
    const { from, to } = this.accepts()
    // Entries the window holds already (the read answered with them, or a thinned selection around them) stay.
    const newest = this.held[this.held.length - 1]?.ts ?? Number.NEGATIVE_INFINITY
    this.held = merge(this.held, ascending(within(entries, Math.max(from, newest), to)))
    const skew = Math.abs(serverClockOffset() - this.offsetAtRead)
    if (++this.snapshots > 1 || skew > span / Math.max(1, this.tile.width())) this.read()
  }

  /** One live entry: it joins a live window, or a fixed one it falls within. */
  add(entry: Entry): void {
    const { from, to } = this.accepts()
    if (entry.ts < from || entry.ts > to) return
    this.held = merge(this.held, [entry])
    if (this.reading !== undefined) this.arrived.push(entry)
    this.appended++
    if (this.tile.type !== "number" && this.appended > Math.max(2_000, 4 * this.points) && this.reading === undefined) {
      this.read()
    }
  }

  /** The stream was cleared (or its widget deleted): the window is empty, and a read under way is dropped. */
  clear(): void {
    this.held = []
    this.arrived = []
    this.headEnd = undefined
    this.generation++
    this.reading = undefined
  }

  /** Stops the slide and drops any read under way. */
  dispose(): void {
    clearInterval(this.slide)
    clearTimeout(this.retry)
    this.generation++
  }

  /** Reads the window (docs/api.md section 6.1); the answer replaces what it holds, and a read under way is dropped. */
  read(): void {
    clearTimeout(this.retry)
    this.offsetAtRead = serverClockOffset()
    const generation = ++this.generation
    this.reading = generation
    this.arrived = []
    const now = serverNow()
    const width = this.tile.width()
    const query = rangeQuery(this.tile.type, width, this.window, now)
    this.points = Math.round(width)
    const get = (params: string) =>
      fetch(`${this.tile.rangePath}?stream=${encodeURIComponent(this.tile.streamName)}${params}`, {
        cache: "no-store"
      }).then(async (response) => {
        if (!response.ok) throw new Error(`the range read answered ${response.status}`)
        const body = (await response.json()) as { readonly data?: ReadonlyArray<unknown> }
        return (body.data ?? []).map(toEntry).filter((e): e is Entry => e !== undefined)
      })
    // A number tile's head read stops short of the newest entries: the latest (a read without parameters) comes along.
    const latest = this.tile.type === "number" && isLive(this.window) ? get("") : Promise.resolve([])
    Promise.all([get(`&${query}`), latest]).then(
      ([answer, last]) => {
        if (generation !== this.generation) return
        const { from, to } = this.accepts()
        // The answer, the latest entry, the entries that came live meanwhile, and the newest ones the tile already
        // held (a number tile's head read stops short of them).
        const newest = this.held.filter((e) => e.ts > (answer[answer.length - 1]?.ts ?? from))
        const read = merge(answer, within(last, from, to))
        this.held = merge(merge(read, ascending(this.arrived)), within(newest, from, to))
        this.headEnd =
          this.tile.type === "number" && isLive(this.window) && answer.length >= numberHeadEntries
            ? answer[answer.length - 1]!.ts
            : undefined
        this.arrived = []
        this.appended = 0
        this.reading = undefined
        this.readySince = true
        this.tile.redraw()
      },
      (error: unknown) => {
        if (generation !== this.generation) return
        this.reading = undefined
        console.warn(`dashstream: could not read the time range of ${this.tile.streamName}`, error)
        this.retry = setTimeout(() => this.read(), retrySeconds * 1000)
      }
    )
  }

  // Every second: entries older than the window leave it; the tile draws again when any did, or when the time axis
  // has moved by a pixel. A number tile whose head is used up reads the window's first entries again.
  private onSlide(): void {
    const { from, span } = this.bounds()
    const before = this.held
    this.held = dropBefore(this.held, from)
    const first = this.held[0]
    if (this.headEnd !== undefined && (first === undefined || first.ts > this.headEnd) && this.reading === undefined) {
      this.read()
    }
    const pixel = span / Math.max(1, this.tile.width())
    if (this.held !== before || serverNow() - this.lastDrawnAt >= pixel) this.tile.redraw()
  }
}
