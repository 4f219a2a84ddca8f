import { Context, Effect } from "effect"
import type { Mutation } from "./Apply.js"
import type { StoredEntry } from "./StreamStore.js"
import type { Micros } from "./Time.js"
import type { StreamId } from "./Widget.js"

/**
 * Stored-change notifications (docs/api.md section 10): what the write path stored, cleared or deleted, per stream,
 * published only once the write is durable, so a live event stream never shows a point a crash could still lose.
 */

/**
 * An entry a write stored. `fresh` is true when its `ts` was above every `ts` the stream had ever assigned before
 * the write (always so for a server-assigned `ts`); a write that is not fresh may have replaced an entry with the
 * same `ts` (docs/api.md section 3) or gone in below newer entries. The backlog-then-live hand-over relies on it (see
 * `Follow.ts`): a fresh entry at or below what a subscriber was already sent is one the backlog sent.
 */
export interface ChangedEntry extends StoredEntry {
  readonly fresh: boolean
}

/**
 * One change of one stream, in the order of the stream's commits:
 * - `Stored`: entries stored (new or replacing), ascending by `ts`.
 * - `Cleared`: every entry was deleted; `at` (microseconds) is the clear's own `ts` (see `Mutation.clearedAt`).
 * - `Deleted`: the widget was deleted; no change of this stream follows.
 * - `Gap`: changes may have been lost (for example while a notification connection was down); a subscriber catches
 *   up from the storage.
 */
export type StreamChange =
  | { readonly _tag: "Stored"; readonly entries: ReadonlyArray<ChangedEntry> }
  | { readonly _tag: "Cleared"; readonly at: Micros }
  | { readonly _tag: "Deleted" }
  | { readonly _tag: "Gap" }

/** The changes of one planned write to `stream` (see `WritePlan`), to publish once its transaction is durable. */
export interface PendingChange {
  readonly stream: StreamId
  readonly changes: ReadonlyArray<StreamChange>
}

/** Receives the changes of one stream, synchronously, in commit order. Must not throw. */
export type ChangeListener = (change: StreamChange) => void

/** The change a widget deletion publishes. */
export const deletedChange: StreamChange = Object.freeze({ _tag: "Deleted" })

/** The change a lost notification connection publishes to every subscriber. */
export const gapChange: StreamChange = Object.freeze({ _tag: "Gap" })

/**
 * The port of stored-change notifications. Each storage adapter provides it with the guarantees of the write path:
 * a change is delivered after the write is durable (after the group commit's sync on SQLite, after COMMIT on
 * PostgreSQL), in commit order per stream, to the subscribers of every server process on that storage (or a `Gap`
 * when some may have been lost).
 */
export class ChangeFeed extends Context.Tag("@dashstream/core/ChangeFeed")<
  ChangeFeed,
  {
    /**
     * Calls `listener` with every change of `stream` from now on, until the returned function is called (idempotent).
     * Never fails: when notifications cannot be received for a while, the adapter sends `Gap` once they can again.
     */
    readonly subscribe: (stream: StreamId, listener: ChangeListener) => Effect.Effect<() => void>
  }
>() {}

/**
 * `json` as a text of its own. A line protocol entry's JSON is a slice of one text holding the JSON of every number of
 * its body (`LineBatch.numberJsonText`), and a slice keeps that text alive: a subscriber buffering a change (up to
 * `maxPendingBytes` of JSON, counted by length) would otherwise hold a whole body's numbers per entry. Prepending a
 * character makes V8 copy the text when it is sliced again; the result holds one character more than itself.
 */
const ownText = (json: string): string => (" " + json).slice(1)

/**
 * The changes one write's mutation makes (see `applyOp`): a `Cleared` when it clears, then a `Stored` of its entries,
 * each with its point's JSON as a text of its own (see `ownText`). `before` is the stream's highest assigned `ts`
 * before the write (`StreamState.lastTs`), which decides `fresh`.
 */
export const mutationChanges = (mutation: Mutation, before: Micros | null): Array<StreamChange> => {
  const changes: Array<StreamChange> = []
  if (mutation.clearedAt !== null) changes.push({ _tag: "Cleared", at: mutation.clearedAt })
  const entries = mutation.entries
  if (entries.length > 0) {
    const floor = mutation.clearedAt ?? before
    const changed: Array<ChangedEntry> = new Array(entries.length)
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!
      changed[i] = { ts: e.ts, json: ownText(e.json), fresh: floor === null || e.ts > floor }
    }
    // Timestamps of one push are strictly increasing and server ts follow them, but keep the order explicit.
    if (changed.length > 1) changed.sort((a, b) => a.ts - b.ts)
    changes.push({ _tag: "Stored", entries: changed })
  }
  return changes
}

/**
 * Where a storage adapter's write path hands the changes it stored, and where its `ChangeFeed` comes from. A
 * {@link Fanout} is one: it delivers in process, at once. A relay between processes that share one SQLite file
 * (`serve --workers N`) is another: it delivers the changes of every process to the subscribers of every process,
 * in the order the transactions committed, which the adapter gives it as a commit sequence number.
 *
 * The adapter calls it only for durable transactions (after the group commit's sync on SQLite), in commit order
 * within the process.
 */
export interface ChangeSink {
  /** True while some stream has a subscriber (in any process): otherwise the write path collects no changes. */
  readonly active: boolean
  /** True when `stream` has a subscriber (in any process): the write path collects its changes. */
  has(stream: StreamId): boolean
  /**
   * True when every transaction that collected changes must take the next number of the storage's commit sequence
   * inside the transaction, and pass it to {@link committed} (or {@link skipped}): the sink orders the changes of
   * several processes by it.
   */
  readonly sequenced: boolean
  /**
   * The changes of one durable transaction, in the order they were applied. `seq` is its commit sequence number when
   * {@link sequenced} (consecutive over the committed transactions that took one), `undefined` otherwise or for a
   * change made outside the sequence (a widget deletion).
   */
  committed(changes: ReadonlyArray<PendingChange>, seq: number | undefined): void
  /**
   * A transaction that took sequence number `seq` committed but is not known to be durable (its sync failed): its
   * changes are not published, and the sink does not wait for them.
   */
  skipped(seq: number): void
  /**
   * Given, when {@link sequenced}, a function that reads the last commit sequence number taken (by any process):
   * every transaction with a number at or below it has committed.
   */
  sequenceReader?(read: () => number): void
  /** The `ChangeFeed` port of the subscribers of this process. */
  feed(): Context.Tag.Service<ChangeFeed>
}

/**
 * In-process fan-out of stream changes to subscribers: the `ChangeFeed` of a single-process store (memory, SQLite)
 * and the local half of a multi-process one (PostgreSQL's listener publishes into it). Publishing costs one map
 * lookup for a stream nobody follows. A listener that throws is logged to stderr and does not stop the others.
 */
export class Fanout implements ChangeSink {
  private readonly listeners = new Map<StreamId, Set<ChangeListener>>()

  /** In process: no commit sequence needed. */
  readonly sequenced = false

  /** The number of streams with at least one subscriber. */
  get streams(): number {
    return this.listeners.size
  }

  /** True when some stream has a subscriber. */
  get active(): boolean {
    return this.listeners.size > 0
  }

  /** True when `stream` has a subscriber. */
  has(stream: StreamId): boolean {
    return this.listeners.has(stream)
  }

  /** Streams with at least one subscriber. */
  followed(): IterableIterator<StreamId> {
    return this.listeners.keys()
  }

  /** Adds a listener of `stream`; returns the function that removes it (idempotent). */
  subscribe(stream: StreamId, listener: ChangeListener): () => void {
    let set = this.listeners.get(stream)
    if (set === undefined) {
      set = new Set()
      this.listeners.set(stream, set)
    }
    set.add(listener)
    return () => {
      const current = this.listeners.get(stream)
      if (current === undefined || !current.delete(listener)) return
      if (current.size === 0) this.listeners.delete(stream)
    }
  }

  /** Delivers `change` to every listener of `stream`, synchronously. */
  publish(stream: StreamId, change: StreamChange): void {
    const set = this.listeners.get(stream)
    if (set === undefined) return
    for (const listener of set) {
      try {
        listener(change)
      } catch (error) {
        console.error("a change listener threw", error)
      }
    }
  }

  /** Delivers each of `changes` to the listeners of `stream`, in order. */
  publishAll(stream: StreamId, changes: ReadonlyArray<StreamChange>): void {
    if (!this.listeners.has(stream)) return
    for (let i = 0; i < changes.length; i++) this.publish(stream, changes[i]!)
  }

  /** Publishes the changes of a durable transaction at once, in order (see {@link ChangeSink.committed}). */
  committed(changes: ReadonlyArray<PendingChange>): void {
    for (let i = 0; i < changes.length; i++) this.publishAll(changes[i]!.stream, changes[i]!.changes)
  }

  /** Nothing to do in process: nothing waits for a sequence number. */
  skipped(): void {}

  /** Delivers `change` to every listener of every stream (a `Gap`). */
  broadcast(change: StreamChange): void {
    for (const stream of [...this.listeners.keys()]) this.publish(stream, change)
  }

  /** This fan-out as the `ChangeFeed` port. */
  feed(): Context.Tag.Service<ChangeFeed> {
    return { subscribe: (stream, listener) => Effect.sync(() => this.subscribe(stream, listener)) }
  }
}
