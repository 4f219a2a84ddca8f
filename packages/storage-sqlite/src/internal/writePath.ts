import type Database from "better-sqlite3"
import {
  type Micros,
  type PendingChange,
  summarizeBlock,
  type PlanError,
  type StoredEntry,
  type StoredPoint,
  type StreamId,
  type StreamWrite,
  WritePlan
} from "@dashstream/core"
import { mergeEncoded, summaryOf } from "./blockMerge.js"
import { maxMergedRuns, mergeEncodedRuns, sortEncoded } from "./queueOrder.js"
import { appendRowsSql, appendRowWidth, Sql, summaryFunction } from "./statements.js"
import { blockSize, splitBlocks, viewOf, writeEntry } from "@dashstream/core/entryBlocks"

/** The statements that store entries in blocks (see {@link EntryBatch}), prepared once per connection. */
export interface BlockStatements {
  readonly tail: Database.Statement<[number], [number, number, number, number]>
  readonly appendRows: ReadonlyArray<Database.Statement<[Array<number | Buffer | null>]>>
  readonly insertBlock: Database.Statement<[number, number, number, number, number, Buffer, Buffer | null]>
  readonly blockAt: Database.Statement<
    [number, number],
    { id: number; first_ts: number; last_ts: number; data: Buffer }
  >
  readonly firstBlock: Database.Statement<[number], { id: number; first_ts: number; last_ts: number; data: Buffer }>
  readonly nextFirst: Database.Statement<[number, number], number>
  readonly updateBlock: Database.Statement<[number, number, number, number, Buffer, Buffer | null, number]>
}

/**
 * The prepared statements of the write path, prepared once per connection. The single-column reads are plucked
 * (no row object per call): `lastTs` gives `undefined` for a deleted stream and `null` for one without entries yet.
 * `changeCounts` reads `[data_version, total_changes()]`: what tells {@link LastTsCache} that the file changed
 * behind its back.
 */
export interface WriteStatements extends BlockStatements {
  readonly lastTs: Database.Statement<[number], number | null>
  readonly latest: LatestRead
  readonly clear: Database.Statement<[number]>
  readonly setClearedTs: Database.Statement<[number | null, number]>
  readonly setLastTs: Database.Statement<[number | null, number]>
  readonly changeCounts: Database.Statement<[], [number, number]>
}

/**
 * Registers {@link summaryFunction} (core's `summarizeBlock`, deterministic) on `db`, then prepares
 * {@link BlockStatements}. Throws when `entry_blocks` is missing.
 */
export const prepareBlockStatements = (db: Database.Database): BlockStatements => {
  db.function(summaryFunction, { deterministic: true }, (data: unknown) => summarizeBlock(data as Buffer))
  return {
    tail: db.prepare<[number], [number, number, number, number]>(Sql.tail).raw() as never,
    appendRows: appendSizes.map((k) => db.prepare<[Array<number | Buffer | null>]>(appendRowsSql(k))),
    blockAt: db.prepare(Sql.blockAt),
    firstBlock: db.prepare(Sql.firstBlock),
    nextFirst: db.prepare<[number, number], number>(Sql.nextFirst).pluck(),
    updateBlock: db.prepare(Sql.updateBlock),
    insertBlock: db.prepare(Sql.insertBlock)
  }
}

/** Prepares the write path's statements. Throws when the schema is missing (migrate first). */
export const prepareWriteStatements = (db: Database.Database): WriteStatements => ({
  ...prepareBlockStatements(db),
  lastTs: db.prepare<[number], number | null>(Sql.lastTs).pluck(),
  latest: prepareLatest(db),
  clear: db.prepare(Sql.clear),
  setClearedTs: db.prepare(Sql.setClearedTs),
  setLastTs: db.prepare(Sql.setLastTs),
  changeCounts: db.prepare<[], [number, number]>(Sql.changeCounts).raw() as never
})

/** Row counts of the multi-row block upserts, largest first. */
const appendSizes = [64, 8, 1] as const

/**
 * A stream's tail block as the writer knows it: `[first_ts, n, last_ts, bytes of data]`; `null`: the stream has no
 * block.
 */
export type Tail = [number, number, number, number] | null

/** Reads a stream's latest entry ({@link Sql.latest}), `undefined` when it has none. Throws SQLite errors. */
export type LatestRead = (stream: number) => StoredEntry | undefined

/** Prepares {@link LatestRead} on `db`. */
export const prepareLatest = (db: Database.Database): LatestRead => {
  // The tail block's `last_ts` and its last entry's JSON as text: no Buffer per read (entry layout: entryBlocks.js).
  const statement = db.prepare<[number], [number, string]>(Sql.latest).raw() as unknown as {
    get(stream: number): [number, string] | undefined
  }
  return (stream) => {
    const row = statement.get(stream)
    return row === undefined ? undefined : { ts: row[0] as Micros, json: row[1] }
  }
}

// Appends the entries encoded in `buf[0..end)` (strictly ascending, all newer than the stream's entries) to the
// stream's tail block and new blocks, as rows of the block upsert queued in `rows`, the blocks being views of `buf`
// (nothing encoded again); returns the new tail.
// A new block is written with its summary once closed (full, or followed by another block of the same append); a
// continued tail block is summarised by the upsert when it fills (`appendRowsSql`).
const appendEncoded = (
  rows: Array<number | Buffer | null>,
  stream: number,
  buf: Buffer,
  end: number,
  tail: Tail
): Tail => {
  let t = tail
  const blocks = splitBlocks(buf, end, t?.[1] ?? 0, t?.[3] ?? 0)
  for (let i = 0; i < blocks.length; i++) {
    const { from, to, data, lastAt, continues } = blocks[i]!
    const last = data.readDoubleLE(lastAt)
    const n = to - from
    if (continues && t !== null) {
      rows.push(stream, t[0], last, n, lastAt, data, null)
      t = [t[0], t[1] + n, last, t[3] + data.length]
    } else {
      const first = data.readDoubleLE(0)
      const closed = n >= blockSize || i < blocks.length - 1
      rows.push(stream, first, last, n, lastAt, data, closed ? summaryOf(data, n) : null)
      t = [first, n, last, data.length]
    }
  }
  return t
}

/**
 * Entries per stream from which a call's entries start a block of their own rather than continuing the stream's tail
 * block: a call that fills a block by itself (a batch, a line protocol body). Its blocks then never span another
 * call's, so a late batch of another client (two agents writing one series, each a second apart) lands in the gap
 * between two calls' blocks, inserted as new rows, instead of inside a block spanning both, which it would have to be
 * merged into (a read, a rewrite and an `UPDATE` of that block; the `lp` benchmark). Calls of fewer entries
 * (single points) go on filling the tail block.
 */
export const ownBlockEntries = blockSize

// `appendEncoded` of `buf[from..end)`, where `cuts` (ascending byte offsets into `buf`) are the starts of calls that
// begin blocks of their own (see `ownBlockEntries`): the tail block is not continued at a cut. Returns the new tail.
const appendCalls = (
  rows: Array<number | Buffer | null>,
  stream: number,
  buf: Buffer,
  from: number,
  end: number,
  tail: Tail,
  cuts: ReadonlyArray<number> | undefined
): Tail => {
  // No cuts (no call of `ownBlockEntries` entries, or a queue sorted again): one append, the queue itself when it
  // starts at 0 (no view of it made per stream on the single-point path).
  if (cuts === undefined) {
    return appendEncoded(rows, stream, from === 0 ? buf : buf.subarray(from, end), end - from, tail)
  }
  let t = tail
  let k = 0
  while (k < cuts.length && cuts[k]! < from) k++
  for (let start = from; start < end;) {
    const cut = k < cuts.length && cuts[k] === start
    if (cut) k++
    const stop = k < cuts.length && cuts[k]! < end ? cuts[k]! : end
    t = appendEncoded(rows, stream, buf.subarray(start, stop), stop - start, cut ? null : t)
    start = stop
  }
  return t
}

const runAppendRows = (s: BlockStatements, rows: Array<number | Buffer | null>) => {
  let at = 0
  for (let k = 0; k < appendSizes.length; k++) {
    const width = appendSizes[k]! * appendRowWidth
    while (rows.length - at >= width) {
      s.appendRows[k]!.run(at === 0 && rows.length === width ? rows : rows.slice(at, at + width))
      at += width
    }
  }
}

/**
 * Entries not yet stored, in the order they were produced, stored in the streams' blocks (migration 0007,
 * `entryBlocks.js`) by {@link EntryBatch.flush}: a stream's entries that are ascending (once sorted) and newer than its
 * tail block are appended (to the tail block, then new blocks of up to 32 entries or 16 KiB; a call of
 * {@link ownBlockEntries} entries or more begins new blocks instead), every stream's in one multi-row upsert; the
 * others (replacements, back-fills) are merged into the blocks whose ranges hold them, a later entry with the same
 * `(stream, ts)` replacing an earlier one (docs/api.md section 3). A group commit queues the entries
 * of all its calls and flushes once, so a stream written by several calls of a group costs one upsert row, not one per
 * call (100-stream pushes spent a third of the server's CPU in the per-call upserts).
 */
export class EntryBatch {
  private byStream = new Map<number, Queued>()

  /**
   * `tails`: the tail blocks the writer knows, kept across calls by {@link LastTsCache} (and forgotten with it);
   * without it each flush reads them.
   */
  constructor(
    private readonly statements: BlockStatements,
    private readonly tails: Map<number, Tail> = new Map()
  ) {}

  // Numbers the calls whose entries are queued (see `add`).
  private call = 0

  /** The entries added from now on are another call's (see {@link add}). */
  nextCall(): void {
    this.call++
  }

  /**
   * Queues one entry: stream id, `ts` (microseconds), decimation value, point JSON. A call whose first entry is not
   * above the stream's entries queued by earlier calls begins an ascending run of its own, put in order when the queue
   * is stored: merged on the bytes when no two runs hold the same `ts` (two clients' batches of different seconds), else
   * sorted, a later entry with the same `ts` replacing an earlier one.
   */
  add(stream: number, ts: number, value: number | null, json: string): void {
    let q = this.byStream.get(stream)
    const need = 20 + 3 * json.length
    if (q === undefined) {
      const buf = Buffer.allocUnsafe(Math.max(512, 2 * need))
      q = {
        buf,
        view: viewOf(buf),
        end: 0,
        lastTs: ts,
        ascending: true,
        call: this.call,
        callStart: 0,
        callEntries: 0,
        cuts: undefined,
        runs: undefined
      }
      this.byStream.set(stream, q)
    } else {
      if (q.call !== this.call) {
        endCall(q)
        q.callStart = q.end
        q.call = this.call
        if (ts <= q.lastTs) (q.runs ??= [0]).push(q.end)
      } else if (ts <= q.lastTs) q.ascending = false
      q.lastTs = ts
      if (q.end + need > q.buf.length) {
        const buf = Buffer.allocUnsafe(2 * (q.end + need))
        q.buf.copy(buf, 0, 0, q.end)
        q.buf = buf
        q.view = viewOf(buf)
      }
    }
    q.end += writeEntry(q.buf, q.view, { ts, value, json }, q.end)
    q.callEntries++
  }

  /** Whether entries of `stream` are queued (a read of its stored entries must {@link flush} first). */
  has(stream: number): boolean {
    return this.byStream.has(stream)
  }

  /** Stores the queued entries (throws SQLite errors; the batch is emptied either way). */
  flush(): void {
    const byStream = this.byStream
    if (byStream.size === 0) return
    this.byStream = new Map()
    const appends: Array<number | Buffer | null> = []
    for (const [stream, q] of byStream) this.store(stream, q, appends)
    runAppendRows(this.statements, appends)
  }

  // Stores a stream's queued entries: merged ones at once, appended ones as rows of `appends` (run by the caller).
  private store(stream: number, q: Queued, appends: Array<number | Buffer | null>): void {
    const s = this.statements
    const tails = this.tails
    let tail = tails.get(stream)
    if (tail === undefined) {
      tail = (s.tail.get(stream) as Tail | undefined) ?? null
      tails.set(stream, tail)
    }
    // Runs of calls queued out of order are merged on their bytes (their cuts moved with them) when no two hold the
    // same `ts`; else, and for entries out of order within one call, the entries are sorted, a later entry with the
    // same `ts` replacing an earlier one, and encoded again. From here on they are stored as an ascending queue is.
    let buf = q.buf
    let end = q.end
    endCall(q)
    let cuts = q.cuts
    const runs = q.runs
    const ordered =
      q.ascending && runs !== undefined && runs.length <= maxMergedRuns
        ? mergeEncodedRuns(buf, end, runs, cuts)
        : undefined
    if (ordered !== undefined) {
      buf = ordered.buf
      cuts = ordered.cuts
    } else if (!q.ascending || q.runs !== undefined) {
      buf = sortEncoded(q.buf, q.end)
      end = buf.length
      // Sorted again, the calls' entries are no longer where the cuts say: no cuts then.
      cuts = undefined
    }
    if (tail === null || buf.readDoubleLE(0) > tail[2]) {
      tails.set(stream, appendCalls(appends, stream, buf, 0, end, tail, cuts))
      return
    }
    // Late entries (a late batch and the calls after it, or an out-of-order call): those up to the tail block's last
    // `ts` are merged into the blocks holding their range (new blocks in gaps between stored ones queued with the
    // appends), the rest appended, as encoded, to the tail block; a merge into stored blocks may have changed the
    // tail block, which is then read again.
    let at = 0
    while (at < end && buf.readDoubleLE(at) <= tail[2]) at += 20 + buf.readUInt32LE(at + 16)
    const rewrote = mergeEncoded(s, stream, buf, at, appends)
    if (at === end) {
      if (rewrote) tails.delete(stream)
      return
    }
    if (rewrote) tail = (s.tail.get(stream) as Tail | undefined) ?? null
    tails.set(stream, appendCalls(appends, stream, buf, at, end, tail, cuts))
  }

  /** Forgets the queued entries (their call failed). */
  discard(): void {
    this.byStream = new Map()
  }
}

// A stream's queued entries, encoded as they are queued (`buf[0..end)`, the block layout): a group's entries are
// held as bytes rather than as an object each, which a young-generation GC would copy until the group ends
// (GC took 8 to 15% of a group of 1,000-point batches).
interface Queued {
  buf: Buffer
  view: DataView
  end: number
  lastTs: number
  ascending: boolean
  // The call that queued the last entry (`EntryBatch.nextCall`).
  call: number
  // Where that call's entries start in `buf`, and how many it queued.
  callStart: number
  callEntries: number
  // The starts (offsets in `buf`, ascending) of the calls that begin blocks of their own (see `ownBlockEntries`).
  cuts: Array<number> | undefined
  // Where the queue's ascending runs start (offsets in `buf`, the first 0) once a call was queued out of order.
  runs: Array<number> | undefined
}

// Ends the queue's current call: a call of `ownBlockEntries` entries or more begins blocks of its own.
const endCall = (q: Queued): void => {
  if (q.callEntries >= ownBlockEntries) (q.cuts ??= []).push(q.callStart)
  q.callEntries = 0
}

/**
 * The highest assigned `ts` of each stream the writer has seen, so that a write does not read its stream's row
 * (one statement per point fewer), and the new `last_ts` of every stream a transaction moved, stored once per
 * stream by {@link LastTsCache.flush} before the commit rather than once per write.
 *
 * It is only as good as its validation: one connection writes through it, and {@link LastTsCache.validate} (run
 * inside each write transaction, once the write lock is held) forgets everything when the file changed in a way the
 * cache did not see: `data_version` moves when another connection (another process, `dashstream decimate`)
 * committed; `total_changes()` moves when this connection changed rows outside the cache's transactions (a widget
 * deleted or created, a decimation pass, an import). A stream deleted meanwhile is then read again and found gone.
 * Within a transaction nothing else can write (the write lock is held and better-sqlite3 runs the transaction start
 * to commit without yielding).
 */
export class LastTsCache {
  private readonly known = new Map<number, Micros | null>()
  /** The tail blocks of the streams (see {@link EntryBatch}), trusted exactly as long as `known`. */
  readonly tails = new Map<number, Tail>()
  private readonly dirty = new Set<number>()
  // While a call runs in a savepoint: what to put back if it is rolled back (id, previous value or absent, was dirty).
  private undo: Array<[number, Micros | null | undefined, boolean]> | undefined = undefined
  // The change counts after the last transaction that went through this cache; undefined: nothing is trusted.
  private seen: [number, number] | undefined = undefined
  // The change counts read by `seal` in the open transaction, trusted once it committed.
  private sealed: [number, number] | undefined = undefined

  /** At most this many streams are remembered; past it the cache starts again at the next transaction. */
  static readonly maxStreams = 100_000

  constructor(private readonly statements: WriteStatements) {}

  /**
   * Call first in each write transaction: forgets everything unless the file is as this cache left it (see the
   * class). Throws SQLite errors.
   */
  validate(): void {
    const now = this.statements.changeCounts.get()!
    const seen = this.seen
    if (seen === undefined || seen[0] !== now[0] || seen[1] !== now[1] || this.known.size > LastTsCache.maxStreams) {
      this.known.clear()
      this.tails.clear()
    }
    this.dirty.clear()
    this.undo = undefined
    this.seen = undefined
    this.sealed = undefined
  }

  /** The stream's highest assigned `ts` (`null`: none yet), `undefined` when the stream is deleted. */
  get(stream: number): Micros | null | undefined {
    const cached = this.known.get(stream)
    if (cached !== undefined || this.known.has(stream)) return cached
    const read = this.statements.lastTs.get(stream) as Micros | null | undefined
    if (read !== undefined) this.known.set(stream, read)
    return read
  }

  /** Records the stream's new highest `ts`, stored by {@link flush}. */
  set(stream: number, ts: Micros | null): void {
    if (this.undo !== undefined) this.undo.push([stream, this.known.get(stream), this.dirty.has(stream)])
    this.known.set(stream, ts)
    this.dirty.add(stream)
  }

  /** A call starts in a savepoint: its changes to the cache can be undone by {@link rollback}. */
  mark(): void {
    this.undo = []
  }

  /** The call's savepoint was rolled back: puts back what it changed. */
  rollback(): void {
    this.tails.clear()
    const undo = this.undo
    this.undo = undefined
    if (undo === undefined) return
    for (let i = undo.length - 1; i >= 0; i--) {
      const [stream, value, wasDirty] = undo[i]!
      if (value === undefined) this.known.delete(stream)
      else this.known.set(stream, value)
      if (!wasDirty) this.dirty.delete(stream)
    }
  }

  /** The call's savepoint was released: its changes stay. */
  release(): void {
    this.undo = undefined
  }

  /** Stores the new `last_ts` of every stream moved since {@link validate}; call before `COMMIT`. Throws SQLite errors. */
  flush(): void {
    const setLastTs = this.statements.setLastTs
    for (const stream of this.dirty) setLastTs.run(this.known.get(stream)!, stream)
    this.dirty.clear()
  }

  /**
   * Call last in each write transaction, after its last statement and before `COMMIT`: reads the change counts that
   * {@link committed} makes the next {@link validate} compare with. Throws SQLite errors.
   *
   * They are read inside the transaction, while the write lock is held: read after `COMMIT`, `data_version` would
   * already count a commit another process made between that `COMMIT` and the read, and the next transaction would
   * trust tails and last `ts` values that commit had changed (a delta built on a stale latest entry, a block
   * rewritten without the other process's entries). `COMMIT` itself changes neither count.
   */
  seal(): void {
    this.sealed = this.statements.changeCounts.get()!
  }

  /** The transaction committed: the next {@link validate} compares with the counts {@link seal} read. */
  committed(): void {
    this.seen = this.sealed
    this.sealed = undefined
  }

  /** The transaction failed or was rolled back: nothing is trusted any more. */
  reset(): void {
    this.known.clear()
    this.tails.clear()
    this.dirty.clear()
    this.undo = undefined
    this.seen = undefined
    this.sealed = undefined
  }
}

/** What {@link applyWrites} works with: the statements, the last-`ts` cache and the batch of entries to store. */
export interface WritePath {
  readonly statements: WriteStatements
  readonly lastTs: LastTsCache
  readonly entries: EntryBatch
}

/** A write path over `statements`, with an empty cache and batch. */
export const makeWritePath = (statements: WriteStatements): WritePath => {
  const lastTs = new LastTsCache(statements)
  return { statements, lastTs, entries: new EntryBatch(statements, lastTs.tails) }
}

/**
 * Whether changes of a stream are collected: only streams that someone follows. Safe to decide while applying: a
 * subscriber that starts following after that reads the backlog after this synchronous transaction committed.
 */
export type Followed = (stream: StreamId) => boolean

/**
 * The core's {@link WritePlan} over a write path: it loads a stream's highest assigned `ts` through the last-`ts`
 * cache and, when an operation needs it, its latest entry, inside the caller's transaction. One per connection,
 * reused. (The latest entry is read from the table, after storing the entries queued in `w.entries` when the stream
 * has some: earlier calls of a group queue theirs, see {@link applyWrites}.)
 */
export const writePlan = (w: WritePath): WritePlan =>
  new WritePlan({
    lastTs: (stream) => w.lastTs.get(stream),
    latest: (stream) => {
      if (w.entries.has(stream)) w.entries.flush()
      const row = w.statements.latest(stream)
      return row === undefined ? null : { ts: row.ts as Micros, point: JSON.parse(row.json) as StoredPoint }
    }
  })

/**
 * Applies one `write` call's writes over a transaction the caller has opened and validated the cache in
 * (`w.lastTs.validate()`): `plan` (see {@link writePlan}, reset here) plans them in order against the stored state,
 * then each planned mutation is stored (a clear also records its `ts` as the stream's `cleared_ts`). The new last
 * `ts` of each stream goes into `w.lastTs`, stored by `w.lastTs.flush()`, and the entries of the call are queued in
 * `w.entries`, stored by `w.entries.flush()`: the caller runs both before `COMMIT` (entries first), after one call or
 * after a group of them (queued entries are flushed before a clear, so a clear never deletes what follows it, and
 * before the plan reads a stream's latest entry). With `changes`, the changes of every write to a `followed` stream are appended to it,
 * for the caller to publish once committed. Synchronous and free of transaction control, so a group commit can run
 * several calls through it inside one transaction.
 *
 * Returns the domain error the call fails with (`InvalidPoint`, or `StreamNotFound` for a deleted widget),
 * `undefined` on success; throws SQLite errors. A call that fails with a domain error has changed nothing of its own,
 * not even the cache: the plan finds every such error before the first statement that changes anything (it may have
 * stored earlier calls' queued entries). Group commit relies
 * on this to run one-write calls without a savepoint: keep it so.
 */
export const applyWrites = (
  w: WritePath,
  plan: WritePlan,
  writes: ReadonlyArray<StreamWrite>,
  now: Micros,
  followed?: Followed,
  changes?: Array<PendingChange>
): PlanError | undefined => {
  plan.reset()
  const error = plan.add(writes, now)
  if (error !== undefined) return error
  const s = w.statements
  const batch = w.entries
  batch.nextCall()
  for (let i = 0; i < plan.size; i++) {
    const id = plan.streamAt(i)
    const m = plan.mutation(i)
    if (m.clear) {
      batch.flush()
      s.clear.run(id)
      w.lastTs.tails.delete(id)
      s.setClearedTs.run(m.clearedAt, id)
    }
    const entries = m.entries
    for (let j = 0; j < entries.length; j++) {
      const e = entries[j]!
      batch.add(id, e.ts, e.value, e.json)
    }
    if (m.lastTs !== plan.before(i)) w.lastTs.set(id, m.lastTs)
  }
  if (changes !== undefined && followed !== undefined) plan.changes(followed, changes)
  return undefined
}
