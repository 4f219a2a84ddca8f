import { Context, Data, Effect } from "effect"
import type { AccountId, KeyDigest } from "./Account.js"
import type { DashboardId } from "./Dashboard.js"
import type { RotationId } from "./Rotation.js"
import { StorageError, type StorageFailure, StorageUnavailable } from "./Errors.js"
import type { Micros } from "./Time.js"
import type { ViewTokenDigest } from "./ViewToken.js"
import type { StreamId } from "./Widget.js"

/**
 * Copying a whole store into another (docs/api.md section 12: `dashstream copy --from URL --to URL`, also the backup):
 * the port each storage adapter implements, the rows it moves, and {@link copyStore}, the use case that moves them.
 *
 * Rows are copied as stored, not re-derived: stream ids, `ts` (integer microseconds), the point's JSON text, the
 * decimation `value`, each stream's `last_ts` and `cleared_ts`, and each dashboard's id, tiles JSON text and view
 * token digest, and each rotation's id, dashboards and view token digest, so the copy answers every read exactly as the
 * original, live event streams resume on it (docs/api.md section 10) and every dashboard's and rotation's view URL opens
 * the same page on it (docs/api.md sections 11 and 15).
 */

/** An account row. `createdAt` in integer microseconds. */
export interface AccountRecord {
  readonly id: AccountId
  readonly name: string
  readonly createdAt: number
}

/** An access key row: the key's SHA-256 digest (never the key), its account, and its times in microseconds. */
export interface AccessKeyRecord {
  readonly digest: KeyDigest
  readonly accountId: AccountId
  readonly createdAt: number
  /** When the key was revoked; `null` while it works. */
  readonly revokedAt: number | null
}

/** A stream row (one per widget). Times in integer microseconds. */
export interface StreamRecord {
  /** Kept in the copy, so that ids stay stable (and `id > after` paging goes on as in the original). */
  readonly id: StreamId
  readonly accountId: AccountId
  readonly name: string
  /** The widget type identifier, as stored. */
  readonly type: string
  readonly createdAt: number
  /** The highest `ts` ever assigned in the stream (kept across clears); `null` if none. */
  readonly lastTs: Micros | null
  /** The `ts` of the stream's last clear; `null` if never cleared. */
  readonly clearedTs: Micros | null
}

/**
 * A dashboard row, as stored (docs/api.md section 11): its id (a UUID), the JSON text of its tiles (which name streams,
 * not stream ids), the SHA-256 digest of its current view token and the token itself (`null` for a dashboard made
 * before tokens were kept), `createdAt` in integer microseconds. Dashboards have no other time: an update changes only
 * the name and tiles.
 */
export interface DashboardRecord {
  readonly id: DashboardId
  readonly accountId: AccountId
  readonly name: string
  /** The tiles array's JSON text, copied byte for byte. */
  readonly tiles: string
  readonly viewToken: ViewTokenDigest
  /** The view token itself, shown in the dashboard's share link; `null` when only its digest is known. */
  readonly viewTokenText: string | null
  readonly createdAt: number
}

/**
 * A rotation as stored (docs/api.md section 15): its id (a UUID), its dashboards' ids in order, the SHA-256 digest of its
 * current view token and the token itself (`null` when only the digest is known), `createdAt` in integer microseconds.
 */
export interface RotationRecord {
  readonly id: RotationId
  readonly accountId: AccountId
  readonly name: string
  readonly intervalSeconds: number
  readonly dashboardIds: ReadonlyArray<DashboardId>
  readonly viewToken: ViewTokenDigest
  /** The view token itself, shown in the rotation's share link; `null` when only its digest is known. */
  readonly viewTokenText: string | null
  readonly createdAt: number
}

/** An entry row of one stream: `ts` in integer microseconds, the decimation `value`, the point's JSON text. */
export interface EntryRecord {
  readonly ts: Micros
  readonly value: number | null
  readonly point: string
}

/**
 * The alert tables (docs/api.md section 18), copied row for row as stored, in this order (a table's references come
 * before it), each listed in the order of its key. The same tables and columns exist on both backends (SQLite
 * migration 0009, PostgreSQL 0010), so their rows move as plain column maps: receivers with their secrets, rules
 * with their evaluation state, version and receivers, and the transition history with every delivery's state.
 */
export const alertCopyTables = [
  { table: "alert_receivers", order: "id" },
  { table: "alert_rules", order: "id" },
  { table: "alert_rule_receivers", order: "rule_id, position" },
  { table: "alert_events", order: "seq" },
  { table: "alert_deliveries", order: "id" }
] as const

/** The name of an alert table (see {@link alertCopyTables}). */
export type AlertTable = (typeof alertCopyTables)[number]["table"]

/**
 * A row of an alert table: column name to value as the source reads it (an integer column may be a number or, on
 * PostgreSQL, its decimal text; each backend's insert takes either).
 */
export type AlertRowRecord = Readonly<Record<string, string | number | null>>

/** How much a store holds: what {@link copyStore} compares between the original and the copy. */
export interface StoreCounts {
  readonly accounts: number
  readonly accessKeys: number
  readonly widgets: number
  readonly dashboards: number
  readonly rotations: number
  /** Rows of each alert table. */
  readonly alertRows: Readonly<Record<AlertTable, number>>
  /** Entries of every stream that holds any, by stream id. */
  readonly entries: ReadonlyMap<StreamId, number>
}

/** A keyset-paged listing of one table of a {@link CopySource}: rows after `after`, at most `limit` (see there). */
export type CopyListing<Key, Row> = (
  after: Key | null,
  limit: number
) => Effect.Effect<ReadonlyArray<Row>, StorageFailure>

/**
 * One consistent, read-only view of a whole store. Each listing is keyset-paged: rows after `after` (`null`: from
 * the first) in ascending key order (account id, key digest, stream id, dashboard id, rotation id, `ts`), at most `limit` (a positive
 * integer), `[]` past the last one.
 */
export interface CopySource {
  readonly counts: Effect.Effect<StoreCounts, StorageFailure>
  readonly accounts: CopyListing<AccountId, AccountRecord>
  readonly accessKeys: CopyListing<KeyDigest, AccessKeyRecord>
  readonly streams: CopyListing<StreamId, StreamRecord>
  readonly dashboards: CopyListing<DashboardId, DashboardRecord>
  readonly rotations: CopyListing<RotationId, RotationRecord>
  readonly entries: (
    stream: StreamId,
    after: Micros | null,
    limit: number
  ) => Effect.Effect<ReadonlyArray<EntryRecord>, StorageFailure>
  /** Rows of an alert table in the order of its key, skipping `offset` (paged within the snapshot). */
  readonly alertRows: (
    table: AlertTable,
    offset: number,
    limit: number
  ) => Effect.Effect<ReadonlyArray<AlertRowRecord>, StorageFailure>
}

/**
 * The writing side of a copy, inside one transaction. Rows are inserted as given (stream ids included); an
 * account's rows come before its keys, streams and dashboards, dashboards before rotations, a stream before its
 * entries.
 */
export interface CopyTarget {
  /** Accounts in the store (the copy refuses a target that holds any). */
  readonly countAccounts: Effect.Effect<number, StorageFailure>
  readonly insertAccounts: (rows: ReadonlyArray<AccountRecord>) => Effect.Effect<void, StorageFailure>
  readonly insertAccessKeys: (rows: ReadonlyArray<AccessKeyRecord>) => Effect.Effect<void, StorageFailure>
  /** Inserts streams with their ids (later streams created in the store get higher ids). */
  readonly insertStreams: (rows: ReadonlyArray<StreamRecord>) => Effect.Effect<void, StorageFailure>
  /** Inserts dashboards with their ids, tiles JSON text and view token digests. */
  readonly insertDashboards: (rows: ReadonlyArray<DashboardRecord>) => Effect.Effect<void, StorageFailure>
  /** Inserts rotations with their ids, dashboards (in order) and view token digests. */
  readonly insertRotations: (rows: ReadonlyArray<RotationRecord>) => Effect.Effect<void, StorageFailure>
  readonly insertEntries: (stream: StreamId, rows: ReadonlyArray<EntryRecord>) => Effect.Effect<void, StorageFailure>
  /**
   * Inserts rows of an alert table as given (ids, `seq` and every state column included); after `alert_events`, the
   * store's next `seq` is above the copied ones.
   */
  readonly insertAlertRows: (
    table: AlertTable,
    rows: ReadonlyArray<AlertRowRecord>
  ) => Effect.Effect<void, StorageFailure>
}

/**
 * The storage port of copying (docs/api.md section 12), implemented by the SQLite and PostgreSQL adapters over a
 * migrated database.
 */
export class StoreCopy extends Context.Tag("@dashstream/core/StoreCopy")<
  StoreCopy,
  {
    /**
     * Runs `use` with a consistent snapshot of the whole store, unaffected by writes made meanwhile by running
     * servers (SQLite: one read transaction; PostgreSQL: a `REPEATABLE READ READ ONLY` transaction), and ends it
     * when `use` ends.
     */
    readonly read: <A, E, R>(
      use: (source: CopySource) => Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E | StorageFailure, R>
    /**
     * Runs `use` in one write transaction, committed when `use` succeeds and rolled back when it fails or is
     * interrupted: a copy that does not finish leaves nothing in the store (a killed process likewise, since an
     * uncommitted transaction never survives it).
     */
    readonly write: <A, E, R>(
      use: (target: CopyTarget) => Effect.Effect<A, E, R>
    ) => Effect.Effect<A, E | StorageFailure, R>
  }
>() {}

/**
 * Why a database cannot be the source of a copy (docs/api.md section 12: a backup job with a typo must fail loudly,
 * and copy reads its source without ever writing it, not even to bring its schema up to date):
 * - `missing`: no such SQLite file (it is not created);
 * - `not-dashstream`: no Dashstream schema (an empty file, another application's database, not a database at all);
 * - `older`: a Dashstream schema older than this version's (`dashstream migrate` brings it up to date);
 * - `newer`: a schema written by a newer version of Dashstream.
 */
export type SourceProblem = "missing" | "not-dashstream" | "older" | "newer"

/** The copy's source was refused before anything was read or written (see {@link SourceProblem}). */
export class SourceRefused extends Data.TaggedError("SourceRefused")<{ readonly problem: SourceProblem }> {}

/**
 * How a database's recorded migrations (`applied`, by name) compare with the ones this version knows (`known`):
 * `undefined` when they are the same, else the {@link SourceProblem}. No migration recorded is `not-dashstream`;
 * one this version does not know is `newer`; one of its own missing is `older`. Each adapter reads its own
 * migration table and asks this, so both backends refuse a source by the same rule.
 */
export const schemaProblem = (
  applied: ReadonlyArray<string>,
  known: ReadonlyArray<string>
): SourceProblem | undefined => {
  if (applied.length === 0) return "not-dashstream"
  const knownSet = new Set(known)
  if (applied.some((name) => !knownSet.has(name))) return "newer"
  const appliedSet = new Set(applied)
  return known.every((name) => appliedSet.has(name)) ? undefined : "older"
}

/** The copy's target already holds accounts: nothing was written. */
export class TargetNotEmpty extends Data.TaggedError("TargetNotEmpty")<{ readonly accounts: number }> {}

/** A storage failure during a copy, with the side it happened on. */
export class CopyStorageFailed extends Data.TaggedError("CopyStorageFailed")<{
  readonly side: "source" | "target"
  readonly cause: StorageFailure
}> {}

/** The copy was committed but its counts differ from the original's: `differences` lists each, in words. */
export class CopyMismatch extends Data.TaggedError("CopyMismatch")<{ readonly differences: ReadonlyArray<string> }> {}

/** Rows of each kind a copy moves (counted in the copy, or in the original's snapshot). */
export interface CopyTally {
  readonly accounts: number
  readonly accessKeys: number
  readonly widgets: number
  readonly dashboards: number
  readonly rotations: number
  readonly entries: number
}

/** Where a copy is, reported after every batch: the rows copied so far. */
export interface CopyProgress extends CopyTally {
  /** The table being copied. */
  readonly phase: "accounts" | "access keys" | "dashboards" | "rotations" | "widgets" | "entries" | "alerts"
  /** The original's totals, from its snapshot. */
  readonly total: CopyTally
}

/** How {@link copyStore} cuts its work. */
export interface CopyOptions {
  /** Rows read and inserted per batch (entries, accounts, keys, dashboards); default 5,000. Memory grows with it, not with the store. */
  readonly batchSize?: number
  /** Streams listed per batch; default 500. */
  readonly streamBatchSize?: number
  /** Told after every batch. */
  readonly onProgress?: (progress: CopyProgress) => Effect.Effect<void>
}

/** What a finished copy holds (equal in the original and the copy). */
export type CopyResult = CopyTally

const isStorageFailure = (u: unknown): u is StorageFailure =>
  u instanceof StorageError || u instanceof StorageUnavailable

const on =
  (side: "source" | "target") =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, StorageFailure> | CopyStorageFailed, R> =>
    Effect.mapError(effect, (error) =>
      isStorageFailure(error) ? new CopyStorageFailed({ side, cause: error }) : (error as Exclude<E, StorageFailure>)
    )

const sum = (entries: ReadonlyMap<StreamId, number>): number => {
  let n = 0
  for (const count of entries.values()) n += count
  return n
}

/**
 * Copies a table page by page: reads rows after the last key of the previous page and inserts them, until a page
 * comes back empty. A new table is one more call of this in {@link copyStore}.
 */
const copyPaged = <Row, Key, E1, E2>(
  read: (after: Key | null) => Effect.Effect<ReadonlyArray<Row>, E1>,
  key: (row: Row) => Key,
  insert: (rows: ReadonlyArray<Row>) => Effect.Effect<void, E2>
): Effect.Effect<void, E1 | E2> =>
  Effect.gen(function* () {
    let after: Key | null = null
    for (;;) {
      const rows = yield* read(after)
      if (rows.length === 0) return
      yield* insert(rows)
      after = key(rows[rows.length - 1]!)
    }
  })

/** The differences between the original's counts and the copy's, in words (empty when they match). */
export const countDifferences = (expected: StoreCounts, actual: StoreCounts): Array<string> => {
  const differences: Array<string> = []
  for (const name of ["accounts", "accessKeys", "widgets", "dashboards", "rotations"] as const) {
    if (expected[name] !== actual[name]) {
      differences.push(
        `${name === "accessKeys" ? "access keys" : name}: ${expected[name]} in the source, ${actual[name]} in the copy`
      )
    }
  }
  const streams = new Set([...expected.entries.keys(), ...actual.entries.keys()])
  let streamsDiffering = 0
  for (const stream of streams) {
    const e = expected.entries.get(stream) ?? 0
    const a = actual.entries.get(stream) ?? 0
    if (e !== a) {
      if (streamsDiffering < 10) differences.push(`entries of stream ${stream}: ${e} in the source, ${a} in the copy`)
      streamsDiffering++
    }
  }
  if (streamsDiffering > 10) differences.push(`and ${streamsDiffering - 10} more streams whose entry counts differ`)
  for (const { table } of alertCopyTables) {
    if (expected.alertRows[table] !== actual.alertRows[table]) {
      differences.push(`${table}: ${expected.alertRows[table]} in the source, ${actual.alertRows[table]} in the copy`)
    }
  }
  return differences
}

/**
 * Copies every account, access key digest, widget, dashboard, rotation and entry of `source` into `target` (docs/api.md
 * sections 12 and 15), and the alert tables (receivers, rules, transitions and deliveries, section 18), then checks that the copy's counts (accounts, access keys, widgets, dashboards, rotations,
 * entries per stream, rows of each alert table) equal the original's.
 *
 * The original is read in one snapshot (see `StoreCopy.read`), in batches of `batchSize` rows, so memory stays flat
 * whatever the number of entries. Everything is written in one transaction of `target`, which first checks that it
 * holds no account: an interrupted copy leaves the target as it was, so it can simply be run again. The counts are
 * compared after the commit, reading the target afresh.
 *
 * Fails with {@link TargetNotEmpty} (nothing written), {@link CopyStorageFailed} (nothing written unless the failure
 * came after the commit) or {@link CopyMismatch} (the copy was committed; its counts differ).
 */
export const copyStore = (
  source: StoreCopy["Type"],
  target: StoreCopy["Type"],
  options: CopyOptions = {}
): Effect.Effect<CopyResult, TargetNotEmpty | CopyStorageFailed | CopyMismatch> =>
  Effect.gen(function* () {
    const batch = options.batchSize ?? 5_000
    const streamBatch = options.streamBatchSize ?? 500
    const report = options.onProgress ?? (() => Effect.void)
    const fromSource = on("source")
    const toTarget = on("target")
    const expected = yield* fromSource(
      source.read((from) =>
        Effect.gen(function* () {
          const counts = yield* fromSource(from.counts)
          const total = {
            accounts: counts.accounts,
            accessKeys: counts.accessKeys,
            widgets: counts.widgets,
            dashboards: counts.dashboards,
            rotations: counts.rotations,
            entries: sum(counts.entries)
          }
          const done = { accounts: 0, accessKeys: 0, widgets: 0, dashboards: 0, rotations: 0, entries: 0 }
          const progress = (phase: CopyProgress["phase"]) => report({ phase, ...done, total })
          // One table: its pages read from the snapshot, inserted, counted under `counter`, reported.
          const copyTable = <Row, Key>(
            counter: keyof typeof done,
            phase: CopyProgress["phase"],
            read: CopyListing<Key, Row>,
            key: (row: Row) => Key,
            insert: (rows: ReadonlyArray<Row>) => Effect.Effect<void, StorageFailure>,
            children: (rows: ReadonlyArray<Row>) => Effect.Effect<void, CopyStorageFailed> = () => Effect.void,
            limit = batch
          ) =>
            copyPaged(
              (after: Key | null) => fromSource(read(after, limit)),
              key,
              (rows) =>
                Effect.gen(function* () {
                  yield* toTarget(insert(rows))
                  done[counter] += rows.length
                  yield* progress(phase)
                  yield* children(rows)
                })
            )
          yield* toTarget(
            target.write((to) =>
              Effect.gen(function* () {
                const accounts = yield* toTarget(to.countAccounts)
                if (accounts > 0) return yield* new TargetNotEmpty({ accounts })
                yield* copyTable("accounts", "accounts", from.accounts, (row) => row.id, to.insertAccounts)
                yield* copyTable("accessKeys", "access keys", from.accessKeys, (row) => row.digest, to.insertAccessKeys)
                yield* copyTable("dashboards", "dashboards", from.dashboards, (row) => row.id, to.insertDashboards)
                yield* copyTable("rotations", "rotations", from.rotations, (row) => row.id, to.insertRotations)
                // Each page of streams is inserted, then the entries of its streams, a batch at a time.
                yield* copyTable(
                  "widgets",
                  "widgets",
                  from.streams,
                  (row) => row.id,
                  to.insertStreams,
                  (streams) =>
                    Effect.forEach(
                      streams,
                      (stream) =>
                        copyTable(
                          "entries",
                          "entries",
                          (after: Micros | null, limit) => from.entries(stream.id, after, limit),
                          (row) => row.ts,
                          (entries) => to.insertEntries(stream.id, entries)
                        ),
                      { discard: true }
                    ),
                  streamBatch
                )
                // The alert tables after the streams their rules watch, each paged by offset in the snapshot.
                for (const { table } of alertCopyTables) {
                  for (let offset = 0; ;) {
                    const rows = yield* fromSource(from.alertRows(table, offset, batch))
                    if (rows.length === 0) break
                    yield* toTarget(to.insertAlertRows(table, rows))
                    offset += rows.length
                    yield* progress("alerts")
                  }
                }
              })
            )
          )
          return counts
        })
      )
    )
    const actual = yield* toTarget(target.read((copy) => copy.counts))
    const differences = countDifferences(expected, actual)
    if (differences.length > 0) return yield* new CopyMismatch({ differences })
    return {
      accounts: expected.accounts,
      accessKeys: expected.accessKeys,
      widgets: expected.widgets,
      dashboards: expected.dashboards,
      rotations: expected.rotations,
      entries: sum(expected.entries)
    }
  })
