import { AccountStore, micros, type PointOp } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Fiber } from "effect"
import pg from "pg"
import { encodeBlock } from "@dashstream/core/entryBlocks"
import { GroupCommit } from "../src/internal/groupCommit.js"
import { openTestDatabase } from "../src/testing/index.js"
import {
  delta,
  freshSchema,
  groupCommitSetup,
  ownPool,
  put,
  readAll,
  readNumbers,
  T0,
  together,
  widgets
} from "./fixtures.js"

// The PostgreSQL group commit: calls of one turn share a transaction; a failing call fails alone; groups of two
// stores on one stream. Groups planned on guessed last ts and merged into stored blocks: GroupCommit.guesses.test.ts.

const db = await openTestDatabase()
afterAll(() => db.close())

describe("group commit", () => {
  const url = db.url

  it.scopedLive("an invalid call and a call for a deleted widget fail alone; the rest of the group is stored", () =>
    Effect.gen(function* () {
      const { stores, group } = yield* groupCommitSetup(url, freshSchema("g"))
      const [n, t, gone] = yield* widgets(stores, [
        ["number", "n"],
        ["table", "t"],
        ["number", "gone"]
      ])
      const row = (cells: ReadonlyArray<string>): PointOp => ({ _tag: "TableRow", row: cells })
      // The header row first, in its own group.
      assert.deepStrictEqual(yield* together(group, [[[t!, row(["a", "b"])]]]), ["Success"])
      yield* Context.get(stores, AccountStore).deleteWidget(gone!.accountId, gone!.streamName)
      const groupsBefore = group.groups
      const outcomes = yield* together(group, [
        [[n!, delta(1)]],
        // Two writes, the second invalid: the first (a delta on n) must not be stored either.
        [
          [n!, delta(100)],
          [t!, row(["only one cell"])]
        ],
        [[t!, row(["c", "d"])]],
        [
          [n!, delta(1000)],
          [gone!, put(1)]
        ],
        [[n!, delta(2)]]
      ])
      assert.deepStrictEqual(outcomes, ["Success", "InvalidPoint", "Success", "StreamNotFound", "Success"])
      assert.strictEqual(group.groups - groupsBefore, 1)
      const numbers = yield* readAll(stores, n!)
      assert.deepStrictEqual(
        numbers.map((e) => e.point.number),
        [1, 3]
      )
      const table = yield* readAll(stores, t!)
      assert.deepStrictEqual(table[table.length - 1]!.point, {
        table: [
          ["a", "b"],
          ["c", "d"]
        ]
      } as never)
    })
  )

  it.scopedLive("a failed COMMIT fails every call of the group and stores none of them", () =>
    Effect.gen(function* () {
      const schema = freshSchema("c")
      const { stores, group } = yield* groupCommitSetup(url, schema)
      const [a, b] = yield* widgets(stores, [
        ["number", "a"],
        ["number", "b"]
      ])
      // A deferred constraint trigger that rejects the number 666 when the transaction commits.
      yield* Effect.promise(async () => {
        const client = new pg.Client({ connectionString: url })
        await client.connect()
        try {
          await client.query(`
            create function ${schema}.reject_666() returns trigger language plpgsql as $$
            begin
              if position('{"number":666}'::bytea in new.data) > 0 then raise exception 'rejected at commit'; end if;
              return null;
            end $$;
            create constraint trigger reject_666 after insert or update on ${schema}.entry_blocks
              deferrable initially deferred for each row execute function ${schema}.reject_666();`)
        } finally {
          await client.end()
        }
      })
      const outcomes = yield* together(group, [[[a!, put(1)]], [[b!, put(666)]], [[a!, delta(5)]]])
      assert.deepStrictEqual(outcomes, ["StorageError", "StorageError", "StorageError"])
      assert.deepStrictEqual(yield* readAll(stores, a!), [])
      assert.deepStrictEqual(yield* readAll(stores, b!), [])
      // The store keeps working after the failed group.
      assert.deepStrictEqual(yield* together(group, [[[a!, put(2)]], [[b!, put(3)]]]), ["Success", "Success"])
      assert.deepStrictEqual(yield* readNumbers(stores, a!), [2])
    })
  )

  it.scopedLive("a group the server aborts as a deadlock's victim runs again and is stored", () =>
    Effect.gen(function* () {
      const schema = freshSchema("d")
      const { stores, group } = yield* groupCommitSetup(url, schema)
      const [a] = yield* widgets(stores, [["number", "a"]])
      // Another process's statement planned on guesses: it inserted its block at T0 (uncommitted) and will then ask
      // for the stream's row lock. Its deadlock check waits 10 s, so the group below is the one PostgreSQL aborts.
      const other = yield* Effect.acquireRelease(
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` })
          await client.connect()
          await client.query("SET deadlock_timeout = '10s'")
          return client
        }),
        (client) => Effect.promise(() => client.end())
      )
      const { data, lastAt } = encodeBlock([{ ts: T0, value: 9, json: '{"number":9}' }])
      yield* Effect.promise(async () => {
        await other.query("BEGIN")
        await other.query(
          `INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data) VALUES ($1, $2, $2, 1, $3, $4)`,
          [a!.id, T0, lastAt, data]
        )
      })
      // A delta is planned on the rows: the group locks the row, plans its entry at T0 and waits on the other's block.
      const write = Effect.runFork(
        Effect.either(group.write([{ widget: a!, op: delta(5), path: "point" }], micros(T0)))
      )
      yield* Effect.sleep("300 millis")
      // The other asks for the row lock the group holds: a deadlock, found by the group's check after 1 s.
      const started = performance.now()
      yield* Effect.promise(() => other.query(`SELECT id FROM streams WHERE id = ${a!.id} FOR UPDATE`))
      const waited = performance.now() - started
      // It waited for the group's transaction to end, aborted: the group held the lock and was the victim.
      assert.isAtLeast(waited, 500)
      yield* Effect.promise(() => other.query("ROLLBACK"))
      const outcome = yield* Fiber.join(write)
      assert.isTrue(Either.isRight(outcome), Either.isLeft(outcome) ? String(outcome.left) : "")
      assert.deepStrictEqual(yield* readAll(stores, a!), [{ ts: T0, point: { number: 5 } }])
    })
  )

  it.scopedLive(
    "a call queued behind a stuck group fails with StorageUnavailable after maxWaitMs; the stuck one ends well",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("w")
        const { stores, group } = yield* groupCommitSetup(url, schema, 300)
        const [a] = yield* widgets(stores, [["number", "a"]])
        // Another session holds the stream's row lock, so the one group allowed at a time waits on it.
        const holder = new pg.Client({ connectionString: url })
        yield* Effect.promise(async () => {
          await holder.connect()
          await holder.query(`BEGIN; SELECT id FROM ${schema}.streams WHERE id = ${a!.id} FOR UPDATE`)
        })
        const stuck = Effect.runFork(
          Effect.either(group.write([{ widget: a!, op: put(1), path: "point" }], micros(T0)))
        )
        yield* Effect.sleep("100 millis")
        const started = performance.now()
        const queued = yield* Effect.either(group.write([{ widget: a!, op: put(2), path: "point" }], micros(T0 + 1)))
        const waited = performance.now() - started
        assert.isTrue(Either.isLeft(queued) && queued.left._tag === "StorageUnavailable")
        assert.isAtLeast(waited, 250)
        assert.isBelow(waited, 3_000)
        yield* Effect.promise(async () => {
          await holder.query("COMMIT")
          await holder.end()
        })
        assert.isTrue(Either.isRight(yield* Fiber.join(stuck)))
        assert.deepStrictEqual(yield* readNumbers(stores, a!), [1])
      })
  )

  it.scopedLive("groups from two stores on one hot stream lose no delta and keep ts strictly increasing", () =>
    Effect.gen(function* () {
      const schema = freshSchema("h")
      const first = yield* groupCommitSetup(url, schema)
      const second = new GroupCommit(yield* ownPool(url, schema))
      const [w] = yield* widgets(first.stores, [["number", "hot"]])
      const rounds = 20
      for (let r = 0; r < rounds; r++) {
        const calls = Array.from({ length: 20 }, (_, i) =>
          Effect.either(
            (i % 2 === 0 ? first.group : second).write([{ widget: w!, op: delta(1), path: "point" }], micros(T0))
          )
        )
        const results = yield* Effect.all(calls, { concurrency: "unbounded" })
        assert.isTrue(results.every(Either.isRight))
      }
      yield* Effect.promise(() => second.close())
      const all = yield* readAll(first.stores, w!)
      assert.strictEqual(all.length, rounds * 20)
      for (let i = 1; i < all.length; i++) assert.isAbove(all[i]!.ts, all[i - 1]!.ts)
      assert.deepStrictEqual(
        all.map((e) => e.point.number),
        Array.from({ length: rounds * 20 }, (_, i) => i + 1)
      )
      // Both stores ran several calls per group.
      assert.isBelow(first.group.groups + second.groups, rounds * 20)
    })
  )
})
