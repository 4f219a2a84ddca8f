/**
 * The per-bucket selection rule of decimation and of range reads (README, "Decimation" and "Range reads"): one rule,
 * written once, for the decimation pass (`@dashstream/decimation`) and for `StreamStore.readRange`.
 *
 * Within a bucket, mode `"extremes"` keeps the first, last, lowest and highest entries (by value; among equal values
 * the earliest), so at most 4; mode `"last"` keeps the last entry. An entry without a value (`null` or `NaN`) can be
 * a bucket's first or last, never its lowest or highest.
 */

/**
 * What a bucket keeps: `"extremes"` for numeric widgets (number family, sparkline, line-graph; by `number`) and
 * xy-graph (by `y`), `"last"` for every other widget type (see `decimationMode`).
 */
export type SelectionMode = "extremes" | "last"

/**
 * The selection state of ONE bucket, streaming: {@link open} it with the bucket's first entry, {@link add} the next
 * entries in strictly increasing `ts` order, then read what it keeps with {@link keptInto}. Memory is constant
 * (four entries at most), whatever the bucket's size; `item` is carried back as is (an id, an entry).
 *
 * `add` reports each entry as soon as it is known to be dropped (it can no longer be the first, last, lowest or
 * highest), so a caller that deletes (the decimation pass) needs no second look at the bucket; the entries reported
 * and the entries kept partition the bucket. `ts` are integer microseconds; the keeper does not check their order
 * (its callers do).
 */
export class BucketKeeper<T> {
  private firstTs = NaN
  private firstItem: T | undefined = undefined
  private lastTs = NaN
  private lastItem: T | undefined = undefined
  /** `NaN` when the bucket has no value yet. */
  private minTs = NaN
  private minValue = 0
  private minItem: T | undefined = undefined
  private maxTs = NaN
  private maxValue = 0
  private maxItem: T | undefined = undefined

  /** `mode` is the bucket's {@link SelectionMode}, fixed for the keeper's life. */
  constructor(mode: SelectionMode) {
    this.extremes = mode === "extremes"
  }

  private readonly extremes: boolean

  /** Starts a new bucket with its first entry (forgetting the previous bucket, whose kept entries stay kept). */
  open(ts: number, value: number | null, item: T): void {
    this.firstTs = this.lastTs = ts
    this.firstItem = this.lastItem = item
    if (this.extremes && value !== null && value === value) {
      this.minTs = this.maxTs = ts
      this.minValue = this.maxValue = value
      this.minItem = this.maxItem = item
    } else {
      this.minTs = this.maxTs = NaN
      this.minItem = this.maxItem = undefined
    }
  }

  /**
   * Consumes the bucket's next entry (`ts` greater than every earlier one of the bucket) and appends to `dropped`
   * the items that are now known not to be kept.
   */
  add(ts: number, value: number | null, item: T, dropped: Array<T>): void {
    const previousTs = this.lastTs
    const previousItem = this.lastItem as T
    this.lastTs = ts
    this.lastItem = item
    if (!this.extremes) {
      dropped.push(previousItem)
      return
    }
    // The previous last and a displaced lowest/highest can never be a first/last/lowest/highest again: last only
    // moves forward, and the lowest/highest are only displaced by strictly lower/higher values.
    let displacedTs = NaN
    let displacedItem: T | undefined
    if (value !== null && value === value) {
      if (this.minTs !== this.minTs) {
        this.minTs = this.maxTs = ts
        this.minValue = this.maxValue = value
        this.minItem = this.maxItem = item
      } else if (value < this.minValue) {
        displacedTs = this.minTs
        displacedItem = this.minItem
        this.minTs = ts
        this.minValue = value
        this.minItem = item
      } else if (value > this.maxValue) {
        displacedTs = this.maxTs
        displacedItem = this.maxItem
        this.maxTs = ts
        this.maxValue = value
        this.maxItem = item
      }
    }
    const firstTs = this.firstTs
    if (previousTs !== firstTs && previousTs !== this.minTs && previousTs !== this.maxTs) dropped.push(previousItem)
    if (
      displacedTs === displacedTs &&
      displacedTs !== firstTs &&
      displacedTs !== previousTs &&
      displacedTs !== this.minTs &&
      displacedTs !== this.maxTs
    ) {
      dropped.push(displacedItem as T)
    }
  }

  /** Appends the items the open bucket keeps, each once, ascending by `ts`; nothing before the first {@link open}. */
  keptInto(out: Array<T>): void {
    if (this.firstTs !== this.firstTs) return
    if (!this.extremes) {
      out.push(this.lastItem as T)
      return
    }
    // At most four candidates in `ts` order: first <= min, max <= last; min and max in either order.
    const firstTs = this.firstTs
    const lastTs = this.lastTs
    out.push(this.firstItem as T)
    const minTs = this.minTs
    const maxTs = this.maxTs
    const lowFirst = minTs < maxTs
    const aTs = lowFirst ? minTs : maxTs
    const bTs = lowFirst ? maxTs : minTs
    if (aTs === aTs && aTs !== firstTs && aTs !== lastTs) out.push((lowFirst ? this.minItem : this.maxItem) as T)
    if (bTs === bTs && bTs !== aTs && bTs !== firstTs && bTs !== lastTs) {
      out.push((lowFirst ? this.maxItem : this.minItem) as T)
    }
    if (lastTs !== firstTs) out.push(this.lastItem as T)
  }
}
