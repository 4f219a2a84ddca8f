import { AccountStore, micros, type PointOp, type Widget } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect, Fiber } from "effect"
import pg from "pg"
import { encodeBlock } from "@dashstream/core/entryBlocks"
import { GroupCommit } from "../src/internal/groupCommit.js"
import { openTestDatabase } from "../src/testing/index.js"
import {
  countedGroupCommit,
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

// The PostgreSQL group commit planned on guessed last ts: one statement when the guesses hold, caught under the locks
// when another writer made them wrong; back-fills merged into the stored blocks they overlap.

const db = await openTestDatabase()
afterAll(() => db.close())

describe("group commit", () => {
  const url = db.url

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
        const { stores } = yield* groupCommitSetup(url, schema)
        const { group, sent } = yield* countedGroupCommit(url, schema)
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
        const otherPool = yield* ownPool(url, schema)
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
        assert.deepStrictEqual(yield* readNumbers(stores, m!), [1, 2, 3, 4, 5, 6, 7, 8, 9])
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
        const { stores } = yield* groupCommitSetup(url, schema)
        const pool = yield* ownPool(url, schema)
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
        const { stores } = yield* groupCommitSetup(url, schema)
        const { group, sent } = yield* countedGroupCommit(url, schema)
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
      const { stores } = yield* groupCommitSetup(url, schema)
      const { group, sent } = yield* countedGroupCommit(url, schema)
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
      assert.deepStrictEqual(yield* readNumbers(stores, s!), [101, 102, 103, 104, 105, 106, 0, 0, 0, 0, 0])
    })
  )

  it.scopedLive("replacements far apart rewrite only the blocks that hold them, not the blocks between", () =>
    Effect.gen(function* () {
      const schema = freshSchema("rp")
      const { stores } = yield* groupCommitSetup(url, schema)
      const { group } = yield* countedGroupCommit(url, schema)
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
        const { stores } = yield* groupCommitSetup(url, schema)
        const { group } = yield* countedGroupCommit(url, schema)
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
        const { stores } = yield* groupCommitSetup(url, schema)
        const { group, sent } = yield* countedGroupCommit(url, schema)
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
        assert.deepStrictEqual(yield* readNumbers(stores, n!), [5, 7])
      })
  )
})
