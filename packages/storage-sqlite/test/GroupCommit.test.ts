import Database from "better-sqlite3"
import {
  type Account,
  digestAccessKey,
  micros,
  newAccessKey,
  newAccountId,
  type PointOp,
  StreamName,
  type StreamWrite
} from "@dashstream/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Either, Exit, Fiber } from "effect"
import * as SqliteStore from "../src/index.js"
import { acquire } from "../src/internal/database.js"
import {
  concurrently,
  delta,
  numbersOf,
  one,
  openWriter,
  parsedRows,
  putNumber,
  start,
  T0,
  tagOf,
  tempFiles
} from "./fixtures/writer.js"

// The group commit: calls made in one turn share one transaction; a failing call fails alone. The crash test is in
// GroupCommit.crash.test.ts, the WAL synced off the event loop in GroupCommit.walSync.test.ts.

describe("group commit", () => {
  const freshFile = tempFiles("group")

  it.effect(
    "800 concurrent writes over mixed streams commit in few groups; 500 deltas on a hot stream end at 500",
    () =>
      Effect.scoped(
        Effect.gen(function* () {
          const { db, group, widget } = yield* openWriter(freshFile())
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
          assert.deepStrictEqual(new Set(outcomes.map(tagOf)), new Set(["ok"]))

          const stored = parsedRows(db, hot)
          assert.strictEqual(stored.length, 500)
          assert.strictEqual(new Set(stored.map((r) => r.ts)).size, 500)
          assert.deepStrictEqual(
            stored.map((r) => r.point.number),
            Array.from({ length: 500 }, (_, i) => i + 1)
          )
          assert.strictEqual(
            series.map((s) => parsedRows(db, s).length).reduce((a, b) => a + b),
            250
          )
          assert.strictEqual((parsedRows(db, list).at(-1)!.point.list as ReadonlyArray<unknown>).length, 50)
          assert.strictEqual(group.calls, 800)
          assert.isAtMost(group.groups, 20, `${group.groups} groups for 800 calls`)
        })
      )
  )

  it.effect("a group stops at maxCalls calls or maxEntries entries; the rest forms the next groups", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openWriter(freshFile(), { maxCalls: 10, maxEntries: 25 })
        const counter = yield* widget("counter", "number")
        const series = yield* widget("series", "sparkline")
        const groupsOf = (calls: ReadonlyArray<ReadonlyArray<StreamWrite>>) =>
          Effect.gen(function* () {
            const before = group.groups
            const outcomes = yield* concurrently(group, calls)
            assert.deepStrictEqual(new Set(outcomes.map(tagOf)), new Set(["ok"]))
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
        assert.strictEqual(parsedRows(db, counter).at(-1)!.point.number, 42)
        assert.strictEqual(parsedRows(db, series).length, 145)
      })
    )
  )

  it.effect("a call failing validation fails alone; the other calls of its group are stored", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { accountStore, account, db, group, widget } = yield* openWriter(freshFile())
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
        assert.deepStrictEqual(outcomes.map(tagOf), [
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
        assert.deepStrictEqual(numbersOf(db, counter), [1, 2, 3])
        assert.deepStrictEqual(parsedRows(db, table).at(-1)!.point, {
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
        const { db, group, widget } = yield* openWriter(freshFile())
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
        assert.deepStrictEqual(outcomes.map(tagOf), ["ok", "StorageError", "ok"])
        assert.strictEqual(group.groups, groupsBefore + 1)
        assert.deepStrictEqual(parsedRows(db, trapped), [])
        assert.deepStrictEqual(numbersOf(db, counter), [1, 2])
      })
    )
  )

  it.effect("a statement failing midway in a call of several writes fails that call only (all its writes undone)", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openWriter(freshFile())
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
        assert.deepStrictEqual(outcomes.map(tagOf), ["ok", "StorageError", "ok"])
        assert.strictEqual(group.groups, groupsBefore + 1)
        assert.deepStrictEqual(parsedRows(db, trapped), [])
        assert.deepStrictEqual(numbersOf(db, counter), [1, 2])
        assert.deepStrictEqual(numbersOf(db, other), [1])
      })
    )
  )

  it.effect("a failing COMMIT fails every call of its group and stores nothing of it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openWriter(freshFile())
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
        assert.deepStrictEqual(new Set(outcomes.map(tagOf)), new Set(["StorageError"]))
        assert.deepStrictEqual([parsedRows(db, a), parsedRows(db, b), parsedRows(db, trapped)], [[], [], []])
        assert.isFalse(db.inTransaction)

        // The connection is usable again once the trap is gone.
        db.exec("DROP TRIGGER trap_insert")
        const again = yield* concurrently(group, [one(a, delta(1)), one(trapped, delta(1))])
        assert.deepStrictEqual(again.map(tagOf), ["ok", "ok"])
        assert.deepStrictEqual([parsedRows(db, a).length, parsedRows(db, trapped).length], [1, 1])
      })
    )
  )

  it.effect("a connection closed under queued calls fails each of them with StorageUnavailable", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, group, widget } = yield* openWriter(freshFile())
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
        const { db, group, widget } = yield* openWriter(freshFile())
        const a = yield* widget("a", "number")
        const withdrawn = yield* start(group.write(one(a, delta(100)), micros(T0)))
        assert.strictEqual(group.pending, 1)
        yield* Fiber.interrupt(withdrawn)
        yield* group.write(one(a, delta(1)), micros(T0))
        assert.deepStrictEqual(numbersOf(db, a), [1])
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
        const stored = parsedRows(db, counter)
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
