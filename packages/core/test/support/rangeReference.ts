import { FastCheck as fc } from "effect"
import type { SelectionMode } from "../../src/BucketSelection.js"

// The brute-force bucket rule the range read tests compare with.

// Bucket k holds t exactly when k * (U - L) <= (t - L) * N < (k + 1) * (U - L) (the last also holds U).
export const inBucket = (t: number, k: number, lower: number, upper: number, n: number): boolean => {
  if (upper === lower) return k === 0
  const x = BigInt(t - lower) * BigInt(n)
  const span = BigInt(upper - lower)
  return BigInt(k) * span <= x && (k === n - 1 || x < BigInt(k + 1) * span)
}

export interface E {
  readonly ts: number
  readonly value: number | null
}

// Dense streams over a small range, ties common: bucket edges fall on entries.
export const streamArb = fc
  .uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 40 })
  .chain((ts) =>
    fc.tuple(
      fc.constant([...ts].sort((a, b) => a - b)),
      fc.array(fc.option(fc.integer({ min: 0, max: 3 })), { minLength: ts.length, maxLength: ts.length })
    )
  )
  .map(([ts, values]) => ts.map((t, i): E => ({ ts: t, value: values[i]! })))

export const reference = (entries: ReadonlyArray<E>, mode: SelectionMode, lower: number, upper: number, n: number) => {
  const kept = new Set<E>()
  for (let k = 0; k < n; k++) {
    const bucket = entries.filter((e) => inBucket(e.ts, k, lower, upper, n))
    if (bucket.length === 0) continue
    kept.add(bucket[bucket.length - 1]!)
    if (mode === "last") continue
    kept.add(bucket[0]!)
    const valued = bucket.filter((e) => e.value !== null)
    if (valued.length === 0) continue
    kept.add(valued.reduce((a, b) => (b.value! < a.value! ? b : a)))
    kept.add(valued.reduce((a, b) => (b.value! > a.value! ? b : a)))
  }
  return entries.filter((e) => kept.has(e))
}
