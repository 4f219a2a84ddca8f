import { Either } from "effect"
import { applyOp, type EntryWrite, type Mutation, needsLatest, type StreamState } from "./Apply.js"
import { mutationChanges, type PendingChange } from "./ChangeFeed.js"
import type { InvalidPoint, StreamNotFound } from "./Errors.js"
import type { PointOp, StoredPoint } from "./Point.js"
import { streamDeleted, type StreamWrite } from "./StreamStore.js"
import { StreamIndex } from "./internal/streamIndex.js"
import type { Micros } from "./Time.js"
import type { StreamId } from "./Widget.js"

/**
 * The write path's loop, once for every storage adapter: `applyOp` is the rule for one write; a {@link WritePlan}
 * threads each stream's state from one write to the next, in arrival order, so that later writes see earlier ones
 * (a delta adds to the number the write before it stored, server `ts` keep increasing). An adapter only says how to
 * load a stream's state ({@link StateSource}) and stores the planned mutations (see {@link WritePlan.mutation});
 * the plan finds every domain error of a call before anything of it is stored.
 */

type PutOp = Extract<PointOp, { readonly _tag: "Put" }>
type PutEntries = PutOp["entries"]

// A run of `Put` writes to one stream being merged into one (see `mergePuts`): where its write stands in the output,
// its entries once it grew, and what a next entry must be above to be fresh in the merged write too.
interface PutRun {
  readonly at: number
  entries: Array<PutEntries[number]> | undefined
  // The highest client `ts` of the run (microseconds), or `null` for none yet.
  lastClient: number | null
  // Whether the run has an entry without `ts` (a server `ts`, above everything before it but not known here).
  hasServer: boolean
}

// The one join rule of `mergePuts` and `PutMerger`: whether an entry with client `ts` (`undefined`: it takes a
// server `ts`) may follow a merged write whose client `ts` so far end at `lastClient` and that `hasServer` entries.
const mayFollow = (lastClient: number | null, hasServer: boolean, ts: number | undefined): boolean =>
  ts === undefined || (!hasServer && (lastClient === null || ts > lastClient))

// Whether `entries` can join `run` (see `mergePuts`); when they can, the run is moved past them.
const joins = (run: PutRun, entries: PutEntries): boolean => {
  let lastClient = run.lastClient
  let hasServer = run.hasServer
  for (let i = 0; i < entries.length; i++) {
    const ts = entries[i]!.ts
    if (!mayFollow(lastClient, hasServer, ts)) return false
    if (ts === undefined) hasServer = true
    else lastClient = ts
  }
  run.lastClient = lastClient
  run.hasServer = hasServer
  return true
}

/**
 * The writes of one `StreamStore.write` call with the `Put` writes of each stream merged, where that changes
 * nothing: a `Put` joins the stream's previous write when that is a `Put` (no other write of the stream between
 * them) and every entry it adds has a client `ts` above every `ts` of the merged write so far (entries without `ts`
 * take server `ts`, which are always above; a client `ts` after one is not merged). What is stored, the `ts`
 * assigned, each stream's changes (`mutationChanges`: the same entries, each as fresh as it was) and the error a
 * call fails with are those of the writes as given: `applyOp` applies a `Put`'s entries one after another exactly as
 * it applies one-entry `Put`s in a row, writes to different streams do not see each other, and a `Put` can only
 * fail as its stream's first write (a deleted widget), which keeps its place and path.
 *
 * Why: every write costs a mutation and, in the adapters, statements or rows of its own; a push naming a stream
 * several times is merged to one write per stream. (A line protocol body, 1,000 one-entry writes to 10 streams, is
 * merged as it is decoded instead, by {@link PutMerger}, to the same writes.) Returns `writes` itself when nothing
 * merges.
 */
export const mergePuts = (writes: ReadonlyArray<StreamWrite>): ReadonlyArray<StreamWrite> => {
  if (writes.length < 2) return writes
  const out: Array<StreamWrite> = []
  const runs = new Map<StreamId, PutRun>()
  let merged = false
  // Puts the merged entries of a run that grew in its write's place.
  const close = (run: PutRun | undefined): void => {
    if (run?.entries !== undefined) out[run.at] = { ...out[run.at]!, op: { _tag: "Put", entries: run.entries } }
  }
  for (let i = 0; i < writes.length; i++) {
    const write = writes[i]!
    const id = write.widget.id
    const op = write.op
    const run = runs.get(id)
    if (op._tag !== "Put") {
      if (run !== undefined) {
        close(run)
        runs.delete(id)
      }
      out.push(write)
      continue
    }
    if (run !== undefined && joins(run, op.entries)) {
      if (run.entries === undefined) run.entries = (out[run.at]!.op as PutOp).entries.slice()
      for (let j = 0; j < op.entries.length; j++) run.entries.push(op.entries[j]!)
      merged = true
      continue
    }
    close(run)
    // A Put alone is valid as it is (its own write): a new run starts past its entries.
    const next: PutRun = { at: out.length, entries: undefined, lastClient: null, hasServer: false }
    for (let j = 0; j < op.entries.length; j++) {
      const ts = op.entries[j]!.ts
      if (ts === undefined) next.hasServer = true
      else if (next.lastClient === null || ts > next.lastClient) next.lastClient = ts
    }
    runs.set(id, next)
    out.push(write)
  }
  if (!merged) return writes
  for (const run of runs.values()) close(run)
  return out
}

// A stream's open merged write in a `PutMerger`: its entries, and what a next entry must be above to join it.
interface OpenPut {
  readonly entries: Array<PutEntries[number]>
  lastClient: number | null
  hasServer: boolean
}

/**
 * The writes of a request whose parts are each a one-entry `Put` (line protocol), merged as the parts come: after
 * {@link add} of every part in request order, {@link writes} is exactly what {@link mergePuts} returns for one
 * one-entry `Put` write per part (same writes, order, entries and paths), without building those writes first. An
 * entry joins its stream's last write by the rule of `mergePuts` (a server `ts`, or a client `ts` above every client
 * `ts` of the write and with no server `ts` before it); otherwise it starts a new write at its own path.
 */
export class PutMerger {
  /** The merged writes so far, in the order their first entries came. */
  readonly writes: Array<StreamWrite> = []
  private readonly open = new Map<StreamId, OpenPut>()

  /** Adds the entry `entry` of a part to `widget`'s stream at `path`. */
  add(widget: StreamWrite["widget"], entry: PutEntries[number], path: string): void {
    if (!this.join(widget, entry)) this.start(widget, entry, path)
  }

  /**
   * {@link add} for part `i` of a request's columns, whose path is `paths.path(i)`: made only when the entry starts a
   * write (most entries join their stream's write, which has its path already).
   */
  addAt(widget: StreamWrite["widget"], entry: PutEntries[number], paths: PartPaths, i: number): void {
    if (!this.join(widget, entry)) this.start(widget, entry, paths.path(i))
  }

  // Whether `entry` joined its stream's open write (then it is added there).
  private join(widget: StreamWrite["widget"], entry: PutEntries[number]): boolean {
    const ts = entry.ts
    const run = this.open.get(widget.id)
    if (run === undefined || !mayFollow(run.lastClient, run.hasServer, ts)) return false
    if (ts === undefined) run.hasServer = true
    else run.lastClient = ts
    run.entries.push(entry)
    return true
  }

  // Starts a write of `widget`'s stream at `path` with `entry`, the stream's open write from now on.
  private start(widget: StreamWrite["widget"], entry: PutEntries[number], path: string): void {
    const ts = entry.ts
    const entries = [entry]
    this.writes.push({ widget, op: { _tag: "Put", entries }, path })
    this.open.set(widget.id, { entries, lastClient: ts ?? null, hasServer: ts === undefined })
  }
}

/** Where the parts of a request stand (see `IngestColumns.path`): part `i`'s path, `line 4`. */
export interface PartPaths {
  path(i: number): string
}

/** The entry with the highest `ts` a stream holds: `ts` in microseconds and its point. */
export interface LatestEntry {
  readonly ts: Micros
  readonly point: StoredPoint
}

/**
 * How a {@link WritePlan} reads what the storage holds, inside the adapter's write transaction. Each function is
 * called at most once per stream between two {@link WritePlan.reset}s (the plan keeps what it read).
 */
export interface StateSource {
  /**
   * The stream's highest `ts` ever assigned (microseconds; `null` when none yet), or `undefined` when the widget was
   * deleted (the write then fails with `StreamNotFound`, see `streamDeleted`).
   */
  readonly lastTs: (stream: StreamId) => Micros | null | undefined
  /**
   * The stream's entry with the highest `ts`, `null` when it holds none. Only asked for a stream that `lastTs` found,
   * when a write needs it ({@link needsLatest}) and the plan cannot tell without it.
   */
  readonly latest: (stream: StreamId) => LatestEntry | null
}

/** A stream a plan touched, as the plan left it. */
export interface PlannedStream {
  readonly stream: StreamId
  /** The highest `ts` ever assigned before the plan (as loaded; microseconds, `null`: none). */
  readonly before: Micros | null
  /** The highest `ts` ever assigned after the plan's writes (microseconds, `null`: none). */
  readonly lastTs: Micros | null
  /** The `ts` of the plan's last clear of the stream (microseconds), `null` when the plan did not clear it. */
  readonly clearedAt: Micros | null
}

/** The domain errors a call fails with when it does not fit the stored state. */
export type PlanError = InvalidPoint | StreamNotFound

// One stream's state in the plan. Passed to `applyOp` as its `StreamState` (`latest` set just before), so planning
// a write allocates nothing beyond what `applyOp` itself does. Records are reused across resets.
class Planned implements PlannedStream, StreamState {
  stream = 0 as StreamId
  before: Micros | null = null
  lastTs: Micros | null = null
  latest: StoredPoint | null = null
  clearedAt: Micros | null = null
  // The entry with the highest ts the plan stored since its start or its last clear of the stream.
  topTs: Micros | null = null
  topPoint: StoredPoint | null = null
  // The stored latest entry (storage truth before the plan, so never rolled back), once loaded.
  storedLoaded = false
  storedTs: Micros | null = null
  storedPoint: StoredPoint | null = null
  // What the fields above were when the current call first touched the stream, to undo a failed call.
  savedCall = -1
  savedLastTs: Micros | null = null
  savedClearedAt: Micros | null = null
  savedTopTs: Micros | null = null
  savedTopPoint: StoredPoint | null = null

  init(stream: StreamId, lastTs: Micros | null): void {
    this.stream = stream
    this.before = lastTs
    this.lastTs = lastTs
    this.latest = null
    this.clearedAt = null
    this.topTs = null
    this.topPoint = null
    this.storedLoaded = false
    this.storedTs = null
    this.storedPoint = null
    this.savedCall = -1
  }
}

// Beyond this many streams a plan indexes them (by position in `records`); below it a linear scan is cheaper.
const scanLimit = 8

/**
 * Plans the writes of one or more `StreamStore.write` calls against the state an adapter loads, in arrival order.
 *
 * {@link add} plans one call: each write gets its stream's state as the earlier writes of the plan left it (the
 * stream's highest `ts` ever assigned, and the latest point when {@link needsLatest} says the operation needs it),
 * and `applyOp` computes its mutation. A call is all or nothing: when one of its writes fails (`InvalidPoint`, or
 * `StreamNotFound` for a deleted widget), every mutation of the call is dropped and the streams are as the call
 * found them, so the calls planned after it do not see it. The planned mutations are then read in order with
 * {@link size}, {@link mutation}, {@link streamAt} and {@link before}; an adapter stores them (in order: a later
 * write to the same `ts` replaces an earlier one, a clear deletes what came before it) and, once the transaction is
 * durable, publishes {@link changes}.
 *
 * One plan may span a group of calls (PostgreSQL loads each stream once per group) or be {@link reset} before each
 * call (SQLite and memory load from the storage, which holds what the calls before stored). Not thread-safe; cheap
 * to keep and reuse: planning a one-write call allocates nothing beyond `applyOp`'s mutation.
 */
export class WritePlan {
  private readonly records: Array<Planned> = []
  private count = 0
  private index: StreamIndex | undefined = undefined
  // How many of the first records the index holds.
  private indexed = 0
  private readonly stepStreams: Array<Planned> = []
  private readonly stepMutations: Array<Mutation> = []
  private readonly stepBefore: Array<Micros | null> = []
  private readonly touched: Array<Planned> = []
  private calls = 0

  constructor(private readonly source: StateSource) {}

  /** Forgets every planned write and everything loaded: the next {@link add} loads each stream afresh. */
  reset(): void {
    this.count = 0
    if (this.indexed > 0) {
      this.index!.clear()
      this.indexed = 0
    }
    this.stepStreams.length = 0
    this.stepMutations.length = 0
    this.stepBefore.length = 0
    this.touched.length = 0
  }

  /**
   * Plans one call's `writes` (received at `now`, microseconds) after those already planned. Returns the error the
   * call fails with (its writes are then dropped, see the class comment), `undefined` when every write was planned.
   * Throws what the {@link StateSource} throws (the plan is then to be reset).
   */
  add(writes: ReadonlyArray<StreamWrite>, now: Micros): PlanError | undefined {
    const call = this.calls++
    const mark = this.stepMutations.length
    this.touched.length = 0
    for (let i = 0; i < writes.length; i++) {
      const write = writes[i]!
      const id = write.widget.id
      let s = this.find(id)
      if (s === undefined) {
        const lastTs = this.source.lastTs(id)
        if (lastTs === undefined) return this.undo(mark, streamDeleted(write))
        s = this.load(id, lastTs)
      }
      if (s.savedCall !== call) {
        s.savedCall = call
        s.savedLastTs = s.lastTs
        s.savedClearedAt = s.clearedAt
        s.savedTopTs = s.topTs
        s.savedTopPoint = s.topPoint
        this.touched.push(s)
      }
      s.latest = needsLatest(write.op) ? this.latestOf(s) : null
      const before = s.lastTs
      const result = applyOp(write.widget.type, write.op, s, now, write.path)
      if (Either.isLeft(result)) return this.undo(mark, result.left)
      const m = result.right
      if (m.clear) {
        s.clearedAt = m.clearedAt
        s.topTs = null
        s.topPoint = null
      }
      const entries = m.entries
      // The entry that becomes the latest; its point is read once (an entry of a `Put` of several reads it when asked).
      let top: EntryWrite | undefined = undefined
      for (let j = 0; j < entries.length; j++) {
        const e = entries[j]!
        // On an equal ts the later entry replaces the earlier one (docs/api.md section 3), so it becomes the latest.
        if (s.topTs === null || e.ts >= s.topTs) {
          s.topTs = e.ts
          top = e
        }
      }
      if (top !== undefined) s.topPoint = top.point
      s.lastTs = m.lastTs
      this.stepStreams.push(s)
      this.stepMutations.push(m)
      this.stepBefore.push(before)
    }
    return undefined
  }

  /** The number of planned writes (of the calls that succeeded). */
  get size(): number {
    return this.stepMutations.length
  }

  /** The mutation of the `i`-th planned write (see `Mutation`), 0-based in arrival order. */
  mutation(i: number): Mutation {
    return this.stepMutations[i]!
  }

  /** The stream of the `i`-th planned write. */
  streamAt(i: number): StreamId {
    return this.stepStreams[i]!.stream
  }

  /** The stream's highest assigned `ts` just before the `i`-th planned write (microseconds, `null`: none). */
  before(i: number): Micros | null {
    return this.stepBefore[i]!
  }

  /**
   * The streams the plan touched since its last reset, each as the planned writes left it (one touched only by
   * failed calls is as loaded). In the order they were first touched.
   */
  streams(): ReadonlyArray<PlannedStream> {
    return this.records.slice(0, this.count)
  }

  /**
   * Appends to `into` the changes (see `mutationChanges`) of every planned write whose stream is `followed`, in
   * order, for the adapter to publish once the writes are durable.
   */
  changes(followed: (stream: StreamId) => boolean, into: Array<PendingChange>): void {
    for (let i = 0; i < this.stepMutations.length; i++) {
      const stream = this.stepStreams[i]!.stream
      if (followed(stream)) {
        into.push({ stream, changes: mutationChanges(this.stepMutations[i]!, this.stepBefore[i]!) })
      }
    }
  }

  private find(id: StreamId): Planned | undefined {
    if (this.count > scanLimit) {
      const at = this.index!.get(id)
      return at < 0 ? undefined : this.records[at]
    }
    for (let i = 0; i < this.count; i++) {
      const s = this.records[i]!
      if (s.stream === id) return s
    }
    return undefined
  }

  private load(id: StreamId, lastTs: Micros | null): Planned {
    let s = this.records[this.count]
    if (s === undefined) {
      s = new Planned()
      this.records.push(s)
    }
    s.init(id, lastTs)
    this.count++
    if (this.count > scanLimit) {
      const index = (this.index ??= new StreamIndex())
      for (; this.indexed < this.count; this.indexed++) index.add(this.records[this.indexed]!.stream, this.indexed)
    }
    return s
  }

  // The latest point of `s` as the plan left it: the plan's own highest entry, unless the stream's stored latest
  // entry (not cleared by the plan) is above it.
  private latestOf(s: Planned): StoredPoint | null {
    if (s.clearedAt !== null) return s.topPoint
    if (!s.storedLoaded) {
      const stored = this.source.latest(s.stream)
      s.storedLoaded = true
      s.storedTs = stored === null ? null : stored.ts
      s.storedPoint = stored === null ? null : stored.point
    }
    if (s.storedTs !== null && (s.topTs === null || s.storedTs > s.topTs)) return s.storedPoint
    return s.topPoint
  }

  // Drops the mutations of the failing call and restores the streams it touched; returns `error`.
  private undo(mark: number, error: PlanError): PlanError {
    for (let i = 0; i < this.touched.length; i++) {
      const s = this.touched[i]!
      s.lastTs = s.savedLastTs
      s.clearedAt = s.savedClearedAt
      s.topTs = s.savedTopTs
      s.topPoint = s.savedTopPoint
    }
    this.touched.length = 0
    this.stepStreams.length = mark
    this.stepMutations.length = mark
    this.stepBefore.length = mark
    return error
  }
}
