import { type ThresholdColor, type TileOptionsData, thresholdColor } from "@dashstream/core/tileStatus"
import { formatNumber, formatValue, type NumericPoint, numericPoint } from "../format.js"
import { type Bounds, formatSpan } from "../timeWindow.js"

/** The number tile: the latest value, large, with prefix/suffix, and the change since the previous value. */
export interface NumberView {
  readonly value: string
  /** The value's status colour (docs/api.md section 15), when a threshold is met. */
  readonly status?: ThresholdColor
  readonly change?: { readonly direction: "up" | "down" | "same"; readonly text: string }
}

/**
 * Pure: latest `{number, prefix?, suffix?}` and the change from the one before it (docs/api.md section 11). With a
 * `window` (the tile's `range`, or the page's time picker, section 15.1) the change is the latest value's against the
 * FIRST entry within the window, followed by the window's span (`▲ +25 (+25%) in 7 d`); fewer than two entries within
 * it, no change. The value is the latest entry's either way.
 */
export const view = (
  entries: ReadonlyArray<{ readonly ts: number; readonly point: unknown }>,
  options: TileOptionsData = {},
  window?: Bounds
): NumberView | undefined => {
  const read = entries.flatMap((e) => {
    const p = numericPoint(e.point)
    return p === undefined ? [] : [{ ts: e.ts, p }]
  })
  const last = read[read.length - 1]?.p
  if (last === undefined) return undefined
  const status = thresholdColor(last.number, options.thresholds)
  const value = formatValue(last.number, last.prefix, last.suffix)
  const head = status === undefined ? { value } : { value, status }
  if (window === undefined) {
    const prev = read[read.length - 2]?.p
    return prev === undefined ? head : { ...head, change: change(prev, last, "") }
  }
  const inside = read.filter((r) => r.ts >= window.from && r.ts <= window.to)
  const first = inside[0]
  if (inside.length < 2 || first === undefined) return head
  return { ...head, change: change(first.p, inside[inside.length - 1]!.p, ` in ${formatSpan(window.span)}`) }
}

// The change from `from` to `to` as the tile writes it: arrow, signed difference, percent of `from` (unless 0); a
// change too small to show in hundredths of a percent says `<0.01%`, never `+0%`.
const change = (from: NumericPoint, to: NumericPoint, after: string): NonNullable<NumberView["change"]> => {
  const diff = to.number - from.number
  const direction = diff > 0 ? "up" : diff < 0 ? "down" : "same"
  const sign = diff > 0 ? "+" : diff < 0 ? "\u2212" : "\u00b1"
  const percent = (Math.abs(diff) / Math.abs(from.number)) * 100
  const pct = from.number !== 0 && diff !== 0 ? ` (${sign}${percent < 0.005 ? "<0.01" : formatNumber(percent)}%)` : ""
  const arrow = direction === "up" ? "\u25b2" : direction === "down" ? "\u25bc" : "\u25cf"
  return { direction, text: `${arrow} ${sign}${formatValue(Math.abs(diff), to.prefix, to.suffix)}${pct}${after}` }
}
