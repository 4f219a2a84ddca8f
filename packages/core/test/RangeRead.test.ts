import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import type { SelectionMode } from "../src/BucketSelection.js"
import { makeRangeSelector, pointBuckets, type RangeEntry, readRangeFrom, type RangeSource } from "../src/RangeRead.js"
import type { RangeQuery } from "../src/StreamStore.js"
import type { Micros } from "../src/Time.js"
import { encodeBlock } from "../src/entryBlocks.js"
import { type E, inBucket, reference, streamArb } from "./support/rangeReference.js"

// Windows from a few microseconds to 2^32 seconds, where (t - L) * N exceeds 2^53.
const windowArb = fc
  .record({
    lower: fc.integer({ min: 0, max: 2 ** 40 }),
    span: fc.oneof(fc.integer({ min: 0, max: 1_000 }), fc.integer({ min: 0, max: 4_294_967_295_000_000 })),
    n: fc.oneof(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 10_000 }))
  })
  .chain(({ lower, n, span }) =>
    fc.record({
      lower: fc.constant(lower),
      upper: fc.constant(lower + span),
      n: fc.constant(n),
      t: fc.integer({ min: lower, max: lower + span })
    })
  )

describe("pointBuckets", () => {
  it.prop("an entry's bucket is min(N - 1, floor((t - L) * N / (U - L))), exactly", [windowArb], ([w]) => {
    const { bucketOf } = pointBuckets(w.lower, w.upper, w.n)
    assert.isTrue(inBucket(w.t, bucketOf(w.t), w.lower, w.upper, w.n))
  })

  it.prop("endOf(k) is the first t of a later bucket: t - 1 is still in bucket k", [windowArb], ([w]) => {
    const { bucketOf, endOf } = pointBuckets(w.lower, w.upper, w.n)
    const k = bucketOf(w.t)
    const end = endOf(k)
    if (end === Infinity) return assert.strictEqual(k, w.upper === w.lower ? 0 : w.n - 1)
    assert.isTrue(end > w.t)
    assert.isTrue(inBucket(end - 1, k, w.lower, w.upper, w.n))
    if (end <= w.upper) assert.isAbove(bucketOf(end), k)
  })

  it("a year of microseconds in 10,000 buckets: no floating-point edge error", () => {
    const lower = 1_700_000_000_000_000
    const upper = lower + 365 * 86_400_000_000 + 7
    const { bucketOf, endOf } = pointBuckets(lower, upper, 10_000)
    for (let k = 0; k < 9_999; k++) {
      const end = endOf(k)
      assert.strictEqual(bucketOf(end - 1), k)
      assert.strictEqual(bucketOf(end), k + 1)
    }
    assert.strictEqual(bucketOf(upper), 9_999)
  })
})

describe("makeRangeSelector", () => {
  it.prop(
    "keeps, per bucket, what the bucket rule keeps, ascending",
    [
      streamArb,
      fc.constantFrom<SelectionMode>("extremes", "last"),
      fc.integer({ min: 0, max: 30 }),
      fc.integer({ min: 0, max: 40 }),
      fc.integer({ min: 1, max: 12 })
    ],
    ([stream, mode, lower, span, n]) => {
      const upper = lower + span
      const window = stream.filter((e) => e.ts >= lower && e.ts <= upper)
      const selector = makeRangeSelector<E>(mode, lower, upper, n)
      for (const e of window) selector.push(e.ts, e.value, e)
      assert.deepStrictEqual(selector.finish(), reference(window, mode, lower, upper, n))
    },
    { fastCheck: { numRuns: 1_000 } }
  )
})

describe("readRangeFrom", () => {
  // The entries stored in blocks of 1 to 5 entries (`sizes`, repeated), as an adapter stores them in `entry_blocks`.
  const blocksOf = (entries: ReadonlyArray<E>, sizes: ReadonlyArray<number>) => {
    const blocks: Array<ReadonlyArray<E>> = []
    for (let i = 0, k = 0; i < entries.length; k++) {
      const size = sizes[k % sizes.length]!
      blocks.push(entries.slice(i, i + size))
      i += size
    }
    return blocks
  }

  const sourceOf = (
    entries: ReadonlyArray<E>,
    pages: Array<number>,
    sizes: ReadonlyArray<number> = [3]
  ): RangeSource => ({
    page: (after, to, limit) =>
      Effect.sync(() => {
        const found = entries
          .filter((e) => e.ts > after && (to === null || e.ts <= to))
          .slice(0, limit)
          .map((e): RangeEntry => ({ ...e, json: String(e.value) }))
        pages.push(found.length)
        return found
      }),
    newest: Effect.sync(() => entries.at(-1)?.ts ?? null),
    blocks: (after, to, limit) =>
      Effect.sync(() => {
        const found = blocksOf(entries, sizes)
          .filter((b) => b.at(-1)!.ts > after && b[0]!.ts <= to)
          .slice(0, limit)
        pages.push(found.length)
        const encoded = found.map((b) => encodeBlock(b.map((e) => ({ ...e, json: JSON.stringify(e.value) }))).data)
        // Laid end to end in buffers of one or two blocks, as adapters give them.
        const data: Array<Buffer> = []
        for (let i = 0, k = 0; i < encoded.length; k++) {
          const step = k % 2 === 0 ? 1 : 2
          data.push(Buffer.concat(encoded.slice(i, i + step)))
          i += step
        }
        return { blocks: found.length, data }
      })
  })

  it.effect.prop(
    "pages of any size give the answer of one page; a page never exceeds the page size",
    [
      streamArb,
      fc.integer({ min: 1, max: 5 }),
      fc.option(fc.integer({ min: 2, max: 8 }), { nil: null }),
      fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
      fc.option(fc.integer({ min: 0, max: 60 }), { nil: null })
    ],
    ([stream, pageSize, points, from, to]) =>
      Effect.gen(function* () {
        const query: RangeQuery = {
          from: from as Micros | null,
          since: null,
          to: to as Micros | null,
          points,
          mode: "extremes",
          limit: null
        }
        const pages: Array<number> = []
        const paged = yield* readRangeFrom(sourceOf(stream, pages), query, pageSize, pageSize)
        assert.deepStrictEqual(paged, yield* readRangeFrom(sourceOf(stream, []), query, 1_000, 1_000))
        assert.isTrue(pages.every((size) => size <= pageSize))
      })
  )

  it.effect("with points, a page whose entries do not ascend fails the read instead of answering", () =>
    Effect.gen(function* () {
      const e = (ts: number) => ({ ts, value: ts, json: String(ts) })
      // Two blocks given in the wrong order, as one buffer and as two.
      for (const data of [
        [Buffer.concat([encodeBlock([e(30), e(40)]).data, encodeBlock([e(10), e(20)]).data])],
        [encodeBlock([e(30), e(40)]).data, encodeBlock([e(10), e(20)]).data]
      ]) {
        const source: RangeSource = {
          page: () => Effect.succeed([]),
          newest: Effect.succeed(40),
          blocks: () => Effect.succeed({ blocks: 2, data })
        }
        const query: RangeQuery = {
          from: 0 as Micros,
          since: null,
          to: 50 as Micros,
          points: 4,
          mode: "extremes",
          limit: null
        }
        const exit = yield* Effect.exit(readRangeFrom(source, query))
        assert.isTrue(exit._tag === "Failure" && exit.cause._tag === "Die", String(exit))
      }
    })
  )

  it.effect.prop(
    "with points, blocks of any sizes in pages of any size keep what the bucket rule keeps, entries unchanged",
    [
      streamArb,
      fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 1, maxLength: 4 }),
      fc.integer({ min: 1, max: 4 }),
      fc.constantFrom<SelectionMode>("extremes", "last"),
      fc.integer({ min: 1, max: 8 }),
      fc.option(fc.integer({ min: 0, max: 60 }), { nil: null }),
      fc.option(fc.integer({ min: 0, max: 60 }), { nil: null })
    ],
    ([stream, sizes, blocksPerPage, mode, points, from, to]) =>
      Effect.gen(function* () {
        const query: RangeQuery = {
          from: from as Micros | null,
          since: null,
          to: to as Micros | null,
          points,
          mode,
          limit: null
        }
        const pages: Array<number> = []
        const read = yield* readRangeFrom(sourceOf(stream, pages, sizes), query, 1_000, blocksPerPage)
        assert.isTrue(pages.every((size) => size <= blocksPerPage))
        const window = stream.filter((e) => (from === null || e.ts >= from) && (to === null || e.ts <= to))
        if (window.length === 0 || (from !== null && to !== null && to < from)) return assert.deepStrictEqual(read, [])
        const lower = from ?? window[0]!.ts
        const upper = to ?? window.at(-1)!.ts
        const expected = reference(window, mode, lower, upper, points)
        assert.deepStrictEqual(
          read.map((e) => [e.ts, e.json]),
          expected.map((e) => [e.ts, JSON.stringify(e.value)])
        )
      }),
    { fastCheck: { numRuns: 1_000 } }
  )
})
