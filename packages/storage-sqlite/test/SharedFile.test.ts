import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import {
  type Account,
  type ChangeSink,
  digestAccessKey,
  Fanout,
  type Micros,
  micros,
  newAccessKey,
  newAccountId,
  type PendingChange,
  StreamName,
  type StreamWrite,
  type Widget
} from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import type Database from "better-sqlite3"
import { Effect, Either, type Scope } from "effect"
import { acquire } from "../src/internal/database.js"
import { busyHandler, GroupCommit, type LockWait } from "../src/internal/groupCommit.js"
import {
  applyWrites,
  makeWritePath,
  prepareWriteStatements,
  type WritePath,
  writePlan
} from "../src/internal/writePath.js"
import { runMigrations } from "../src/Migrations.js"
import * as SqliteAccountStore from "../src/SqliteAccountStore.js"
import * as SqliteStreamStore from "../src/SqliteStreamStore.js"
import { entryRows } from "./fixtures/entryRows.js"

/**
 * Several connections writing one file, as the workers of `serve --workers N` do (each opens the file itself, with
 * its own group commit): a group waits for a write lock another connection holds on the event loop, not in SQLite's
 * busy handler, and gives up after its bound with `StorageUnavailable`; transactions whose changes someone follows
 * take consecutive commit sequence numbers, in commit order, whichever connection ran them. Connections of one
 * process lock each other out of the file exactly as processes do (SQLite's unix VFS shares its locks in a process).
 */

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-shared-file-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => Path.join(dir, `shared-${++files}.db`)

const T0 = 1_700_000_000_000_000

const eventLoop = (maxWaitMs: number): LockWait => ({ _tag: "eventLoop", maxWaitMs })

/** A sink that records what it is given, as the `serve --workers` relay would send it on. */
const recordingSink = (follows: boolean) => {
  const committed: Array<{ readonly seq: number | undefined; readonly changes: ReadonlyArray<PendingChange> }> = []
  const skipped: Array<number> = []
  const fanout = new Fanout()
  const sink: ChangeSink = {
    active: follows,
    has: () => follows,
    sequenced: true,
    committed: (changes, seq) => void committed.push({ seq, changes }),
    skipped: (seq) => void skipped.push(seq),
    feed: () => fanout.feed()
  }
  return { sink, committed, skipped }
}

/** A connection to `filename` with its own group commit. */
const connect = (filename: string, lockWait: LockWait, sink?: ChangeSink) =>
  Effect.gen(function* () {
    const { db, kysely } = yield* acquire({ filename })
    yield* runMigrations({ db, kysely })
    const group = yield* Effect.acquireRelease(
      Effect.sync(
        () => new GroupCommit(db, prepareWriteStatements(db), undefined, undefined, sink, undefined, lockWait)
      ),
      (g) => Effect.sync(() => g.close())
    )
    return { db, kysely, group }
  })

const setup = (filename: string) =>
  Effect.gen(function* () {
    const { db, kysely } = yield* acquire({ filename })
    yield* runMigrations({ db, kysely })
    const accounts = SqliteAccountStore.make(db, kysely)
    const account: Account = { id: newAccountId(), name: "a", createdAt: T0 }
    yield* accounts.createAccount(account, digestAccessKey(newAccessKey()))
    return yield* accounts.createWidget(account.id, StreamName.make("hot"), "number", T0)
  })

const deltaOne = (widget: Widget): ReadonlyArray<StreamWrite> => [
  { widget, op: { _tag: "Delta", delta: 1 }, path: "point" }
]

/**
 * One write transaction on `db` through `path`, in the order a group commit runs one: validate the writer's cache,
 * apply, store, seal the change counts, `COMMIT`, trust them.
 */
const commitOnPath = (db: Database.Database, path: WritePath, writes: ReadonlyArray<StreamWrite>, now: number) => {
  db.prepare("BEGIN IMMEDIATE").run()
  path.lastTs.validate()
  assert.isUndefined(applyWrites(path, writePlan(path), writes, micros(now)))
  path.entries.flush()
  path.lastTs.flush()
  path.lastTs.seal()
  db.prepare("COMMIT").run()
  path.lastTs.committed()
}

/**
 * The window a second process has: between a writer's COMMIT and the next statement of its connection, another
 * connection commits a delta to the same stream (once, right after the writer's first COMMIT). `writer` makes the
 * writer under test on `filename`, calling `afterCommit` right after each of its COMMITs. Two writes at an unchanged
 * clock must then store 1, 2, 3 with consecutive `ts`: the second write's `ts` comes from the stream's last `ts`, which
 * the other commit moved.
 */
const noEntryLostInTheWindow = (
  writer: (
    filename: string,
    afterCommit: () => void
  ) => Effect.Effect<
    (writes: ReadonlyArray<StreamWrite>, now: Micros) => Effect.Effect<unknown, unknown>,
    unknown,
    Scope.Scope
  >
) =>
  Effect.scoped(
    Effect.gen(function* () {
      const filename = freshFile()
      const hot = yield* setup(filename)
      const { db: other } = yield* acquire({ filename })
      const otherPath = makeWritePath(prepareWriteStatements(other))
      let interleave = true
      const write = yield* writer(filename, () => {
        if (!interleave) return
        interleave = false
        commitOnPath(other, otherPath, deltaOne(hot), T0 + 1)
      })
      yield* write(deltaOne(hot), micros(T0))
      assert.isFalse(interleave, "the other connection committed in the window")
      yield* write(deltaOne(hot), micros(T0))
      const stored = entryRows(other, hot.id).map((r) => [r.ts, (JSON.parse(r.point) as { number: number }).number])
      assert.deepStrictEqual(stored, [
        [T0, 1],
        [T0 + 1, 2],
        [T0 + 2, 3]
      ])
    })
  )

const sleep = (ms: number) => Effect.promise(() => new Promise((resolve) => setTimeout(resolve, ms)))

describe("several connections writing one file", () => {
  it.effect("a group waits for another connection's lock on the event loop and commits once it is released", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const hot = yield* setup(filename)
        const a = yield* connect(filename, eventLoop(5_000))
        const other = yield* connect(filename, busyHandler)
        other.db.prepare("BEGIN IMMEDIATE").run()
        const write = Effect.runFork(Effect.either(a.group.write(deltaOne(hot), micros(T0))))
        // The event loop keeps running while the group waits: timers fire on time.
        const before = performance.now()
        yield* sleep(60)
        const slept = performance.now() - before
        assert.isBelow(slept, 1_000, `a 60 ms timer took ${slept} ms`)
        assert.isAbove(a.group.busyRetries, 2)
        assert.strictEqual(a.group.calls, 0, "nothing ran while the lock was held")
        other.db.prepare("COMMIT").run()
        const outcome = yield* Effect.promise(() => Effect.runPromise(write.await))
        assert.isTrue(outcome._tag === "Success" && Either.isRight(outcome.value))
        const stored = entryRows(other.db, hot.id).map((r) => r.point)
        assert.deepStrictEqual(stored, ['{"number":1}'])
      })
    )
  )

  it.effect("a group that cannot get the lock within maxWaitMs fails with StorageUnavailable; later ones go on", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const hot = yield* setup(filename)
        const a = yield* connect(filename, eventLoop(150))
        const other = yield* connect(filename, busyHandler)
        other.db.prepare("BEGIN IMMEDIATE").run()
        const started = performance.now()
        const first = yield* Effect.either(a.group.write(deltaOne(hot), micros(T0)))
        const waited = performance.now() - started
        assert.isTrue(Either.isLeft(first) && first.left._tag === "StorageUnavailable")
        assert.isAtLeast(waited, 140)
        other.db.prepare("COMMIT").run()
        const second = yield* Effect.either(a.group.write(deltaOne(hot), micros(T0 + 1)))
        assert.isTrue(Either.isRight(second))
      })
    )
  )

  it.effect("deltas from two connections are exact, and followed transactions take consecutive sequence numbers", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const hot = yield* setup(filename)
        const sinkA = recordingSink(true)
        const sinkB = recordingSink(true)
        const a = yield* connect(filename, eventLoop(5_000), sinkA.sink)
        const b = yield* connect(filename, eventLoop(5_000), sinkB.sink)
        const writes: Array<Effect.Effect<unknown, unknown>> = []
        for (let i = 0; i < 200; i++) writes.push((i % 2 === 0 ? a : b).group.write(deltaOne(hot), micros(T0 + i)))
        yield* Effect.all(writes, { concurrency: "unbounded" })
        const numbers = entryRows(a.db, hot.id).map((r) => (JSON.parse(r.point) as { number: number }).number)
        assert.deepStrictEqual(
          numbers,
          Array.from({ length: 200 }, (_, i) => i + 1)
        )
        // Every group took the next number; the numbers say the commit order, across both connections.
        const all = [...sinkA.committed, ...sinkB.committed].sort((x, y) => x.seq! - y.seq!)
        assert.deepStrictEqual(
          all.map((c) => c.seq),
          Array.from({ length: all.length }, (_, i) => i + 1)
        )
        const published = all.flatMap((c) =>
          c.changes.flatMap((p) =>
            p.changes.flatMap((change) => (change._tag === "Stored" ? change.entries.map((e) => e.json) : []))
          )
        )
        assert.deepStrictEqual(
          published,
          numbers.map((n) => `{"number":${n}}`)
        )
        assert.deepStrictEqual([...sinkA.skipped, ...sinkB.skipped], [])
      })
    )
  )

  it.effect(
    "a commit another connection makes right after a group's COMMIT is seen by the next group: no entry lost",
    () =>
      noEntryLostInTheWindow((filename, afterCommit) =>
        Effect.map(connect(filename, eventLoop(5_000)), (a) => {
          // Wraps the group's own COMMIT statement.
          const group = a.group as unknown as { commit: { run: () => unknown } }
          const commit = group.commit
          group.commit = {
            run: () => {
              const result = commit.run()
              afterCommit()
              return result
            }
          }
          return (writes, now) => a.group.write(writes, now)
        })
      )
  )

  it.effect(
    "without group commit too: a commit another connection makes right after a call's COMMIT is seen by the next call",
    () =>
      noEntryLostInTheWindow((filename, afterCommit) =>
        Effect.gen(function* () {
          const { db } = yield* acquire({ filename })
          // better-sqlite3 runs the call's transaction (BEGIN IMMEDIATE to COMMIT): wraps what it returns.
          const hooked = new Proxy(db, {
            get(target, key) {
              if (key === "transaction")
                return (fn: (...args: Array<never>) => unknown) => {
                  const transaction = target.transaction(fn)
                  return {
                    immediate: (...args: Array<never>) => {
                      const result = transaction.immediate(...args)
                      afterCommit()
                      return result
                    }
                  }
                }
              const value: unknown = Reflect.get(target, key, target)
              return typeof value === "function" ? value.bind(target) : value
            }
          })
          const store = yield* SqliteStreamStore.make(hooked, { groupCommit: false })
          return (writes, now) => store.write(writes, now)
        })
      )
  )

  it.effect("the writer's cache holds across its own groups, and is dropped after another connection's commit", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const hot = yield* setup(filename)
        const { db } = yield* acquire({ filename })
        // Counts the reads of a stream's stored last `ts`: what the cache saves while it is trusted.
        const statements = prepareWriteStatements(db)
        let reads = 0
        const lastTs = statements.lastTs
        const counted = { ...statements, lastTs: { get: (stream: number) => (reads++, lastTs.get(stream)) } }
        const group = new GroupCommit(
          db,
          counted as never,
          undefined,
          undefined,
          undefined,
          undefined,
          eventLoop(5_000)
        )
        yield* Effect.addFinalizer(() => Effect.sync(() => group.close()))
        for (let i = 0; i < 3; i++) yield* group.write(deltaOne(hot), micros(T0 + i))
        assert.strictEqual(reads, 1, "one read for three groups of one connection")
        const { db: other } = yield* acquire({ filename })
        commitOnPath(other, makeWritePath(prepareWriteStatements(other)), deltaOne(hot), T0 + 3)
        yield* group.write(deltaOne(hot), micros(T0 + 4))
        assert.strictEqual(reads, 2, "read again after the other connection's commit")
        assert.deepStrictEqual(
          entryRows(db, hot.id).map((r) => (JSON.parse(r.point) as { number: number }).number),
          [1, 2, 3, 4, 5]
        )
      })
    )
  )

  it.effect("a transaction whose changes nobody follows takes no sequence number", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const hot = yield* setup(filename)
        const idle = recordingSink(false)
        const a = yield* connect(filename, eventLoop(5_000), idle.sink)
        yield* a.group.write(deltaOne(hot), micros(T0))
        assert.deepStrictEqual(idle.committed, [])
        assert.strictEqual(a.db.prepare("SELECT seq FROM live_sequence").pluck().get(), 0)
      })
    )
  )
})
