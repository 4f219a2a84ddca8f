/** Pure formatting and point-reading helpers shared by the renderers (no DOM). */

const numberFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 2 })

const compactFormat = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 })

/** A number in at most about 5 characters, for axis and scale labels: `1234567` -> `1.2M`, `2500` -> `2.5K`. */
export const formatCompact = (n: number): string => compactFormat.format(n)

/** A number with thousands separators and at most 2 decimals: `1234567.891` -> `1,234,567.89`. */
export const formatNumber = (n: number): string => numberFormat.format(n)

/** `prefix + formatted number + suffix`, e.g. `$1,205` or `98.5%`. */
export const formatValue = (n: number, prefix?: string, suffix?: string): string =>
  `${prefix ?? ""}${formatNumber(n)}${suffix ?? ""}`

/** The object fields of a point, or `undefined` when the point is not an object. */
export const record = (point: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof point === "object" && point !== null && !Array.isArray(point) ? (point as Record<string, unknown>) : undefined

/** A finite number from a number or a numeric string; `undefined` otherwise. */
export const toNumber = (v: unknown): number | undefined => {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : Number.NaN
  return Number.isFinite(n) ? n : undefined
}

/** A string field as text: strings as they are, numbers and booleans converted, anything else `undefined`. */
export const toText = (v: unknown): string | undefined =>
  typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : undefined

/** The `{number, prefix?, suffix?}` of a numeric point (a bare number is accepted too). */
export interface NumericPoint {
  readonly number: number
  readonly prefix?: string
  readonly suffix?: string
}

/** Reads a numeric point (docs/api.md section 3: stored `{number, prefix?, suffix?}`). */
export const numericPoint = (point: unknown): NumericPoint | undefined => {
  const bare = toNumber(point)
  if (bare !== undefined) return { number: bare }
  const r = record(point)
  const n = r && toNumber(r["number"])
  if (r === undefined || n === undefined) return undefined
  const prefix = toText(r["prefix"])
  const suffix = toText(r["suffix"])
  return { number: n, ...(prefix === undefined ? {} : { prefix }), ...(suffix === undefined ? {} : { suffix }) }
}

/** Only absolute http(s) URLs are ever used as image sources; anything else (`javascript:`, `data:`) is dropped. */
export const safeImageUrl = (v: unknown): string | undefined => {
  if (typeof v !== "string") return undefined
  try {
    const url = new URL(v)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined
  } catch {
    return undefined
  }
}

/** The five point colours of maps and bar charts (docs/api.md section 3), as CSS colours. */
export const namedColors = {
  red: "#f2555a",
  blue: "#3d8bfd",
  green: "#2fbf71",
  purple: "#a66cff",
  yellow: "#f5c518"
} as const

/** A contract colour name to its CSS colour; `undefined` for anything else. */
export const namedColor = (v: unknown): string | undefined =>
  typeof v === "string" && Object.hasOwn(namedColors, v) ? namedColors[v as keyof typeof namedColors] : undefined

/**
 * The scale of a bar gauge or dial with no configured range: from 0 (or a "nice" negative bound) to the smallest
 * "nice" number (1, 2, 2.5, 5 times a power of ten) at least as large as the value; `[0, 1]` for 0.
 */
export const niceRange = (values: ReadonlyArray<number>): { readonly min: number; readonly max: number } => {
  const hi = Math.max(0, ...values)
  const lo = Math.min(0, ...values)
  return { min: lo < 0 ? -niceCeil(-lo) : 0, max: hi > 0 ? niceCeil(hi) : lo < 0 ? 0 : 1 }
}

/** The smallest "nice" number (1, 2, 2.5, 5 times a power of ten) at least `v` (`v > 0`). */
export const niceCeil = (v: number): number => {
  const p = Math.pow(10, Math.floor(Math.log10(v)))
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p
  return 10 * p
}

/** Seconds (contract `ts`) to a short local time, e.g. `14:03`; a string date is shown as given. */
export const formatDate = (v: unknown): string | undefined => {
  if (typeof v === "string") return v
  const n = toNumber(v)
  if (n === undefined) return undefined
  const d = new Date(n > 1e11 ? n : n * 1000)
  return Number.isNaN(d.getTime()) ? undefined : d.toLocaleString("en-GB", { dateStyle: "medium", timeStyle: "short" })
}

/**
 * The scale of a bar gauge or dial (docs/api.md section 15): the tile's `min`/`max` options where given, else
 * {@link niceRange} of the value (and of the one bound given); always `min < max`.
 */
export const scaleRange = (
  value: number,
  options: { readonly min?: number | undefined; readonly max?: number | undefined }
): { readonly min: number; readonly max: number } => {
  const given = [
    value,
    ...(options.min === undefined ? [] : [options.min]),
    ...(options.max === undefined ? [] : [options.max])
  ]
  const auto = niceRange(given)
  let min = options.min ?? auto.min
  let max = options.max ?? auto.max
  if (!(min < max)) {
    if (options.max === undefined) max = min + niceCeil(Math.abs(min) || 1)
    else min = max - niceCeil(Math.abs(max) || 1)
  }
  return { min, max }
}

/**
 * An age in seconds as a wall screen says it: `45 s`, `12 min`, `3 h 5 min`, `2 days` (whole units, rounded down).
 * The stale text of docs/api.md section 15 is `No data for <age>`.
 */
export const formatAge = (seconds: number): string => {
  const s = Math.max(0, Math.floor(seconds))
  if (s < 60) return `${s} s`
  const m = Math.floor(s / 60)
  if (m < 60) return `${m} min`
  const h = Math.floor(m / 60)
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`
  const d = Math.floor(h / 24)
  return `${d} days`
}

/**
 * A tile's title (docs/api.md section 11.2): its `title` when given, else its stream name as written, except that a
 * line-protocol stream name `<measurement>.<field>{<key>=<value>,...}` (section 13.1) reads `<measurement>.<field>
 * (<value>, ...)`: `cpu.usage_idle{cpu=cpu-total,host=web1}` -> `cpu.usage_idle (cpu-total, web1)`. A part between
 * the commas with no `=` belongs to the value before it (a tag value holding a comma).
 */
export const tileTitle = (streamName: string, title?: string): string => {
  if (title !== undefined) return title
  const match = /^([^{}]+)\{(.+)\}$/.exec(streamName)
  if (match === null) return streamName
  const values: Array<string> = []
  for (const part of match[2]!.split(",")) {
    const eq = part.indexOf("=")
    if (eq > 0) values.push(part.slice(eq + 1))
    else if (values.length > 0) values[values.length - 1] += `,${part}`
    else return streamName
  }
  return `${match[1]} (${values.join(", ")})`
}
