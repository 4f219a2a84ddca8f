/** Microseconds in one millisecond, second, minute, hour, day and week. */
export const MICROS = {
  us: 1,
  ms: 1_000,
  s: 1_000_000,
  m: 60_000_000,
  h: 3_600_000_000,
  d: 86_400_000_000,
  w: 604_800_000_000
} as const

/** A unit accepted in compact durations (`"5m"`, `"48h"`). */
export type Unit = keyof typeof MICROS

/** Units tried by `formatMicros`, largest first; weeks are parsed but never printed. */
export const UNITS_DESCENDING: ReadonlyArray<Unit> = ["d", "h", "m", "s", "ms", "us"]

/**
 * Start of the epoch-aligned bucket of width `width` holding `ts`: `floor(ts / width) * width`.
 *
 * Computed with `%`, which is exact on doubles, instead of a division that could round up near a bucket edge;
 * correct for negative `ts` too. `ts` and `width` are integer microseconds, `width > 0`.
 */
export const bucketStart = (ts: number, width: number): number => {
  const r = ts % width
  return r < 0 ? ts - r - width : ts - r
}

/** Shortest exact rendering of a non-negative integer number of microseconds, e.g. `172800000000` → `"2d"`. */
export const formatMicros = (micros: number): string => {
  if (micros === 0) return "0s"
  for (const unit of UNITS_DESCENDING) {
    if (micros % MICROS[unit] === 0) return `${micros / MICROS[unit]}${unit}`
  }
  return `${micros}us`
}
