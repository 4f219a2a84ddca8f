/**
 * Which entries a decimation pass deletes (docs/api.md section 9), streaming and allocation-free per entry.
 *
 * Each entry belongs to the coarsest tier whose epoch-aligned bucket holding it has qualified (its end is at least
 * the tier's minimum age before `now`); entries in no qualifying bucket are kept. Within each such bucket, mode
 * `"extremes"` keeps the first, last, lowest and highest entries (among equal values the earliest) and mode `"last"`
 * keeps the last entry. Because an entry's tier only depends on its own timestamp, and tiers only get coarser
 * towards the past, the buckets of a stream read in ascending `ts` order are contiguous runs: state is O(1) per
 * stream, and an entry is reported as soon as it can no longer be a first/last/lowest/highest.
 */
import { BucketKeeper, type SelectionMode } from "@dashstream/core"
import { Data } from "effect"
import { bucketStart } from "./internal/time.js"
import type { TierPolicy } from "./TierPolicy.js"

/** An entry's identifier: opaque to decimation, only carried back in the deletions. */
export type EntryId = number | string | bigint

/**
 * One stored entry as decimation sees it.
 * - `id`: the storage's identifier, returned as is when the entry is to be deleted.
 * - `ts`: integer microseconds since the UNIX epoch; strictly increasing within a stream.
 * - `value`: what `"extremes"` compares: `number` of numeric widgets, `y` of xy-graph. `null` (or `NaN`) means no
 *   value: such an entry can be a bucket's first or last but never its lowest or highest. Ignored by `"last"`.
 */
export interface Entry<Id extends EntryId = EntryId> {
  readonly id: Id
  readonly ts: number
  readonly value: number | null
}

/** What a qualifying bucket keeps (docs/api.md section 9): core's `SelectionMode`, the one rule of both users. */
export type { SelectionMode }

/** Options of one pass over one stream: the tiers, the pass time `now` (integer microseconds), the mode. */
export interface SelectionOptions {
  readonly policy: TierPolicy
  readonly now: number
  readonly mode: SelectionMode
}

/**
 * Streaming selection over ONE stream. Feed its entries in ascending `ts` order, in chunks of any size.
 * The deletions do not depend on how the stream is chunked.
 */
export interface Selector<Id extends EntryId = EntryId> {
  /**
   * Consumes the next entries and returns the ids, in no particular order, of entries (of this or earlier chunks)
   * that are now known to be deleted. Throws `SelectionInputError` (a defect) if a `ts` is not greater than the
   * previous one, or after `finish`.
   */
  readonly push: (chunk: ReadonlyArray<Entry<Id>>) => ReadonlyArray<Id>
  /**
   * Ends the stream and returns the remaining deletions. The newest entry pushed is always kept. Deletions are
   * reported eagerly, so this is currently always empty; call it anyway to close the selector.
   */
  readonly finish: () => ReadonlyArray<Id>
}

/**
 * Misuse of a selector: `ts` not strictly increasing within a stream, a non-integer `now`, a push after `finish`.
 * Thrown as a defect: it is a bug of the caller, not a condition of the data.
 */
export class SelectionInputError extends Data.TaggedError("SelectionInputError")<{ readonly message: string }> {}

/** Per-pass constants shared by every stream of the pass. */
interface Plan {
  /** Bucket widths, finest first. */
  readonly widths: ReadonlyArray<number>
  /** `ts < cutoffs[i]` ⇔ the tier-i bucket holding `ts` has qualified. Non-increasing; `cutoffs[0]` is the horizon. */
  readonly cutoffs: ReadonlyArray<number>
}

const makePlan = (policy: TierPolicy, now: number): Plan => {
  if (!Number.isSafeInteger(now)) {
    throw new SelectionInputError({ message: `the pass time must be an integer number of microseconds, got ${now}` })
  }
  return {
    widths: policy.map((tier) => tier.bucketWidth),
    // Same formula as `decimationHorizon`, per tier.
    cutoffs: policy.map((tier) => bucketStart(now - tier.minAge, tier.bucketWidth))
  }
}

const NO_DELETIONS: ReadonlyArray<never> = Object.freeze([])

/**
 * The selection state of one stream: the current tier bucket, whose first/last/lowest/highest entries so far core's
 * `BucketKeeper` tracks (the one per-bucket rule, shared with range reads).
 */
class StreamState<Id extends EntryId> {
  private readonly horizon: number
  private readonly keeper: BucketKeeper<Id>
  /** Timestamp of the newest entry seen. */
  private lastTs = -Infinity
  /** Set once an entry lies in no qualifying bucket: so do all later ones, which are all kept. */
  private recent = false
  /** Exclusive end of the current bucket; an entry at or after it opens the next bucket. */
  private bucketEnd = -Infinity

  constructor(
    private readonly plan: Plan,
    mode: SelectionMode
  ) {
    this.horizon = plan.cutoffs[0]!
    this.keeper = new BucketKeeper<Id>(mode)
  }

  /** Consumes one entry, appending the ids it makes final deletions to `out`. */
  step(id: Id, ts: number, value: number | null, out: Array<Id>): void {
    const previousTs = this.lastTs
    if (!(ts > previousTs)) {
      throw new SelectionInputError({
        message: `entries must come in strictly increasing ts order within a stream: ${ts} after ${previousTs}`
      })
    }
    this.lastTs = ts
    if (this.recent) return
    if (ts >= this.bucketEnd) return this.open(id, ts, value)
    this.keeper.add(ts, value, id, out)
  }

  /** Starts the bucket of `ts`, the first entry after the current bucket, or marks the rest of the stream recent. */
  private open(id: Id, ts: number, value: number | null): void {
    if (!(ts < this.horizon)) {
      this.recent = true
      return
    }
    const { cutoffs, widths } = this.plan
    // The coarsest qualifying tier; tier 0 qualifies since ts < horizon = cutoffs[0].
    let tier = cutoffs.length - 1
    while (!(ts < cutoffs[tier]!)) tier--
    const width = widths[tier]!
    this.bucketEnd = bucketStart(ts, width) + width
    this.keeper.open(ts, value, id)
  }
}

const finished = () =>
  new SelectionInputError({ message: "the selector is finished: make a new one for another pass or stream" })

/**
 * Creates a streaming selector for one stream and one pass at `options.now` (integer microseconds).
 * Memory is constant (a handful of fields), whatever the stream or bucket sizes.
 * Throws `SelectionInputError` if `now` is not a safe integer.
 */
export const makeSelector = <Id extends EntryId = EntryId>(options: SelectionOptions): Selector<Id> => {
  const state = new StreamState<Id>(makePlan(options.policy, options.now), options.mode)
  let done = false
  return {
    push: (chunk) => {
      if (done) throw finished()
      const out: Array<Id> = []
      for (let i = 0; i < chunk.length; i++) {
        const entry = chunk[i]!
        state.step(entry.id, entry.ts, entry.value, out)
      }
      return out
    },
    finish: () => {
      if (done) throw finished()
      done = true
      return NO_DELETIONS
    }
  }
}

/**
 * Ids of the entries a pass deletes from one stream given whole, in ascending `ts` order (see `makeSelector`).
 * Returned in no particular order. Holds the whole stream in memory: for tests and small streams.
 */
export const selectDeletions = <Id extends EntryId>(
  entries: ReadonlyArray<Entry<Id>>,
  options: SelectionOptions
): ReadonlyArray<Id> => {
  const selector = makeSelector<Id>(options)
  const out = selector.push(entries)
  const rest = selector.finish()
  return rest.length === 0 ? out : [...out, ...rest]
}

/** Identifies a stream in a multi-stream pass; compared with `SameValueZero` (`1` and `"1"` are two streams). */
export type StreamKey = string | number | bigint

/** An entry tagged with its stream. */
export interface StreamEntry<Id extends EntryId = EntryId, Key extends StreamKey = StreamKey> extends Entry<Id> {
  readonly stream: Key
}

/** Options of one pass over many streams: the tiers, the pass time (integer microseconds), each stream's mode. */
export interface StreamsSelectionOptions<Key extends StreamKey = StreamKey> {
  readonly policy: TierPolicy
  readonly now: number
  /** The mode of a stream (from its widget type), asked once per stream. */
  readonly modeOf: (stream: Key) => SelectionMode
}

/**
 * Streaming selection over many streams in one run. Entries of different streams may be interleaved in any way;
 * within each stream they come in ascending `ts` order. Each stream is selected exactly as by its own `Selector`.
 */
export interface StreamsSelector<Id extends EntryId = EntryId, Key extends StreamKey = StreamKey> {
  /** As `Selector.push`, for entries of any streams. */
  readonly push: (chunk: ReadonlyArray<StreamEntry<Id, Key>>) => ReadonlyArray<Id>
  /** As `Selector.finish`, for every stream at once. */
  readonly finish: () => ReadonlyArray<Id>
}

/**
 * Creates a multi-stream selector for one pass at `options.now`. Memory is constant per stream seen.
 * Throws `SelectionInputError` if `now` is not a safe integer.
 */
export const makeStreamsSelector = <Id extends EntryId = EntryId, Key extends StreamKey = StreamKey>(
  options: StreamsSelectionOptions<Key>
): StreamsSelector<Id, Key> => {
  const plan = makePlan(options.policy, options.now)
  const states = new Map<Key, StreamState<Id>>()
  let done = false
  // Entries usually come in runs of one stream: skip the map lookup while the stream does not change.
  let currentKey: Key | undefined = undefined
  let current: StreamState<Id> | undefined = undefined
  return {
    push: (chunk) => {
      if (done) throw finished()
      const out: Array<Id> = []
      for (let i = 0; i < chunk.length; i++) {
        const entry = chunk[i]!
        const key = entry.stream
        if (current === undefined || key !== currentKey) {
          current = states.get(key)
          if (current === undefined) {
            current = new StreamState<Id>(plan, options.modeOf(key))
            states.set(key, current)
          }
          currentKey = key
        }
        current.step(entry.id, entry.ts, entry.value, out)
      }
      return out
    },
    finish: () => {
      if (done) throw finished()
      done = true
      states.clear()
      return NO_DELETIONS
    }
  }
}
