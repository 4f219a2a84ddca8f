import type Database from "better-sqlite3"
import {
  type Micros,
  type PendingChange,
  type PlanError,
  type StoredEntry,
  type StoredPoint,
  type StreamId,
  type StreamWrite,
  WritePlan
} from "@dashstream/core"
import { appendRowsSql, Sql } from "./statements.js"
import {
  type BlockEntry,
  blockBytes,
  blockEnd,
  blockSize,
  decodeBlock,
  encodeBlock,
  encodeBlocks
} from "@dashstream/core/entryBlocks"

/** The statements that store entries in blocks (see {@link EntryBatch}), prepared once per connection. */
export interface BlockStatements {
  readonly tail: Database.Statement<[number], [number, number, number, number]>
  readonly appendRows: ReadonlyArray<Database.Statement<[Array<number | Buffer>]>>
  readonly insertBlock: Database.Statement<[number, number, number, number, number, Buffer]>
  readonly blockAt: Database.Statement<
    [number, number],
    { id: number; first_ts: number; last_ts: number; data: Buffer }
  >
  readonly firstBlock: Database.Statement<[number], { id: number; first_ts: number; last_ts: number; data: Buffer }>
  readonly nextFirst: Database.Statement<[number, number], number>
  readonly updateBlock: Database.Statement<[number, number, number, number, Buffer, number]>
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

/** Prepares {@link BlockStatements}. Throws when `entry_blocks` is missing. */
export const prepareBlockStatements = (db: Database.Database): BlockStatements => ({
  tail: db.prepare<[number], [number, number, number, number]>(Sql.tail).raw() as never,
  appendRows: appendSizes.map((k) => db.prepare<[Array<number | Buffer>]>(appendRowsSql(k))),
  blockAt: db.prepare(Sql.blockAt),
  firstBlock: db.prepare(Sql.firstBlock),
  nextFirst: db.prepare<[number, number], number>(Sql.nextFirst).pluck(),
  updateBlock: db.prepare(Sql.updateBlock),
  insertBlock: db.prepare(Sql.insertBlock)
})

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

// Appends `list` (strictly ascending, all newer than the stream's entries) to the stream's tail block and new blocks,
// as rows of the block upsert queued in `rows`; returns the new tail.
const appendEntries = (
  rows: Array<number | Buffer>,
  stream: number,
  list: ReadonlyArray<BlockEntry>,
  tail: Tail
): Tail => {
  let t = tail
  for (const { from, to, data, lastAt, continues } of encodeBlocks(list, 0, list.length, t?.[1] ?? 0, t?.[3] ?? 0)) {
    const last = list[to - 1]!.ts
    if (continues && t !== null) {
      rows.push(stream, t[0], last, to - from, lastAt, data)
      t = [t[0], t[1] + to - from, last, t[3] + data.length]
    } else {
      rows.push(stream, list[from]!.ts, last, to - from, lastAt, data)
      t = [list[from]!.ts, to - from, last, data.length]
    }
  }
  return t
}

const runAppendRows = (s: BlockStatements, rows: Array<number | Buffer>) => {
  let at = 0
  for (let k = 0; k < appendSizes.length; k++) {
    const width = appendSizes[k]! * 6
    while (rows.length - at >= width) {
      s.appendRows[k]!.run(at === 0 && rows.length === width ? rows : rows.slice(at, at + width))
      at += width
    }
  }
}

// Stores `list` (any order; a later entry with the same ts wins) into the stream's blocks: each entry goes to the
// block with the greatest first_ts <= its ts (the first block when none), which is decoded, merged and re-encoded.
const mergeEntries = (s: BlockStatements, stream: number, list: ReadonlyArray<BlockEntry>) => {
  const sorted = list
    .map((e, k) => [e, k] as const)
    .sort((a, b) => a[0].ts - b[0].ts || a[1] - b[1])
    .map(([e]) => e)
  const unique: Array<BlockEntry> = []
  for (const e of sorted) {
    if (unique.length > 0 && unique[unique.length - 1]!.ts === e.ts) unique[unique.length - 1] = e
    else unique.push(e)
  }
  let idx = 0
  while (idx < unique.length) {
    const block = s.blockAt.get(stream, unique[idx]!.ts) ?? s.firstBlock.get(stream)
    if (block === undefined) {
      const rows: Array<number | Buffer> = []
      appendEntries(rows, stream, unique.slice(idx), null)
      runAppendRows(s, rows)
      return
    }
    const next = s.nextFirst.get(stream, block.first_ts)
    let k = idx
    while (k < unique.length && (next === undefined || unique[k]!.ts < next)) k++
    if (block.first_ts <= unique[idx]!.ts && unique[idx]!.ts > block.last_ts) {
      // Every entry taken lies in the gap after this block (an older batch arriving late): new blocks, nothing decoded.
      for (const { from, to, data, lastAt } of encodeBlocks(unique, idx, k)) {
        s.insertBlock.run(stream, unique[from]!.ts, unique[to - 1]!.ts, to - from, lastAt, data)
      }
      idx = k
      continue
    }
    const old = decodeBlock(block.data)
    const merged: Array<BlockEntry> = []
    let a = 0
    let b = idx
    while (a < old.length || b < k) {
      if (b >= k || (a < old.length && old[a]!.ts < unique[b]!.ts)) merged.push(old[a++]!)
      else {
        if (a < old.length && old[a]!.ts === unique[b]!.ts) a++
        merged.push(unique[b++]!)
      }
    }
    // A merge that still fits twice the bounds stays one block (a replacement does not split a full block in two).
    const whole = blockEnd(merged, 0, merged.length, 0, 0, 2 * blockSize, 2 * blockBytes) === merged.length
    const firstEnd = whole ? merged.length : blockEnd(merged, 0, merged.length)
    const { data, lastAt } = encodeBlock(merged, 0, firstEnd)
    s.updateBlock.run(merged[0]!.ts, merged[firstEnd - 1]!.ts, firstEnd, lastAt, data, block.id)
    for (let i = firstEnd, j = firstEnd; i < merged.length; i = j) {
      j = blockEnd(merged, i, merged.length)
      const chunk = encodeBlock(merged, i, j)
      s.insertBlock.run(stream, merged[i]!.ts, merged[j - 1]!.ts, j - i, chunk.lastAt, chunk.data)
    }
    idx = k
  }
}

/**
 * Entries of the current call not yet stored, in the order they were produced, stored in the streams' blocks
 * (migration 0007, `entryBlocks.js`) by {@link EntryBatch.flush}: a stream's entries that are ascending and newer than
 * its tail block are appended (to the tail block, then new blocks of up to 32 entries or 16 KiB), every stream's in one multi-row upsert; the
 * others (replacements, back-fills, any order) are merged into the blocks whose ranges hold them, a later entry with
 * the same `(stream, ts)` replacing an earlier one (contract section 3).
 */
export class EntryBatch {
  private rows: Array<number | string | null> = []

  /**
   * `tails`: the tail blocks the writer knows, kept across calls by {@link LastTsCache} (and forgotten with it);
   * without it each flush reads them.
   */
  constructor(
    private readonly statements: BlockStatements,
    private readonly tails: Map<number, Tail> = new Map()
  ) {}

  /** Queues one entry: stream id, `ts` (microseconds), decimation value, point JSON. */
  add(stream: number, ts: number, value: number | null, json: string): void {
    this.rows.push(stream, ts, value, json)
  }

  /** Stores the queued entries (throws SQLite errors; the batch is emptied either way). */
  flush(): void {
    const rows = this.rows
    if (rows.length === 0) return
    this.rows = []
    const byStream = new Map<number, Array<BlockEntry>>()
    for (let i = 0; i < rows.length; i += 4) {
      const stream = rows[i] as number
      let list = byStream.get(stream)
      if (list === undefined) byStream.set(stream, (list = []))
      list.push({ ts: rows[i + 1] as number, value: rows[i + 2] as number | null, json: rows[i + 3] as string })
    }
    const s = this.statements
    const tails = this.tails
    const appends: Array<number | Buffer> = []
    for (const [stream, list] of byStream) {
      let ascending = true
      for (let i = 1; i < list.length && ascending; i++) ascending = list[i]!.ts > list[i - 1]!.ts
      let tail = ascending ? tails.get(stream) : undefined
      if (ascending && tail === undefined) {
        tail = (s.tail.get(stream) as Tail | undefined) ?? null
        tails.set(stream, tail)
      }
      if (ascending && (tail === null || list[0]!.ts > tail![2])) {
        tails.set(stream, appendEntries(appends, stream, list, tail!))
      } else {
        tails.delete(stream)
        mergeEntries(s, stream, list)
      }
    }
    runAppendRows(s, appends)
  }

  /** Forgets the queued entries (their call failed). */
  discard(): void {
    this.rows = []
  }
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

  /** The transaction committed: remembers the change counts the next {@link validate} compares with. */
  committed(): void {
    this.seen = this.statements.changeCounts.get()!
  }

  /** The transaction failed or was rolled back: nothing is trusted any more. */
  reset(): void {
    this.known.clear()
    this.tails.clear()
    this.dirty.clear()
    this.undo = undefined
    this.seen = undefined
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
 * reused. (The latest entry is read from the table: {@link applyWrites} stores every call's entries before it
 * returns, so the next call's plan sees them.)
 */
export const writePlan = (w: WritePath): WritePlan =>
  new WritePlan({
    lastTs: (stream) => w.lastTs.get(stream),
    latest: (stream) => {
      const row = w.statements.latest(stream)
      return row === undefined ? null : { ts: row.ts as Micros, point: JSON.parse(row.json) as StoredPoint }
    }
  })

/**
 * Applies one `write` call's writes over a transaction the caller has opened and validated the cache in
 * (`w.lastTs.validate()`): `plan` (see {@link writePlan}, reset here) plans them in order against the stored state,
 * then each planned mutation is stored (a clear also records its `ts` as the stream's `cleared_ts`). The new last
 * `ts` of each stream goes into `w.lastTs`, stored by `w.lastTs.flush()`, which the caller runs before `COMMIT`; the
 * entries of the call are stored in blocks before it returns (flushed before a clear, so a clear never
 * deletes what follows it). With `changes`, the changes of every write to a `followed` stream are appended to it,
 * for the caller to publish once committed. Synchronous and free of transaction control, so a group commit can run
 * several calls through it inside one transaction.
 *
 * Returns the domain error the call fails with (`InvalidPoint`, or `StreamNotFound` for a deleted widget),
 * `undefined` on success; throws SQLite errors. A call that fails with a domain error has changed nothing, not even
 * the cache: the plan finds every such error before the first statement that changes anything. Group commit relies
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
  batch.flush()
  if (changes !== undefined && followed !== undefined) plan.changes(followed, changes)
  return undefined
}
