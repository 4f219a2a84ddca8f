import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import Database from "better-sqlite3"
import {
  type Account,
  DecimationStore,
  digestAccessKey,
  micros,
  newAccessKey,
  newAccountId,
  StreamName
} from "@dashstream/core"
import { decimationSuite } from "@dashstream/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"
import * as SqliteStore from "../src/index.js"
import { DecimationSql, Sql } from "../src/internal/statements.js"

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "dashstream-sqlite-decimation-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

let files = 0
const freshFile = () => Path.join(dir, `store-${++files}.db`)

decimationSuite("sqlite", () => SqliteStore.layer({ filename: freshFile() }))
decimationSuite("sqlite without group commit", () => SqliteStore.layer({ filename: freshFile(), groupCommit: false }))

const T0 = 1_700_000_000_000_000

describe("SQLite decimation store", () => {
  it.effect("the pass's statements are index lookups (EXPLAIN QUERY PLAN)", () =>
    Effect.gen(function* () {
      const filename = freshFile()
      yield* SqliteStore.migrate({ filename })
      const db = new Database(filename)
      try {
        const plan = (sql: string, ...params: ReadonlyArray<unknown>) =>
          (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ readonly detail: string }>).map(
            (row) => row.detail
          )
        const expect = (details: ReadonlyArray<string>, ...expected: ReadonlyArray<string>) => {
          for (const e of expected) {
            assert.isTrue(
              details.some((d) => d.includes(e)),
              `expected "${e}" in ${JSON.stringify(details)}`
            )
          }
          for (const d of details) {
            assert.isFalse(/^SCAN entry_blocks\b/.test(d), `table scan: ${d}`)
            assert.isFalse(d.includes("TEMP B-TREE"), `sort: ${d}`)
          }
        }
        expect(
          plan(DecimationSql.streams, 0, T0, 10),
          "USING INTEGER PRIMARY KEY (rowid>?)",
          "USING COVERING INDEX entry_blocks_stream_ts (stream_id=? AND first_ts<?)"
        )
        expect(plan(Sql.blocksFrom, 1, 1, 0, 0), "USING INDEX entry_blocks_stream_ts (stream_id=? AND first_ts>?)")
        expect(plan(DecimationSql.newest, 1), "USING INDEX entry_blocks_stream_ts (stream_id=?)")
        expect(plan(Sql.blockAt, 1, 0), "USING INDEX entry_blocks_stream_ts (stream_id=? AND first_ts<?)")
        expect(plan(Sql.updateBlock, 1, 1, 1, 1, Buffer.alloc(0), null, 1), "USING INTEGER PRIMARY KEY (rowid=?)")
        expect(plan(Sql.deleteBlock, 1), "USING INTEGER PRIMARY KEY (rowid=?)")
      } finally {
        db.close()
      }
    })
  )

  it.effect("the pass lock is exclusive between two connections to one file in this process", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const filename = freshFile()
        const a = yield* Layer.build(SqliteStore.layer({ filename }))
        const b = yield* Layer.build(SqliteStore.layer({ filename }))
        const elsewhere = yield* Layer.build(SqliteStore.layer({ filename: freshFile() }))
        const lock = <A, E>(context: typeof a, effect: Effect.Effect<A, E>) =>
          Effect.provide(
            Effect.flatMap(DecimationStore, (s) => s.withPassLock(effect)),
            context
          )
        const entered = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        const holder = yield* Effect.fork(
          lock(a, Effect.zipRight(Deferred.succeed(entered, undefined), Deferred.await(release)))
        )
        yield* Deferred.await(entered)
        assert.isTrue(Option.isNone(yield* lock(b, Effect.void)))
        assert.isTrue(Option.isSome(yield* lock(elsewhere, Effect.void)))
        yield* Deferred.succeed(release, undefined)
        assert.isTrue(Option.isSome(yield* Fiber.join(holder)))
        assert.isTrue(Option.isSome(yield* lock(b, Effect.void)))
      })
    )
  )

  it.effect("deletes interleave with group-committed pushes; the guard sees the newest committed entry", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const stores = yield* SqliteStore.make({ filename: freshFile() })
        const account: Account = { id: newAccountId(), name: "a", createdAt: T0 }
        yield* stores.accountStore.createAccount(account, digestAccessKey(newAccessKey()))
        const widget = yield* stores.accountStore.createWidget(account.id, StreamName.make("s"), "sparkline", T0)
        const put = (offsets: ReadonlyArray<number>) =>
          stores.streamStore.write(
            [
              {
                widget,
                op: { _tag: "Put", entries: offsets.map((o) => ({ point: { number: o }, ts: micros(T0 + o) })) },
                path: "point"
              }
            ],
            micros(T0)
          )
        yield* put([1, 2, 3, 4])
        const old = yield* stores.decimationStore.entries(widget.id, {
          after: null,
          before: micros(T0 + 100),
          limit: 100
        })
        // Pushes queued for the next group commit, a delete of every old entry, then the group runs.
        const pushes = yield* Effect.fork(Effect.all([put([5]), put([6])], { concurrency: "unbounded" }))
        const deleted = yield* stores.decimationStore.deleteEntries(
          widget.id,
          old.map((e) => e.id)
        )
        yield* Fiber.join(pushes)
        assert.strictEqual(deleted, 3)
        const after = yield* stores.streamStore.read(widget.id, { since: micros(0), limit: null })
        assert.deepStrictEqual(
          after.map((e) => e.ts - T0),
          [4, 5, 6]
        )
        assert.strictEqual(
          yield* stores.decimationStore.deleteEntries(
            widget.id,
            old.map((e) => e.id)
          ),
          1
        )
      })
    )
  )
})
