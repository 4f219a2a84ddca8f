import type { StorageFailure, StoredEntry } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { LatestReads } from "../src/internal/latestReads.js"
import { openTestDatabase } from "../src/testing/index.js"
import { countingPool, freshSchema, processes, put, widgets, write } from "./fixtures.js"

// Never skipped: without a PostgreSQL server, opening the database throws and this file fails.
const db = await openTestDatabase()
afterAll(() => db.close())

type Answer = { readonly error: string | undefined; readonly points: ReadonlyArray<number> }

/** Asks `reads` of `streams` in the same turn of the event loop; resolves to each answer, in order. */
const readTogether = (reads: LatestReads, streams: ReadonlyArray<number>) =>
  Effect.promise(() =>
    Promise.all(
      streams.map(
        (stream) =>
          new Promise<Answer>((resolve) =>
            reads.read(stream, (error: StorageFailure | undefined, entries: ReadonlyArray<StoredEntry>) =>
              resolve({
                error: error?._tag,
                points: entries.map((e) => (JSON.parse(e.json) as { number: number }).number)
              })
            )
          )
      )
    )
  )

describe("latest-entry reads, batched", () => {
  // A migrated schema with streams a (entries 1 then 2), b (empty) and c (entry 5), and a pool that counts queries.
  const setup = (maxBatch?: number) =>
    Effect.gen(function* () {
      const schema = freshSchema("lr")
      const [stores] = yield* processes(db.url, schema, 1)
      const [a, b, c] = yield* widgets(stores!, [
        ["number", "a"],
        ["number", "b"],
        ["number", "c"]
      ])
      yield* write(stores!, [[a!, put(1)]])
      yield* write(stores!, [
        [a!, put(2)],
        [c!, put(5)]
      ])
      const { pool, sent } = yield* countingPool(db.url, schema)
      return { stores: stores!, a: a!, b: b!, c: c!, pool, sent, reads: new LatestReads(pool, maxBatch) }
    })

  it.scopedLive("reads asked in one turn are one query; each gets its own stream's latest entry", () =>
    Effect.gen(function* () {
      const { a, b, c, sent, reads } = yield* setup()
      const answers = yield* readTogether(reads, [a.id, b.id, c.id, a.id, 999_999_999])
      assert.deepStrictEqual(answers, [
        { error: undefined, points: [2] },
        { error: undefined, points: [] },
        { error: undefined, points: [5] },
        { error: undefined, points: [2] },
        { error: undefined, points: [] }
      ])
      assert.deepStrictEqual([sent.queries, reads.batches], [1, 1])
    })
  )

  it.scopedLive("a read asked after a write was acknowledged sees it", () =>
    Effect.gen(function* () {
      const { stores, a, c, reads } = yield* setup()
      yield* write(stores, [[a, put(3)]], 10)
      assert.deepStrictEqual(yield* readTogether(reads, [a.id, c.id]), [
        { error: undefined, points: [3] },
        { error: undefined, points: [5] }
      ])
    })
  )

  it.scopedLive("at most maxBatch reads go in one query; the rest follow at once", () =>
    Effect.gen(function* () {
      const { a, b, c, sent, reads } = yield* setup(2)
      const answers = yield* readTogether(reads, [c.id, a.id, b.id, c.id, a.id])
      assert.deepStrictEqual(
        answers.map((x) => x.points),
        [[5], [2], [], [5], [2]]
      )
      assert.deepStrictEqual([sent.queries, reads.batches], [3, 3])
    })
  )

  it.scopedLive("a failed query answers every read of its batch with the failure", () =>
    Effect.gen(function* () {
      const { a, b, pool, reads } = yield* setup()
      yield* Effect.promise(() => pool.end())
      const answers = yield* readTogether(reads, [a.id, b.id])
      assert.strictEqual(answers.length, 2)
      for (const answer of answers) {
        assert.include(["StorageUnavailable", "StorageError"], answer.error)
        assert.deepStrictEqual(answer.points, [])
      }
    })
  )

  it.scopedLive("a failed query fails the reads of its own batch only", () =>
    Effect.gen(function* () {
      const { a, b, c, sent, reads } = yield* setup(2)
      // 2^63 is out of `bigint`'s range: PostgreSQL refuses the query of the batch that carries it.
      const answers = yield* readTogether(reads, [a.id, 2 ** 63, c.id, b.id, a.id])
      assert.deepStrictEqual(answers, [
        { error: "StorageError", points: [] },
        { error: "StorageError", points: [] },
        { error: undefined, points: [5] },
        { error: undefined, points: [] },
        { error: undefined, points: [2] }
      ])
      assert.deepStrictEqual([sent.queries, reads.batches], [3, 3])
    })
  )
})
