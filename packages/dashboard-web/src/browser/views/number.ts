import { type ThresholdColor, type TileOptionsData, thresholdColor } from "@dashstream/core/tileStatus"
import { formatNumber, formatValue, numericPoint } from "../format.js"

/** The number tile: the latest value, large, with prefix/suffix, and the change since the previous value. */
export interface NumberView {
  readonly value: string
  /** The value's status colour (docs/api.md section 15), when a threshold is met. */
  readonly status?: ThresholdColor
  readonly change?: { readonly direction: "up" | "down" | "same"; readonly text: string }
}

/** Pure: latest `{number, prefix?, suffix?}` and the change from the one before it (docs/api.md section 11). */
export const view = (
  entries: ReadonlyArray<{ readonly point: unknown }>,
  options: TileOptionsData = {}
): NumberView | undefined => {
  const points = entries.map((e) => numericPoint(e.point)).filter((p) => p !== undefined)
  const last = points[points.length - 1]
  if (last === undefined) return undefined
  const status = thresholdColor(last.number, options.thresholds)
  const value = formatValue(last.number, last.prefix, last.suffix)
  const head = status === undefined ? { value } : { value, status }
  const prev = points[points.length - 2]
  if (prev === undefined) return head
  const diff = last.number - prev.number
  const direction = diff > 0 ? "up" : diff < 0 ? "down" : "same"
  const sign = diff > 0 ? "+" : diff < 0 ? "\u2212" : "\u00b1"
  const pct =
    prev.number !== 0 && diff !== 0 ? ` (${sign}${formatNumber((Math.abs(diff) / Math.abs(prev.number)) * 100)}%)` : ""
  const arrow = direction === "up" ? "\u25b2" : direction === "down" ? "\u25bc" : "\u25cf"
  return {
    ...head,
    change: { direction, text: `${arrow} ${sign}${formatValue(Math.abs(diff), last.prefix, last.suffix)}${pct}` }
  }
}
