import { AccountStore, micros, type PointOp, type Widget } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Fiber } from "effect"
import pg from "pg"
import { encodeBlock } from "@dashstream/core/entryBlocks"
import { GroupCommit } from "../src/internal/groupCommit.js"
import { makePool } from "../src/internal/pool.js"
import { parseUrl } from "../src/index.js"
import { openTestDatabase, withSchema } from "../src/testing/index.js"
import { countingPool, delta, freshSchema, processes, put, readAll, T0, widgets } from "./fixtures.js"

const db = await openTestDatabase()
afterAll(() => db?.close())

describe.skipIf(db === undefined)("group commit", () => {
  const url = db?.url ?? ""

  // A GroupCommit on its own pool over `schema`, plus the layer of a "process" for widgets and reads.
  const setup = (schema: string, maxWaitMs = 5_000) =>
    Effect.gen(function* () {
      const [stores] = yield* processes(url, schema, 1)
      const config = yield* parseUrl(withSchema(url, schema))
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() => makePool(config)),
        (pool) => Effect.promise(() => pool.end())
      )
      const group = yield* Effect.acquireRelease(
        Effect.sync(() => new GroupCommit(pool, { maxCalls: 1000, maxEntries: 20_000, maxInFlight: 1, maxWaitMs })),
        (g) => Effect.promise(() => g.close())
      )
      return { stores: stores!, group }
    })

  // Starts every call in the same tick, so they all join one group; resolves to each call's outcome tag.
  const together = (group: GroupCommit, calls: ReadonlyArray<ReadonlyArray<readonly [Widget, PointOp]>>) =>
    Effect.gen(function* () {
      const fibers = calls.map((ops, c) =>
        Effect.runFork(
          Effect.either(
            group.write(
              ops.map(([widget, op], i) => ({ widget, op, path: `streams[${i}].point` })),
              micros(T0 + c)
            )
          )
        )
      )
      const results = yield* Fiber.joinAll(fibers)
      return results.map((r) => (Either.isRight(r) ? "Success" : r.left._tag))
    })

  it.scopedLive("an invalid call and a call for a deleted widget fail alone; the rest of the group is stored", () =>
    Effect.gen(function* () {
      const { stores, group } = yield* setup(freshSchema("g"))
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
      const { stores, group } = yield* setup(schema)
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
      assert.deepStrictEqual(
        (yield* readAll(stores, a!)).map((e) => e.point.number),
        [2]
      )
    })
  )

  it.scopedLive("a group the server aborts as a deadlock's victim runs again and is stored", () =>
    Effect.gen(function* () {
      const schema = freshSchema("d")
      const { stores, group } = yield* setup(schema)
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
        const { stores, group } = yield* setup(schema, 300)
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
        assert.deepStrictEqual(
          (yield* readAll(stores, a!)).map((e) => e.point.number),
          [1]
        )
      })
  )

  it.scopedLive("groups from two stores on one hot stream lose no delta and keep ts strictly increasing", () =>
    Effect.gen(function* () {
      const schema = freshSchema("h")
      const first = yield* setup(schema)
      const config = yield* parseUrl(withSchema(url, schema))
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() => makePool(config)),
        (pool) => Effect.promise(() => pool.end())
      )
      const second = new GroupCommit(pool)
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

  // A group commit (one group at a time) on a pool of its own over `schema` that counts the queries it sends.
  const counted = (schema: string) =>
    Effect.gen(function* () {
      const { pool, sent } = yield* countingPool(url, schema)
      const group = yield* Effect.acquireRelease(
        Effect.sync(
          () => new GroupCommit(pool, { maxCalls: 1000, maxEntries: 20_000, maxInFlight: 1, maxWaitMs: 5000 })
        ),
        (g) => Effect.promise(() => g.close())
      )
      return { group, sent }
    })

  const hostile = [
    "back\\slash \\\\ two",
    'double "quotes" and \\"',
    "single 'quotes' and ''",
    "{braces}, commas, NULL",
    "NULL",
    "",
    "$$ dollar $tag$ quoting",
    "unicode é 漢字 🎉 \u2028 \u0001 tab\tnewline\n",
    "E'not an escape'"
  ]

  it.scopedLive(
    "a group planned on guessed last_ts is one statement; a guess another process or a deletion made wrong is caught under the locks",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("gu")
        const { stores } = yield* setup(schema)
        const { group, sent } = yield* counted(schema)
        const [n, m, feed, gone] = yield* widgets(stores, [
          ["number", "n"],
          ["number", "m"],
          ["text-feed", "feed"],
          ["number", "gone"]
        ])
        // The first group reads the rows (two round trips) and learns every last_ts.
        assert.deepStrictEqual(
          yield* together(group, [[[n!, put(1)]], [[m!, put(1)]], [[feed!, put(0)]], [[gone!, put(1)]]]),
          ["Success", "Success", "Success", "Success"]
        )
        assert.strictEqual(sent.queries, 2)
        assert.strictEqual(group.guessedGroups, 0)
        // The next one is planned on the guesses: one statement, texts of every kind stored exactly (as parameters).
        sent.queries = 0
        const feedPoints = hostile.map((msg, i) => ({ point: { title: `t${i}`, msg } }))
        assert.deepStrictEqual(
          yield* together(group, [[[n!, put(2)]], [[m!, put(2)]], [[feed!, { _tag: "Put", entries: feedPoints }]]]),
          ["Success", "Success", "Success"]
        )
        assert.strictEqual(sent.queries, 1)
        assert.deepStrictEqual([group.guessedGroups, group.staleGroups], [1, 0])
        assert.deepStrictEqual(
          (yield* readAll(stores, feed!)).slice(1).map((e) => (e.point as unknown as { msg: string }).msg),
          hostile
        )
        // A widget deleted after its last_ts was guessed: the guard finds its row missing, nothing of the statement
        // is stored, the group is planned again on the rows and the call fails with StreamNotFound alone.
        yield* Context.get(stores, AccountStore).deleteWidget(gone!.accountId, gone!.streamName)
        assert.deepStrictEqual(yield* together(group, [[[gone!, put(2)]], [[m!, put(3)]]]), [
          "StreamNotFound",
          "Success"
        ])
        assert.deepStrictEqual([group.guessedGroups, group.staleGroups], [1, 1])
        // After a wrong guess the next two groups read the rows.
        for (const value of [3, 4]) {
          sent.queries = 0
          assert.deepStrictEqual(yield* together(group, [[[n!, put(value)]]]), ["Success"])
          assert.strictEqual(sent.queries, 2)
        }
        // Another process stores a point in n with a clock far ahead: n's last_ts moves behind this group's back.
        const config = yield* parseUrl(withSchema(url, schema))
        const otherPool = yield* Effect.acquireRelease(
          Effect.sync(() => makePool(config)),
          (pool) => Effect.promise(() => pool.end())
        )
        const other = new GroupCommit(otherPool)
        yield* other.write([{ widget: n!, op: put(10), path: "point" }], micros(T0 + 1_000_000_000))
        yield* Effect.promise(() => other.close())
        // The guess for n is wrong: caught under the locks, the group planned again; n's ts still increase. The
        // server refused the statement with the guard's own condition and message (what its log shows).
        sent.failed.length = 0
        assert.deepStrictEqual(yield* together(group, [[[n!, put(5)]], [[m!, put(4)]]]), ["Success", "Success"])
        assert.deepStrictEqual([group.guessedGroups, group.staleGroups], [1, 2])
        assert.deepStrictEqual(sent.failed, [
          {
            code: "DS001",
            message: "dashstream: stale last_ts guess, the group of writes is planned again (nothing was lost)"
          }
        ])
        const ns = yield* readAll(stores, n!)
        assert.deepStrictEqual(
          ns.map((e) => e.point.number),
          [1, 2, 3, 4, 10, 5]
        )
        for (let i = 1; i < ns.length; i++) assert.isAbove(ns[i]!.ts, ns[i - 1]!.ts)
        // Two wrong guesses in a row: four groups read the rows, then guesses are used again.
        for (const value of [5, 6, 7, 8, 9]) {
          sent.queries = 0
          assert.deepStrictEqual(yield* together(group, [[[m!, put(value)]]]), ["Success"])
        }
        assert.deepStrictEqual([group.guessedGroups, group.staleGroups, sent.queries], [2, 2, 1])
        assert.deepStrictEqual(
          (yield* readAll(stores, m!)).map((e) => e.point.number),
          [1, 2, 3, 4, 5, 6, 7, 8, 9]
        )
        // Another process stores m's entry at a client ts far ahead; this group, guessing m's old last_ts, takes the
        // same ts for a new entry: its early insert collides (23505), nothing of it is stored, it is planned again on
        // the rows and replaces the other process's entry (the later write wins, docs/api.md section 3).
        const ahead = micros(T0 + 5_000_000_000)
        const at = (n: number): PointOp => ({ _tag: "Put", entries: [{ point: { number: n }, ts: ahead }] })
        const third = new GroupCommit(otherPool)
        yield* third.write([{ widget: m!, op: at(100), path: "point" }], micros(T0))
        yield* Effect.promise(() => third.close())
        assert.deepStrictEqual(yield* together(group, [[[m!, at(200)]], [[n!, put(6)]]]), ["Success", "Success"])
        assert.deepStrictEqual([group.guessedGroups, group.staleGroups], [2, 3])
        const ms = yield* readAll(stores, m!)
        assert.deepStrictEqual(ms[ms.length - 1], { ts: ahead, point: { number: 200 } })
        assert.strictEqual(ms.filter((e) => e.ts === ahead).length, 1)
      })
  )

  it.scopedLive(
    "two groups in flight on one stream: the second waits for the first's read, and stores after it on the guesses",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("tu")
        const { stores } = yield* setup(schema)
        const config = yield* parseUrl(withSchema(url, schema))
        const pool = yield* Effect.acquireRelease(
          Effect.sync(() => makePool(config)),
          (pool) => Effect.promise(() => pool.end())
        )
        const group = yield* Effect.acquireRelease(
          Effect.sync(
            () => new GroupCommit(pool, { maxCalls: 1, maxEntries: 20_000, maxInFlight: 2, maxWaitMs: 5000 })
          ),
          (g) => Effect.promise(() => g.close())
        )
        const [s] = yield* widgets(stores, [["sparkline", "s"]])
        const points = (from: number, count: number): PointOp => ({
          _tag: "Put",
          entries: Array.from({ length: count }, (_, i) => ({
            point: { number: from + i },
            ts: micros(T0 + (from + i) * 1_000_000)
          }))
        })
        // Both groups run at once (one call each). The first reads the row (no guess yet); the second waits until
        // the first learned its last_ts, then is planned on it rather than reading the row too.
        const both = (first: PointOp, second: PointOp) =>
          Effect.gen(function* () {
            const a = Effect.runFork(group.write([{ widget: s!, op: first, path: "point" }], micros(T0)))
            const b = Effect.runFork(group.write([{ widget: s!, op: second, path: "point" }], micros(T0)))
            yield* Fiber.join(a)
            yield* Fiber.join(b)
          })
        yield* both(points(0, 10), points(10, 10))
        assert.deepStrictEqual([group.groups, group.guessedGroups, group.staleGroups], [2, 1, 0])
        // Now both are planned on guesses. The first inserts 15,000 entries before it asks for the row lock, the
        // second one entry: the second takes the lock first, finds the last_ts before the first and fails its guard,
        // and is sent again once the first ended (rather than planned again on the rows, a stale group).
        for (let round = 0; round < 3; round++) {
          const from = 20 + round * 15_001
          yield* both(points(from, 15_000), points(from + 15_000, 1))
        }
        assert.deepStrictEqual([group.groups, group.guessedGroups, group.staleGroups], [8, 7, 0])
        const stored = yield* readAll(stores, s!)
        assert.strictEqual(stored.length, 20 + 3 * 15_001)
        assert.deepStrictEqual(
          stored.map((e) => e.point.number),
          stored.map((_, i) => i)
        )
      })
  )

  it.scopedLive(
    "back-filled runs on guesses: runs into gaps are inserted in one statement; a run over stored blocks is merged on the rows",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("bf")
        const { stores } = yield* setup(schema)
        const { group, sent } = yield* counted(schema)
        const [s, t] = yield* widgets(stores, [
          ["sparkline", "s"],
          ["sparkline", "t"]
        ])
        const at = (stream: Widget, from: number, to: number, value: number) =>
          [
            stream,
            {
              _tag: "Put",
              entries: Array.from({ length: to - from + 1 }, (_, i) => ({
                point: { number: value + i },
                ts: micros(T0 + (from + i) * 1_000_000)
              }))
            }
          ] as const
        // Stored: s at 100..110 and 200 (two blocks: one group's new entries of a stream are one run of blocks), t at
        // 100 (the first group reads the rows).
        assert.deepStrictEqual(yield* together(group, [[at(s!, 100, 110, 0)], [at(t!, 100, 100, 0)]]), [
          "Success",
          "Success"
        ])
        assert.deepStrictEqual(yield* together(group, [[at(s!, 200, 200, 0)]]), ["Success"])
        assert.deepStrictEqual([group.guessedGroups, group.staleGroups], [1, 0])
        sent.queries = 0
        // All below last_ts, in gaps: s 10..19, s 150..160 (between stored blocks), t 50..52 then t 40 (two runs).
        assert.deepStrictEqual(
          yield* together(group, [
            [at(s!, 10, 19, 1000)],
            [at(t!, 50, 52, 3000)],
            [at(s!, 150, 160, 4000)],
            [at(t!, 40, 40, 5000)]
          ]),
          ["Success", "Success", "Success", "Success"]
        )
        assert.deepStrictEqual([sent.queries, group.guessedGroups, group.staleGroups], [1, 2, 0])
        sent.queries = 0
        sent.failed.length = 0
        // Over stored entries: s 105..107, and 120 twice in one group (the later wins). The statement finds the run
        // over a stored block (nothing stored, with the condition's own code and message), then the rows are read,
        // the blocks overlapped read and merged.
        assert.deepStrictEqual(
          yield* together(group, [[at(s!, 105, 107, 2000)], [at(s!, 120, 120, 6000)], [at(s!, 120, 120, 7000)]]),
          ["Success", "Success", "Success"]
        )
        assert.deepStrictEqual([sent.queries, group.guessedGroups, group.staleGroups], [4, 2, 0])
        assert.deepStrictEqual(sent.failed, [
          {
            code: "DS002",
            message:
              "dashstream: entries overlap stored blocks, the group of writes is merged the longer way (nothing was lost)"
          }
        ])
        const byTs = (entries: ReadonlyArray<{ ts: number; point: { number: number } }>) =>
          entries.map((e) => [(e.ts - T0) / 1_000_000, e.point.number])
        const range = (from: number, to: number, value: number) =>
          Array.from({ length: to - from + 1 }, (_, i) => [from + i, value + i])
        assert.deepStrictEqual(byTs(yield* readAll(stores, s!)), [
          ...range(10, 19, 1000),
          ...range(100, 104, 0),
          ...range(105, 107, 2000),
          ...range(108, 110, 8),
          [120, 7000],
          ...range(150, 160, 4000),
          [200, 0]
        ])
        assert.deepStrictEqual(byTs(yield* readAll(stores, t!)), [[40, 5000], ...range(50, 52, 3000), [100, 0]])
      })
  )

  it.scopedLive("after groups whose old entries overlap stored blocks, the next groups read the rows first", () =>
    Effect.gen(function* () {
      const schema = freshSchema("ob")
      const { stores } = yield* setup(schema)
      const { group, sent } = yield* counted(schema)
      const [s] = yield* widgets(stores, [["sparkline", "s"]])
      const entry = (ts: number, value: number) => ({ point: { number: value }, ts: micros(T0 + ts * 1_000_000) })
      const at = (ts: number, value: number): PointOp => ({ _tag: "Put", entries: [entry(ts, value)] })
      // A block of 1..10, then a new entry: the group commit knows the stream's last_ts (a guess).
      yield* group.write(
        [
          {
            widget: s!,
            op: { _tag: "Put", entries: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((k) => entry(k, 0)) },
            path: "point"
          }
        ],
        micros(T0)
      )
      yield* group.write([{ widget: s!, op: at(11, 0), path: "point" }], micros(T0))
      // Six groups in a row each replace a stored ts. Planned on the guesses, one costs a failed statement before
      // the three of a group planned on the rows (BEGIN and the locks, the overlapped blocks, the changes and
      // COMMIT): the first does, then the next two read the rows first, the fourth guesses again, and so on.
      const before = sent.queries
      for (let k = 1; k <= 6; k++) yield* group.write([{ widget: s!, op: at(k, 100 + k), path: "point" }], micros(T0))
      assert.strictEqual(sent.queries - before, 4 + 3 + 3 + 4 + 3 + 3)
      assert.deepStrictEqual(
        (yield* readAll(stores, s!)).map((e) => e.point.number),
        [101, 102, 103, 104, 105, 106, 0, 0, 0, 0, 0]
      )
    })
  )

  it.scopedLive("replacements far apart rewrite only the blocks that hold them, not the blocks between", () =>
    Effect.gen(function* () {
      const schema = freshSchema("rp")
      const { stores } = yield* setup(schema)
      const { group } = yield* counted(schema)
      const [s] = yield* widgets(stores, [["sparkline", "s"]])
      const at = (from: number, to: number, value: number): PointOp => ({
        _tag: "Put",
        entries: Array.from({ length: to - from + 1 }, (_, i) => ({
          point: { number: value + i },
          ts: micros(T0 + (from + i) * 1_000_000)
        }))
      })
      // Three blocks, one write each: 1..10, 20..30, 40..50.
      for (const [from, to] of [
        [1, 10],
        [20, 30],
        [40, 50]
      ] as const)
        yield* group.write([{ widget: s!, op: at(from, to, 0), path: "point" }], micros(T0))
      const blocks = () =>
        Effect.promise(async () => {
          const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` })
          await client.connect()
          try {
            const result = await client.query<{ first_ts: string; last_ts: string; n: number; xmin: string }>(
              "SELECT first_ts, last_ts, n, xmin::text FROM entry_blocks ORDER BY first_ts"
            )
            return result.rows.map((r) => [
              (Number(r.first_ts) - T0) / 1e6,
              (Number(r.last_ts) - T0) / 1e6,
              r.n,
              r.xmin
            ])
          } finally {
            await client.end()
          }
        })
      const before = yield* blocks()
      // One write replacing 5 and 45 and back-filling 15 and 35 (in the gaps between the blocks).
      yield* group.write(
        [
          {
            widget: s!,
            op: {
              _tag: "Put",
              entries: [
                { point: { number: 500 }, ts: micros(T0 + 5 * 1_000_000) },
                { point: { number: 1500 }, ts: micros(T0 + 15 * 1_000_000) },
                { point: { number: 3500 }, ts: micros(T0 + 35 * 1_000_000) },
                { point: { number: 4500 }, ts: micros(T0 + 45 * 1_000_000) }
              ]
            },
            path: "point"
          }
        ],
        micros(T0)
      )
      const after = yield* blocks()
      // The middle block is the same row version; the first and the last were rewritten with the same ranges.
      assert.deepStrictEqual(after[2], before[1])
      assert.deepStrictEqual(
        after.map((b) => b.slice(0, 3)),
        [
          [1, 10, 10],
          [15, 15, 1],
          [20, 30, 11],
          [35, 35, 1],
          [40, 50, 11]
        ]
      )
      assert.notStrictEqual(after[0]![3], before[0]![3])
      const read = (yield* readAll(stores, s!)).map((e) => [(e.ts - T0) / 1_000_000, e.point.number])
      assert.deepStrictEqual(
        read.find(([ts]) => ts === 5),
        [5, 500]
      )
      assert.deepStrictEqual(
        read.find(([ts]) => ts === 15),
        [15, 1500]
      )
      assert.deepStrictEqual(
        read.find(([ts]) => ts === 45),
        [45, 4500]
      )
      assert.deepStrictEqual(
        read.find(([ts]) => ts === 35),
        [35, 3500]
      )
      assert.strictEqual(read.length, 34)
    })
  )

  it.scopedLive(
    "a block committed by another writer after the statement's snapshot, over a back-filled entry: planned again, merged",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("bh")
        const { stores } = yield* setup(schema)
        const { group } = yield* counted(schema)
        const [s] = yield* widgets(stores, [["sparkline", "s"]])
        const at = (ts: number, value: number): PointOp => ({
          _tag: "Put",
          entries: [{ point: { number: value }, ts: micros(T0 + ts * 1_000_000) }]
        })
        yield* group.write([{ widget: s!, op: at(100, 0), path: "point" }], micros(T0))
        // Another writer holds the stream's row lock; this group's statement starts (its snapshot has no entry at
        // 50) and waits for the lock; the other writer stores an entry at 50 and commits, leaving last_ts as it was.
        const other = yield* Effect.acquireRelease(
          Effect.promise(async () => {
            const client = new pg.Client({ connectionString: url, options: `-c search_path=${schema}` })
            await client.connect()
            return client
          }),
          (client) => Effect.promise(() => client.end())
        )
        yield* Effect.promise(() => other.query(`BEGIN; SELECT id FROM streams WHERE id = ${s!.id} FOR UPDATE`))
        const write = Effect.runFork(group.write([{ widget: s!, op: at(50, 2), path: "point" }], micros(T0)))
        yield* Effect.sleep("300 millis")
        // The other writer's block holds 49 and 51: it overlaps the entry at 50 without sharing its `first_ts`.
        const { data, lastAt } = encodeBlock([
          { ts: T0 + 49 * 1_000_000, value: 1, json: '{"number":1}' },
          { ts: T0 + 51 * 1_000_000, value: 1, json: '{"number":1}' }
        ])
        yield* Effect.promise(async () => {
          await other.query(
            `INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data) VALUES ($1, $2, $3, 2, $4, $5)`,
            [s!.id, T0 + 49 * 1_000_000, T0 + 51 * 1_000_000, lastAt, data]
          )
          await other.query("COMMIT")
        })
        yield* Fiber.join(write)
        // The statement's check of its back-filled run (a query of its own, after the lock) saw the other writer's
        // block: the group was planned again on the rows (its guesses were right), and its entry merged into it.
        assert.deepStrictEqual([group.guessedGroups, group.staleGroups], [0, 0])
        assert.deepStrictEqual(yield* readAll(stores, s!), [
          { ts: T0 + 49 * 1_000_000, point: { number: 1 } },
          { ts: T0 + 50 * 1_000_000, point: { number: 2 } },
          { ts: T0 + 51 * 1_000_000, point: { number: 1 } },
          { ts: T0 + 100 * 1_000_000, point: { number: 0 } }
        ])
      })
  )

  it.scopedLive(
    "a group that reads rows is two round trips; texts of every kind are stored exactly (inlined as literals)",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("rt")
        const { stores } = yield* setup(schema)
        const { group, sent } = yield* counted(schema)
        const [feed, n] = yield* widgets(stores, [
          ["text-feed", "feed"],
          ["number", "n"]
        ])
        // One call of many entries and a delta: the delta needs the latest point, read in the first round trip.
        yield* group.write([{ widget: n!, op: put(5), path: "point" }], micros(T0))
        sent.queries = 0
        const outcomes = yield* together(group, [
          [[feed!, { _tag: "Put", entries: hostile.map((msg, i) => ({ point: { title: `t${i}`, msg } })) }]],
          [[n!, delta(2)]]
        ])
        assert.deepStrictEqual(outcomes, ["Success", "Success"])
        // connect + BEGIN/locks/latest + changes/COMMIT: the pool's own connect check sends nothing.
        assert.strictEqual(sent.queries, 2)
        const stored = yield* readAll(stores, feed!)
        assert.deepStrictEqual(
          stored.map((e) => (e.point as unknown as { msg: string }).msg),
          hostile
        )
        assert.deepStrictEqual(
          (yield* readAll(stores, n!)).map((e) => e.point.number),
          [5, 7]
        )
      })
  )
})
