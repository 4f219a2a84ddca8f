import { assert, describe, it } from "@effect/vitest"
import { Effect, FastCheck as fc } from "effect"
import { readsAsSummary, storesSummary, summarizeBlock, summaryBuckets } from "../src/BlockSummary.js"
import type { SelectionMode } from "../src/BucketSelection.js"
import { pointBuckets, readRangeFrom, type RangeSource } from "../src/RangeRead.js"
import type { RangeQuery } from "../src/StreamStore.js"
import type { Micros } from "../src/Time.js"
import { decodeBlock, encodeBlock } from "../src/entryBlocks.js"
import { type E, reference, streamArb } from "./support/rangeReference.js"

const encode = (entries: ReadonlyArray<E>) =>
  encodeBlock(entries.map((e) => ({ ...e, json: JSON.stringify([e.ts, e.value]) }))).data

describe("summarizeBlock", () => {
  it.prop(
    "keeps what the bucket rule keeps of the block as one bucket, in the block's layout",
    [streamArb.filter((s) => s.length > 0)],
    ([block]) => {
      const kept = reference(block, "extremes", block[0]!.ts, block.at(-1)!.ts, 1)
      assert.deepStrictEqual(
        decodeBlock(summarizeBlock(encode(block))),
        kept.map((e) => ({ ...e, json: JSON.stringify([e.ts, e.value]) }))
      )
    },
    { fastCheck: { numRuns: 500 } }
  )

  it("of equal values keeps the first, the last and the earliest lowest and highest", () => {
    const block = [1, 2, 3, 4, 5, 6].map((ts): E => ({ ts, value: 7 }))
    assert.deepStrictEqual(
      decodeBlock(summarizeBlock(encode(block))).map((e) => e.ts),
      [1, 6]
    )
  })
})

// Windows whose bucket arithmetic exceeds 2^53 as well as small ones.
const windowArb = fc
  .record({
    lower: fc.integer({ min: 0, max: 2 ** 40 }),
    span: fc.oneof(fc.integer({ min: 1, max: 1_000 }), fc.integer({ min: 1, max: 2 ** 48 })),
    n: fc.integer({ min: 2, max: 10_000 })
  })
  .chain(({ lower, n, span }) =>
    fc.record({
      lower: fc.constant(lower),
      upper: fc.constant(lower + span),
      n: fc.constant(n),
      a: fc.integer({ min: lower, max: lower + span }),
      b: fc.integer({ min: lower, max: lower + span })
    })
  )

describe("readsAsSummary", () => {
  it.prop("is true exactly when a block inside the read has its first and last in one bucket", [windowArb], ([w]) => {
    const first = Math.min(w.a, w.b)
    const last = Math.max(w.a, w.b)
    const buckets = summaryBuckets(w.lower, w.upper, w.n)
    const { bucketOf } = pointBuckets(w.lower, w.upper, w.n)
    if (buckets === null) return assert.isAtLeast((w.upper - w.lower) * w.n, 2 ** 62)
    assert.strictEqual(readsAsSummary(buckets, w.lower - 1, w.upper, first, last), bucketOf(first) === bucketOf(last))
    assert.isFalse(readsAsSummary(buckets, first, w.upper, first, last))
  })

  it("no summaries for a window of one instant or one too long for 64-bit bucket arithmetic", () => {
    assert.isNull(summaryBuckets(5, 5, 10))
    assert.isNull(summaryBuckets(0, 2 ** 49, 10_000))
    assert.isNotNull(summaryBuckets(0, 30 * 86_400_000_000, 10_000))
  })
})

// Longer streams than `streamArb`'s, values from a few levels (ties everywhere), some without a value.
const longStreamArb = fc
  .uniqueArray(fc.integer({ min: 0, max: 300 }), { maxLength: 150 })
  .chain((ts) =>
    fc.tuple(
      fc.constant([...ts].sort((a, b) => a - b)),
      fc.array(fc.option(fc.integer({ min: 0, max: 4 }), { freq: 8 }), { minLength: ts.length, maxLength: ts.length })
    )
  )
  .map(([ts, values]) => ts.map((t, i): E => ({ ts: t, value: values[i]! })))

describe("readRangeFrom over summaries", () => {
  // The entries in blocks of `sizes` (repeated), given as a store gives them: a block the read may take as its
  // summary comes as its summary unless `missing` says it has none (a database part-way through its backfill).
  const sourceOf = (
    entries: ReadonlyArray<E>,
    sizes: ReadonlyArray<number>,
    missing: ReadonlyArray<boolean>,
    pages: Array<number>,
    summaries: { taken: number }
  ): RangeSource => {
    const blocks: Array<ReadonlyArray<E>> = []
    for (let i = 0, k = 0; i < entries.length; k++) {
      blocks.push(entries.slice(i, i + sizes[k % sizes.length]!))
      i += sizes[k % sizes.length]!
    }
    return {
      page: (after, to, limit) =>
        Effect.sync(() =>
          entries
            .filter((e) => e.ts > after && (to === null || e.ts <= to))
            .slice(0, limit)
            .map((e) => ({ ...e, json: "" }))
        ),
      newest: Effect.sync(() => entries.at(-1)?.ts ?? null),
      blocks: (after, to, limit, buckets) =>
        Effect.sync(() => {
          const data: Array<Buffer> = []
          let found = 0
          for (let k = 0; k < blocks.length && found < limit; k++) {
            const b = blocks[k]!
            if (b.at(-1)!.ts <= after || b[0]!.ts > to) continue
            found++
            const summary =
              buckets !== null &&
              storesSummary(b.length) &&
              !missing[k % missing.length] &&
              readsAsSummary(buckets, after, to, b[0]!.ts, b.at(-1)!.ts)
            if (summary) summaries.taken++
            data.push(summary ? summarizeBlock(encode(b)) : encode(b))
          }
          pages.push(found)
          // Laid end to end in one buffer, as SQLite gives a page.
          return { blocks: found, data: found % 2 === 0 ? [Buffer.concat(data)] : data }
        })
    }
  }

  it.effect.prop(
    "blocks of any sizes, some without a summary, in pages of any size keep what the bucket rule keeps",
    [
      fc.oneof(streamArb, longStreamArb),
      fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 4 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 3 }),
      fc.integer({ min: 1, max: 4 }),
      fc.constantFrom<SelectionMode>("extremes", "last"),
      fc.integer({ min: 2, max: 8 }),
      fc.option(fc.integer({ min: 0, max: 300 }), { nil: null }),
      fc.option(fc.integer({ min: 0, max: 300 }), { nil: null })
    ],
    ([stream, sizes, missing, blocksPerPage, mode, points, from, to]) =>
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
        const read = yield* readRangeFrom(
          sourceOf(stream, sizes, missing, pages, { taken: 0 }),
          query,
          1_000,
          blocksPerPage
        )
        assert.isTrue(pages.every((size) => size <= blocksPerPage))
        const window = stream.filter((e) => (from === null || e.ts >= from) && (to === null || e.ts <= to))
        if (window.length === 0 || (from !== null && to !== null && to < from)) return assert.deepStrictEqual(read, [])
        const expected = reference(window, mode, from ?? window[0]!.ts, to ?? window.at(-1)!.ts, points)
        assert.deepStrictEqual(
          read.map((e) => [e.ts, e.json]),
          expected.map((e) => [e.ts, JSON.stringify([e.ts, e.value])])
        )
      }),
    { fastCheck: { numRuns: 600 } }
  )

  it.effect("a long stream of ties reads most blocks as summaries and answers as the rule does", () =>
    Effect.gen(function* () {
      const stream = Array.from({ length: 2_000 }, (_, i): E => ({ ts: i, value: i % 3 === 0 ? 1 : (i * 7) % 5 }))
      const summaries = { taken: 0 }
      const query: RangeQuery = {
        from: 0 as Micros,
        since: null,
        to: 1_999 as Micros,
        points: 10,
        mode: "extremes",
        limit: null
      }
      const read = yield* readRangeFrom(sourceOf(stream, [32], [false], [], summaries), query)
      assert.isAbove(summaries.taken, 50)
      assert.deepStrictEqual(
        read.map((e) => e.ts),
        reference(stream, "extremes", 0, 1_999, 10).map((e) => e.ts)
      )
    })
  )
})
