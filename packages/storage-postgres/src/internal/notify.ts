import { createHash } from "node:crypto"

/**
 * The notifications the write path sends on PostgreSQL for live updates (docs/api.md section 10), and their format.
 *
 * Each committed group of writes sends, in its own transaction (so PostgreSQL delivers them on COMMIT, never for a
 * rolled-back group), one notification per stream it changed; a widget deletion sends one too. A payload names the
 * stream and the range of `ts` (integer microseconds) that changed, never the data, as compact JSON:
 *
 * - `{"s":<stream id>,"b":<last_ts before the group, or null>,"f":<lowest ts stored>,"t":<highest ts stored>,"c":<cleared_ts>,"k":[<ts>,...]}`:
 *   a group stored entries with `f <= ts <= t` and/or cleared the stream at `c`. `f`/`t` are absent when nothing was
 *   stored, `c` when the group did not clear. Let `floor = c ?? b`: an entry the group stored is new (`fresh`) when
 *   `ts > floor` (all are when `floor` is null), and every entry with `ts > floor` in the range is one the group
 *   stored (every older entry has `ts <= b`, and a clear deleted them). The group's entries at or below `floor`
 *   (replacing or back-filling) cannot be told from older ones by the range, so `k` lists their `ts` when there are
 *   at most {@link maxListed}; beyond that `k` is absent and the whole range is read (older entries in it are
 *   published again, as replaced ones are).
 * - `{"s":<stream id>,"d":1}`: the widget was deleted.
 */

/** The longest channel name PostgreSQL keeps (NAMEDATALEN - 1 bytes). */
const maxChannelBytes = 63

/**
 * The channel of the notifications of the tables in `schema`: `dashstream_changes` for `public`,
 * `dashstream_changes_<schema>` otherwise, or `dashstream_changes_<40 hex digits of SHA-1 of the schema>` when that
 * would be longer than 63 bytes. Case-sensitive: LISTEN it quoted (see {@link quoteChannel}).
 */
export const channelName = (schema: string): string => {
  if (schema === "public") return "dashstream_changes"
  const name = `dashstream_changes_${schema}`
  return Buffer.byteLength(name) <= maxChannelBytes
    ? name
    : `dashstream_changes_${createHash("sha1").update(schema).digest("hex")}`
}

/** `channel` as a quoted SQL identifier, for `LISTEN`. */
export const quoteChannel = (channel: string): string => `"${channel.replaceAll('"', '""')}"`

/** A decoded payload of a group's notification (see the module comment). */
export interface StoredNotice {
  readonly _tag: "Stored"
  readonly stream: number
  /** `last_ts` before the group (microseconds), null if the stream had none. */
  readonly before: number | null
  /** The lowest and highest `ts` stored; null when the group stored nothing (a clear only). */
  readonly from: number | null
  readonly to: number | null
  /** The `ts` of the group's clear, null when it did not clear. */
  readonly clearedAt: number | null
  /** The `ts` the group stored at or below `clearedAt ?? before`, when listed; `undefined`: read the whole range. */
  readonly old: ReadonlyArray<number> | undefined
}

/** A decoded payload of a widget deletion. */
export interface DeletedNotice {
  readonly _tag: "Deleted"
  readonly stream: number
}

export type Notice = StoredNotice | DeletedNotice

/** The most `ts` a payload lists in `k` (about 1.7 kB; PostgreSQL takes payloads up to 8,000 bytes). */
export const maxListed = 100

/**
 * The payload of a group's change of one stream (see the module comment); `old` holds the `ts` stored at or below
 * `clearedAt ?? before`, `undefined` when there were more than {@link maxListed}.
 */
export const storedPayload = (
  stream: number,
  before: number | null,
  from: number | null,
  to: number | null,
  clearedAt: number | null,
  old: ReadonlyArray<number> | undefined
): string =>
  `{"s":${stream},"b":${before === null ? "null" : before}` +
  (from === null || to === null ? "" : `,"f":${from},"t":${to}`) +
  (clearedAt === null ? "" : `,"c":${clearedAt}`) +
  (old === undefined || old.length === 0 ? "" : `,"k":[${old.join(",")}]`) +
  "}"

const isInt = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v)
const intOrNull = (v: unknown): number | null | undefined =>
  v === undefined || v === null ? null : isInt(v) ? v : undefined

/** Decodes a payload; `undefined` when it is not one this adapter sends. */
export const parseNotice = (payload: string | undefined): Notice | undefined => {
  if (payload === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(payload)
  } catch {
    return undefined
  }
  if (typeof value !== "object" || value === null) return undefined
  const o = value as Record<string, unknown>
  if (!isInt(o["s"])) return undefined
  if (o["d"] === 1) return { _tag: "Deleted", stream: o["s"] }
  const before = intOrNull(o["b"])
  const from = intOrNull(o["f"])
  const to = intOrNull(o["t"])
  const clearedAt = intOrNull(o["c"])
  if (before === undefined || from === undefined || to === undefined || clearedAt === undefined) return undefined
  if ((from === null) !== (to === null)) return undefined
  const k = o["k"]
  if (k !== undefined && !(Array.isArray(k) && k.every(isInt))) return undefined
  const floor = clearedAt ?? before
  // Nothing at or below the floor when the range starts above it.
  const old = k !== undefined ? (k as Array<number>) : from === null || floor === null || from > floor ? [] : undefined
  return { _tag: "Stored", stream: o["s"], before, from, to, clearedAt, old }
}
