import { assert, describe, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { BucketKeeper, type SelectionMode } from "../src/BucketSelection.js"

interface E {
  readonly ts: number
  readonly value: number | null
}

// A bucket: strictly increasing ts, few distinct values (ties are common), some entries without a value.
const bucketArb = fc
  .array(fc.record({ gap: fc.integer({ min: 1, max: 5 }), value: fc.option(fc.integer({ min: -3, max: 3 })) }), {
    minLength: 1,
    maxLength: 40
  })
  .map((rows) => {
    let ts = 0
    return rows.map((row): E => ({ ts: (ts += row.gap), value: row.value }))
  })

const modeArb = fc.constantFrom<SelectionMode>("extremes", "last")

// The rule read off the README's "Decimation" section, brute force: first, last, lowest and highest (earliest on ties).
const reference = (entries: ReadonlyArray<E>, mode: SelectionMode): Array<E> => {
  if (mode === "last") return [entries[entries.length - 1]!]
  const valued = entries.filter((e) => e.value !== null)
  const picks = new Set<E>([entries[0]!, entries[entries.length - 1]!])
  if (valued.length > 0) {
    picks.add(valued.reduce((a, b) => (b.value! < a.value! ? b : a)))
    picks.add(valued.reduce((a, b) => (b.value! > a.value! ? b : a)))
  }
  return entries.filter((e) => picks.has(e))
}

const run = (entries: ReadonlyArray<E>, mode: SelectionMode) => {
  const keeper = new BucketKeeper<E>(mode)
  const dropped: Array<E> = []
  keeper.open(entries[0]!.ts, entries[0]!.value, entries[0]!)
  for (const e of entries.slice(1)) keeper.add(e.ts, e.value, e, dropped)
  const kept: Array<E> = []
  keeper.keptInto(kept)
  return { kept, dropped }
}

describe("BucketKeeper (the per-bucket rule of decimation and range reads)", () => {
  it.prop(
    "keeps exactly first, last, lowest and highest (earliest on ties), ascending",
    [bucketArb, modeArb],
    ([entries, mode]) => {
      assert.deepStrictEqual(run(entries, mode).kept, reference(entries, mode))
    }
  )

  it.prop("what it drops and what it keeps partition the bucket", [bucketArb, modeArb], ([entries, mode]) => {
    const { dropped, kept } = run(entries, mode)
    assert.deepStrictEqual(
      [...dropped, ...kept].sort((a, b) => a.ts - b.ts),
      entries
    )
  })

  it("keeps nothing before the first entry; a NaN value is no value", () => {
    const keeper = new BucketKeeper<number>("extremes")
    const out: Array<number> = []
    keeper.keptInto(out)
    assert.deepStrictEqual(out, [])
    keeper.open(1, NaN, 1)
    keeper.add(2, 5, 2, [])
    keeper.add(3, NaN, 3, [])
    keeper.add(4, 5, 4, [])
    keeper.keptInto(out)
    assert.deepStrictEqual(out, [1, 2, 4])
  })
})
