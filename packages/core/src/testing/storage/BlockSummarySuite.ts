import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, type Layer } from "effect"
import type { RangeQuery } from "../../StreamStore.js"
import type { Widget } from "../../Widget.js"
import { at, newWidget, readAll, type Stores, type SuiteTest, write } from "./fixtures.js"
import { numbers, readRange, referenceRange } from "./RangeReadSuite.js"

/**
 * The per-block summary part of the storage contract suite (core's `BlockSummary.ts`; README, "Range reads"): a
 * range read with `points` reads the blocks inside one bucket as their summaries, and answers what the bucket rule
 * keeps of every entry, whatever wrote the blocks: appends of many blocks, merges of late and replacing entries, a
 * clear and the writes after it, blocks of equal values. Registered by `storageSuite` inside its `describe`.
 */

// Windows that put many whole blocks in one bucket (few points) and few (many points), bounded and not.
const windows: ReadonlyArray<Partial<RangeQuery>> = [
  { points: 2 },
  { points: 7 },
  { points: 40 },
  { from: at(1_000), to: at(50_000), points: 13 },
  { since: at(333), points: 5 },
  { to: at(40_000), points: 3 }
]

// Every window's answer equals the brute-force rule over all of the stream's entries.
const agrees = (w: Widget) =>
  Effect.gen(function* () {
    const all = yield* readAll(w)
    for (const q of windows) {
      const got = yield* readRange(w, q)
      const inWindow = all.filter(
        (e) =>
          (q.from == null || e.ts >= q.from) && (q.since == null || e.ts > q.since) && (q.to == null || e.ts <= q.to)
      )
      if (inWindow.length === 0) {
        assert.deepStrictEqual(got, [], JSON.stringify(q))
        continue
      }
      const lower = q.from ?? (q.since == null ? inWindow[0]!.ts : q.since)
      const upper = q.to ?? all[all.length - 1]!.ts
      assert.deepStrictEqual(got, referenceRange(inWindow, w.type, lower, upper, q.points!), JSON.stringify(q))
    }
  })

// `count` numbers every `step` µs from `start`, values by `value(i)`, pushed `batch` a request.
const pushed = (w: Widget, start: number, step: number, count: number, batch: number, value: (i: number) => number) =>
  Effect.gen(function* () {
    for (let i = 0; i < count; i += batch) {
      const rows = Array.from(
        { length: Math.min(batch, count - i) },
        (_, j) => [start + (i + j) * step, value(i + j)] as const
      )
      yield* numbers(w, ...rows)
    }
  })

export const blockSummarySuite = (test: SuiteTest): void => {
  describe("range read over block summaries", () => {
    test(
      "many blocks, appended in batches and one by one, ties and runs of equal values: the rule's answer",
      Effect.gen(function* () {
        const w = yield* newWidget("sparkline")
        // Values on a few levels (ties everywhere), in batches and one point a push (blocks filled by appends), then
        // a run of one value (blocks of equal values).
        yield* pushed(w, 0, 50, 900, 100, (i) => ((i * 7919) % 13) - 6)
        yield* pushed(w, 45_000, 50, 100, 1, (i) => ((i * 31) % 7) - 3)
        yield* pushed(w, 50_000, 50, 200, 100, () => 4)
        yield* agrees(w)
      })
    )

    test(
      "after merges: late entries between stored ones and replacements of the extremes",
      Effect.gen(function* () {
        const w = yield* newWidget("line-graph")
        yield* pushed(w, 0, 100, 500, 250, (i) => i % 10)
        // Late entries in the gaps (merged into stored blocks), new extremes among them.
        yield* pushed(w, 50, 200, 250, 50, (i) => (i % 17 === 0 ? 100 : i % 23 === 0 ? -100 : 3))
        // Replacements of stored entries, a new highest and lowest at once.
        yield* numbers(w, [10_000, 1_000], [20_000, -1_000], [30_000, 5])
        yield* agrees(w)
      })
    )

    test(
      "after a clear: the blocks written since, not the summaries of the cleared ones",
      Effect.gen(function* () {
        const w = yield* newWidget("number")
        yield* pushed(w, 0, 100, 400, 200, (i) => 1_000 + i)
        yield* write(w, { _tag: "Clear" }, at(2_000_000))
        yield* pushed(w, 0, 100, 400, 200, (i) => -i)
        yield* agrees(w)
      })
    )
  })
}

/** What {@link blockSummaryFallbackSuite} does to the stored summaries: all NULL, or all swapped for a wrong one. */
export type SummaryChange = "forget" | "scramble"

/**
 * The stored side of block summaries, for an adapter that stores them: `make` gives a fresh store's layer and
 * `change`, which rewrites that store's stored summaries behind its back (returns the number of blocks changed). A
 * read with `points` takes its blocks' summaries (scrambled, its answer changes or it fails) and, with them all
 * NULL (a database part-way through its backfill), reads every block whole and answers as before.
 */
export const blockSummaryFallbackSuite = (
  name: string,
  make: () => {
    readonly layer: Layer.Layer<Stores, unknown>
    readonly change: (change: SummaryChange) => Effect.Effect<number, unknown>
  }
): void => {
  describe(`block summaries stored: ${name}`, () => {
    it.effect("a read takes the stored summaries; without them (NULL) it reads the blocks whole, same answer", () => {
      const { change, layer } = make()
      return Effect.provide(
        Effect.gen(function* () {
          const w = yield* newWidget("sparkline")
          yield* pushed(w, 0, 50, 1_000, 100, (i) => ((i * 7919) % 13) - 6)
          const q = { points: 5 }
          const right = yield* readRange(w, q)
          const all = yield* readAll(w)
          assert.deepStrictEqual(right, referenceRange(all, w.type, all[0]!.ts, all.at(-1)!.ts, 5))
          assert.isAbove(yield* change("scramble"), 10)
          const scrambled = yield* Effect.exit(readRange(w, q))
          assert.isFalse(Exit.isSuccess(scrambled) && JSON.stringify(scrambled.value) === JSON.stringify(right))
          assert.isAbove(yield* change("forget"), 10)
          assert.deepStrictEqual(yield* readRange(w, q), right)
        }),
        layer
      )
    })
  })
}
