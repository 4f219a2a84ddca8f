import { MAX_SECONDS, MICROS_PER_SECOND } from "../Time.js"

/** The unit of a body's timestamps, normalised (`n` is `ns`, `u` is `us`). */
export type Precision = "ns" | "us" | "ms" | "s" | "m" | "h"

/** The latest timestamp Dashstream stores, 2106-02-07T06:28:15Z, in microseconds (below 2^53). */
export const MAX_MICROS = MAX_SECONDS * MICROS_PER_SECOND

const ZERO = 48

const unitMicros: Record<"ms" | "s" | "m" | "h", number> = {
  ms: 1_000,
  s: MICROS_PER_SECOND,
  m: 60 * MICROS_PER_SECOND,
  h: 3600 * MICROS_PER_SECOND
}

/**
 * The timestamp digits `body[i, end)` (decimal digits only; `codes` are its code units) in `precision` units as
 * microseconds, nanoseconds truncated toward zero; -1 when that is after {@link MAX_MICROS}. Exact: a nanosecond
 * timestamp's last three digits are dropped rather than divided, so no double ever holds more than 2^53.
 */
export const digitsMicros = (
  body: string,
  codes: ArrayLike<number>,
  i: number,
  end: number,
  precision: Precision
): number => {
  switch (precision) {
    case "ns": {
      const cut = end - 3
      let micros = cut <= i ? 0 : digitsValue(body, i, cut, MAX_MICROS)
      if (micros === MAX_MICROS) {
        for (let k = Math.max(cut, i); k < end; k++) if (codes[k]! !== ZERO) micros = -1
      }
      return micros
    }
    case "us":
      return digitsValue(body, i, end, MAX_MICROS)
    default: {
      const unit = unitMicros[precision]
      const value = digitsValue(body, i, end, Math.floor(MAX_MICROS / unit))
      return value === -1 ? -1 : value * unit
    }
  }
}

/**
 * The decimal digits `body[start, end)` as a number, or -1 when it exceeds `limit`. The limit is below 2^53, so every
 * value up to it is accumulated exactly, and the first step past it (exact or not) is still above it.
 */
const digitsValue = (body: string, start: number, end: number, limit: number): number => {
  let value = 0
  for (let k = start; k < end; k++) {
    value = value * 10 + (body.charCodeAt(k) - ZERO)
    if (value > limit) return -1
  }
  return value
}
