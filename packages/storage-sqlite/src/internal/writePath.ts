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
import { Sql } from "./statements.js"

/**
 * The prepared statements of the write path, prepared once per connection. `lastTs` is plucked (no row object per
 * call): it gives `undefined` for a deleted stream and `null` for one without entries yet.
 */
export interface WriteStatements {
  readonly lastTs: Database.Statement<[number], number | null>
  readonly latest: Database.Statement<[number], { ts: number; json: string }>
  readonly clear: Database.Statement<[number]>
  readonly setClearedTs: Database.Statement<[number | null, number]>
  readonly upsert: Database.Statement<[number, number, number | null, string]>
  readonly setLastTs: Database.Statement<[number | null, number]>
}

/** Prepares the write path's statements. Throws when the schema is missing (migrate first). */
export const prepareWriteStatements = (db: Database.Database): WriteStatements => ({
  lastTs: db.prepare<[number], number | null>(Sql.lastTs).pluck(),
  latest: db.prepare<[number], { ts: number; json: string }>(Sql.latest),
  clear: db.prepare(Sql.clear),
  setClearedTs: db.prepare(Sql.setClearedTs),
  upsert: db.prepare(Sql.upsert),
  setLastTs: db.prepare(Sql.setLastTs)
})

/**
 * Whether changes of a stream are collected: only streams that someone follows. Safe to decide while applying: a
 * subscriber that starts following after that reads the backlog after this synchronous transaction committed.
 */
export type Followed = (stream: StreamId) => boolean

/**
 * The core's {@link WritePlan} over the connection's statements: it loads a stream's highest assigned `ts` and,
 * when an operation needs it, its latest entry, inside the caller's transaction. One per connection, reused.
 */
export const writePlan = (s: WriteStatements): WritePlan =>
  new WritePlan({
    lastTs: (stream) => s.lastTs.get(stream) as Micros | null | undefined,
    latest: (stream) => {
      const row = s.latest.get(stream)
      return row === undefined ? null : { ts: row.ts as Micros, point: JSON.parse(row.json) as StoredPoint }
    }
  })

/**
 * Applies one `write` call's writes over a transaction the caller has opened: `plan` (see {@link writePlan}, reset
 * here) plans them in order against the stored state, then each planned mutation is stored (a clear also records its
 * `ts` as the stream's `cleared_ts`). With `changes`, the changes of every write to a `followed` stream are appended
 * to it, for the caller to publish once committed. Synchronous and free of transaction control, so a group commit
 * can run several calls through it inside one transaction.
 *
 * Returns the domain error the call fails with (`InvalidPoint`, or `StreamNotFound` for a deleted widget),
 * `undefined` on success; throws SQLite errors. A call that fails with a domain error has changed nothing: the plan
 * finds every such error before the first statement that changes anything. Group commit relies on this to run
 * one-write calls without a savepoint: keep it so.
 */
export const applyWrites = (
  s: WriteStatements,
  plan: WritePlan,
  writes: ReadonlyArray<StreamWrite>,
  now: Micros,
  followed?: Followed,
  changes?: Array<PendingChange>
): PlanError | undefined => {
  plan.reset()
  const error = plan.add(writes, now)
  if (error !== undefined) return error
  for (let i = 0; i < plan.size; i++) {
    const id = plan.streamAt(i)
    const m = plan.mutation(i)
    if (m.clear) {
      s.clear.run(id)
      s.setClearedTs.run(m.clearedAt, id)
    }
    const entries = m.entries
    for (let j = 0; j < entries.length; j++) {
      const e = entries[j]!
      s.upsert.run(id, e.ts, e.value, e.json)
    }
    if (m.lastTs !== plan.before(i)) s.setLastTs.run(m.lastTs, id)
  }
  if (changes !== undefined && followed !== undefined) plan.changes(followed, changes)
  return undefined
}
