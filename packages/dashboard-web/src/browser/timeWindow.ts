/**
 * Pure rules of the time a tile shows (docs/api.md sections 11.6 and 15.1), no DOM: the view page's `?range=` presets
 * and `?from=&to=`, the tile option `range`, which of them a tile follows, the window's bounds at a given moment, the
 * range read a tile makes, and how a span is written. All times are seconds since the epoch (fractional, like `ts`).
 */
import { timeRangeWidgetTypes } from "@dashstream/contract"
import type { Entry } from "../Model.js"
import type { WidgetType } from "../WidgetType.js"

/** The presets of `?range=` and of the picker, in the picker's order, each in seconds. */
export const rangePresets = {
  "1h": 3_600,
  "6h": 21_600,
  "24h": 86_400,
  "7d": 604_800,
  "30d": 2_592_000,
  "90d": 7_776_000,
  "1y": 31_536_000
} as const

/** A preset's name (`"7d"`). */
export type RangePreset = keyof typeof rangePresets

const isPreset = (value: string): value is RangePreset => Object.hasOwn(rangePresets, value)

/**
 * The time a tile shows:
 * - `last`: the last `seconds` up to now, sliding with the clock (a tile's `range` option, or `?range=`, whose preset
 *   name is kept to mark the picker's button);
 * - `between`: from `from` to `to`, fixed; without `to`, up to now, growing live (`?from=&to=`, a drag-zoom).
 */
export type TimeWindow =
  | { readonly kind: "last"; readonly seconds: number; readonly preset?: RangePreset }
  | { readonly kind: "between"; readonly from: number; readonly to?: number }

// Seconds as the range read takes them (docs/api.md section 6.1): digits, an optional fraction, nothing else.
const seconds = /^\d{1,10}(\.\d{1,6})?$/

/**
 * The page's own window from its query string (`location.search`), `undefined` when it names none: `?range=<preset>`
 * (one of {@link rangePresets}), or `?from=<seconds>[&to=<seconds>]` (`from <= to`), which wins when both are given.
 * Any other value is ignored, as if absent.
 */
export const pageWindow = (search: string): TimeWindow | undefined => {
  const q = new URLSearchParams(search)
  const from = q.get("from")
  const to = q.get("to")
  if (from !== null && seconds.test(from)) {
    if (to === null) return { kind: "between", from: Number(from) }
    if (seconds.test(to) && Number(from) <= Number(to)) return { kind: "between", from: Number(from), to: Number(to) }
  }
  const range = q.get("range")
  return range !== null && isPreset(range) ? { kind: "last", seconds: rangePresets[range], preset: range } : undefined
}

/**
 * The query string for `window` on a page whose query is `search`: `range`, `from` and `to` replaced (all removed for
 * `undefined`, "Live"), every other parameter (`theme`) kept. Returns `""` or a string starting with `?`.
 */
export const withPageWindow = (search: string, window: TimeWindow | undefined): string => {
  const q = new URLSearchParams(search)
  for (const key of ["range", "from", "to"]) q.delete(key)
  if (window?.kind === "last") {
    const preset =
      window.preset ?? (Object.keys(rangePresets) as Array<RangePreset>).find((p) => rangePresets[p] === window.seconds)
    if (preset !== undefined) q.set("range", preset)
  } else if (window?.kind === "between") {
    q.set("from", secondsText(window.from))
    if (window.to !== undefined) q.set("to", secondsText(window.to))
  }
  const text = q.toString()
  return text === "" ? "" : `?${text}`
}

/** Seconds as a query value: at most 3 decimals (milliseconds), no trailing zeros, never an exponent. */
export const secondsText = (s: number): string => String(Math.round(s * 1000) / 1000)

const timeTypes: ReadonlySet<string> = new Set(timeRangeWidgetTypes)

/** True for the widget types that show a stretch of time (number, sparkline, line-graph). */
export const showsTime = (type: WidgetType): boolean => timeTypes.has(type)

/**
 * The window a tile of `type` shows: the page's window (`?range=`, `?from=&to=`, the picker, a drag-zoom) on every
 * time tile, else its own `range` option (seconds), else `undefined`: the tile shows what it holds live.
 */
export const tileWindow = (
  type: WidgetType,
  range: number | undefined,
  page: TimeWindow | undefined
): TimeWindow | undefined => {
  if (!showsTime(type)) return undefined
  if (page !== undefined) return page
  return range === undefined ? undefined : { kind: "last", seconds: range }
}

/** True when two windows are the same (the same preset or bounds). */
export const sameWindow = (a: TimeWindow | undefined, b: TimeWindow | undefined): boolean =>
  a === b ||
  (a !== undefined &&
    b !== undefined &&
    (a.kind === "last"
      ? b.kind === "last" && a.seconds === b.seconds
      : b.kind === "between" && a.from === b.from && a.to === b.to))

/** True when the window moves with the clock (`last`, or `between` without `to`): live entries join it. */
export const isLive = (window: TimeWindow): boolean => window.kind === "last" || window.to === undefined

/** A window's bounds at the moment `now` (the server's clock, seconds): `from` and `to` inclusive, `span = to - from`. */
export interface Bounds {
  readonly from: number
  readonly to: number
  readonly span: number
}

/** The bounds of `window` at `now`. */
export const boundsAt = (window: TimeWindow, now: number): Bounds => {
  const from = window.kind === "last" ? now - window.seconds : window.from
  const to = window.kind === "last" ? now : (window.to ?? Math.max(now, window.from))
  return { from, to, span: to - from }
}

/** How many entries a number tile reads from the start of a live window at a time (its first value and the next). */
export const numberHeadEntries = 64

/**
 * The query of the range read (docs/api.md section 6.1) a tile of `type`, `width` CSS pixels wide, makes for `window`
 * at `now` (without the leading `?` and without `stream`):
 * - a chart reads the window with `points` equal to its width in pixels (at least 2, at most 10,000), so the answer
 *   holds about as many entries as the chart has pixels across; a live window is read without `to`, up to the newest
 *   entry;
 * - a number tile in a live window reads the first {@link numberHeadEntries} entries from the window's start
 *   (`limit`): its first value and the ones after it, which take its place as the window slides; in a fixed window it
 *   reads `points=2`, whose answer holds the window's first and last entries.
 */
export const rangeQuery = (type: WidgetType, width: number, window: TimeWindow, now: number): string => {
  const { from, to } = boundsAt(window, now)
  const bounds = isLive(window) ? `from=${secondsText(from)}` : `from=${secondsText(from)}&to=${secondsText(to)}`
  if (type === "number") return isLive(window) ? `${bounds}&limit=${numberHeadEntries}` : `${bounds}&points=2`
  return `${bounds}&points=${Math.min(10_000, Math.max(2, Math.round(width)))}`
}

/** The entries of `entries` (ascending) at or after `from`; the same array when none is older. */
export const dropBefore = (entries: ReadonlyArray<Entry>, from: number): ReadonlyArray<Entry> => {
  let i = 0
  while (i < entries.length && entries[i]!.ts < from) i++
  return i === 0 ? entries : entries.slice(i)
}

/** The entries of `entries` (ascending) within `[from, to]`. */
export const within = (entries: ReadonlyArray<Entry>, from: number, to: number): ReadonlyArray<Entry> =>
  entries.filter((e) => e.ts >= from && e.ts <= to)

const round1 = (n: number): string => String(Math.round(n * 10) / 10)

/**
 * A span of time as a tile says it after a change ("+25 (+25%) in 7 d"): `45 s`, `30 min`, `6 h`, `36 h`, `7 d`,
 * `365 d`; hours up to 2 days, then days, one decimal at most (`2.5 d`).
 */
export const formatSpan = (span: number): string => {
  const s = Math.max(0, span)
  if (s < 60) return `${Math.round(s)} s`
  if (s < 3_600) return `${Math.round(s / 60)} min`
  if (s < 2 * 86_400) return `${round1(s / 3_600)} h`
  return `${round1(s / 86_400)} d`
}

/**
 * The view token's range read (docs/api.md section 6.1) of the page at `pathname`: `/d/<viewToken>/range` for
 * `/d/<viewToken>`, `/r/<viewToken>/range` for a rotation, under any base path (section 16).
 */
export const rangePathOf = (pathname: string): string => `${pathname.replace(/\/+$/, "")}/range`
