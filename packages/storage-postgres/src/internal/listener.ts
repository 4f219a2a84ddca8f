import {
  type ChangedEntry,
  type ChangeFeed,
  deletedChange,
  Fanout,
  gapChange,
  type Micros,
  type StreamChange,
  type StreamId
} from "@dashstream/core"
import { entriesAfter } from "@dashstream/core/entryBlocks"
import { type Context, Effect } from "effect"
import pg from "pg"
import type { PostgresConfig } from "../PostgresConfig.js"
import { NoticeReads } from "./noticeReads.js"
import { OwnNotices } from "./ownNotices.js"
import { type Notice, parseNotice, quoteChannel, type StoredNotice } from "./notify.js"
import { clientConfig } from "./pool.js"

/** Settings of a {@link Listener}; durations in milliseconds. */
export interface ListenerOptions {
  /**
   * The delay before each new attempt while the connection is down (default 200): short and fixed, so that live
   * updates resume within it once the database answers again (a connection refused costs the server nothing).
   */
  readonly reconnectMs: number
  /**
   * How often the idle listening connection is checked with `SELECT 1` (default 30,000), so that a connection that
   * died silently (a network that dropped it without a reset) is replaced; 0 never.
   */
  readonly heartbeatMs: number
  /** Merge the notifications of appended entries queued behind a read of the same stream into one read (default on). */
  readonly coalesce: boolean
  /** Reports a failed or lost connection: once when it fails, then again only when the cause changes. */
  readonly warn: (message: string) => void
  /** Reports that the connection listens again after a failure. */
  readonly info: (message: string) => void
}

/** The default {@link ListenerOptions} (warnings go to `console.warn`, the rest to `console.info`). */
export const defaultListenerOptions: ListenerOptions = {
  reconnectMs: 200,
  heartbeatMs: 30_000,
  coalesce: true,
  warn: (message) => console.warn(message),
  info: (message) => console.info(message)
}

/** The suffix of the listening connection's `application_name` (`dashstream-listener` unless the URL names one). */
export const listenerSuffix = "-listener"

/**
 * The entries of `blocks` (ascending) a notification names: `ts` from `from` to `to` (inclusive); of those, only the
 * ones above `floor` (null: all) or listed in `old`, unless `old` is undefined (the whole range).
 */
const namedEntries = (
  blocks: ReadonlyArray<Buffer>,
  from: number,
  to: number,
  floor: number | null,
  old: ReadonlyArray<number> | undefined
): Array<ChangedEntry> => {
  const out: Array<ChangedEntry> = []
  for (const e of entriesAfter(blocks, from - 1, -1, (e) => e)) {
    if (e.ts > to) break
    const fresh = floor === null || e.ts > floor
    if (fresh || old === undefined || old.includes(e.ts)) out.push({ ts: e.ts as Micros, json: e.json, fresh })
  }
  return out
}

/**
 * A notification's place in the order notifications arrived (commit order): its changes are published once they are
 * known and every earlier notification's changes have been published.
 */
interface Slot {
  readonly stream: StreamId
  /** `undefined` until its read has settled. */
  changes: ReadonlyArray<StreamChange> | undefined
  next: Slot | undefined
}

/**
 * A notification waiting for its stream's turn, and its place in the publishing order; `known`: the changes this
 * process kept for it (see {@link OwnNotices}), published without a read.
 */
interface Queued {
  readonly notice: Notice
  readonly slot: Slot
  readonly known: ReadonlyArray<StreamChange> | undefined
}

/** Notifications of one stream waiting for their turn; present in `queues` while its worker runs. */
interface StreamQueue {
  readonly items: Array<Queued>
}

const isAppend = (n: Notice): n is StoredNotice =>
  n._tag === "Stored" && n.clearedAt === null && n.from !== null && (n.before === null || n.from > n.before)

const message = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error)
  // Node's connect to a name of several addresses fails with an AggregateError of one error per address.
  const inner = (error as { errors?: unknown }).errors
  return error.message === "" && Array.isArray(inner) && inner.length > 0 ? message(inner[0]) : error.message
}

/**
 * The PostgreSQL `ChangeFeed` of one store (one server process): ONE dedicated connection (not from the pool)
 * listening on `channel` for the notifications the write path sends on COMMIT (see `notify.ts`), fanned out to this
 * process's subscribers through a core {@link Fanout}.
 *
 * - A notification of a stream nobody here follows costs nothing. A notification of this process's own group (same
 *   backend pid and payload as changes its write path kept, {@link OwnNotices}) is published from those changes,
 *   without a read. Otherwise the entries it names are read from the pool and published as one `Stored` (`fresh`
 *   when `ts > (c ?? b)`), after a `Cleared` when the group cleared the stream; a deletion publishes `Deleted`. Each
 *   stream has its own sequential queue of reads; the reads of all
 *   streams asked for while a query runs go together in the next one ({@link NoticeReads}). Changes are PUBLISHED in
 *   notification (commit) order across all streams, so a subscriber of several streams (a dashboard's or a
 *   rotation's event stream) receives two acknowledged pushes to different streams in the order they were stored
 *   (docs/api.md section 10's guarantee), whichever read returns first. With `coalesce`, notifications of appended
 *   entries queued behind a read of their stream are read together, as one range (the union of theirs), and the
 *   entries are published at each notification's own place. A read that fails publishes `Gap` to the stream's
 *   subscribers (they catch up from the database).
 * - When the connection fails, ends or stops answering the heartbeat, a new one is tried every `reconnectMs`,
 *   forever (a warning when it fails and when the cause changes, one line once it listens again), and at once when
 *   {@link wake} says the database answers; once `LISTEN` succeeds again, `Gap` is published to every subscriber, so
 *   whatever was committed while nobody listened is caught up. So live updates resume within `reconnectMs` of the
 *   database's return. The same happens when the database is down when the store starts.
 * - `subscribe` first waits until the first connection attempt has settled, so a subscriber of a store whose
 *   database is up misses no change committed after `subscribe` returns; if the attempt failed, the `Gap` sent on
 *   reconnection covers it.
 */
export class Listener {
  /** The local subscribers. */
  readonly fanout = new Fanout()
  /**
   * The changes this process's own groups made to followed streams, published from memory when their notifications
   * arrive instead of being read back (see `ownNotices.ts`); the write path fills it.
   */
  readonly own = new OwnNotices((stream) => this.fanout.has(stream as StreamId))
  private client: pg.Client | undefined = undefined
  private isListening = false
  private isClosed = false
  private failures = 0
  /** The cause last warned about while down (`undefined` while listening). */
  private warned: string | undefined = undefined
  private retry: NodeJS.Timeout | undefined = undefined
  private heartbeat: NodeJS.Timeout | undefined = undefined
  private readonly queues = new Map<number, StreamQueue>()
  /** The oldest notification whose changes are not published yet, and the newest (see {@link Slot}). */
  private head: Slot | undefined = undefined
  private tail: Slot | undefined = undefined
  private readonly ready: Promise<void>
  private settle: () => void = () => {}
  private noticeCount = 0
  private ownCount = 0
  private readCount = 0
  private connectCount = 0
  private readonly reads: NoticeReads

  constructor(
    private readonly config: PostgresConfig,
    pool: pg.Pool,
    private readonly channel: string,
    private readonly options: ListenerOptions = defaultListenerOptions
  ) {
    this.reads = new NoticeReads(pool)
    this.ready = new Promise((resolve) => {
      this.settle = resolve
    })
  }

  /**
   * Notifications received for followed streams, those of them published from this process's own changes (see
   * {@link own}), reads made for the others, the queries that made those reads (several reads a query, see
   * {@link NoticeReads}), and successful `LISTEN`s so far.
   */
  get stats(): {
    readonly notices: number
    readonly own: number
    readonly reads: number
    readonly queries: number
    readonly connects: number
  } {
    return {
      notices: this.noticeCount,
      own: this.ownCount,
      reads: this.readCount,
      queries: this.reads.batches,
      connects: this.connectCount
    }
  }

  /** True while the connection is up and listening. */
  get listening(): boolean {
    return this.isListening
  }

  /** Starts connecting (in the background); resolves once the first attempt has settled (never rejects). */
  start(): Promise<void> {
    void this.connect()
    return this.ready
  }

  /**
   * Tells the listener that the database answers (a pooled connection was just opened): while it waits to reconnect,
   * it tries at once instead of at the end of its `reconnectMs`. Does nothing while connected or connecting.
   */
  wake(): void {
    if (this.retry === undefined || this.isClosed) return
    clearTimeout(this.retry)
    this.retry = undefined
    void this.connect()
  }

  /** Closes the connection; no reconnection after it. Resolves once the connection is closed. */
  async close(): Promise<void> {
    this.isClosed = true
    this.settle()
    clearTimeout(this.retry)
    clearInterval(this.heartbeat)
    const client = this.client
    this.client = undefined
    this.isListening = false
    if (client !== undefined) await client.end().catch(() => undefined)
  }

  /** The `ChangeFeed` port of this listener (see the class comment). */
  feed(): Context.Tag.Service<ChangeFeed> {
    return {
      subscribe: (stream, listener) =>
        Effect.promise(() => this.ready).pipe(Effect.map(() => this.fanout.subscribe(stream, listener)))
    }
  }

  private async connect(): Promise<void> {
    this.retry = undefined
    if (this.isClosed) return
    const base = clientConfig(this.config, false)
    // Named after the URL's application_name (or `dashstream`), so that it can be told apart in pg_stat_activity.
    const url = new URL(base.connectionString!)
    url.searchParams.set(
      "application_name",
      `${url.searchParams.get("application_name") || "dashstream"}${listenerSuffix}`
    )
    const client = new pg.Client({
      ...base,
      connectionString: url.toString(),
      // Bounds LISTEN and the heartbeat: a server that stopped answering is treated as a broken connection.
      query_timeout: this.config.connectTimeoutMs,
      keepAliveInitialDelayMillis: 10_000
    })
    this.client = client
    client.on("error", (error) => this.lost(client, error))
    client.on("end", () => this.lost(client, new Error("the connection ended")))
    // Whatever was committed while nobody listened (nobody subscribes before the first attempt has settled) is
    // caught up by every subscriber after a `Gap`: sent once `LISTEN` succeeded, or before the first notification of
    // this connection if that comes first (notifications in the same read as LISTEN's answer are handled before it
    // resolves). A change published before the Gap would let a subscriber skip what was committed while nobody
    // listened. Changes kept meanwhile may belong to notifications sent while nobody listened: never published from
    // memory, so that a later notification with the same payload (a replacement of the same entries) cannot take them.
    let gapSent = false
    const gap = () => {
      if (gapSent) return
      gapSent = true
      this.own.clear()
      this.fanout.broadcast(gapChange)
    }
    client.on("notification", (n) => {
      if (n.channel !== this.channel || client !== this.client) return
      gap()
      this.notified(n.payload, n.processId)
    })
    try {
      await client.connect()
      await client.query(`LISTEN ${quoteChannel(this.channel)}`)
    } catch (error) {
      this.lost(client, error)
      return
    }
    if (client !== this.client) return
    this.isListening = true
    if (this.failures > 0) {
      this.options.info(
        `live updates: the PostgreSQL notification connection listens again (after ${this.failures} failed attempts)`
      )
    }
    this.failures = 0
    this.warned = undefined
    this.connectCount++
    if (this.options.heartbeatMs > 0 && this.heartbeat === undefined) {
      this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs)
      this.heartbeat.unref()
    }
    gap()
    this.settle()
  }

  private beat(): void {
    const client = this.client
    if (client === undefined || !this.isListening) return
    client.query("SELECT 1").catch((error: unknown) => this.lost(client, error))
  }

  // The connection `client` failed: drop it and schedule the next attempt (once per client).
  private lost(client: pg.Client, error: unknown): void {
    if (client !== this.client) return
    this.client = undefined
    this.isListening = false
    // The notifications of the changes kept so far may never arrive (the `Gap` sent on reconnection covers them).
    this.own.clear()
    client.end().catch(() => undefined)
    this.settle()
    if (this.isClosed) return
    this.failures++
    const cause = message(error)
    if (cause !== this.warned) {
      this.warned = cause
      this.options.warn(
        `live updates: the PostgreSQL notification connection failed (${cause}); retrying every ${this.options.reconnectMs} ms`
      )
    }
    this.retry = setTimeout(() => void this.connect(), this.options.reconnectMs)
  }

  private notified(payload: string | undefined, pid: number): void {
    const notice = parseNotice(payload)
    if (notice === undefined) return
    // A notification of this process's own group: its changes were kept by the write path (taken even when nobody
    // follows the stream any more).
    const known = this.own.take(pid, payload!)
    if (!this.fanout.has(notice.stream as StreamId)) return
    this.noticeCount++
    const slot: Slot = { stream: notice.stream as StreamId, changes: undefined, next: undefined }
    if (this.tail === undefined) this.head = slot
    else this.tail.next = slot
    this.tail = slot
    const queue = this.queues.get(notice.stream)
    // Kept changes of a stream with no read under way are published at once (at their place in the order); behind a
    // read they wait in the stream's queue, where they also end a run of coalesced appends (whose one read covers
    // the range between its first and last notification: entries of a notification not in the run would be in it).
    if (known !== undefined && queue === undefined) return this.publishKept(slot, known)
    if (queue !== undefined) {
      queue.items.push({ notice, slot, known })
      return
    }
    const created: StreamQueue = { items: [{ notice, slot, known }] }
    this.queues.set(notice.stream, created)
    void this.drain(notice.stream, created)
  }

  // Reads the queued notifications of one stream in order, one read at a time.
  private async drain(stream: number, queue: StreamQueue): Promise<void> {
    try {
      while (queue.items.length > 0 && !this.isClosed) {
        const first = queue.items.shift()!
        if (first.known !== undefined) {
          this.publishKept(first.slot, first.known)
          continue
        }
        if (first.notice._tag === "Deleted") {
          this.settled(first.slot, [deletedChange])
          continue
        }
        const group: Array<Queued> = [first]
        if (this.options.coalesce && isAppend(first.notice)) {
          while (queue.items.length > 0 && queue.items[0]!.known === undefined && isAppend(queue.items[0]!.notice)) {
            group.push(queue.items.shift()!)
          }
        }
        await this.readStored(stream as StreamId, group)
      }
    } finally {
      this.queues.delete(stream)
    }
  }

  /**
   * Reads a group's change (its first notification's, the range extended by the coalesced appends after it) and
   * settles each notification of `group` with its own part: the entries up to its `to`.
   */
  private async readStored(stream: StreamId, group: ReadonlyArray<Queued>): Promise<void> {
    const first = group[0]!.notice as StoredNotice
    const last = group[group.length - 1]!.notice as StoredNotice
    const changes: Array<StreamChange> = []
    if (first.clearedAt !== null) changes.push({ _tag: "Cleared", at: first.clearedAt as Micros })
    let entries: Array<ChangedEntry> = []
    if (first.from !== null && last.to !== null && this.fanout.has(stream)) {
      const floor = first.clearedAt ?? first.before
      try {
        this.readCount++
        const blocks = await this.reads.read(stream, first.from, last.to)
        entries = namedEntries(blocks, first.from, last.to, floor, first.old)
      } catch {
        // The subscribers read what they missed from the database themselves (if it fails, they end).
        changes.push(gapChange)
      }
    }
    // Coalesced appends have disjoint, ascending ranges (each starts above the stream's last ts before it).
    let at = 0
    for (let i = 0; i < group.length; i++) {
      const to = (group[i]!.notice as StoredNotice).to
      let end = at
      if (i === group.length - 1) end = entries.length
      else if (to !== null) while (end < entries.length && entries[end]!.ts <= to) end++
      const own: Array<StreamChange> = i === 0 ? changes : []
      if (end > at)
        own.push({ _tag: "Stored", entries: at === 0 && end === entries.length ? entries : entries.slice(at, end) })
      at = end
      this.settled(group[i]!.slot, own)
    }
  }

  // A notification of this process's own group, settled with the changes its write path kept.
  private publishKept(slot: Slot, known: ReadonlyArray<StreamChange>): void {
    this.ownCount++
    this.settled(slot, known)
  }

  // `slot`'s changes are known: publish them and every later notification's already known, in order.
  private settled(slot: Slot, changes: ReadonlyArray<StreamChange>): void {
    slot.changes = changes
    while (this.head !== undefined && this.head.changes !== undefined) {
      const ready = this.head
      this.head = ready.next
      if (this.head === undefined) this.tail = undefined
      if (!this.isClosed && ready.changes!.length > 0) this.fanout.publishAll(ready.stream, ready.changes!)
    }
  }
}
