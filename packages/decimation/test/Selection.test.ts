import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  defaultPolicy,
  makePolicy,
  makeSelector,
  makeStreamsSelector,
  selectDeletions,
  SelectionInputError,
  type Entry,
  type SelectionMode,
  type Tier
} from "../src/index.js"
import { sorted } from "./support.js"

const policyOf = (...tiers: ReadonlyArray<Tier>) => Either.getOrThrow(makePolicy(tiers))
/** One tier of 10 µs buckets decimated as soon as they end. */
const tens = policyOf({ bucketWidth: 10, minAge: 0 })

/** Entries with ids 0, 1, ... at the given timestamps and values. */
const stream = (rows: ReadonlyArray<readonly [ts: number, value: number | null]>): Array<Entry<number>> =>
  rows.map(([ts, value], id) => ({ id, ts, value }))

const deletions = (entries: ReadonlyArray<Entry<number>>, now: number, mode: SelectionMode, policy = tens) =>
  sorted(selectDeletions(entries, { policy, now, mode }))

const at = (iso: string) => Date.parse(iso) * 1000

describe("selectDeletions, by hand", () => {
  const pi = stream([3, 1, 4, 1, 5, 9, 2, 6, 5, 3].map((value, i) => [i, value] as const))

  it("keeps first, last, lowest and highest of a bucket, the earliest among equal values", () => {
    // first 0 (3), lowest 1 (the first 1), highest 5 (9), last 9 (3)
    expect(deletions(pi, 100, "extremes")).toEqual([2, 3, 4, 6, 7, 8])
  })

  it("keeps only the last entry of a bucket in mode last", () => {
    expect(deletions(pi, 100, "last")).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
  })

  it("decimates a bucket once its end is minAge before the pass, not a microsecond earlier", () => {
    const policy = policyOf({ bucketWidth: 10, minAge: 5 })
    expect(deletions(pi, 14, "last", policy)).toEqual([])
    expect(deletions(pi, 15, "last", policy)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8])
  })

  it("applies each default tier to its age band, keeping recent entries whole", () => {
    const now = at("2024-06-01T03:00:00Z")
    const entries = stream([
      // 121 days old: one 1-day bucket, all equal values
      ...["00:00", "06:00", "12:00", "18:00", "23:59:59.999"].map((t) => [at(`2024-02-01T${t}Z`), 4] as const),
      // 22 days old: 1-hour bucket 14:00-15:00, then 15:30 alone in its bucket
      ...[3, 9, null, 0, 9, 4].map((value, k) => [at(`2024-05-10T14:${k}0:00Z`), value] as const),
      [at("2024-05-10T15:30:00Z"), 7],
      // 3 days old: 5-minute buckets 10:00-10:05 and 10:05-10:10
      ...[5, 2, 8, 2, 6, 1, 1, 1, 1, 1].map((value, k) => [at(`2024-05-29T10:0${k}:00Z`), value] as const),
      // 1 hour old: recent
      [at("2024-06-01T02:00:00Z"), 100],
      [at("2024-06-01T02:59:00Z"), -5]
    ])
    expect(deletions(entries, now, "extremes", defaultPolicy)).toEqual([1, 2, 3, 7, 9, 15, 18, 19, 20])
    expect(deletions(entries, now, "last", defaultPolicy)).toEqual([
      0, 1, 2, 3, 5, 6, 7, 8, 9, 12, 13, 14, 15, 17, 18, 19, 20
    ])
  })

  it("aligns buckets to the epoch, negative timestamps included", () => {
    const entries = stream([-25, -21, -19, -15, -12, -11, -5, -3, -1, 0].map((ts) => [ts, null] as const))
    // buckets [-30,-20) [-20,-10) [-10,0) decimated at 0; [0,10) is recent
    expect(deletions(entries, 0, "extremes")).toEqual([3, 4, 7])
  })

  it("never takes a null (or NaN) value as lowest or highest, but keeps it as first or last", () => {
    expect(
      deletions(
        stream([
          [0, null],
          [1, 2],
          [2, null],
          [3, 5],
          [4, null]
        ]),
        100,
        "extremes"
      )
    ).toEqual([2])
    expect(
      deletions(
        stream([
          [0, null],
          [1, null],
          [2, null]
        ]),
        100,
        "extremes"
      )
    ).toEqual([1])
    expect(
      deletions(
        stream([
          [0, 1],
          [1, NaN],
          [2, 3],
          [3, 0],
          [4, 2]
        ]),
        100,
        "extremes"
      )
    ).toEqual([1])
    expect(
      deletions(
        stream([
          [0, 0],
          [1, -0],
          [2, 0]
        ]),
        100,
        "extremes"
      )
    ).toEqual([1])
  })

  it("always keeps the newest entry", () => {
    expect(
      deletions(
        stream([
          [1, 5],
          [2, 1],
          [3, 3]
        ]),
        100,
        "last"
      )
    ).toEqual([0, 1])
    expect(deletions(stream([[1, 5]]), 100, "extremes")).toEqual([])
    expect(deletions([], 100, "extremes")).toEqual([])
  })

  it("carries opaque ids of any kind", () => {
    const entries = [
      { id: "a", ts: 1, value: 1 },
      { id: "b", ts: 2, value: 1 },
      { id: "c", ts: 3, value: 1 }
    ]
    expect(selectDeletions(entries, { policy: tens, now: 100, mode: "extremes" })).toEqual(["b"])
    const big = [
      { id: 10n ** 20n, ts: 1, value: null },
      { id: 10n ** 20n + 1n, ts: 2, value: null }
    ]
    expect(selectDeletions(big, { policy: tens, now: 100, mode: "last" })).toEqual([10n ** 20n])
  })

  it("outside the guarantee: replacing a value between two passes can differ from one pass", () => {
    // t1 keeps 0 (first, highest), 1 (lowest), 3 (last) and deletes 2.
    const before = stream([
      [1, 5],
      [2, 1],
      [3, 2],
      [4, 5]
    ])
    expect(deletions(before, 10, "extremes")).toEqual([2])
    // A timestamped retry replaces entry 1 with 9: one pass would now keep 2 as the lowest, but it is gone.
    const replaced = [{ id: 1, ts: 2, value: 9 }]
    const once = stream([
      [1, 5],
      [2, 9],
      [3, 2],
      [4, 5]
    ])
    expect(deletions(once, 10, "extremes")).toEqual([])
    const twice = [before[0]!, ...replaced, before[3]!]
    expect(deletions(twice, 10, "extremes")).toEqual([])
    expect(twice.length).toBeLessThan(once.length)
  })
})

describe("makeSelector", () => {
  it("reports a deletion as soon as the entry can no longer be first, last, lowest or highest", () => {
    const selector = makeSelector<number>({ policy: tens, now: 1000, mode: "extremes" })
    const entries = stream([
      [1, 3],
      [2, 1],
      [3, 4],
      [4, 1],
      [5, 0]
    ])
    expect(selector.push(entries.slice(0, 1))).toEqual([])
    expect(selector.push(entries.slice(1, 2))).toEqual([])
    expect(selector.push(entries.slice(2, 4))).toEqual([])
    // 0 displaces the lowest (1) and ends 3 as last; 3 is not the lowest: equal to 1 but later.
    expect(selector.push(entries.slice(4))).toEqual([3, 1])
    expect(selector.finish()).toEqual([])
  })

  it("rejects timestamps that do not increase, across chunks too, and use after finish", () => {
    const selector = makeSelector<number>({ policy: tens, now: 1000, mode: "extremes" })
    selector.push(stream([[5, 1]]))
    expect(() => selector.push([{ id: 1, ts: 5, value: 1 }])).toThrow(SelectionInputError)
    expect(() => selector.push([{ id: 1, ts: 4, value: 1 }])).toThrow("strictly increasing ts order")
    expect(() => selector.push([{ id: 1, ts: NaN, value: 1 }])).toThrow(SelectionInputError)
    selector.finish()
    expect(() => selector.push([])).toThrow("the selector is finished")
    expect(() => selector.finish()).toThrow(SelectionInputError)
  })

  it("rejects a pass time that is not an integer number of microseconds", () => {
    expect(() => makeSelector({ policy: tens, now: 1.5, mode: "last" })).toThrow(SelectionInputError)
    expect(() => makeSelector({ policy: tens, now: NaN, mode: "last" })).toThrow("integer number of microseconds")
  })
})

describe("makeStreamsSelector", () => {
  it("selects interleaved streams separately, each with its own mode, asked once", () => {
    const asked: Array<string> = []
    const selector = makeStreamsSelector<string, string>({
      policy: tens,
      now: 100,
      modeOf: (key) => {
        asked.push(key)
        return key === "n" ? "extremes" : "last"
      }
    })
    const rows = [
      { stream: "n", id: "n0", ts: 1, value: 5 },
      { stream: "t", id: "t0", ts: 1, value: null },
      { stream: "n", id: "n1", ts: 2, value: 3 },
      { stream: "t", id: "t1", ts: 2, value: null },
      { stream: "n", id: "n2", ts: 3, value: 4 },
      { stream: "n", id: "n3", ts: 4, value: 1 }
    ]
    const deleted = [...selector.push(rows.slice(0, 3)), ...selector.push(rows.slice(3)), ...selector.finish()]
    expect(sorted(deleted)).toEqual(["n1", "n2", "t0"])
    expect(asked).toEqual(["n", "t"])
  })
})
