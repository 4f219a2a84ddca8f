import type { EntryWrite, Micros, WritePlan } from "@dashstream/core"
import { maxListed, storedPayload } from "./notify.js"

/**
 * The SQL of the PostgreSQL group commit (see `groupCommit.ts`): what a group's planned writes change, per stream,
 * and the statements that store it.
 *
 * A group costs one round trip when it is planned on guessed `last_ts` (one prepared statement, {@link guessedSql})
 * or two: simple queries of several statements each, `BEGIN`, the row locks and the latest points in one, the
 * changes and `COMMIT` in the other ({@link storeSql}). A simple query takes no parameters: the stream ids and times
 * are integers, inlined as such; texts (points, notification payloads) are inlined as escaped literals
 * ({@link textArray}).
 *
 * Entries are stored by two inserts: the new ones (`ts` above the stream's `last_ts` before the group, or all of them
 * after a clear of the group) by a plain `INSERT`, and the others (replacing or back-filling) by an upsert. A new
 * entry cannot collide: `last_ts` is the highest `ts` ever assigned to the stream and every write holds the stream's
 * row lock, so no stored entry is above it. The plain insert is about twice as fast per row as the upsert's
 * speculative insertion (docs/benchmarks.md), and 1,000 timestamped points are nearly all new.
 */

/** The net change the group's transaction makes to one stream (see {@link netChanges}). */
export interface NetChange {
  /** `last_ts` before the group (microseconds). */
  readonly startTs: Micros | null
  /** `last_ts` after the group. */
  readonly lastTs: Micros | null
  /** The `ts` of the last clear of the group (microseconds), null when it did not clear the stream. */
  readonly clearedAt: Micros | null
  /** Entries to store, by `ts`: a later write replaces an earlier one with the same `ts`. */
  readonly entries: Map<number, EntryWrite>
}

/**
 * The net change of the group's planned writes per stream, for one statement to store: a clear drops the entries
 * planned before it, and an entry replaces an earlier one with the same `ts` (an insert or upsert cannot touch a row
 * twice: the same `ts` twice in one statement is an error).
 */
export const netChanges = (plan: WritePlan): Map<number, NetChange> => {
  const changes = new Map<number, NetChange>()
  for (const s of plan.streams()) {
    changes.set(s.stream, { startTs: s.before, lastTs: s.lastTs, clearedAt: s.clearedAt, entries: new Map() })
  }
  let id = -1
  let entries: Map<number, EntryWrite> | undefined = undefined
  for (let i = 0; i < plan.size; i++) {
    const stream = plan.streamAt(i)
    if (stream !== id) {
      id = stream
      entries = changes.get(stream)!.entries
    }
    const m = plan.mutation(i)
    if (m.clear) entries!.clear()
    const list = m.entries
    for (let j = 0; j < list.length; j++) entries!.set(list[j]!.ts, list[j]!)
  }
  return changes
}

/** Entries as the four arrays an insert takes: stream id, `ts` (microseconds), decimation value, point JSON. */
export interface EntryArrays {
  readonly streamIds: Array<number>
  readonly tss: Array<number>
  readonly values: Array<number | null>
  readonly points: Array<string>
}

const entryArrays = (): EntryArrays => ({ streamIds: [], tss: [], values: [], points: [] })

/** The net changes of a group as the arrays its statements take (see {@link storeArrays}). */
export interface StoreArrays {
  /** Streams the group cleared. */
  readonly cleared: Array<number>
  /** Entries above their stream's `last_ts` before the group (or after a clear of it): plainly inserted. */
  readonly inserted: EntryArrays
  /** The other entries, which may replace a stored one: upserted. */
  readonly upserted: EntryArrays
  /**
   * The run of each upserted entry (same order), numbered from 0 without gaps: a number shared by consecutive
   * upserted entries of one stream with increasing `ts` (a request's back-filled points, typically). A run with no stored entry between its lowest and
   * highest `ts` is plainly inserted by `guessedSql`.
   */
  readonly runs: Array<number>
  /** The streams whose `last_ts` or `cleared_ts` moved, with the new values. */
  readonly moved: Array<number>
  readonly lastTss: Array<number | null>
  readonly clearedTss: Array<number | null>
  /** One notification payload per changed stream (see `notify.ts`). */
  readonly payloads: Array<string>
}

/** The arrays of the net changes. */
export const storeArrays = (changes: ReadonlyMap<number, NetChange>): StoreArrays => {
  const out: StoreArrays = {
    cleared: [],
    inserted: entryArrays(),
    upserted: entryArrays(),
    runs: [],
    moved: [],
    lastTss: [],
    clearedTss: [],
    payloads: []
  }
  let runCount = 0
  for (const [id, change] of changes) {
    if (change.clearedAt !== null) out.cleared.push(id)
    let from: number | null = null
    let to: number | null = null
    // Entries at or below the floor are not new (see `notify.ts`): upserted, and listed while there are few.
    const floor = change.clearedAt ?? change.startTs
    let old: Array<number> | undefined = []
    let runTs = Infinity
    for (const entry of change.entries.values()) {
      const ts = entry.ts
      const isOld = floor !== null && ts <= floor && change.clearedAt === null
      const into = isOld ? out.upserted : out.inserted
      if (isOld) {
        out.runs.push(ts > runTs ? runCount - 1 : runCount++)
        runTs = ts
      }
      into.streamIds.push(id)
      into.tss.push(ts)
      into.values.push(entry.value)
      into.points.push(entry.json)
      if (from === null || ts < from) from = ts
      if (to === null || ts > to) to = ts
      if (floor !== null && ts <= floor && old !== undefined) {
        if (old.length < maxListed) old.push(ts)
        else old = undefined
      }
    }
    if ((change.lastTs !== change.startTs && change.lastTs !== null) || change.clearedAt !== null) {
      out.moved.push(id)
      out.lastTss.push(change.lastTs)
      out.clearedTss.push(change.clearedAt)
    }
    if (from !== null || change.clearedAt !== null) {
      out.payloads.push(
        storedPayload(
          id,
          change.startTs,
          from,
          to,
          change.clearedAt,
          old?.sort((a, b) => a - b)
        )
      )
    }
  }
  return out
}

/** The latest entry of each stream in `ids` (inlined integers), as `stream_id, ts, point`. */
export const latestSql = (ids: ReadonlyArray<number>): string =>
  `SELECT s.id AS stream_id, e.ts, e.point FROM unnest('{${ids.join(",")}}'::bigint[]) AS s(id) ` +
  "CROSS JOIN LATERAL (SELECT ts, point FROM entries WHERE stream_id = s.id ORDER BY ts DESC LIMIT 1) e"

/** A SQL string literal of `text`: quotes doubled; with a backslash, the `E''` form with backslashes doubled. */
export const sqlLiteral = (text: string): string =>
  text.includes("\\") ? ` E'${text.replaceAll("\\", "\\\\").replaceAll("'", "''")}'` : `'${text.replaceAll("'", "''")}'`

/**
 * The text of a PostgreSQL array of `texts` (what `'...'::text[]` parses): each element double-quoted, with
 * backslashes and `"` escaped by a backslash.
 *
 * That is what `JSON.stringify` does to an array of strings, as long as it writes no other escape (`\n`, `\u0001`:
 * a control character or a lone surrogate, which PostgreSQL would read as the letter after the backslash), so the
 * native `JSON.stringify` builds it, about 20 times faster than a loop; the loop is kept for texts it cannot take.
 * Stored points are JSON texts, which hold no control character and no lone surrogate.
 */
export const textArrayText = (texts: ReadonlyArray<string>): string => {
  const json = JSON.stringify(texts)
  // A backslash before b, f, n, r, t or u begins an escape PostgreSQL reads otherwise (or is an escaped backslash
  // before one of those letters: then the loop is taken though the JSON would do).
  if (!/\\[bfnrtu]/.test(json)) return `{${json.slice(1, -1)}}`
  let body = ""
  for (let i = 0; i < texts.length; i++) {
    const t = texts[i]!
    const quoted = t.includes("\\") || t.includes('"') ? t.replace(/[\\"]/g, "\\$&") : t
    body += i === 0 ? `"${quoted}"` : `,"${quoted}"`
  }
  return `{${body}}`
}

/** A `text[]` literal of `texts` (see {@link textArrayText}), the whole a SQL literal. */
export const textArray = (texts: ReadonlyArray<string>): string => `${sqlLiteral(textArrayText(texts))}::text[]`

/** The text of a PostgreSQL array of numbers (finite; `null` as `NULL`). */
export const numberArrayText = (numbers: ReadonlyArray<number | null>): string => {
  // `join` writes each number as `String` does, and nothing for null: taken when there is none.
  if (!numbers.includes(null)) return `{${numbers.join(",")}}`
  let body = ""
  for (let i = 0; i < numbers.length; i++) {
    const n = numbers[i]
    body += (i === 0 ? "" : ",") + (n === null || n === undefined ? "NULL" : String(n))
  }
  return `{${body}}`
}

const INT8_OID = 20
const FLOAT8_OID = 701

/**
 * A one-dimensional PostgreSQL array of `numbers` in the binary format `array_recv` reads (a parameter `pg` sends
 * as binary because it is a `Buffer`): a 20-byte header (dimensions 1, a has-null flag, the element type's OID, the
 * length, lower bound 1), then per element its length (-1 for null) and its 8 bytes, big-endian. About ten times
 * cheaper to build than the text of {@link numberArrayText} for microsecond times (no number-to-text conversion),
 * and cheaper for the server to read (no text to parse).
 *
 * `type` is `bigint` (every number a safe integer, else it throws) or `float8`.
 */
export const numberArrayBinary = (numbers: ReadonlyArray<number | null>, type: "bigint" | "float8"): Buffer => {
  const count = numbers.length
  let nulls = 0
  for (let i = 0; i < count; i++) if (numbers[i] === null) nulls++
  const buffer = Buffer.allocUnsafe(20 + 12 * count - 8 * nulls)
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  view.setInt32(0, 1)
  view.setInt32(4, nulls > 0 ? 1 : 0)
  view.setInt32(8, type === "bigint" ? INT8_OID : FLOAT8_OID)
  view.setInt32(12, count)
  view.setInt32(16, 1)
  let at = 20
  for (let i = 0; i < count; i++) {
    const n = numbers[i]!
    if (n === null) {
      view.setInt32(at, -1)
      at += 4
      continue
    }
    view.setInt32(at, 8)
    if (type === "float8") view.setFloat64(at + 4, n)
    else {
      if (!Number.isSafeInteger(n)) throw new Error(`${String(n)} is not a safe integer`)
      // The high and low 32 bits of the two's complement: `high` is negative for a negative `n`, `n - high * 2^32`
      // is in [0, 2^32).
      const high = Math.floor(n / 4294967296)
      view.setInt32(at + 4, high)
      view.setUint32(at + 8, n - high * 4294967296)
    }
    at += 12
  }
  return buffer
}

/** A `bigint[]` or `float8[]` literal of numbers (see {@link numberArrayText}). */
export const numberArray = (numbers: ReadonlyArray<number | null>, type: "bigint" | "float8"): string =>
  `'${numberArrayText(numbers)}'::${type}[]`

const insertOf = (e: EntryArrays): string =>
  `unnest(${numberArray(e.streamIds, "bigint")}, ${numberArray(e.tss, "bigint")}, ${numberArray(e.values, "float8")}, ${textArray(e.points)})`

/**
 * The SQL that stores the net changes: deletes of cleared streams, then one statement inserting the new entries,
 * upserting the others, setting the new `last_ts` and `cleared_ts`, and notifying `channel` once per changed stream
 * (see `notify.ts`; PostgreSQL delivers the notifications on COMMIT only). An empty string when there is nothing to
 * store.
 */
export const storeSql = (a: StoreArrays, channel: string): string => {
  let sql = ""
  if (a.cleared.length > 0) sql += `DELETE FROM entries WHERE stream_id = ANY(${numberArray(a.cleared, "bigint")});\n`
  if (a.inserted.tss.length === 0 && a.upserted.tss.length === 0 && a.moved.length === 0) return sql
  // One statement whatever the number of entries: the entries as four arrays each. The data-modifying CTEs always
  // run to completion; the final SELECT sends the notifications.
  const insert =
    a.inserted.tss.length === 0
      ? ""
      : `inserted AS (
      INSERT INTO entries (stream_id, ts, value, point) SELECT * FROM ${insertOf(a.inserted)}
    ), `
  const upsert =
    a.upserted.tss.length === 0
      ? ""
      : `upserted AS (
      INSERT INTO entries (stream_id, ts, value, point) SELECT * FROM ${insertOf(a.upserted)}
      ON CONFLICT (stream_id, ts) DO UPDATE SET value = excluded.value, point = excluded.point
    ), `
  return (
    sql +
    `WITH ${insert}${upsert}moved AS (
      UPDATE streams SET last_ts = v.last_ts, cleared_ts = coalesce(v.cleared_ts, streams.cleared_ts)
      FROM unnest(${numberArray(a.moved, "bigint")}, ${numberArray(a.lastTss, "bigint")}, ${numberArray(a.clearedTss, "bigint")}) AS v(id, last_ts, cleared_ts)
      WHERE streams.id = v.id
    )
    SELECT pg_notify(${sqlLiteral(channel)}, p) FROM unnest(${textArray(a.payloads)}) AS p;\n`
  )
}

/**
 * The one statement of a group planned on guessed `last_ts` (see `runGroup` in `groupTransaction.ts`), prepared once
 * per connection: `$1` the group's stream ids (ascending) and `$2` their guessed `last_ts`; the new entries as
 * `$3`-`$6` and the others as `$7`-`$10` (see {@link StoreArrays}); the moved streams and their new `last_ts` as
 * `$11`, `$12`; the channel and the payloads as `$13`, `$14`; the runs of the others as `$15` (see {@link StoreArrays}).
 *
 * `inserted` stores the new entries first, before any lock: while another group of the same streams holds their
 * row locks (and waits for its COMMIT to reach the disk), this one inserts its rows on another core. `locked` then
 * takes the row locks in ascending id (as the two-round-trip path does, so that no two groups deadlock on them;
 * `locked` reads `inserted`, so the insert has run to completion before the first lock is asked for). `guard`
 * divides by zero (SQLSTATE 22012, see `isStaleGuess`) unless every row exists with its guessed `last_ts`; in READ
 * COMMITTED a locked row is read as last committed, so a group that held the lock before this one is seen. The
 * final SELECT always reads `guard`, so it is always evaluated, and the statement is its own transaction: an error
 * anywhere leaves nothing stored, the early inserts included. The other entries and the update wait for the guard
 * (`WHERE guard = 1`), so replacements apply in lock order. Those of a run with no stored entry between its lowest
 * and highest `ts` replace nothing (`vacant`: one index probe per run, a flag per run in an array indexed by run):
 * they are plainly inserted (`backfilled`), about 1.5 times cheaper than the upsert's speculative insertion
 * (bench/postgres-rows); the others are upserted.
 * `vacant` reads the entries as the statement's snapshot has them, taken before the row locks: an entry committed
 * since by the group that held them with a `ts` of a vacant run makes the insert fail (unique violation, 23505),
 * and the statement is sent again once that group ended (`storeGuessed`), or planned again on the rows, as below;
 * an entry with another `ts` in the range changes nothing. A new entry can only collide with another when a guess
 * was wrong: the insert then fails (unique violation, 23505; or a deadlock, 40P01, between two such inserts) and
 * the group is planned again on the rows, as for a failed guard. No clear: a statement cannot both delete a
 * stream's entries and insert the same rows.
 */
export const guessedSql = `WITH inserted AS (
  INSERT INTO entries (stream_id, ts, value, point)
  SELECT * FROM unnest($3::bigint[], $4::bigint[], $5::float8[], $6::text[]) RETURNING 1
), locked AS (
  SELECT id, last_ts FROM streams WHERE id = ANY($1::bigint[]) AND (SELECT count(*) FROM inserted) >= 0
  ORDER BY id FOR UPDATE
), guard AS (
  SELECT 1 / ((SELECT count(*) FROM locked JOIN unnest($1::bigint[], $2::bigint[]) AS v(id, last_ts)
    ON locked.id = v.id AND locked.last_ts IS NOT DISTINCT FROM v.last_ts) = cardinality($1::bigint[]))::int AS ok
), old AS (
  SELECT * FROM unnest($7::bigint[], $8::bigint[], $9::float8[], $10::text[], $15::bigint[])
    AS o(stream_id, ts, value, point, run)
  WHERE (SELECT ok FROM guard) = 1
), vacant AS (
  SELECT array_agg((SELECT count(*) FROM (SELECT 1 FROM entries AS e
    WHERE e.stream_id = r.stream_id AND e.ts BETWEEN r.lo AND r.hi LIMIT 1) AS stored) = 0 ORDER BY run) AS runs
  FROM (SELECT run, min(stream_id) AS stream_id, min(ts) AS lo, max(ts) AS hi FROM old GROUP BY run) AS r
), backfilled AS (
  INSERT INTO entries (stream_id, ts, value, point)
  SELECT stream_id, ts, value, point FROM old WHERE (SELECT runs FROM vacant)[run + 1]
), upserted AS (
  INSERT INTO entries (stream_id, ts, value, point)
  SELECT stream_id, ts, value, point FROM old WHERE NOT (SELECT runs FROM vacant)[run + 1]
  ON CONFLICT (stream_id, ts) DO UPDATE SET value = excluded.value, point = excluded.point
), moved AS (
  UPDATE streams SET last_ts = v.last_ts FROM unnest($11::bigint[], $12::bigint[]) AS v(id, last_ts)
  WHERE streams.id = v.id AND (SELECT ok FROM guard) = 1
)
SELECT (SELECT ok FROM guard) AS ok, (SELECT count(pg_notify($13, p)) FROM unnest($14::text[]) AS p) AS notified`

/**
 * {@link guessedSql} with its values, as a named (prepared) query. The number arrays go in the binary format
 * ({@link numberArrayBinary}), the text arrays as the text of PostgreSQL arrays ({@link textArrayText}: one native
 * `JSON.stringify`), both built here in one pass each rather than by `pg`'s generic array encoding.
 */
export const guessedQuery = (
  ids: ReadonlyArray<number>,
  expected: ReadonlyArray<Micros | null>,
  a: StoreArrays,
  channel: string
): { readonly name: string; readonly text: string; readonly values: Array<unknown> } => ({
  name: "dashstream_store_guessed",
  text: guessedSql,
  values: [
    numberArrayBinary(ids, "bigint"),
    numberArrayBinary(expected, "bigint"),
    numberArrayBinary(a.inserted.streamIds, "bigint"),
    numberArrayBinary(a.inserted.tss, "bigint"),
    numberArrayBinary(a.inserted.values, "float8"),
    textArrayText(a.inserted.points),
    numberArrayBinary(a.upserted.streamIds, "bigint"),
    numberArrayBinary(a.upserted.tss, "bigint"),
    numberArrayBinary(a.upserted.values, "float8"),
    textArrayText(a.upserted.points),
    numberArrayBinary(a.moved, "bigint"),
    numberArrayBinary(a.lastTss, "bigint"),
    channel,
    textArrayText(a.payloads),
    numberArrayBinary(a.runs, "bigint")
  ]
})
