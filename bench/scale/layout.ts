import { createHash } from "node:crypto"

/**
 * The shape of a scale database: `streams` streams (one `number` widget each) in accounts of `perAccount` streams,
 * and `entries` entries spread evenly over the streams (the first `entries % streams` streams hold one more).
 *
 * Stream `r` (0-based; its id is `r + 1`) belongs to account `floor(r / perAccount)` and is named `s<r % perAccount>`.
 * Its entries are spaced `stepSeconds(r)` apart (10 s, 1 min, 5 min or 1 h, by `r % 4`), the newest at
 * `endMicros - (r % 3600) s`, so the whole history lies within the 48 hours decimation leaves alone. Entry `j` holds
 * `{"number": (7r + 13j) % 1000}`. Account `k` has the id `00000000-0000-4000-8000-<k as 12 hex digits>` and one
 * working access key, {@link accessKey}`(k)`, stored as its SHA-256 digest as the server stores keys.
 */
export interface Layout {
  readonly streams: number
  readonly entries: number
  readonly perAccount: number
}

/** Number of accounts of a layout. */
export const accountCount = (l: Layout): number => Math.ceil(l.streams / l.perAccount)

/** The (plain) access key of account `k`. */
export const accessKey = (k: number): string => `ds_scale_${k}`

/** The SHA-256 digest (lowercase hex) the server stores for {@link accessKey}`(k)`. */
export const accessKeyDigest = (k: number): string => createHash("sha256").update(accessKey(k), "utf8").digest("hex")

/** The account id of account `k` (a UUID-shaped string). */
export const accountId = (k: number): string => `00000000-0000-4000-8000-${k.toString(16).padStart(12, "0")}`

/** Entries of every stream (`base`), and how many streams hold one more (`extra`): stream `r` holds `base + (r < extra)`. */
export const entriesPerStream = (l: Layout): { readonly base: number; readonly extra: number } => ({
  base: Math.floor(l.entries / l.streams),
  extra: l.entries % l.streams
})

/**
 * What the loaders agree on, as SQL expressions of the 0-based stream number `r` (an integer column or variable),
 * for SQLite and PostgreSQL alike (integer arithmetic only): the entry count `n`, the spacing in microseconds, the
 * newest entry's `ts` in microseconds.
 */
export const sqlOf = (l: Layout, endMicros: number) => {
  const { base, extra } = entriesPerStream(l)
  return {
    count: (r: string) => `(${base} + CASE WHEN ${r} < ${extra} THEN 1 ELSE 0 END)`,
    step: (r: string) =>
      `(CASE ${r} % 4 WHEN 0 THEN 10000000 WHEN 1 THEN 60000000 WHEN 2 THEN 300000000 ELSE 3600000000 END)`,
    end: (r: string) => `(${endMicros} - (${r} % 3600) * 1000000)`
  }
}

/** A human label of a layout, e.g. `1,000,000 streams, 20,000,000 entries`. */
export const describeLayout = (l: Layout): string =>
  `${l.streams.toLocaleString("en-US")} streams, ${l.entries.toLocaleString("en-US")} entries`
