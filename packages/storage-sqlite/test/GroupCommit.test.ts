import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import Database from "better-sqlite3"
import {
  type Account,
  type ChangeSink,
  digestAccessKey,
  Fanout,
  type InvalidPoint,
  micros,
  newAccessKey,
  newAccountId,
  type PointOp,
  type StorageFailure,
  StreamName,
  type StreamNotFound,
  type StreamWrite,
  type Widget,
  type WidgetType
} from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect, Either, Exit, Fiber, Scope } from "effect"
import * as SqliteStore from "../src/index.js"
import { acquire } from "../src/internal/database.js"
import { GroupCommit, type GroupLimits } from "../src/internal/groupCommit.js"
import { type Durability, type Synced, WalSync } from "../src/internal/walSync.js"
import { prepareWriteStatements } from "../src/internal/writePath.js"
import { runMigrations } from "../src/Migrations.js"
import * as SqliteAccountStore from "../src/SqliteAccountStore.js"
import { entryRows } from "./fixtures/entryRows.js"

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-group-commit-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => Path.join(dir, `group-${++files}.db`)

const T0 = 1_700_000_000_000_000

type WriteError = InvalidPoint | StreamNotFound | StorageFailure

// The adapter's parts wired by hand, so a test can reach the connection and the group-commit counters.
const openInternals = (filename: string, limits?: GroupLimits, durability?: Durability) =>
  Effect.gen(function* () {
    const { db, kysely } = yield* acquire({ filename })
    yield* runMigrations(kysely)
    const accountStore = SqliteAccountStore.make(db, kysely)
    const group = yield* Effect.acquireRelease(
      Effect.sync(() => new GroupCommit(db, prepareWriteStatements(db), limits, durability)),
      (g) => Effect.sync(() => g.close())
    )
    const account: Account = { id: newAccountId(), name: "a", createdAt: T0 }
    yield* accountStore.createAccount(account, digestAccessKey(newAccessKey()))
    const widget = (name: string, type: WidgetType) =>
      accountStore.createWidget(account.id, StreamName.make(name), type, T0)
    return { db, accountStore, account, group, widget }
  })

const one = (widget: Widget, op: PointOp): ReadonlyArray<StreamWrite> => [{ widget, op, path: "point" }]
const delta = (d: number): PointOp => ({ _tag: "Delta", delta: d })
const putNumber = (n: number, ts?: number): PointOp => ({
  _tag: "Put",
  entries: [ts === undefined ? { point: { number: n } } : { point: { number: n }, ts: micros(ts) }]
})

// Stored entries of a stream straight from the file, as another process sees them.
const rows = (db: Database.Database, widget: Widget) =>
  entryRows(db, widget.id).map((r) => ({ ts: r.ts, point: JSON.parse(r.point) as Record<string, unknown> }))

// Runs every call concurrently (they join one group when made in one turn) and returns each outcome.
const concurrently = (group: GroupCommit, calls: ReadonlyArray<ReadonlyArray<StreamWrite>>, now = T0) =>
  Effect.all(
    calls.map((writes) => Effect.either(group.write(writes, micros(now)))),
    { concurrency: "unbounded" }
  )

// Starts a fiber at once: it runs until it waits in the queue before this returns (no flush in between).
const start = <A, E>(effect: Effect.Effect<A, E>) => Effect.sync(() => Effect.runFork(effect))

// Lets a scheduled flush run, in real time (the clock of `it.effect` is a test clock).
const settle = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))

const leftTag = (e: Either.Either<void, WriteError>) => (Either.isLeft(e) ? e.left._tag : "ok")

describe("group commit", () => {
  it.effect(
    "800 concurrent writes over mixed streams commit in few groups; 500 deltas on a hot stream end at 500",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { db, group, widget } = yield* openInternals(freshFile())
          const hot = yield* widget("hot", "number")
          const series = yield* Effect.all([0, 1, 2, 3].map((i) => widget(`series-${i}`, "sparkline")))
          const list = yield* widget("list", "list")
          const calls: Array<ReadonlyArray<StreamWrite>> = []
          for (let i = 0; i < 500; i++) {
            calls.push(one(hot, delta(1)))
            if (i % 2 === 0) calls.push(one(series[i % 4]!, putNumber(i)))
            if (i % 10 === 5) calls.push(one(list, { _tag: "ListItem", listItem: `item ${i}` }))
          }
          assert.strictEqual(calls.length, 800)
          const outcomes = yield* concurrently(group, calls)
          assert.deepStrictEqual(new Set(outcomes.map(leftTag)), new Set(["ok"]))

          const stored = rows(db, hot)
          assert.strictEqual(stored.length, 500)
          assert.strictEqual(new Set(stored.map((r) => r.ts)).size, 500)
          assert.deepStrictEqual(
            stored.map((r) => r.point.number),
            Array.from({ length: 500 }, (_, i) => i + 1)
          )
          assert.strictEqual(
            series.map((s) => rows(db, s).length).reduce((a, b) => a + b),
            250
          )
          assert.strictEqual((rows(db, list).at(-1)!.point.list as ReadonlyArray<unknown>).length, 50)
          assert.strictEqual(group.calls, 800)
          assert.isAtMost(group.groups, 20, `${group.groups} groups for 800 calls`)
        })
      )
  )

  it.effect("a group stops at maxCalls calls or maxEntries entries; the rest forms the next groups", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openInternals(freshFile(), { maxCalls: 10, maxEntries: 25 })
        const counter = yield* widget("counter", "number")
        const series = yield* widget("series", "sparkline")
        const groupsOf = (calls: ReadonlyArray<ReadonlyArray<StreamWrite>>) =>
          Effect.gen(function* () {
            const before = group.groups
            const outcomes = yield* concurrently(group, calls)
            assert.deepStrictEqual(new Set(outcomes.map(leftTag)), new Set(["ok"]))
            return group.groups - before
          })
        const put = (n: number): PointOp => ({
          _tag: "Put",
          entries: Array.from({ length: n }, (_, i) => ({ point: { number: i } }))
        })
        assert.strictEqual(yield* groupsOf(Array.from({ length: 40 }, () => one(counter, delta(1)))), 4)
        assert.strictEqual(yield* groupsOf([one(series, put(20)), one(series, put(20)), one(series, put(5))]), 2)
        // A call over maxEntries on its own still goes through, alone.
        assert.strictEqual(yield* groupsOf([one(counter, delta(1)), one(series, put(100)), one(counter, delta(1))]), 3)
        assert.strictEqual(rows(db, counter).at(-1)!.point.number, 42)
        assert.strictEqual(rows(db, series).length, 145)
      })
    )
  )

  it.effect("a call failing validation fails alone; the other calls of its group are stored", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { accountStore, account, db, group, widget } = yield* openInternals(freshFile())
        const counter = yield* widget("counter", "number")
        const table = yield* widget("table", "table")
        const gone = yield* widget("gone", "number")
        yield* group.write(one(table, { _tag: "TableRow", row: ["name", "value"] }), micros(T0))
        yield* accountStore.deleteWidget(account.id, gone.streamName)
        const groupsBefore = group.groups

        const outcomes = yield* concurrently(
          group,
          [
            one(counter, delta(1)),
            one(table, { _tag: "TableRow", row: ["a", "b", "c"] }), // wrong width
            one(counter, delta(1)),
            // Several writes: the second fails after the first was applied, which its savepoint rolls back.
            [
              { widget: counter, op: delta(100), path: "streams[0].point" },
              { widget: table, op: { _tag: "TableRow", row: ["x"] }, path: "streams[1].point" }
            ],
            one(table, { _tag: "TableRow", row: ["a", "1"] }),
            one(gone, delta(1)), // deleted after lookup
            one(counter, delta(1))
          ],
          T0 + 10
        )
        assert.deepStrictEqual(outcomes.map(leftTag), [
          "ok",
          "InvalidPoint",
          "ok",
          "InvalidPoint",
          "ok",
          "StreamNotFound",
          "ok"
        ])
        assert.strictEqual(group.groups, groupsBefore + 1)
        const invalid = outcomes[3]!
        assert.isTrue(Either.isLeft(invalid) && invalid.left._tag === "InvalidPoint")
        if (Either.isLeft(invalid) && invalid.left._tag === "InvalidPoint") {
          assert.strictEqual(invalid.left.path, "streams[1].point.tableRow")
        }
        assert.deepStrictEqual(
          rows(db, counter).map((r) => r.point.number),
          [1, 2, 3]
        )
        assert.deepStrictEqual(rows(db, table).at(-1)!.point, {
          table: [
            ["name", "value"],
            ["a", "1"]
          ]
        })
      })
    )
  )

  it.effect("a statement failing midway in a one-write call fails that call only (its partial write undone)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openInternals(freshFile())
        const counter = yield* widget("counter", "number")
        const trapped = yield* widget("trapped", "sparkline")
        // Storing the put's block aborts its statement, after the call planned it and moved its last ts.
        db.exec(
          `CREATE TRIGGER abort_second AFTER INSERT ON entry_blocks WHEN NEW.stream_id = ${trapped.id}
           BEGIN SELECT RAISE(ABORT, 'trapped'); END`
        )
        const twoEntries: PointOp = {
          _tag: "Put",
          entries: [
            { point: { number: 1 }, ts: micros(T0 + 1) },
            { point: { number: 2 }, ts: micros(T0 + 2) }
          ]
        }
        const groupsBefore = group.groups
        const outcomes = yield* concurrently(group, [
          one(counter, delta(1)),
          one(trapped, twoEntries),
          one(counter, delta(1))
        ])
        assert.deepStrictEqual(outcomes.map(leftTag), ["ok", "StorageError", "ok"])
        assert.strictEqual(group.groups, groupsBefore + 1)
        assert.deepStrictEqual(rows(db, trapped), [])
        assert.deepStrictEqual(
          rows(db, counter).map((r) => r.point.number),
          [1, 2]
        )
      })
    )
  )

  it.effect("a statement failing midway in a call of several writes fails that call only (all its writes undone)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openInternals(freshFile())
        const counter = yield* widget("counter", "number")
        const other = yield* widget("other", "number")
        const trapped = yield* widget("trapped", "sparkline")
        // The call's first writes are stored when its put to `trapped` aborts (the group is then run again, each
        // call in a savepoint). The trigger is on whichever table entries are inserted into (rows, or blocks).
        const table = db
          .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('entries', 'entry_blocks')")
          .pluck()
          .get() as string
        db.exec(
          `CREATE TRIGGER abort_trapped AFTER INSERT ON ${table} WHEN NEW.stream_id = ${trapped.id}
           BEGIN SELECT RAISE(ABORT, 'trapped'); END`
        )
        const groupsBefore = group.groups
        const outcomes = yield* concurrently(group, [
          one(counter, delta(1)),
          [
            { widget: counter, op: delta(100), path: "streams[0].point" },
            { widget: other, op: delta(5), path: "streams[1].point" },
            { widget: trapped, op: putNumber(7, T0 + 1), path: "streams[2].point" }
          ],
          [
            { widget: counter, op: delta(1), path: "streams[0].point" },
            { widget: other, op: delta(1), path: "streams[1].point" }
          ]
        ])
        assert.deepStrictEqual(outcomes.map(leftTag), ["ok", "StorageError", "ok"])
        assert.strictEqual(group.groups, groupsBefore + 1)
        assert.deepStrictEqual(rows(db, trapped), [])
        assert.deepStrictEqual(
          rows(db, counter).map((r) => r.point.number),
          [1, 2]
        )
        assert.deepStrictEqual(
          rows(db, other).map((r) => r.point.number),
          [1]
        )
      })
    )
  )

  it.effect("a failing COMMIT fails every call of its group and stores nothing of it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openInternals(freshFile())
        const a = yield* widget("a", "number")
        const b = yield* widget("b", "sparkline")
        const trapped = yield* widget("trapped", "number")
        // An insert into `trapped` leaves a deferred foreign-key violation: the statements succeed, COMMIT fails.
        db.exec(
          `CREATE TABLE trap (stream_id INTEGER REFERENCES streams (id) DEFERRABLE INITIALLY DEFERRED);
           CREATE TRIGGER trap_insert AFTER INSERT ON entry_blocks WHEN NEW.stream_id = ${trapped.id}
           BEGIN INSERT INTO trap VALUES (-1); END`
        )
        const calls = [
          ...Array.from({ length: 10 }, () => one(a, delta(1))),
          one(trapped, delta(1)),
          ...Array.from({ length: 10 }, (_, i) => one(b, putNumber(i)))
        ]
        const groupsBefore = group.groups
        const outcomes = yield* concurrently(group, calls)
        assert.strictEqual(group.groups, groupsBefore + 1)
        assert.deepStrictEqual(new Set(outcomes.map(leftTag)), new Set(["StorageError"]))
        assert.deepStrictEqual([rows(db, a), rows(db, b), rows(db, trapped)], [[], [], []])
        assert.isFalse(db.inTransaction)

        // The connection is usable again once the trap is gone.
        db.exec("DROP TRIGGER trap_insert")
        const again = yield* concurrently(group, [one(a, delta(1)), one(trapped, delta(1))])
        assert.deepStrictEqual(again.map(leftTag), ["ok", "ok"])
        assert.deepStrictEqual([rows(db, a).length, rows(db, trapped).length], [1, 1])
      })
    )
  )

  it.effect("a connection closed under queued calls fails each of them with StorageUnavailable", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openInternals(freshFile())
        const a = yield* widget("a", "number")
        const fibers = yield* Effect.all(
          Array.from({ length: 5 }, () => start(group.write(one(a, delta(1)), micros(T0))))
        )
        assert.strictEqual(group.pending, 5)
        db.close()
        const exits = yield* Effect.all(fibers.map(Fiber.await))
        for (const exit of exits) {
          assert.isTrue(Exit.isFailure(exit))
          if (Exit.isFailure(exit))
            assert.strictEqual(exit.cause._tag === "Fail" && exit.cause.error._tag, "StorageUnavailable")
        }
      })
    )
  )

  it.effect("an interrupted call still in the queue is withdrawn and stores nothing", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openInternals(freshFile())
        const a = yield* widget("a", "number")
        const withdrawn = yield* start(group.write(one(a, delta(100)), micros(T0)))
        assert.strictEqual(group.pending, 1)
        yield* Fiber.interrupt(withdrawn)
        yield* group.write(one(a, delta(1)), micros(T0))
        assert.deepStrictEqual(
          rows(db, a).map((r) => r.point.number),
          [1]
        )
      })
    )
  )

  it.effect("writes queued when the scope closes are committed before the connection closes; later ones fail", () =>
    Effect.gen(function* () {
      const filename = freshFile()
      const { counter, fibers, late } = yield* Effect.scoped(
        Effect.gen(function* () {
          const stores = yield* SqliteStore.make({ filename })
          const account: Account = { id: newAccountId(), name: "a", createdAt: T0 }
          yield* stores.accountStore.createAccount(account, digestAccessKey(newAccessKey()))
          const counter = yield* stores.accountStore.createWidget(account.id, StreamName.make("c"), "number", T0)
          const fibers = yield* Effect.all(
            Array.from({ length: 200 }, () => start(stores.streamStore.write(one(counter, delta(1)), micros(T0))))
          )
          // Still queued: the flush has not run yet.
          assert.deepStrictEqual(yield* stores.streamStore.read(counter.id, { since: null, limit: null }), [])
          return { counter, fibers, late: stores.streamStore.write(one(counter, delta(1)), micros(T0)) }
        })
      )
      const exits = yield* Effect.all(fibers.map(Fiber.await))
      const acknowledged = exits.filter(Exit.isSuccess).length
      // Never acknowledged-but-lost; here every queued call made it (flushed on close).
      assert.strictEqual(acknowledged, 200)
      assert.strictEqual((yield* Effect.flip(late))._tag, "StorageUnavailable")

      const db = new Database(filename, { readonly: true })
      try {
        const stored = rows(db, counter)
        assert.strictEqual(stored.length, acknowledged)
        assert.strictEqual(stored.at(-1)!.point.number, acknowledged)
      } finally {
        db.close()
      }
    })
  )

  it.effect("SqliteConfig.synchronous picks the pragma (FULL by default, NORMAL on request)", () =>
    Effect.gen(function* () {
      const level = (config: SqliteStore.SqliteConfig) =>
        Effect.scoped(Effect.map(acquire(config), ({ db }) => db.pragma("synchronous", { simple: true })))
      assert.strictEqual(yield* level({ filename: freshFile() }), 2)
      assert.strictEqual(yield* level({ filename: freshFile(), synchronous: "full" }), 2)
      assert.strictEqual(yield* level({ filename: freshFile(), synchronous: "normal" }), 1)
    })
  )
})

const fixture = fileURLToPath(new URL("./fixtures/crashWriter.ts", import.meta.url))
const packageDir = fileURLToPath(new URL("..", import.meta.url))

// Runs the crash writer, SIGKILLs it `killAfterMillis` after it is ready, and returns the lines it printed.
const runAndKill = (filename: string, killAfterMillis: number) =>
  Effect.async<ReadonlyArray<string>, Error>((resume) => {
    const child = ChildProcess.spawn(
      process.execPath,
      ["--conditions=@dashstream/source", "--import", "tsx", fixture, filename],
      {
        cwd: packageDir,
        stdio: ["ignore", "pipe", "pipe"]
      }
    )
    let out = ""
    let err = ""
    let killTimer: NodeJS.Timeout | undefined
    const giveUp = setTimeout(() => child.kill("SIGKILL"), 25_000)
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      if (killTimer === undefined && out.includes("\n")) {
        killTimer = setTimeout(() => child.kill("SIGKILL"), killAfterMillis)
      }
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (err += chunk))
    child.on("close", (code, signal) => {
      clearTimeout(giveUp)
      clearTimeout(killTimer)
      if (signal !== "SIGKILL" || killTimer === undefined) {
        resume(Effect.fail(new Error(`crash writer ended with ${code ?? signal} before the kill: ${err}`)))
      } else {
        // A line cut by the kill has no newline yet: drop it.
        resume(Effect.succeed(out.split("\n").slice(0, -1)))
      }
    })
    return Effect.sync(() => child.kill("SIGKILL"))
  })

describe("crash safety", () => {
  it.effect(
    "every write a SIGKILLed process saw acknowledged is in the file when it is opened again",
    () =>
      Effect.gen(function* () {
        const filename = freshFile()
        const lines = yield* runAndKill(filename, 2000)
        const [ready, ...acks] = lines
        const [, seriesId, counterId] = ready!.split(" ").map(Number)
        const puts = acks.filter((l) => l.startsWith("p ")).map((l) => Number(l.slice(2)))
        const deltas = acks.filter((l) => l === "d").length
        assert.isAbove(puts.length, 100, `only ${puts.length} puts acknowledged`)

        // Opening it again recovers the WAL the killed process left behind.
        const db = new Database(filename)
        try {
          const stored = new Map(entryRows(db, seriesId).map((r) => [r.ts - T0, r.point]))
          const missing = puts.filter((i) => stored.get(i) !== JSON.stringify({ number: i }))
          assert.deepStrictEqual(missing, [], `${missing.length} of ${puts.length} acknowledged puts missing`)
          const counter = entryRows(db, counterId).at(-1)?.point
          const total = counter === undefined ? 0 : (JSON.parse(counter) as { number: number }).number
          assert.isAtLeast(total, deltas)
        } finally {
          db.close()
        }
      }),
    40_000
  )
})

describe("group commit with the WAL synced off the event loop", () => {
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
        const { accountStore, account, db, group, widget } = yield* openInternals(freshFile(), undefined, sync)
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
        assert.deepStrictEqual(
          rows(db, a).map((r) => r.point.number),
          [1, 2]
        )
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
        const { db, group, widget } = yield* openInternals(freshFile(), undefined, sync)
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
        assert.deepStrictEqual(
          rows(db, a).map((r) => r.point.number),
          [1]
        )
        assert.strictEqual(deferred.length, 1)
        // The sync ends: the first call is acknowledged, the deferred flush commits the three in one group.
        sync.release(undefined)
        for (const run of deferred.splice(0)) run()
        assert.isTrue(Exit.isSuccess(yield* Fiber.await(first)))
        assert.strictEqual(group.groups, 2)
        assert.strictEqual(group.calls, 4)
        assert.deepStrictEqual(
          rows(db, a).map((r) => r.point.number),
          [1, 2, 3, 4]
        )
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
        yield* runMigrations(kysely)
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
        const { db, group, widget } = yield* openInternals(freshFile(), undefined, sync)
        const a = yield* widget("a", "sparkline")
        const fiber = yield* start(group.write(one(a, putNumber(1)), micros(T0)))
        yield* settle
        sync.release(new Error("EIO: i/o error, fsync"))
        const exit = yield* Fiber.await(fiber)
        assert.isTrue(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag === "StorageError")
        const later = yield* Effect.either(group.write(one(a, putNumber(2)), micros(T0 + 1)))
        assert.strictEqual(leftTag(later), "StorageError")
        assert.deepStrictEqual(
          rows(db, a).map((r) => r.point.number),
          [1]
        )
      })
    )
  )

  it.effect("closing the store syncs and answers every call still waiting for a sync", () =>
    Effect.gen(function* () {
      const sync = new HeldSync()
      const scope = yield* Scope.make()
      const { group, widget } = yield* Scope.extend(openInternals(freshFile(), undefined, sync), scope)
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

      const missing = new WalSync(Path.join(dir, "no-such-dir", "x.db-wal"))
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
