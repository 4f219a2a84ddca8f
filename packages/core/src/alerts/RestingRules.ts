import type { Micros } from "../Time.js"
import type { RuleEvaluation, RuleTerms } from "./RuleStateMachine.js"

/**
 * The `above`/`below` rules of one stream that are at rest, evaluated together (docs/api.md section 18,
 * "Evaluation"), so that an entry of a stream with many steady rules costs O(log n) instead of a `step` per rule.
 *
 * A rule is at rest when its condition is `above` or `below`, its state `ok` and it has no run (`since` is `null`):
 * it has no deadline (`nextDeadline` is `null`), and an entry that does not meet its condition changes only its
 * `value` (the entry's), `cursor` and `newest` (raised to the entry's `ts`): the same for every rule at rest, whatever
 * its threshold. The rules of a group share one cursor, so that the entries a batch gives each of them (those above
 * the cursor, or not `fresh`: see `AlertEngine`) are the same; their thresholds are kept sorted, so the rules an
 * entry meets are found by comparing the batch's highest value with the lowest `above` threshold and its lowest
 * value with the highest `below` threshold.
 *
 * The outcome of the entries that meet no member is kept once for the group, as a {@link RestTail}, and applied to a
 * member's own evaluation only when asked ({@link settle}): the evaluation a member has then is the one `step` gives
 * over the same entries. Pure data: the engine keeps the rules, their stored evaluations and the storage.
 */

/** The outcome, shared by every member, of the batches evaluated since the group was last settled. */
export interface RestTail {
  /** The `value` of the last entry evaluated (`null` for a non-numeric one). */
  readonly value: number | null
  /** The group's cursor after them: the highest entry `ts` evaluated (microseconds). */
  readonly cursor: Micros
  /** The highest entry `ts` evaluated since the group was last settled (microseconds). */
  readonly newest: Micros
}

/**
 * What a batch of entries gives the group (see {@link RestingRules.batch}): the tail after it, and the highest and
 * lowest of its numbers (`-Infinity`/`Infinity` when it has none).
 */
export interface RestBatch {
  readonly tail: RestTail
  readonly max: number
  readonly min: number
}

/** One entry of a batch, as the engine has it: its `ts` (microseconds) and whether it was `fresh` (`ChangeFeed`). */
export interface BatchEntry {
  readonly ts: Micros
  readonly fresh?: boolean
}

/** True when a rule with these terms and this evaluation is at rest (see the module comment). */
export const atRest = (terms: RuleTerms, evaluation: RuleEvaluation): boolean =>
  !("noDataFor" in terms.condition) && evaluation.state === "ok" && evaluation.since === null

/**
 * A member's evaluation after the entries of `tail`: `evaluation` (the one it joined with) with the tail's `value`,
 * cursor and `newest`, as `step` would have made it entry by entry.
 */
export const settle = (evaluation: RuleEvaluation, tail: RestTail): RuleEvaluation => ({
  ...evaluation,
  value: tail.value,
  cursor: tail.cursor,
  newest: tail.newest > evaluation.newest ? tail.newest : evaluation.newest
})

interface Member<K> {
  readonly key: K
  readonly threshold: number
}

// The first index of `list` (sorted by `before`) whose threshold is not before `limit`.
const boundary = <K>(list: ReadonlyArray<Member<K>>, before: (threshold: number) => boolean): number => {
  let lo = 0
  let hi = list.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if (before(list[mid]!.threshold)) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The rules at rest of one stream (see the module comment), by key `K` (the engine's rule id). */
export class RestingRules<K> {
  // `above` members by ascending threshold (the lowest is the first an entry meets), `below` by descending.
  private readonly above: Array<Member<K>> = []
  private readonly below: Array<Member<K>> = []
  private readonly members = new Set<K>()
  private shared: Micros | null = null
  private pending: RestTail | undefined = undefined

  /** The number of members. */
  get size(): number {
    return this.members.size
  }

  /** True when `key` is a member. */
  has(key: K): boolean {
    return this.members.has(key)
  }

  /** The members. */
  keys(): IterableIterator<K> {
    return this.members.keys()
  }

  /** The cursor every member shares (microseconds; `null` before the first entry), meaningful while there is one. */
  get cursor(): Micros | null {
    return this.shared
  }

  /**
   * The outcome of the batches evaluated since the group was last settled, to apply to each member's evaluation with
   * {@link settle}; `undefined` when there is none.
   */
  get tail(): RestTail | undefined {
    return this.pending
  }

  /**
   * True when a rule can join now: it is at rest, and the group is empty, or has no tail and the rule's cursor is the
   * group's (a group with a tail is settled first: see {@link clearTail}).
   */
  canJoin(terms: RuleTerms, evaluation: RuleEvaluation): boolean {
    return (
      atRest(terms, evaluation) &&
      (this.members.size === 0 || (this.pending === undefined && evaluation.cursor === this.shared))
    )
  }

  /** Adds a rule that {@link canJoin} (else throws: a bug), with the evaluation it has now. */
  join(key: K, terms: RuleTerms, evaluation: RuleEvaluation): void {
    if (this.members.has(key) || !this.canJoin(terms, evaluation)) throw new Error("this rule cannot join its group")
    if (this.members.size === 0) {
      this.shared = evaluation.cursor
      this.pending = undefined
    }
    this.members.add(key)
    const condition = terms.condition
    if ("above" in condition) {
      const member = { key, threshold: condition.above }
      this.above.splice(
        boundary(this.above, (t) => t < condition.above),
        0,
        member
      )
    } else if ("below" in condition) {
      const member = { key, threshold: condition.below }
      this.below.splice(
        boundary(this.below, (t) => t > condition.below),
        0,
        member
      )
    }
  }

  /**
   * Removes `key` (the caller first settles its evaluation with the current tail); `false` when it was no member.
   * O(n).
   */
  leave(key: K): boolean {
    if (!this.members.delete(key)) return false
    for (const list of [this.above, this.below]) {
      const i = list.findIndex((member) => member.key === key)
      if (i >= 0) list.splice(i, 1)
    }
    if (this.members.size === 0) this.pending = undefined
    return true
  }

  /**
   * What the entries `entries` (with their numbers `values`, `null` for non-numeric ones, in the same order) give the
   * group: the tail after the entries it evaluates (those above its cursor, or not `fresh`), or `undefined` when it
   * evaluates none. Changes nothing: {@link metBy} then {@link advance} apply it.
   */
  batch(entries: ReadonlyArray<BatchEntry>, values: ReadonlyArray<number | null>): RestBatch | undefined {
    const cursor = this.shared
    let found = false
    let value: number | null = null
    let top = -Infinity
    let max = -Infinity
    let min = Infinity
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!
      if (cursor !== null && entry.ts <= cursor && entry.fresh !== false) continue
      found = true
      value = values[i]!
      if (entry.ts > top) top = entry.ts
      if (value !== null) {
        if (value > max) max = value
        if (value < min) min = value
      }
    }
    if (!found) return undefined
    const newest = this.pending === undefined || top > this.pending.newest ? top : this.pending.newest
    return {
      tail: { value, cursor: (cursor === null || top > cursor ? top : cursor) as Micros, newest: newest as Micros },
      max,
      min
    }
  }

  /** True when some entry of `batch` meets some member, in O(1): the lowest `above` or the highest `below` is met. */
  meetsAny(batch: RestBatch): boolean {
    return (
      (this.above.length > 0 && this.above[0]!.threshold < batch.max) ||
      (this.below.length > 0 && this.below[0]!.threshold > batch.min)
    )
  }

  /** The members that some entry of `batch` meets (O(1) to find none): they leave and are evaluated one by one. */
  metBy(batch: RestBatch): Array<K> {
    const met: Array<K> = []
    if (!this.meetsAny(batch)) return met
    const above = boundary(this.above, (t) => t < batch.max)
    for (let i = 0; i < above; i++) met.push(this.above[i]!.key)
    const below = boundary(this.below, (t) => t > batch.min)
    for (let i = 0; i < below; i++) met.push(this.below[i]!.key)
    return met
  }

  /** Applies `batch` to the members left (after those {@link metBy} found have left): O(1). */
  advance(batch: RestBatch): void {
    if (this.members.size === 0) return
    this.pending = batch.tail
    this.shared = batch.tail.cursor
  }

  /**
   * Forgets the tail, once the caller has settled every member's evaluation with it (before a rule joins a group
   * with a tail, and when the evaluations are stored).
   */
  clearTail(): void {
    this.pending = undefined
  }
}
