import type Database from "better-sqlite3"
import {
  type Micros,
  type PendingChange,
  type PlanError,
  type StoredPoint,
  type StreamId,
  type StreamWrite,
  WritePlan
} from "@dashstream/core"
import { Sql, upsertRowsSql } from "./statements.js"

/**
 * The row counts of the multi-row upserts, largest first: a batch of n entries is stored with as few statements as
 * these sizes allow (1,000 entries: 3 x 256 + 7 x 32 + 2 x 4). One statement of 256 rows costs about half of 256
 * single-row statements in better-sqlite3 (binding is the same; the per-statement overhead is paid once).
 */
const upsertSizes = [256, 32, 4, 1] as const

/**
 * The prepared statements of the write path, prepared once per connection. The single-column reads are plucked
 * (no row object per call): `lastTs` gives `undefined` for a deleted stream and `null` for one without entries yet.
 * `upsertRows[k]` stores `upsertSizes[k]` entries (4 parameters each: stream id, ts, value, point JSON).
 * `changeCounts` reads `[data_version, total_changes()]`: what tells {@link LastTsCache} that the file changed
 * behind its back.
 */
export interface WriteStatements {
  readonly lastTs: Database.Statement<[number], number | null>
  readonly latest: Database.Statement<[number], { ts: number; json: string }>
  readonly clear: Database.Statement<[number]>
  readonly setClearedTs: Database.Statement<[number | null, number]>
  readonly upsertRows: ReadonlyArray<Database.Statement<[Array<number | string | null>]>>
  readonly setLastTs: Database.Statement<[number | null, number]>
  readonly changeCounts: Database.Statement<[], [number, number]>
}

/** Prepares the write path's statements. Throws when the schema is missing (migrate first). */
export const prepareWriteStatements = (db: Database.Database): WriteStatements => ({
  lastTs: db.prepare<[number], number | null>(Sql.lastTs).pluck(),
  latest: db.prepare<[number], { ts: number; json: string }>(Sql.latest),
  clear: db.prepare(Sql.clear),
  setClearedTs: db.prepare(Sql.setClearedTs),
  upsertRows: upsertSizes.map((n) => db.prepare<[Array<number | string | null>]>(upsertRowsSql(n))),
  setLastTs: db.prepare(Sql.setLastTs),
  changeCounts: db.prepare<[], [number, number]>(Sql.changeCounts).raw() as never
})

/**
 * Entries of the current call not yet stored, in the order they were produced, stored by {@link EntryBatch.flush}
 * with multi-row upserts. Rows of one statement are inserted one after another, so a later entry with the same
 * `(stream, ts)` still replaces an earlier one (contract section 3).
 */
export class EntryBatch {
  private rows: Array<number | string | null> = []

  constructor(private readonly statements: WriteStatements) {}

  /** Queues one entry: stream id, `ts` (microseconds), decimation value, point JSON. */
  add(stream: number, ts: number, value: number | null, json: string): void {
    this.rows.push(stream, ts, value, json)
  }

  /** Stores the queued entries (throws SQLite errors; the batch is emptied either way). */
  flush(): void {
    const rows = this.rows
    if (rows.length === 0) return
    this.rows = []
    let at = 0
    for (let k = 0; k < upsertSizes.length; k++) {
      const width = upsertSizes[k]! * 4
      const statement = this.statements.upsertRows[k]!
      while (rows.length - at >= width) {
        statement.run(at === 0 && rows.length === width ? rows : rows.slice(at, at + width))
        at += width
      }
    }
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
export const makeWritePath = (statements: WriteStatements): WritePath => ({
  statements,
  lastTs: new LastTsCache(statements),
  entries: new EntryBatch(statements)
})

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
      const row = w.statements.latest.get(stream)
      return row === undefined ? null : { ts: row.ts as Micros, point: JSON.parse(row.json) as StoredPoint }
    }
  })

/**
 * Applies one `write` call's writes over a transaction the caller has opened and validated the cache in
 * (`w.lastTs.validate()`): `plan` (see {@link writePlan}, reset here) plans them in order against the stored state,
 * then each planned mutation is stored (a clear also records its `ts` as the stream's `cleared_ts`). The new last
 * `ts` of each stream goes into `w.lastTs`, stored by `w.lastTs.flush()`, which the caller runs before `COMMIT`; the
 * entries of the call are stored with multi-row upserts before it returns (flushed before a clear, so a clear never
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
