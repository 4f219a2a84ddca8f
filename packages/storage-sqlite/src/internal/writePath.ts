import type Database from "better-sqlite3"
import {
  applyOp,
  mutationChanges,
  type StreamChange,
  type StreamId,
  type InvalidPoint,
  type Micros,
  needsLatest,
  type StoredPoint,
  type StreamNotFound,
  streamDeleted,
  type StreamWrite
} from "@dashstream/core"
import { Either } from "effect"
import { Sql } from "./statements.js"

/**
 * The prepared statements of the write path, prepared once per connection. The single-column reads are plucked
 * (no row object per call): `lastTs` gives `undefined` for a deleted stream and `null` for one without entries yet.
 */
export interface WriteStatements {
  readonly lastTs: Database.Statement<[number], number | null>
  readonly latestPoint: Database.Statement<[number], string>
  readonly clear: Database.Statement<[number]>
  readonly setClearedTs: Database.Statement<[number | null, number]>
  readonly upsert: Database.Statement<[number, number, number | null, string]>
  readonly setLastTs: Database.Statement<[number | null, number]>
}

/** Prepares the write path's statements. Throws when the schema is missing (migrate first). */
export const prepareWriteStatements = (db: Database.Database): WriteStatements => ({
  lastTs: db.prepare<[number], number | null>(Sql.lastTs).pluck(),
  latestPoint: db.prepare<[number], string>(Sql.latestPoint).pluck(),
  clear: db.prepare(Sql.clear),
  setClearedTs: db.prepare(Sql.setClearedTs),
  upsert: db.prepare(Sql.upsert),
  setLastTs: db.prepare(Sql.setLastTs)
})

/** The changes of one write, to publish once its transaction is durable (see `ChangeFeed`). */
export interface PendingChange {
  readonly stream: StreamId
  readonly changes: ReadonlyArray<StreamChange>
}

/**
 * Whether changes of a stream are collected: only streams that someone follows. Safe to decide while applying: a
 * subscriber that starts following after that reads the backlog after this synchronous transaction committed.
 */
export type Followed = (stream: StreamId) => boolean

/**
 * Applies one `write` call's writes, in order, over a transaction the caller has opened: for each, read the stream's
 * state, `applyOp`, store the mutation (a clear also records its `ts` as the stream's `cleared_ts`). With `changes`,
 * the changes of every write to a `followed` stream are appended to it, for the caller to publish once committed. Later writes see earlier ones (same transaction). The latest point is read
 * and parsed only for operations that need it ({@link needsLatest}). Synchronous and free of transaction control,
 * so a group commit can run several calls through it inside one transaction (each call in its own savepoint).
 * Returns the domain error the caller must roll back with (`InvalidPoint`, or `StreamNotFound` for a deleted
 * widget), `undefined` on success; throws SQLite errors. A write that fails with a domain error has changed nothing
 * itself (the error is found before its first statement that changes anything); earlier writes of the same call may
 * have. Group commit relies on this to run one-write calls without a savepoint: keep it so.
 */
export const applyWrites = (
  s: WriteStatements,
  writes: ReadonlyArray<StreamWrite>,
  now: Micros,
  followed?: Followed,
  changes?: Array<PendingChange>
): InvalidPoint | StreamNotFound | undefined => {
  for (let i = 0; i < writes.length; i++) {
    const write = writes[i]!
    const id = write.widget.id
    const lastTs = s.lastTs.get(id) as Micros | null | undefined
    if (lastTs === undefined) return streamDeleted(write)
    let latest: StoredPoint | null = null
    if (needsLatest(write.op)) {
      const json = s.latestPoint.get(id)
      if (json !== undefined) latest = JSON.parse(json) as StoredPoint
    }
    const mutation = applyOp(write.widget.type, write.op, { lastTs, latest }, now, write.path)
    if (Either.isLeft(mutation)) return mutation.left
    const m = mutation.right
    if (m.clear) {
      s.clear.run(id)
      s.setClearedTs.run(m.clearedAt, id)
    }
    const entries = m.entries
    for (let j = 0; j < entries.length; j++) {
      const e = entries[j]!
      s.upsert.run(id, e.ts, e.value, e.json)
    }
    if (m.lastTs !== lastTs) s.setLastTs.run(m.lastTs, id)
    if (changes !== undefined && followed !== undefined && followed(id)) {
      changes.push({ stream: id, changes: mutationChanges(m, lastTs) })
    }
  }
  return undefined
}
