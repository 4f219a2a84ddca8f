import { type AccountId, AccountStore, StreamName } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { WidgetLookups } from "../src/internal/widgetLookups.js"
import { openTestDatabase } from "../src/testing/index.js"
import { countingPool, freshSchema, processes, T0, widgets } from "./fixtures.js"

// Never skipped: without a PostgreSQL server, opening the database throws and this file fails.
const db = await openTestDatabase()
afterAll(() => db.close())

type Answer = { readonly error: string | undefined; readonly found: Record<string, number> }

/** Asks `lookups` for each `[account, names]` in the same turn of the event loop; resolves to each answer, in order. */
const findTogether = (
  lookups: WidgetLookups,
  asked: ReadonlyArray<readonly [AccountId, ReadonlyArray<string>]>
): Effect.Effect<Array<Answer>> =>
  Effect.promise(() =>
    Promise.all(
      asked.map(
        ([account, names]) =>
          new Promise<Answer>((resolve) =>
            lookups.find(account, names, (error, found) =>
              resolve({
                error: error?._tag,
                found: Object.fromEntries([...found].map(([name, widget]) => [name, widget.id as number]))
              })
            )
          )
      )
    )
  )

describe("widget lookups, batched", () => {
  // Two accounts with widgets a, b (first) and a (second), and a pool that counts queries.
  const setup = (maxBatch?: number) =>
    Effect.gen(function* () {
      const schema = freshSchema("wl")
      const [stores] = yield* processes(db.url, schema, 1)
      const [a1, b1] = yield* widgets(stores!, [
        ["number", "a"],
        ["sparkline", "b"]
      ])
      const [a2] = yield* widgets(stores!, [["number", "a"]])
      const { pool, sent } = yield* countingPool(db.url, schema)
      return { stores: stores!, a1: a1!, b1: b1!, a2: a2!, pool, sent, lookups: new WidgetLookups(pool, maxBatch) }
    })

  it.scopedLive("lookups asked in one turn are one query; each gets its own account's widgets of its names", () =>
    Effect.gen(function* () {
      const { a1, b1, a2, sent, lookups } = yield* setup()
      const answers = yield* findTogether(lookups, [
        [a1.accountId, ["a", "b", "nope"]],
        [a2.accountId, ["a", "b"]],
        [a1.accountId, ["b"]],
        ["no-such-account" as AccountId, ["a"]]
      ])
      assert.deepStrictEqual(answers, [
        { error: undefined, found: { a: a1.id, b: b1.id } },
        { error: undefined, found: { a: a2.id } },
        { error: undefined, found: { b: b1.id } },
        { error: undefined, found: {} }
      ])
      assert.deepStrictEqual([sent.queries, lookups.batches], [1, 1])
    })
  )

  it.scopedLive("lookups asked while a query runs go together in the next one", () =>
    Effect.gen(function* () {
      const { a1, b1, sent, lookups } = yield* setup()
      const first = findTogether(lookups, [[a1.accountId, ["a"]]])
      // Asked in a later turn, while the first query is in flight.
      const later = Effect.flatMap(
        Effect.promise(() => new Promise((r) => setImmediate(r))),
        () =>
          findTogether(lookups, [
            [a1.accountId, ["b"]],
            [a1.accountId, ["a", "b"]]
          ])
      )
      const [one, two] = yield* Effect.all([first, later], { concurrency: 2 })
      assert.deepStrictEqual(one, [{ error: undefined, found: { a: a1.id } }])
      assert.deepStrictEqual(two, [
        { error: undefined, found: { b: b1.id } },
        { error: undefined, found: { a: a1.id, b: b1.id } }
      ])
      assert.deepStrictEqual([sent.queries, lookups.batches], [2, 2])
    })
  )

  it.scopedLive("a widget created before the lookup was asked is found", () =>
    Effect.gen(function* () {
      const { stores, a1, lookups } = yield* setup()
      const c = yield* Context.get(stores, AccountStore).createWidget(a1.accountId, StreamName.make("c"), "number", T0)
      assert.deepStrictEqual(yield* findTogether(lookups, [[a1.accountId, ["c"]]]), [
        { error: undefined, found: { c: c.id } }
      ])
    })
  )

  it.scopedLive("at most maxBatch lookups go in one query; the rest follow", () =>
    Effect.gen(function* () {
      const { a1, b1, a2, sent, lookups } = yield* setup(2)
      const answers = yield* findTogether(lookups, [
        [a1.accountId, ["a"]],
        [a2.accountId, ["a"]],
        [a1.accountId, ["b"]],
        [a1.accountId, []]
      ])
      assert.deepStrictEqual(
        answers.map((x) => x.found),
        [{ a: a1.id }, { a: a2.id }, { b: b1.id }, {}]
      )
      // No names: answered at once, no query.
      assert.deepStrictEqual([sent.queries, lookups.batches], [2, 2])
    })
  )

  it.scopedLive("a failed query answers every lookup of its batch with the failure", () =>
    Effect.gen(function* () {
      const { a1, a2, pool, lookups } = yield* setup()
      yield* Effect.promise(() => pool.end())
      const answers = yield* findTogether(lookups, [
        [a1.accountId, ["a"]],
        [a2.accountId, ["a"]]
      ])
      assert.strictEqual(answers.length, 2)
      for (const answer of answers) {
        assert.include(["StorageUnavailable", "StorageError"], answer.error)
        assert.deepStrictEqual(answer.found, {})
      }
    })
  )
})
