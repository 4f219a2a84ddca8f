import type Database from "better-sqlite3"
import {
  type ChangeSink,
  type InvalidPoint,
  type LivePage,
  type Micros,
  pageOfRendered,
  type PendingChange,
  type ReadQuery,
  type RenderedPage,
  type StorageFailure,
  type StoredEntry,
  type StreamNotFound,
  type StreamStore,
  type StreamWrite,
  pointsOf,
  readRangeFrom,
  withEffectForms,
  type WriteObserver
} from "@dashstream/core"
import { type Context, Effect, Option, Runtime, type Scope } from "effect"
import { storageFailure } from "./internal/errors.js"
import { busyHandler, defaultGroupLimits, GroupCommit, type LockWait, type WriteError } from "./internal/groupCommit.js"
import { Checkpointer } from "./internal/checkpointer.js"
import { PageReader } from "./internal/pageReader.js"
import { WalSync } from "./internal/walSync.js"
import { Sql } from "./internal/statements.js"
import { prepareBlockReads } from "./internal/blockReads.js"
import {
  applyWrites,
  makeWritePath,
  prepareWriteStatements,
  type WriteStatements,
  writePlan
} from "./internal/writePath.js"

/** How the stream store commits `write` calls. */
export interface SqliteStreamStoreOptions {
  /** Group commit (see `SqliteConfig.groupCommit`); `false` commits each call in its own transaction. */
  readonly groupCommit: boolean
  /** Where the changes of acknowledged writes are published (the store's `ChangeFeed`); none when undefined. */
  readonly sink?: ChangeSink | undefined
  /** How a group waits for a write lock another process holds (group commit only); SQLite's busy handler by default. */
  readonly lockWait?: LockWait | undefined
  /** Told of every group commit (or, without group commit, of every committed call); none when undefined. */
  readonly observer?: WriteObserver | undefined
}

/**
 * The WAL sync of a file-backed connection opened with `synchronous` FULL (or EXTRA), for group commit to sync off
 * the event loop; `undefined` for an in-memory database (nothing to sync) or `synchronous=NORMAL` (no sync asked).
 */
const walSyncOf = (db: Database.Database): WalSync | undefined =>
  db.memory || (db.pragma("synchronous", { simple: true }) as number) < 2 ? undefined : new WalSync(`${db.name}-wal`)

// Thrown out of the transaction function so better-sqlite3 rolls back, carrying the domain error.
class Rollback {
  constructor(readonly error: InvalidPoint | StreamNotFound) {}
}

const toWriteError = (cause: unknown): WriteError => (cause instanceof Rollback ? cause.error : storageFailure(cause))

// One transaction per call: the path without group commit. Its changes are published once it committed (with
// `synchronous=FULL`, on disk).
const commitEachCall = (
  db: Database.Database,
  statements: WriteStatements,
  sink: ChangeSink | undefined,
  observer: WriteObserver | undefined
) => {
  const followed = sink === undefined ? undefined : (stream: number) => sink.has(stream as never)
  const nextSeq = sink?.sequenced === true ? db.prepare<[], number>(Sql.nextSeq).pluck() : undefined
  const path = makeWritePath(statements)
  const plan = writePlan(path)
  const transaction = db.transaction(
    (writes: ReadonlyArray<StreamWrite>, now: Micros, changes: Array<PendingChange> | undefined) => {
      path.lastTs.validate()
      const error = applyWrites(path, plan, writes, now, followed, changes)
      if (error !== undefined) throw new Rollback(error)
      path.entries.flush()
      path.lastTs.flush()
      const seq = nextSeq !== undefined && changes !== undefined && changes.length > 0 ? nextSeq.get() : undefined
      path.lastTs.seal()
      return seq
    }
  )
  return (
    writes: ReadonlyArray<StreamWrite>,
    now: Micros,
    done: (error: WriteError | undefined) => void
  ): undefined => {
    const changes = sink !== undefined && sink.active ? new Array<PendingChange>() : undefined
    let seq: number | undefined
    try {
      seq = transaction.immediate(writes, now, changes)
    } catch (cause) {
      path.entries.discard()
      path.lastTs.reset()
      observer?.groupCommitted(1, 0)
      done(toWriteError(cause))
      return undefined
    }
    path.lastTs.committed()
    if (changes !== undefined && changes.length > 0) sink!.committed(changes, seq)
    observer?.groupCommitted(1, pointsOf(writes))
    done(undefined)
    return undefined
  }
}

/**
 * The `StreamStore` port over an open, migrated better-sqlite3 connection (docs/api.md sections 3, 4, 5, 6).
 *
 * Writes run synchronously on the one connection in `BEGIN IMMEDIATE` transactions: better-sqlite3 runs a transaction
 * start to commit without yielding to the event loop, so concurrent calls in this process are serialised and
 * read-modify-write (delta, add item, ts assignment) is atomic; IMMEDIATE takes the write lock up front, so another
 * process waits (busy_timeout) instead of failing mid-transaction. With group commit (the default) the calls of one
 * event-loop turn share a transaction, each in its own savepoint, and are acknowledged after its commit (see
 * `internal/groupCommit.ts`); without it each call is its own transaction. Either way a write succeeds only once
 * committed, with `synchronous=FULL` on disk. Reads return the stored JSON text as is and see every acknowledged write.
 * The pages of streamed reads (`readPage`) of a database file are read on a thread with its own read-only connection
 * (`internal/pageReader.ts`), so a large read does not hold the event loop; the other reads are single statements on
 * the event loop. With group commit on a file, the WAL checkpoints also run on a thread of their own
 * (`internal/checkpointer.ts`, started by the first write), not inside a group's COMMIT. SQLite errors map to
 * `StorageUnavailable` (busy, locked, closed) or `StorageError`.
 *
 * When the scope closes, queued writes are committed (or failed) and the page reader's and checkpointer's threads ended
 * before the finalizer returns; release it before the connection. Later writes fail with `StorageUnavailable`. Fails
 * with `StorageError` when the statements cannot be prepared (schema missing).
 */
export const make = (
  db: Database.Database,
  options: SqliteStreamStoreOptions
): Effect.Effect<Context.Tag.Service<StreamStore>, StorageFailure, Scope.Scope> =>
  Effect.flatMap(Effect.runtime<never>(), (runtime) => built(db, options, Runtime.runFork(runtime)))

const built = (
  db: Database.Database,
  options: SqliteStreamStoreOptions,
  runFork: (effect: Effect.Effect<void>) => unknown
): Effect.Effect<Context.Tag.Service<StreamStore>, StorageFailure, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.try({
        try: () => {
          const statements = prepareWriteStatements(db)
          const blocks = prepareBlockReads(db)
          const pageOnLoop = (stream: number, after: Micros, limit: number) =>
            Effect.try({
              try: (): RenderedPage => pageOfRendered(blocks.page(stream, after, limit)),
              catch: storageFailure
            })
          return {
            group: options.groupCommit
              ? new GroupCommit(
                  db,
                  statements,
                  defaultGroupLimits,
                  walSyncOf(db),
                  options.sink,
                  options.observer,
                  options.lockWait ?? busyHandler
                )
              : undefined,
            statements,
            latest: statements.latest,
            since: { all: blocks.since },
            recent: { all: (stream: number, count: number) => blocks.recent(stream, count, -1) },
            recentPage: { all: blocks.recent },
            between: blocks.between,
            packed: blocks.packed,
            // A file's pages are read on a thread of their own (the event-loop read is its fallback); an in-memory
            // database is private to this connection, so its pages are read here.
            pageOnLoop,
            reader: db.memory
              ? undefined
              : new PageReader(db.name, db.pragma("busy_timeout", { simple: true }) as number, pageOnLoop),
            clearedTs: db.prepare<[number], number | null>(Sql.clearedTs).pluck(true),
            ping: db.prepare(Sql.ping),
            // A file written through group commit is checkpointed on a thread of its own (started by the first write).
            checkpointer:
              options.groupCommit && !db.memory
                ? new Checkpointer(db, (error) =>
                    runFork(
                      Effect.logWarning(
                        `WAL checkpoints run in the commits again: the SQLite checkpointer thread failed: ${error.message}`
                      )
                    )
                  )
                : undefined
          }
        },
        catch: storageFailure
      }),
      ({ group, reader, checkpointer }) =>
        Effect.zipRight(
          Effect.sync(() => group?.close()),
          Effect.promise(() => Promise.all([reader?.close(), checkpointer?.close()]).then(() => undefined))
        )
    ),
    ({
      group,
      statements,
      latest,
      since,
      recent,
      recentPage,
      between,
      packed,
      pageOnLoop,
      reader,
      clearedTs,
      ping,
      checkpointer
    }): Context.Tag.Service<StreamStore> => {
      const readSync = (stream: number, query: ReadQuery): ReadonlyArray<StoredEntry> => {
        if (query.since === null) {
          const row = latest(stream)
          return row === undefined ? [] : [row]
        }
        return since.all(stream, query.since, query.limit ?? -1)
      }
      return withEffectForms({
        writeDirect:
          group === undefined
            ? commitEachCall(db, statements, options.sink, options.observer)
            : (writes, now, done) => {
                checkpointer?.start()
                if (writes.length > 0) return group.writeDirect(writes, now, done)
                done(undefined)
                return undefined
              },
        readDirect: (stream, query, done) => {
          let entries: ReadonlyArray<StoredEntry>
          try {
            entries = readSync(stream, query)
          } catch (cause) {
            return done(storageFailure(cause), [])
          }
          done(undefined, entries)
        },
        readPage: reader === undefined ? pageOnLoop : (stream, after, limit) => reader.readPage(stream, after, limit),
        // Each page is one synchronous read of the blocks it needs; the fiber may yield between pages.
        readRange: (stream, query) =>
          readRangeFrom(
            {
              page: (after, to, limit) =>
                Effect.try({ try: () => between(stream, after, to, limit), catch: storageFailure }),
              newest: Effect.try({ try: () => latest(stream)?.ts ?? null, catch: storageFailure }),
              blocks: (after, to, limit, buckets) =>
                Effect.try({ try: () => packed(stream, after, to, limit, buckets), catch: storageFailure })
            },
            query
          ),
        // Both statements run in one synchronous call on the one connection: no write can come between them.
        readLive: (stream, query) =>
          Effect.try({
            try: (): Option.Option<LivePage> => {
              const row = clearedTs.get(stream)
              if (row === undefined) return Option.none()
              const entries =
                query._tag === "After"
                  ? since.all(stream, query.since, query.limit)
                  : query.count === 1
                    ? readSync(stream, { since: null, limit: null })
                    : query.limit !== undefined && query.limit < query.count
                      ? recentPage.all(stream, query.count, query.limit)
                      : recent.all(stream, query.count)
              return Option.some({ lastClear: row as Micros | null, entries })
            },
            catch: storageFailure
          }),
        ping: Effect.try({ try: () => void ping.get(), catch: storageFailure })
      })
    }
  )
