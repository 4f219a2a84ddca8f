/**
 * A map from stream id (a non-negative integer) to a small integer, emptied in O(1): an open-addressing table over
 * typed arrays whose slots count as used only when stamped with the current generation. A `WritePlan` indexes the
 * streams of every call in one and empties it before the next call; a `Map` there cost a fresh hash table (and its
 * rehashes while it grows back to 100 streams) per call, 1-2 % of a 100-stream push's CPU.
 */
export class StreamIndex {
  private keys = new Float64Array(16)
  private values = new Int32Array(16)
  private stamps = new Uint32Array(16)
  // 32 minus the table's bits: a key's home slot is the top bits of its hash.
  private shift = 28
  private generation = 1
  private count = 0

  /** Forgets every entry. */
  clear(): void {
    this.count = 0
    if (++this.generation === 0xffffffff) {
      this.stamps.fill(0)
      this.generation = 1
    }
  }

  /** The value of `key`, or -1 when it has none. */
  get(key: number): number {
    const mask = this.keys.length - 1
    for (let i = hash(key) >>> this.shift; ; i = (i + 1) & mask) {
      if (this.stamps[i] !== this.generation) return -1
      if (this.keys[i] === key) return this.values[i]!
    }
  }

  /** Sets the value of `key`, which must have none (see {@link get}). `value` is a non-negative 32-bit integer. */
  add(key: number, value: number): void {
    if (2 * (this.count + 1) > this.keys.length) this.grow()
    this.put(key, value)
    this.count++
  }

  private put(key: number, value: number): void {
    const mask = this.keys.length - 1
    let i = hash(key) >>> this.shift
    while (this.stamps[i] === this.generation) i = (i + 1) & mask
    this.keys[i] = key
    this.values[i] = value
    this.stamps[i] = this.generation
  }

  private grow(): void {
    const { keys, values, stamps, generation } = this
    const size = keys.length * 2
    this.keys = new Float64Array(size)
    this.values = new Int32Array(size)
    this.stamps = new Uint32Array(size)
    this.shift--
    this.generation = 1
    for (let i = 0; i < keys.length; i++) if (stamps[i] === generation) this.put(keys[i]!, values[i]!)
  }
}

// Fibonacci hashing of the key's low 32 bits: consecutive ids (stream ids count up from 1) spread over the table.
const hash = (key: number): number => Math.imul(key >>> 0, 0x9e3779b1) >>> 0
