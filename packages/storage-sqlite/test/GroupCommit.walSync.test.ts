import * as Fs from "node:fs"
import * as Path from "node:path"
import Database from "better-sqlite3"
import {
  type Account,
  type ChangeSink,
  digestAccessKey,
  Fanout,
  micros,
  newAccessKey,
  newAccountId,
  StreamName
} from "@dashstream/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Scope } from "effect"
import { acquire } from "../src/internal/database.js"
import { GroupCommit } from "../src/internal/groupCommit.js"
import { type Durability, type Synced, WalSync } from "../src/internal/walSync.js"
import { prepareWriteStatements } from "../src/internal/writePath.js"
import { runMigrations } from "../src/Migrations.js"
import * as SqliteAccountStore from "../src/SqliteAccountStore.js"
import { entryRows } from "./fixtures/entryRows.js"
import {
  delta,
  numbersOf,
  one,
  openWriter,
  putNumber,
  settle,
  start,
  T0,
  tagOf,
  tempFiles,
  type WriteError
} from "./fixtures/writer.js"

// The group commit with the WAL synced off the event loop: calls acknowledged only after the fsync.

describe("group commit with the WAL synced off the event loop", () => {
  const freshFile = tempFiles("group")

  // A durability whose syncs the test completes by hand.
  class HeldSync implements Durability {
    readonly held: Array<Synced> = []
    failure: Error | undefined = undefined
    flushed = 0
    afterCommit(done: Synced) {
      if (this.failure !== undefined) return done(this.failure)
      this.held.push(done)
    }
    flushSync() {
      this.flushed++
      this.release(undefined)
    }
    release(error: Error | undefined) {
      if (error !== undefined) this.failure = error
      for (const done of this.held.splice(0)) done(error)
    }
  }

  it.effect("calls are acknowledged only after the sync; committed before it; failed calls answered at once", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const sync = new HeldSync()
        const { accountStore, account, db, group, widget } = yield* openWriter(freshFile(), undefined, sync)
        const a = yield* widget("a", "sparkline")
        const gone = yield* widget("gone", "number")
        yield* accountStore.deleteWidget(account.id, gone.streamName)
        const fibers = yield* Effect.all([
          start(group.write(one(a, putNumber(1)), micros(T0))),
          start(group.write(one(a, putNumber(2)), micros(T0 + 1))),
          start(group.write(one(gone, delta(1)), micros(T0 + 2)))
        ])
        // Let the group run: the two puts are committed (visible on another connection), not yet acknowledged.
        yield* settle
        assert.strictEqual(group.groups, 1)
        assert.deepStrictEqual(numbersOf(db, a), [1, 2])
        const other = new Database(db.name, { readonly: true })
        assert.strictEqual(entryRows(other).length >= 2, true)
        other.close()
        assert.strictEqual(sync.held.length, 1)
        // The write to a deleted widget fails alone and is answered without waiting for the sync.
        const rejected = yield* Fiber.await(fibers[2]!)
        assert.isTrue(Exit.isFailure(rejected))
        assert.isNull(fibers[0]!.unsafePoll())
        assert.isNull(fibers[1]!.unsafePoll())
        // The connection's own level (FULL) is back for writes made outside groups.
        assert.strictEqual(db.pragma("synchronous", { simple: true }), 2)
        sync.release(undefined)
        const exits = yield* Effect.all([Fiber.await(fibers[0]!), Fiber.await(fibers[1]!)])
        assert.isTrue(exits.every(Exit.isSuccess))
      })
    )
  )

  it.effect("while a sync runs, the calls arriving wait for it to end and then commit as one group", () =>
    Effect.scoped(
      Effect.gen(function* () {
        // A held sync that also tells the group commit it is running (as WalSync does).
        const deferred: Array<() => void> = []
        const sync = new (class extends HeldSync {
          deferWhileSyncing(run: () => void) {
            if (this.held.length === 0) return false
            deferred.push(run)
            return true
          }
        })()
        const { db, group, widget } = yield* openWriter(freshFile(), undefined, sync)
        const a = yield* widget("a", "sparkline")
        const first = yield* start(group.write(one(a, putNumber(1)), micros(T0)))
        yield* settle
        assert.strictEqual(group.groups, 1)
        assert.strictEqual(sync.held.length, 1)
        // Three calls in three separate turns while the first group's sync is held: none is committed yet.
        const later: Array<Fiber.RuntimeFiber<void, WriteError>> = []
        for (let i = 2; i <= 4; i++) {
          later.push(yield* start(group.write(one(a, putNumber(i)), micros(T0 + i))))
          yield* settle
        }
        assert.strictEqual(group.groups, 1)
        assert.deepStrictEqual(numbersOf(db, a), [1])
        assert.strictEqual(deferred.length, 1)
        // The sync ends: the first call is acknowledged, the deferred flush commits the three in one group.
        sync.release(undefined)
        for (const run of deferred.splice(0)) run()
        assert.isTrue(Exit.isSuccess(yield* Fiber.await(first)))
        assert.strictEqual(group.groups, 2)
        assert.strictEqual(group.calls, 4)
        assert.deepStrictEqual(numbersOf(db, a), [1, 2, 3, 4])
        sync.release(undefined)
        const exits = yield* Effect.all(later.map((f) => Fiber.await(f)))
        assert.isTrue(exits.every(Exit.isSuccess))
      })
    )
  )

  it.effect("a group's transaction runs with synchronous=NORMAL; the connection is back to FULL after it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const sync = new HeldSync()
        const { db, kysely } = yield* acquire({ filename: freshFile() })
        yield* runMigrations({ db, kysely })
        const accounts = SqliteAccountStore.make(db, kysely)
        const account: Account = { id: newAccountId(), name: "a", createdAt: T0 }
        yield* accounts.createAccount(account, digestAccessKey(newAccessKey()))
        const a = yield* accounts.createWidget(account.id, StreamName.make("a"), "number", T0)
        // The sink is asked whether the stream is followed while the call is applied, inside the transaction.
        const seen: Array<unknown> = []
        const fanout = new Fanout()
        const sink: ChangeSink = {
          active: true,
          has: () => {
            seen.push(db.pragma("synchronous", { simple: true }))
            return false
          },
          sequenced: false,
          committed: () => {},
          skipped: () => {},
          feed: () => fanout.feed()
        }
        const group = new GroupCommit(db, prepareWriteStatements(db), undefined, sync, sink)
        const fiber = yield* start(group.write(one(a, putNumber(1)), micros(T0)))
        yield* settle
        assert.deepStrictEqual(seen, [1])
        assert.strictEqual(db.pragma("synchronous", { simple: true }), 2)
        sync.release(undefined)
        assert.isTrue(Exit.isSuccess(yield* Fiber.await(fiber)))
        group.close()
      })
    )
  )

  it.effect("a failed sync fails the calls it covered, and later calls without storing them", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const sync = new HeldSync()
        const { db, group, widget } = yield* openWriter(freshFile(), undefined, sync)
        const a = yield* widget("a", "sparkline")
        const fiber = yield* start(group.write(one(a, putNumber(1)), micros(T0)))
        yield* settle
        sync.release(new Error("EIO: i/o error, fsync"))
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag === "StorageError")
        const later = yield* Effect.either(group.write(one(a, putNumber(2)), micros(T0 + 1)))
        assert.strictEqual(tagOf(later), "StorageError")
        assert.deepStrictEqual(numbersOf(db, a), [1])
      })
    )
  )

  it.effect("closing the store syncs and answers every call still waiting for a sync", () =>
    Effect.gen(function* () {
      const sync = new HeldSync()
      const scope = yield* Scope.make()
      const { group, widget } = yield* Scope.extend(openWriter(freshFile(), undefined, sync), scope)
      const a = yield* Scope.extend(widget("a", "sparkline"), scope)
      const fiber = yield* start(group.write(one(a, putNumber(1)), micros(T0)))
      yield* settle
      assert.isNull(fiber.unsafePoll())
      yield* Scope.close(scope, Exit.void)
      assert.strictEqual(sync.flushed, 1)
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(fiber)))
    })
  )

  // A fresh WAL-mode file with a table, and the WalSync of its -wal file.
  const walFile = () => {
    const filename = freshFile()
    const db = new Database(filename)
    db.pragma("journal_mode = WAL")
    db.exec("CREATE TABLE t (x INTEGER)")
    return { db, sync: new WalSync(`${filename}-wal`) }
  }

  it.effect("WalSync fsyncs the -wal file; callers asking during a sync share the next one; failure sticks", () =>
    Effect.gen(function* () {
      const { db, sync } = walFile()
      const answers = yield* Effect.all(
        Array.from({ length: 5 }, () =>
          Effect.async<Error | undefined>((resume) => sync.afterCommit((error) => resume(Effect.succeed(error))))
        ),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(answers, [undefined, undefined, undefined, undefined, undefined])
      db.close()

      const missing = new WalSync(Path.join(Path.dirname(freshFile()), "no-such-dir", "x.db-wal"))
      const first = yield* Effect.async<Error | undefined>((resume) =>
        missing.afterCommit((error) => resume(Effect.succeed(error)))
      )
      assert.match(String(first), /ENOENT/)
      assert.strictEqual(missing.failure, first)
      let second: Error | undefined
      missing.afterCommit((error) => {
        second = error
      })
      // Answered at once, with the first failure.
      assert.strictEqual(second, first)
    })
  )

  // The descriptors of this process open on `path` (Linux: /proc/self/fd).
  const openOn = (path: string): number =>
    Fs.readdirSync("/proc/self/fd").filter((fd) => {
      try {
        return Fs.readlinkSync(`/proc/self/fd/${fd}`) === path
      } catch {
        return false
      }
    }).length

  it.effect("WalSync opens the -wal file once and keeps it open between syncs, until flushSync", () =>
    Effect.gen(function* () {
      const { db, sync } = walFile()
      const wal = `${db.name}-wal`
      // SQLite's own connection holds the file open too.
      const own = openOn(wal)
      const synced = () =>
        Effect.async<Error | undefined>((resume) => sync.afterCommit((error) => resume(Effect.succeed(error))))
      for (let i = 0; i < 3; i++) {
        db.prepare("INSERT INTO t VALUES (?)").run(i)
        assert.isUndefined(yield* synced())
        assert.strictEqual(openOn(wal), own + 1)
      }
      sync.flushSync()
      assert.strictEqual(openOn(wal), own)
      db.close()
    })
  )

  it.effect(
    "WalSync defers a flush while a sync runs: called after its callers are answered, before the next sync",
    () =>
      Effect.gen(function* () {
        const { db, sync } = walFile()
        assert.isFalse(sync.deferWhileSyncing(() => assert.fail("not deferred: no sync runs")))
        const order: Array<string> = []
        yield* Effect.async<void>((resume) => {
          sync.afterCommit(() => order.push("first answered"))
          assert.isTrue(
            sync.deferWhileSyncing(() => {
              order.push("deferred run")
              // What the deferred flush commits joins the next sync.
              sync.afterCommit(() => {
                order.push("second answered")
                resume(Effect.void)
              })
            })
          )
        })
        assert.deepStrictEqual(order, ["first answered", "deferred run", "second answered"])
        db.close()
      })
  )
})
