import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  decimationHorizon,
  makeStreamsSelector,
  selectDeletions,
  type Entry,
  type SelectionMode,
  type StreamEntry,
  type StreamKey
} from "../src/index.js"
import {
  extremeOf,
  groupsOf,
  optionsOf,
  realEntriesArb,
  referenceKept,
  run,
  runChunked,
  scenarioArb,
  sorted,
  tinyEntriesArb,
  type Scenario
} from "./support.js"

const RUNS = { numRuns: 400 }

const idsOf = (entries: ReadonlyArray<Entry<number>>) => entries.map((entry) => entry.id)

describe("decimation properties (docs/api.md section 9)", () => {
  it("1. keeps a subset of the input in input order: deletions are distinct ids of the input", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { entries } = scenario
        const deleted = selectDeletions(entries, optionsOf(scenario))
        const ids = new Set(idsOf(entries))
        expect(new Set(deleted).size).toBe(deleted.length)
        expect(deleted.every((id) => ids.has(id))).toBe(true)
        const { kept } = run(entries, optionsOf(scenario))
        expect(kept.length + deleted.length).toBe(entries.length)
        let next = 0
        for (const entry of entries) if (next < kept.length && kept[next] === entry) next++
        expect(next).toBe(kept.length)
      }),
      RUNS
    )
  })

  it("2. every bucket's first, last, lowest and highest (earliest among equal) survive, global ones included", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { entries, mode } = scenario
        const options = optionsOf(scenario)
        const kept = new Set(idsOf(run(entries, options).kept))
        const mustSurvive = (members: ReadonlyArray<number>) => {
          const required: Array<number | undefined> = [members[members.length - 1]]
          if (mode === "extremes")
            required.push(members[0], extremeOf(entries, members, 1), extremeOf(entries, members, -1))
          for (const index of required) if (index !== undefined) expect(kept.has(entries[index]!.id)).toBe(true)
        }
        for (const { members } of groupsOf(entries, options.policy, options.now)) mustSurvive(members)
        if (entries.length > 0) mustSurvive(entries.map((_, index) => index))
      }),
      RUNS
    )
  })

  it("3. entries younger than the first tier are untouched", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { entries, now, policy } = scenario
        const finest = policy[0]!
        const deleted = new Set(selectDeletions(entries, optionsOf(scenario)))
        for (const entry of entries) {
          const end = (Math.floor(entry.ts / finest.bucketWidth) + 1) * finest.bucketWidth
          if (end > now - finest.minAge) expect(deleted.has(entry.id)).toBe(false)
        }
        // The horizon is exactly that bound.
        const horizon = decimationHorizon(policy, now)
        for (const entry of entries) {
          const end = (Math.floor(entry.ts / finest.bucketWidth) + 1) * finest.bucketWidth
          expect(entry.ts >= horizon).toBe(end > now - finest.minAge)
        }
      }),
      RUNS
    )
  })

  it("4. at most 4 entries per bucket (exactly 1 in mode last)", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const options = optionsOf(scenario)
        const deleted = new Set(selectDeletions(scenario.entries, options))
        for (const { members } of groupsOf(scenario.entries, options.policy, options.now)) {
          const survivors = members.filter((index) => !deleted.has(scenario.entries[index]!.id)).length
          if (scenario.mode === "last") expect(survivors).toBe(1)
          else expect(survivors).toBeLessThanOrEqual(4)
        }
      }),
      RUNS
    )
  })

  it("5. idempotent: a second pass at the same time removes nothing", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { kept } = run(scenario.entries, optionsOf(scenario))
        expect(selectDeletions(kept, optionsOf(scenario))).toEqual([])
      }),
      RUNS
    )
  })

  it("6. composable: a pass at t1 then at t2 >= t1 keeps exactly what one pass at t2 keeps", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const t2 = scenario.now + scenario.later
        const twice = run(run(scenario.entries, optionsOf(scenario)).kept, optionsOf(scenario, t2)).kept
        const once = run(scenario.entries, optionsOf(scenario, t2)).kept
        expect(idsOf(twice)).toEqual(idsOf(once))
      }),
      RUNS
    )
  })

  it("6'. composable even when entries are inserted (never replaced) between the two passes", () => {
    const arb = fc.tuple(scenarioArb, fc.array(fc.boolean(), { minLength: 1, maxLength: 40 }))
    fc.assert(
      fc.property(arb, ([scenario, flags]) => {
        const { entries } = scenario
        const t2 = scenario.now + scenario.later
        const early = entries.filter((_, index) => flags[index % flags.length])
        const survivors = new Set(idsOf(run(early, optionsOf(scenario)).kept))
        const afterFirstPass = entries.filter((entry, index) => !flags[index % flags.length] || survivors.has(entry.id))
        const twice = run(afterFirstPass, optionsOf(scenario, t2)).kept
        const once = run(entries, optionsOf(scenario, t2)).kept
        expect(idsOf(twice)).toEqual(idsOf(once))
      }),
      RUNS
    )
  })

  it("7. the result does not depend on chunk sizes", () => {
    const arb = fc.tuple(scenarioArb, fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 8 }))
    fc.assert(
      fc.property(arb, ([scenario, sizes]) => {
        const options = optionsOf(scenario)
        expect(sorted(runChunked(scenario.entries, options, sizes))).toEqual(
          sorted(selectDeletions(scenario.entries, options))
        )
      }),
      RUNS
    )
  })

  it("7'. bucket edges do not depend on the pass time: a bucket keeps the same entries whenever decimated", () => {
    const arb = fc.tuple(scenarioArb, fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }))
    fc.assert(
      fc.property(arb, ([scenario, fraction]) => {
        const { entries, policy } = scenario
        const deleted = new Set(selectDeletions(entries, optionsOf(scenario)))
        for (const { members, start, tier } of groupsOf(entries, policy, scenario.now)) {
          // Any pass time at which this bucket is a tier-`tier` group: from its qualification to the next tier's.
          const { bucketWidth, minAge } = policy[tier]!
          const earliest = start + bucketWidth + minAge
          const coarser = policy[tier + 1]
          const latest =
            coarser === undefined
              ? earliest + 10 * bucketWidth
              : (Math.floor(start / coarser.bucketWidth) + 1) * coarser.bucketWidth + coarser.minAge
          const now = earliest + Math.floor(fraction * (latest - earliest))
          const alone = members.map((index) => entries[index]!)
          const expected = alone.filter((entry) => deleted.has(entry.id)).map((entry) => entry.id)
          expect(sorted(selectDeletions(alone, optionsOf(scenario, now)))).toEqual(sorted(expected))
        }
      }),
      RUNS
    )
  })

  it("8. streams are independent: a combined run keyed by stream selects each stream as alone", () => {
    const keys = fc.constantFrom<[StreamKey, StreamKey]>(["a", "b"], [1, "1"], [1n, 1], [0, 7n], ["x", 2])
    const arb = scenarioArb.chain((scenario) =>
      fc.record({
        scenario: fc.constant(scenario),
        other: scenario.scale === "real" ? realEntriesArb(150) : tinyEntriesArb(80),
        otherMode: fc.constantFrom<SelectionMode>("extremes", "last"),
        keys,
        contiguous: fc.boolean(),
        order: fc.array(fc.boolean(), { minLength: 1, maxLength: 50 }),
        sizes: fc.array(fc.integer({ min: 1, max: 15 }), { minLength: 1, maxLength: 6 })
      })
    )
    fc.assert(
      fc.property(arb, ({ contiguous, keys: [keyA, keyB], order, other, otherMode, scenario, sizes }) => {
        const a = scenario.entries
        const b = other.map((entry) => ({ ...entry, id: entry.id + 1_000_000 }))
        const alone = [
          ...selectDeletions(a, optionsOf(scenario)),
          ...selectDeletions(b, { ...optionsOf(scenario), mode: otherMode })
        ]
        // Merge the two streams, in random interleaving or one after the other.
        const merged: Array<StreamEntry<number>> = []
        let i = 0
        let j = 0
        for (let k = 0; i < a.length || j < b.length; k++) {
          const takeA = j >= b.length || (i < a.length && (contiguous || order[k % order.length]!))
          if (takeA) merged.push({ ...a[i++]!, stream: keyA })
          else merged.push({ ...b[j++]!, stream: keyB })
        }
        const selector = makeStreamsSelector<number>({
          policy: scenario.policy,
          now: scenario.now,
          modeOf: (key) => (key === keyA ? scenario.mode : otherMode)
        })
        const combined: Array<number> = []
        for (let start = 0, k = 0; start < merged.length; k++) {
          const size = sizes[k % sizes.length]!
          combined.push(...selector.push(merged.slice(start, start + size)))
          start += size
        }
        combined.push(...selector.finish())
        expect(sorted(combined)).toEqual(sorted(alone))
      }),
      RUNS
    )
  })

  it("matches the reference model of section 9", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario: Scenario) => {
        const deleted = new Set(selectDeletions(scenario.entries, optionsOf(scenario)))
        expect(scenario.entries.map((entry) => !deleted.has(entry.id))).toEqual(
          referenceKept(scenario.entries, optionsOf(scenario))
        )
      }),
      RUNS
    )
  })

  it("always keeps the newest entry, and selecting only entries below the horizon gives the same deletions", () => {
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { entries, now, policy } = scenario
        const deleted = selectDeletions(entries, optionsOf(scenario))
        if (entries.length > 0) expect(deleted).not.toContain(entries[entries.length - 1]!.id)
        const horizon = decimationHorizon(policy, now)
        const below = entries.filter((entry) => entry.ts < horizon)
        expect(sorted(selectDeletions(below, optionsOf(scenario)))).toEqual(sorted(deleted))
      }),
      RUNS
    )
  })
})
