/**
 * Generators and a reference model for the decimation tests. The model follows docs/api.md section 9 literally
 * (`Math.floor` buckets, whole stream in memory) so that it shares no code with the streaming implementation.
 */
import { Either } from "effect"
import * as fc from "fast-check"
import {
  defaultPolicy,
  makePolicy,
  makeSelector,
  selectDeletions,
  type Entry,
  type SelectionMode,
  type SelectionOptions,
  type TierPolicy
} from "../src/index.js"

/** Durations in microseconds. */
export const MINUTE = 60_000_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

/** A stream and a pass over it; `later >= 0` is a second pass time offset, `scale` the scenario's time unit. */
export interface Scenario {
  readonly policy: TierPolicy
  readonly entries: ReadonlyArray<Entry<number>>
  readonly now: number
  readonly later: number
  readonly mode: SelectionMode
  readonly scale: "real" | "tiny"
}

/** Integer microseconds in `[min, max]`, beyond the 32-bit range of `fc.integer`. */
export const micros = (min: number, max: number): fc.Arbitrary<number> =>
  fc.bigInt({ min: BigInt(min), max: BigInt(max) }).map(Number)

/** Values with many ties (small integers), some nulls, negative zero and arbitrary finite doubles. */
export const valueArb: fc.Arbitrary<number | null> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(null) },
  { weight: 8, arbitrary: fc.integer({ min: -3, max: 3 }) },
  { weight: 1, arbitrary: fc.constant(-0) },
  { weight: 3, arbitrary: fc.double({ min: -1e6, max: 1e6, noNaN: true }) }
)

/** Either selection mode. */
export const modeArb: fc.Arbitrary<SelectionMode> = fc.constantFrom("extremes", "last")

/** Small policies with tiny widths and ages, so buckets of every tier get many entries. */
export const tinyPolicyArb: fc.Arbitrary<TierPolicy> = fc
  .record({
    count: fc.integer({ min: 1, max: 3 }),
    width: fc.integer({ min: 1, max: 8 }),
    factors: fc.tuple(fc.integer({ min: 2, max: 4 }), fc.integer({ min: 2, max: 4 })),
    age: fc.integer({ min: 0, max: 20 }),
    steps: fc.tuple(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 60 }))
  })
  .map(({ age, count, factors, steps, width }) => {
    const tiers = [{ bucketWidth: width, minAge: age }]
    for (let i = 1; i < count; i++) {
      const previous = tiers[i - 1]!
      tiers.push({ bucketWidth: previous.bucketWidth * factors[i - 1]!, minAge: previous.minAge + steps[i - 1]! })
    }
    return Either.getOrThrow(makePolicy(tiers))
  })

const toEntries = (start: number, steps: ReadonlyArray<readonly [number, number | null]>): Array<Entry<number>> => {
  const entries: Array<Entry<number>> = []
  let ts = start
  for (let i = 0; i < steps.length; i++) {
    ts += steps[i]![0]
    entries.push({ id: i, ts, value: steps[i]![1] })
  }
  return entries
}

/**
 * Realistic clustered timestamps around 2020-2027 under the default policy: bursts seconds apart, pauses of
 * minutes to hours, gaps of days, some steps exact multiples of 5 minutes to hit bucket edges; ~200 days overall.
 */
export const realEntriesArb = (maxLength: number): fc.Arbitrary<Array<Entry<number>>> => {
  const gap = fc.oneof(
    { weight: 10, arbitrary: micros(1, MINUTE) },
    { weight: 4, arbitrary: micros(1, 30 * MINUTE) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 24 }).map((k) => k * 5 * MINUTE) },
    { weight: 2, arbitrary: micros(1, 6 * HOUR) },
    { weight: 2, arbitrary: micros(1, 20 * DAY) }
  )
  const start = fc.tuple(micros(1_580_000_000_000_000, 1_800_000_000_000_000), fc.boolean())
  return fc
    .tuple(start, fc.array(fc.tuple(gap, valueArb), { maxLength, size: "max" }))
    .map(([[ts, aligned], steps]) => toEntries(aligned ? ts - (ts % DAY) : ts, steps))
}

/** Timestamps a few microseconds apart, around the epoch (negative ones included), for tiny policies. */
export const tinyEntriesArb = (maxLength: number): fc.Arbitrary<Array<Entry<number>>> => {
  const gap = fc.oneof(
    { weight: 8, arbitrary: fc.integer({ min: 1, max: 2 }) },
    { weight: 2, arbitrary: fc.integer({ min: 1, max: 12 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 80 }) }
  )
  return fc
    .tuple(fc.integer({ min: -80, max: 60 }), fc.array(fc.tuple(gap, valueArb), { maxLength, size: "max" }))
    .map(([start, steps]) => toEntries(start, steps))
}

const span = (entries: ReadonlyArray<Entry<number>>) =>
  entries.length === 0 ? 0 : entries[entries.length - 1]!.ts - entries[0]!.ts

/** Pass times around the newest entry, or anywhere from before the first entry to well after the last one. */
const passArb = (entries: ReadonlyArray<Entry<number>>, reach: number) => {
  const last = entries.length === 0 ? 0 : entries[entries.length - 1]!.ts
  return fc.record({
    now: fc.oneof(
      micros(last - reach / 50, last + reach / 50),
      micros(last - span(entries) - reach / 10, last + reach)
    ),
    later: fc.oneof(fc.constant(0), micros(0, reach / 20), micros(0, reach))
  })
}

/** Realistic streams (see `realEntriesArb`) under the default policy, passes up to 150 days after. */
export const realScenarioArb = (maxLength = 250): fc.Arbitrary<Scenario> =>
  fc.tuple(realEntriesArb(maxLength), modeArb).chain(([entries, mode]) =>
    passArb(entries, 150 * DAY).map(({ later, now }) => ({
      policy: defaultPolicy,
      entries,
      now,
      later,
      mode,
      scale: "real" as const
    }))
  )

/** Tiny streams under tiny policies (see `tinyPolicyArb`), passes up to 200 µs after. */
export const tinyScenarioArb = (maxLength = 120): fc.Arbitrary<Scenario> =>
  fc
    .tuple(tinyPolicyArb, tinyEntriesArb(maxLength), modeArb)
    .chain(([policy, entries, mode]) =>
      passArb(entries, 200).map(({ later, now }) => ({ policy, entries, now, later, mode, scale: "tiny" as const }))
    )

/** Both kinds of scenarios. */
export const scenarioArb: fc.Arbitrary<Scenario> = fc.oneof(realScenarioArb(), tinyScenarioArb())

/** The selection options of a scenario, at its pass time or at `now`. */
export const optionsOf = (scenario: Scenario, now = scenario.now): SelectionOptions => ({
  policy: scenario.policy,
  now,
  mode: scenario.mode
})

/** The entries a pass keeps, in input order, and the deleted ids as returned. */
export const run = <Id extends number | string | bigint>(
  entries: ReadonlyArray<Entry<Id>>,
  options: SelectionOptions
): { readonly kept: ReadonlyArray<Entry<Id>>; readonly deleted: ReadonlyArray<Id> } => {
  const deleted = selectDeletions(entries, options)
  const gone = new Set(deleted)
  return { kept: entries.filter((entry) => !gone.has(entry.id)), deleted }
}

/** Runs a selector over `entries` cut into chunks of the given sizes (cycled; 0 pushes an empty chunk). */
export const runChunked = <Id extends number | string | bigint>(
  entries: ReadonlyArray<Entry<Id>>,
  options: SelectionOptions,
  sizes: ReadonlyArray<number>
): Array<Id> => {
  const selector = makeSelector<Id>(options)
  const deleted: Array<Id> = []
  // Zero-size chunks are pushed as empty chunks; without any positive size the stream goes in one chunk.
  if (!sizes.some((size) => size > 0)) sizes = [entries.length]
  let i = 0
  let k = 0
  while (i < entries.length) {
    const size = sizes[k++ % sizes.length]!
    deleted.push(...selector.push(entries.slice(i, i + size)))
    i += size
  }
  deleted.push(...selector.finish())
  return deleted
}

/** Reference: the qualifying group (tier index, bucket start) of `ts`, or undefined if it is kept as recent. */
export const groupOf = (policy: TierPolicy, now: number, ts: number): { tier: number; start: number } | undefined => {
  for (let tier = policy.length - 1; tier >= 0; tier--) {
    const { bucketWidth, minAge } = policy[tier]!
    const start = Math.floor(ts / bucketWidth) * bucketWidth
    if (start + bucketWidth <= now - minAge) return { tier, start }
  }
  return undefined
}

/** Reference: entry indices grouped by qualifying bucket, in order; recent entries are in no group. */
export const groupsOf = (
  entries: ReadonlyArray<Entry>,
  policy: TierPolicy,
  now: number
): Array<{ tier: number; start: number; members: Array<number> }> => {
  const groups = new Map<string, { tier: number; start: number; members: Array<number> }>()
  entries.forEach((entry, index) => {
    const group = groupOf(policy, now, entry.ts)
    if (group === undefined) return
    const key = `${group.tier}:${group.start}`
    const existing = groups.get(key)
    if (existing === undefined) groups.set(key, { ...group, members: [index] })
    else existing.members.push(index)
  })
  return [...groups.values()]
}

const hasValue = (value: number | null): value is number => value !== null && !Number.isNaN(value)

/** Reference: the earliest entry with the lowest (`sign = 1`) or highest (`sign = -1`) value, by index. */
export const extremeOf = (entries: ReadonlyArray<Entry>, members: ReadonlyArray<number>, sign: 1 | -1) => {
  let best: number | undefined
  for (const index of members) {
    const value = entries[index]!.value
    if (!hasValue(value)) continue
    if (best === undefined || sign * value < sign * (entries[best]!.value as number)) best = index
  }
  return best
}

/** Reference: what a bucket keeps, by index. */
export const keepersOf = (entries: ReadonlyArray<Entry>, members: ReadonlyArray<number>, mode: SelectionMode) => {
  const last = members[members.length - 1]!
  if (mode === "last") return new Set([last])
  const keep = new Set([members[0]!, last])
  for (const sign of [1, -1] as const) {
    const extreme = extremeOf(entries, members, sign)
    if (extreme !== undefined) keep.add(extreme)
  }
  return keep
}

/** Reference: the kept flags of a whole pass. */
export const referenceKept = (entries: ReadonlyArray<Entry>, options: SelectionOptions): Array<boolean> => {
  const kept = entries.map(() => true)
  for (const { members } of groupsOf(entries, options.policy, options.now)) {
    const keep = keepersOf(entries, members, options.mode)
    for (const index of members) kept[index] = keep.has(index)
  }
  if (entries.length > 0) kept[entries.length - 1] = true
  return kept
}

/** Sorted copy, to compare deletions regardless of their order. */
export const sorted = <A extends number | string | bigint>(ids: ReadonlyArray<A>): Array<A> =>
  [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
