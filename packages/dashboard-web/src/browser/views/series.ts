import { numericPoint, type NumericPoint } from "../format.js"
import type { Bounds } from "../timeWindow.js"

/** Pure: `[milliseconds, number]` pairs of a numeric series (contract `ts` is seconds), skipping non-numeric points. */
export const seriesData = (
  entries: ReadonlyArray<{ readonly ts: number; readonly point: unknown }>
): { readonly data: ReadonlyArray<readonly [number, number]>; readonly last: NumericPoint | undefined } => {
  const data: Array<readonly [number, number]> = []
  let last: NumericPoint | undefined
  for (const e of entries) {
    const p = numericPoint(e.point)
    if (p === undefined) continue
    data.push([Math.round(e.ts * 1000), p.number])
    last = p
  }
  return { data, last }
}

/** Pure: a time axis' `min` and `max` (milliseconds) spanning `window`; nothing without one (ECharts fits the data). */
export const timeAxisBounds = (window: Bounds | undefined): { readonly min?: number; readonly max?: number } =>
  window === undefined ? {} : { min: Math.round(window.from * 1000), max: Math.round(window.to * 1000) }
