/**
 * The deadlines of every alert rule in one priority queue (a binary min-heap with each key's place indexed), so the
 * engine keeps one timer, for the earliest deadline, however many rules there are, instead of a timer per rule.
 * Pure data: no clock, no timer. Built from the stored rules on start ({@link DeadlineQueue.from}) and kept up to
 * date as rules change; `set`, `delete` and `popDue` cost O(log n), `next` O(1).
 *
 * Deadlines are numbers (the engine uses integer microseconds, as `nextDeadline` gives them). Keys with equal
 * deadlines come out in no particular order.
 */
export class DeadlineQueue<K> {
  private readonly keys: Array<K> = []
  private readonly times: Array<number> = []
  private readonly place = new Map<K, number>()

  /** A queue holding each `[key, deadline]` whose deadline is not `null` (a later pair of the same key wins). */
  static from<K>(pairs: Iterable<readonly [K, number | null]>): DeadlineQueue<K> {
    const queue = new DeadlineQueue<K>()
    for (const [key, at] of pairs) queue.set(key, at)
    return queue
  }

  /** The number of keys with a deadline. */
  get size(): number {
    return this.keys.length
  }

  /** The deadline of `key`, or `undefined` when it has none. */
  get(key: K): number | undefined {
    const i = this.place.get(key)
    return i === undefined ? undefined : this.times[i]
  }

  /** Sets (or moves) the deadline of `key`; `null` removes it. */
  set(key: K, at: number | null): void {
    if (at === null) {
      this.delete(key)
      return
    }
    const i = this.place.get(key)
    if (i === undefined) {
      this.keys.push(key)
      this.times.push(at)
      this.place.set(key, this.keys.length - 1)
      this.up(this.keys.length - 1)
      return
    }
    const before = this.times[i]!
    this.times[i] = at
    if (at < before) this.up(i)
    else this.down(i)
  }

  /** Removes the deadline of `key`; `false` when it had none. */
  delete(key: K): boolean {
    const i = this.place.get(key)
    if (i === undefined) return false
    const last = this.keys.length - 1
    this.swap(i, last)
    this.keys.pop()
    this.times.pop()
    this.place.delete(key)
    if (i < last) {
      this.down(i)
      this.up(i)
    }
    return true
  }

  /** The earliest deadline, or `undefined` when the queue is empty: when the engine's one timer should fire. */
  next(): number | undefined {
    return this.times[0]
  }

  /**
   * Removes and returns the keys whose deadline is at or before `now`, earliest first. The engine evaluates each
   * and sets its next deadline again.
   */
  popDue(now: number): Array<K> {
    const due: Array<K> = []
    while (this.keys.length > 0 && this.times[0]! <= now) {
      const key = this.keys[0]!
      due.push(key)
      this.delete(key)
    }
    return due
  }

  private swap(i: number, j: number): void {
    if (i === j) return
    const key = this.keys[i]!
    const time = this.times[i]!
    this.keys[i] = this.keys[j]!
    this.times[i] = this.times[j]!
    this.keys[j] = key
    this.times[j] = time
    this.place.set(this.keys[i]!, i)
    this.place.set(key, j)
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (this.times[parent]! <= this.times[i]!) return
      this.swap(i, parent)
      i = parent
    }
  }

  private down(i: number): void {
    const n = this.keys.length
    for (;;) {
      const left = 2 * i + 1
      if (left >= n) return
      const right = left + 1
      const child = right < n && this.times[right]! < this.times[left]! ? right : left
      if (this.times[i]! <= this.times[child]!) return
      this.swap(i, child)
      i = child
    }
  }
}
