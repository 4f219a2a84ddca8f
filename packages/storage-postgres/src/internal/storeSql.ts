import type { EntryWrite, Micros, WritePlan } from "@dashstream/core"
import { type BlockEntry, decodeBlock, encodeBlocks } from "@dashstream/core/entryBlocks"
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
 * Entries are stored in blocks (`entry_blocks`, migration 0007; the packed encoding of `@dashstream/core/entryBlocks`,
 * up to 32 entries or 16 KiB a row). A group's new entries of a stream (`ts` above its `last_ts` before the group, or
 * all of them after a clear of the group) become new blocks, plainly inserted: a new block cannot collide with a
 * stored one, since `last_ts` is the highest `ts` ever assigned to the stream and every write holds the stream's row
 * lock, so no stored block reaches above it. The others (replacing or back-filling, "old") are grouped into runs of
 * disjoint `ts` ranges: a run that no stored block overlaps is inserted as new blocks too (a back-filled request of
 * 1,000 points, typically); otherwise the blocks it overlaps are read, merged with it and written again
 * ({@link mergeOld}).
 */

/** The net change the group's transaction makes to one stream (see {@link netChanges}). */
export interface NetChange {
  /** `last_ts` before the group (microseconds). */
  readonly startTs: Micros | null
  /** `last_ts` after the group. */
  readonly lastTs: Micros | null
  /** The `ts` of the last clear of the group (microseconds), null when it did not clear the stream. */
  readonly clearedAt: Micros | null
  /**
   * Entries to store, each `ts` once, in the order first written: a later write replaces an earlier one with the same
   * `ts` in its place (as a `Map` by `ts` keeps them).
   */
  readonly entries: Array<EntryWrite>
  /** The `ts` of the first entry of each write (a run of old entries starts at one, see {@link StoreArrays}). */
  readonly starts: Set<number>
}

/**
 * The net change of the group's planned writes per stream, for one statement to store: a clear drops the entries
 * planned before it, and an entry replaces an earlier one with the same `ts` (an insert or upsert cannot touch a row
 * twice: the same `ts` twice in one statement is an error).
 */
export const netChanges = (plan: WritePlan): Map<number, NetChange> => {
  const changes = new Map<number, NetChange>()
  const lists = new Map<number, EntryList>()
  for (const s of plan.streams()) {
    const list = new EntryList()
    lists.set(s.stream, list)
    changes.set(s.stream, {
      startTs: s.before,
      lastTs: s.lastTs,
      clearedAt: s.clearedAt,
      entries: list.entries,
      starts: new Set()
    })
  }
  let id = -1
  let entries: EntryList | undefined = undefined
  let starts: Set<number> | undefined = undefined
  for (let i = 0; i < plan.size; i++) {
    const stream = plan.streamAt(i)
    if (stream !== id) {
      id = stream
      entries = lists.get(stream)!
      starts = changes.get(stream)!.starts
    }
    const m = plan.mutation(i)
    if (m.clear) entries!.clear()
    else entries!.split()
    const list = m.entries
    if (list.length > 0) starts!.add(list[0]!.ts)
    for (let j = 0; j < list.length; j++) entries!.set(list[j]!)
  }
  for (const list of lists.values()) list.finish()
  return changes
}

/**
 * A stream's entries of a group, each `ts` once, in the order first written (what a `Map` by `ts` would hold, see
 * {@link NetChange.entries}) once {@link finish} has run. Entries are pushed as they come, in pieces: a piece is an
 * ascending run of one write's entries ({@link split} starts a new one at each write). Pieces whose `ts` ranges are
 * disjoint cannot share a `ts`, so the pushed entries are already the answer: no `Map` key per entry (a `ts` in
 * microseconds is above 2^31, a heap number each as a key, which the group's garbage then holds; the `lp`
 * profile, where two clients' interleaved batches make a group's entries of a stream ascend by piece, not as a whole).
 * Only when two pieces' ranges overlap (a replacement, a back-fill into the group's own entries) does `finish` index
 * them by `ts`.
 */
export class EntryList {
  /** The entries so far: each `ts` once only after {@link finish}. */
  readonly entries: Array<EntryWrite> = []
  // The `ts` ranges of the pieces so far, as [lo, hi] pairs flattened (`hi` of the last piece is `last`).
  private readonly ranges: Array<number> = []
  private last = -Infinity

  /** Adds `entry` (the entry with its `ts`, if there is one, is replaced in its place by {@link finish}). */
  set(entry: EntryWrite): void {
    const ts = entry.ts
    if (ts <= this.last) this.split()
    if (this.last === -Infinity) this.ranges.push(ts, ts)
    this.entries.push(entry)
    this.last = ts
  }

  /** Ends the current piece: the next entry starts one (called at each write, whose entries are a piece of their own). */
  split(): void {
    if (this.last === -Infinity) return
    this.ranges[this.ranges.length - 1] = this.last
    this.last = -Infinity
  }

  /** Makes {@link entries} hold each `ts` once: the first written place of a `ts`, its last written entry. */
  finish(): void {
    this.split()
    const ranges = this.ranges
    if (ranges.length <= 2 || disjoint(ranges)) return
    const entries = this.entries
    const index = new Map<number, number>()
    let n = 0
    for (let k = 0; k < entries.length; k++) {
      const entry = entries[k]!
      const at = index.get(entry.ts)
      if (at !== undefined) entries[at] = entry
      else {
        index.set(entry.ts, n)
        entries[n++] = entry
      }
    }
    entries.length = n
  }

  /** Forgets every entry (a clear of the stream in the group). */
  clear(): void {
    this.entries.length = 0
    this.ranges.length = 0
    this.last = -Infinity
  }
}

/** Whether the `[lo, hi]` ranges of `ranges` (pairs, flattened) are pairwise disjoint. */
const disjoint = (ranges: ReadonlyArray<number>): boolean => {
  const order = Array.from({ length: ranges.length / 2 }, (_, k) => 2 * k).sort((a, b) => ranges[a]! - ranges[b]!)
  for (let k = 1; k < order.length; k++) if (ranges[order[k]!]! <= ranges[order[k - 1]! + 1]!) return false
  return true
}

/** Blocks as the six arrays an insert takes (see migration 0007), in one list per column. */
export interface BlockArrays {
  readonly streamIds: Array<number>
  readonly firstTss: Array<number>
  readonly lastTss: Array<number>
  readonly ns: Array<number>
  readonly lastAts: Array<number>
  readonly datas: Array<Buffer>
}

/** Empty {@link BlockArrays}. */
export const blockArrays = (): BlockArrays => ({
  streamIds: [],
  firstTss: [],
  lastTss: [],
  ns: [],
  lastAts: [],
  datas: []
})

/**
 * Appends `entries[from..to)` (ascending by `ts`, of the stream `stream`; all of them by default) to `into` as blocks
 * (see `encodeBlocks`).
 */
export const pushBlocks = (
  into: BlockArrays,
  stream: number,
  entries: ReadonlyArray<BlockEntry>,
  from = 0,
  to = entries.length
): void => {
  for (const block of encodeBlocks(entries, from, to)) {
    into.streamIds.push(stream)
    into.firstTss.push(entries[block.from]!.ts)
    into.lastTss.push(entries[block.to - 1]!.ts)
    into.ns.push(block.to - block.from)
    into.lastAts.push(block.lastAt)
    into.datas.push(block.data)
  }
}

const byTs = (a: BlockEntry, b: BlockEntry) => a.ts - b.ts

/** The net changes of a group as the arrays its statements take (see {@link storeArrays}). */
export interface StoreArrays {
  /** Streams the group cleared. */
  readonly cleared: Array<number>
  /** The blocks of the entries above their stream's `last_ts` before the group (or after a clear of it). */
  readonly blocks: BlockArrays
  /** The other entries of each stream, ascending by `ts`: they may replace stored ones. */
  readonly old: Map<number, Array<EntryWrite>>
  /**
   * The runs of the old entries: per stream, the `ts` ranges (inclusive, disjoint) of its old entries as the writes
   * gave them (ascending entries of one write: a request's back-filled points, typically), ranges that overlap
   * joined into one run.
   */
  readonly runStreams: Array<number>
  readonly runLos: Array<number>
  readonly runHis: Array<number>
  /** The old entries encoded run by run, for when no stored block overlaps any run (see `guessedSql`). */
  readonly runBlocks: BlockArrays
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
    blocks: blockArrays(),
    old: new Map(),
    runStreams: [],
    runLos: [],
    runHis: [],
    runBlocks: blockArrays(),
    moved: [],
    lastTss: [],
    clearedTss: [],
    payloads: []
  }
  for (const [id, change] of changes) {
    if (change.clearedAt !== null) out.cleared.push(id)
    let from: number | null = null
    let to: number | null = null
    // Entries at or below the floor are not new (see `notify.ts`): old, and listed while there are few.
    const floor = change.clearedAt ?? change.startTs
    let listed: Array<number> | undefined = []
    const fresh: Array<EntryWrite> = []
    let sorted = true
    let old: Array<EntryWrite> | undefined = undefined
    // The runs of the old entries in the order given: [lo, hi] pairs.
    const runs: Array<[number, number]> = []
    let runTs = Infinity
    for (const entry of change.entries) {
      const ts = entry.ts
      if (floor !== null && ts <= floor && change.clearedAt === null) {
        ;(old ??= []).push(entry)
        if (ts > runTs && !change.starts.has(ts)) runs[runs.length - 1]![1] = ts
        else runs.push([ts, ts])
        runTs = ts
      } else {
        if (fresh.length > 0 && ts < fresh[fresh.length - 1]!.ts) sorted = false
        fresh.push(entry)
      }
      if (from === null || ts < from) from = ts
      if (to === null || ts > to) to = ts
      if (floor !== null && ts <= floor && listed !== undefined) {
        if (listed.length < maxListed) listed.push(ts)
        else listed = undefined
      }
    }
    if (fresh.length > 0) {
      // A block never spans two writes: a late request (a back-fill) may fall between two of them, and a gap that no
      // stored block covers takes it without a merge.
      if (!sorted) fresh.sort(byTs)
      let start = 0
      for (let i = 1; i < fresh.length; i++) {
        if (change.starts.has(fresh[i]!.ts)) {
          pushBlocks(out.blocks, id, fresh, start, i)
          start = i
        }
      }
      pushBlocks(out.blocks, id, fresh, start)
    }
    if (old !== undefined) {
      old.sort(byTs)
      out.old.set(id, old)
      // Overlapping runs joined; each run's entries are the old entries in its range.
      runs.sort((a, b) => a[0] - b[0])
      let at = 0
      for (let r = 0; r < runs.length;) {
        const lo = runs[r]![0]
        let hi = runs[r]![1]
        for (r++; r < runs.length && runs[r]![0] <= hi; r++) hi = Math.max(hi, runs[r]![1])
        const start = at
        while (at < old.length && old[at]!.ts <= hi) at++
        out.runStreams.push(id)
        out.runLos.push(lo)
        out.runHis.push(hi)
        pushBlocks(out.runBlocks, id, old, start, at)
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
          listed?.sort((a, b) => a - b)
        )
      )
    }
  }
  return out
}

/**
 * The SQL that reads the stored blocks old entries must be merged into (see {@link mergeOld}), as
 * `stream_id, first_ts, last_ts, data`: per run of old entries ({@link StoreArrays}), the blocks overlapping its range
 * (the block starting before the range and reaching into it, then those starting in it; two index probes). A block
 * overlapping two runs comes twice.
 */
export const overlappedSql = (a: StoreArrays): string =>
  `SELECT b.stream_id, b.first_ts, b.last_ts, b.data FROM unnest(${numberArray(a.runStreams, "bigint")}, ` +
  `${numberArray(a.runLos, "bigint")}, ${numberArray(a.runHis, "bigint")}) AS r(id, lo, hi) CROSS JOIN LATERAL (` +
  "(SELECT stream_id, first_ts, last_ts, data FROM entry_blocks WHERE stream_id = r.id AND first_ts < r.lo " +
  "ORDER BY first_ts DESC LIMIT 1) UNION ALL (SELECT stream_id, first_ts, last_ts, data FROM entry_blocks " +
  "WHERE stream_id = r.id AND first_ts BETWEEN r.lo AND r.hi)) b WHERE b.last_ts >= r.lo"

/** A stored block read by {@link overlappedSql}. */
export interface OverlappedBlock {
  readonly stream_id: number
  readonly first_ts: number
  readonly last_ts: number
  readonly data: Buffer
}

/** What {@link mergeOld} makes of the old entries: the blocks to delete (by stream and `first_ts`), those to insert. */
export interface Merged {
  readonly deleteStreams: Array<number>
  readonly deleteFirstTss: Array<number>
  readonly blocks: BlockArrays
}

/**
 * The old entries of each stream merged into the stored blocks (`stored`, from {@link overlappedSql}): a block that
 * holds the `ts` of old entries is decoded, merged with them (an old entry replaces a stored one of the same `ts`)
 * and encoded again in its place (its range, split if it grew past the bounds); old entries between blocks become
 * new blocks, one group per gap (entries of one run with no stored block between them: every block overlapping a run
 * was read). Blocks read that hold no old entry stay as they are, so replacements far apart rewrite only the blocks
 * that hold them.
 */
export const mergeOld = (a: StoreArrays, stored: ReadonlyArray<OverlappedBlock>): Merged => {
  const out: Merged = { deleteStreams: [], deleteFirstTss: [], blocks: blockArrays() }
  const blocksOf = new Map<number, Array<OverlappedBlock>>()
  const seen = new Set<string>()
  for (const block of stored) {
    const key = `${block.stream_id}/${block.first_ts}`
    if (seen.has(key)) continue
    seen.add(key)
    let list = blocksOf.get(block.stream_id)
    if (list === undefined) blocksOf.set(block.stream_id, (list = []))
    list.push(block)
  }
  const runHisOf = new Map<number, Array<number>>()
  for (let r = 0; r < a.runStreams.length; r++) {
    let list = runHisOf.get(a.runStreams[r]!)
    if (list === undefined) runHisOf.set(a.runStreams[r]!, (list = []))
    list.push(a.runHis[r]!)
  }
  for (const [id, old] of a.old) {
    const blocks = (blocksOf.get(id) ?? []).sort((x, y) => x.first_ts - y.first_ts)
    const runHis = runHisOf.get(id)!.sort((x, y) => x - y)
    // The old entries of each block that holds some, by block index.
    const inBlock = new Map<number, Array<BlockEntry>>()
    let gap: Array<BlockEntry> = []
    let gapKey = -1
    let b = 0
    let r = 0
    for (const e of old) {
      while (runHis[r]! < e.ts) r++
      while (b < blocks.length && blocks[b]!.last_ts < e.ts) b++
      if (b < blocks.length && blocks[b]!.first_ts <= e.ts) {
        let list = inBlock.get(b)
        if (list === undefined) inBlock.set(b, (list = []))
        list.push(e)
        continue
      }
      // In the gap before block `b` (or after the last), within run `r`.
      const key = r * (blocks.length + 1) + b
      if (key !== gapKey && gap.length > 0) {
        pushBlocks(out.blocks, id, gap)
        gap = []
      }
      gapKey = key
      gap.push(e)
    }
    if (gap.length > 0) pushBlocks(out.blocks, id, gap)
    for (const [index, list] of inBlock) {
      const block = blocks[index]!
      out.deleteStreams.push(id)
      out.deleteFirstTss.push(block.first_ts)
      const entries = new Map<number, BlockEntry>()
      for (const e of decodeBlock(block.data)) entries.set(e.ts, e)
      for (const e of list) entries.set(e.ts, e)
      pushBlocks(out.blocks, id, [...entries.values()].sort(byTs))
    }
  }
  return out
}

/** The latest entry of each stream in `ids` (inlined integers), as `stream_id, ts, point` (see {@link lastEntrySql}). */
export const latestSql = (ids: ReadonlyArray<number>): string =>
  `SELECT s.id AS stream_id, b.last_ts AS ts, ${lastEntrySql("b")} AS point FROM unnest('{${ids.join(",")}}'::bigint[]) AS s(id) ` +
  "CROSS JOIN LATERAL (SELECT last_ts, last_at, data FROM entry_blocks WHERE stream_id = s.id ORDER BY first_ts DESC LIMIT 1) b"

/**
 * The SQL expression of the JSON text of the last entry of the block `alias` (an `entry_blocks` row): its bytes after
 * `last_at` and the entry's 20-byte header, as text. Nothing is decoded in JavaScript.
 */
export const lastEntrySql = (alias: string): string =>
  `convert_from(substring(${alias}.data from ${alias}.last_at + 21), 'UTF8')`

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

const BYTEA_OID = 17

/**
 * A one-dimensional PostgreSQL `bytea[]` of `buffers` in the binary format `array_recv` reads (see
 * {@link numberArrayBinary}): the 20-byte header, then per element its length and its bytes. One copy of each.
 */
export const byteaArrayBinary = (buffers: ReadonlyArray<Buffer>): Buffer => {
  let size = 20
  for (let i = 0; i < buffers.length; i++) size += 4 + buffers[i]!.length
  const out = Buffer.allocUnsafe(size)
  out.writeInt32BE(1, 0)
  out.writeInt32BE(0, 4)
  out.writeInt32BE(BYTEA_OID, 8)
  out.writeInt32BE(buffers.length, 12)
  out.writeInt32BE(1, 16)
  let at = 20
  for (let i = 0; i < buffers.length; i++) {
    const b = buffers[i]!
    out.writeInt32BE(b.length, at)
    b.copy(out, at + 4)
    at += 4 + b.length
  }
  return out
}

/**
 * The SQL of `blocks` as the rows of an `INSERT INTO entry_blocks ... SELECT *`, inlined: the numbers as array
 * literals and every block's bytes in ONE hex `bytea` literal, cut by offset (a simple query takes no parameters).
 */
const blocksRowsSql = (blocks: BlockArrays): string => {
  const offsets: Array<number> = []
  let at = 0
  for (const d of blocks.datas) {
    offsets.push(at)
    at += d.length
  }
  const hex = Buffer.concat(blocks.datas).toString("hex")
  return (
    `SELECT v.stream_id, v.first_ts, v.last_ts, v.n, v.last_at, substring(a.bytes from v.at::int + 1 for v.size::int) ` +
    `FROM (SELECT '\\x${hex}'::bytea AS bytes) a, unnest(${numberArray(blocks.streamIds, "bigint")}, ` +
    `${numberArray(blocks.firstTss, "bigint")}, ${numberArray(blocks.lastTss, "bigint")}, ` +
    `${numberArray(blocks.ns, "bigint")}, ${numberArray(blocks.lastAts, "bigint")}, ${numberArray(offsets, "bigint")}, ` +
    `${numberArray(
      blocks.datas.map((d) => d.length),
      "bigint"
    )}) AS v(stream_id, first_ts, last_ts, n, last_at, at, size)`
  )
}

/** The blocks of `a` and `b` as one {@link BlockArrays} (no copy of the bytes). */
const concatBlocks = (a: BlockArrays, b: BlockArrays): BlockArrays => ({
  streamIds: a.streamIds.concat(b.streamIds),
  firstTss: a.firstTss.concat(b.firstTss),
  lastTss: a.lastTss.concat(b.lastTss),
  ns: a.ns.concat(b.ns),
  lastAts: a.lastAts.concat(b.lastAts),
  datas: a.datas.concat(b.datas)
})

/**
 * The SQL that stores the net changes of a group planned on the rows, its stream rows locked: deletes of cleared
 * streams, deletes of the blocks the old entries were merged into (`merged`, see {@link mergeOld}; none without
 * old entries), then one statement inserting the new blocks and the merged ones, setting the new `last_ts` and
 * `cleared_ts`, and notifying `channel` once per changed stream (see `notify.ts`; PostgreSQL delivers the
 * notifications on COMMIT only). An empty string when there is nothing to store.
 */
export const storeSql = (a: StoreArrays, merged: Merged | undefined, channel: string): string => {
  let sql = ""
  if (a.cleared.length > 0)
    sql += `DELETE FROM entry_blocks WHERE stream_id = ANY(${numberArray(a.cleared, "bigint")});\n`
  if (merged !== undefined && merged.deleteStreams.length > 0) {
    sql +=
      `DELETE FROM entry_blocks WHERE (stream_id, first_ts) IN (SELECT * FROM ` +
      `unnest(${numberArray(merged.deleteStreams, "bigint")}, ${numberArray(merged.deleteFirstTss, "bigint")}));\n`
  }
  const blocks = merged === undefined ? a.blocks : concatBlocks(a.blocks, merged.blocks)
  if (blocks.datas.length === 0 && a.moved.length === 0) return sql
  // One statement whatever the number of blocks. The data-modifying CTEs always run to completion; the final SELECT
  // sends the notifications.
  const insert =
    blocks.datas.length === 0
      ? ""
      : `inserted AS (
      INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data) ${blocksRowsSql(blocks)}
    ), `
  return (
    sql +
    `WITH ${insert}moved AS (
      UPDATE streams SET last_ts = v.last_ts, cleared_ts = coalesce(v.cleared_ts, streams.cleared_ts)
      FROM unnest(${numberArray(a.moved, "bigint")}, ${numberArray(a.lastTss, "bigint")}, ${numberArray(a.clearedTss, "bigint")}) AS v(id, last_ts, cleared_ts)
      WHERE streams.id = v.id
    )
    SELECT pg_notify(${sqlLiteral(channel)}, p) FROM unnest(${textArray(a.payloads)}) AS p;\n`
  )
}

/**
 * The one statement of a group planned on guessed `last_ts` (see `runTransaction` in `groupTransaction.ts`),
 * prepared once per connection: `$1` the group's stream ids (ascending) and `$2` their guessed `last_ts`; the new
 * blocks as `$3`-`$8` (stream, `first_ts`, `last_ts`, `n`, `last_at`, `data`); the moved streams and their new
 * `last_ts` as `$9`, `$10`; the channel and the payloads as `$11`, `$12`; the runs of the old entries as
 * `$13`-`$15` (stream, lowest and highest `ts`) and their blocks as `$16`-`$21` (see {@link StoreArrays}).
 *
 * `inserted` stores the new blocks first, before any lock: while another group of the same streams holds their row
 * locks (and waits for its COMMIT to reach the disk), this one inserts its rows on another core. `locked` then takes
 * the row locks in ascending id (as the two-round-trip path does, so that no two groups deadlock on them; `locked`
 * reads `inserted`, so the insert has run to completion before the first lock is asked for). `guard` calls
 * `dashstream_stale_guess()` (migration 0008: it raises {@link staleGuessState} with a message of its own, see
 * `isStaleGuess`) unless every row exists with its guessed `last_ts`; in READ COMMITTED a locked
 * row is read as last committed, so a group that held the lock before this one is seen. The final SELECT always
 * reads `guard`, so it is always evaluated, and the statement is its own transaction: an error anywhere leaves
 * nothing stored, the early inserts included.
 *
 * The runs of old entries wait for the guard (`WHERE guard = 1`, so after the locks). `vacant` checks each run with
 * `dashstream_blocks_overlap` (migration 0007), a VOLATILE function: its query takes a snapshot of its own, so it
 * sees every block committed by the groups that held the locks before this one (the statement's own snapshot was
 * taken before it waited for them); one index probe per run. When no run overlaps a stored block, their blocks are
 * plainly inserted (`backfilled`: a late request's points, typically); when one does, `vacant` calls
 * `dashstream_occupied()` (migration 0008: it raises {@link occupiedState}, see `isOccupied`) and the group is
 * planned again on the rows, which merges old entries into the
 * blocks they overlap. A new block can only collide with a stored one (`first_ts`, 23505; or a deadlock, 40P01,
 * between two such inserts) or overlap one when a guess was wrong, and then the guard fails. No clear: a statement
 * cannot both delete a stream's blocks and insert the same rows.
 */
export const guessedSql = guessedStatement(true)

/**
 * The SQLSTATE `dashstream_stale_guess()` raises (migration 0008, which holds its own frozen copy): a guessed
 * `last_ts` was wrong, the statement stored nothing. What the server's log shows for it: docs/running.md, "The
 * PostgreSQL log".
 */
export const staleGuessState = "DS001"

/**
 * The SQLSTATE `dashstream_occupied()` raises (migration 0008, which holds its own frozen copy): entries replacing or
 * back-filling stored ones overlap stored blocks; the statement stored nothing and the group is merged on the rows.
 */
export const occupiedState = "DS002"

/**
 * {@link guessedSql} without the runs of old entries (`$13`-`$21` absent): the statement of a group whose entries are
 * all new (single points, appends), which has no `vacant` check and no second insert to plan and run.
 */
export const guessedNewSql = guessedStatement(false)

/** The text of {@link guessedSql} (`withRuns`) or of {@link guessedNewSql}. */
function guessedStatement(withRuns: boolean): string {
  const runs = `vacant AS (
  SELECT CASE WHEN count(*) = 0 THEN 2147483647 ELSE dashstream_occupied() END AS free
  FROM unnest($13::bigint[], $14::bigint[], $15::bigint[]) AS r(id, lo, hi)
  WHERE CASE WHEN (SELECT ok FROM guard) = 1 THEN dashstream_blocks_overlap(r.id, r.lo, r.hi) END
), backfilled AS (
  INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data)
  SELECT * FROM unnest($16::bigint[], $17::bigint[], $18::bigint[], $19::bigint[], $20::bigint[], $21::bytea[])
  WHERE (SELECT free FROM vacant) = 2147483647
), `
  return `WITH inserted AS (
  INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data)
  SELECT * FROM unnest($3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bytea[]) RETURNING 1
), locked AS (
  SELECT id, last_ts FROM streams WHERE id = ANY($1::bigint[]) AND (SELECT count(*) FROM inserted) >= 0
  ORDER BY id FOR UPDATE
), guard AS (
  SELECT CASE WHEN (SELECT count(*) FROM locked JOIN unnest($1::bigint[], $2::bigint[]) AS v(id, last_ts)
    ON locked.id = v.id AND locked.last_ts IS NOT DISTINCT FROM v.last_ts) = cardinality($1::bigint[])
    THEN 1 ELSE dashstream_stale_guess() END AS ok
), ${withRuns ? runs : ""}moved AS (
  UPDATE streams SET last_ts = v.last_ts FROM unnest($9::bigint[], $10::bigint[]) AS v(id, last_ts)
  WHERE streams.id = v.id AND (SELECT ok FROM guard) = 1
)
SELECT (SELECT ok FROM guard) AS ok, ${withRuns ? "(SELECT free FROM vacant) AS free, " : ""}(SELECT count(pg_notify($11, p)) FROM unnest($12::text[]) AS p) AS notified`
}

/**
 * {@link guessedSql} with its values, as a named (prepared) query; {@link guessedNewSql} when the group has no old
 * entries. The number arrays and the blocks go in the binary format ({@link numberArrayBinary},
 * {@link byteaArrayBinary}), the payloads as the text of a PostgreSQL array ({@link textArrayText}: one native
 * `JSON.stringify`).
 */
export const guessedQuery = (
  ids: ReadonlyArray<number>,
  expected: ReadonlyArray<Micros | null>,
  a: StoreArrays,
  channel: string
): { readonly name: string; readonly text: string; readonly values: Array<unknown> } => {
  const values: Array<unknown> = [
    numberArrayBinary(ids, "bigint"),
    numberArrayBinary(expected, "bigint"),
    ...blockValues(a.blocks),
    numberArrayBinary(a.moved, "bigint"),
    numberArrayBinary(a.lastTss, "bigint"),
    channel,
    textArrayText(a.payloads)
  ]
  if (a.runStreams.length === 0) return { name: "dashstream_store_guessed_new", text: guessedNewSql, values }
  values.push(
    numberArrayBinary(a.runStreams, "bigint"),
    numberArrayBinary(a.runLos, "bigint"),
    numberArrayBinary(a.runHis, "bigint"),
    ...blockValues(a.runBlocks)
  )
  return { name: "dashstream_store_guessed_blocks", text: guessedSql, values }
}

/**
 * An insert of `blocks` as its SQL and values (one statement whatever the number of blocks; the arrays in the binary
 * format), for a client's `query`.
 */
export const insertBlocksQuery = (blocks: BlockArrays): { readonly text: string; readonly values: Array<Buffer> } => ({
  text: `INSERT INTO entry_blocks (stream_id, first_ts, last_ts, n, last_at, data)
    SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bytea[])`,
  values: blockValues(blocks)
})

const blockValues = (b: BlockArrays): Array<Buffer> => [
  numberArrayBinary(b.streamIds, "bigint"),
  numberArrayBinary(b.firstTss, "bigint"),
  numberArrayBinary(b.lastTss, "bigint"),
  numberArrayBinary(b.ns, "bigint"),
  numberArrayBinary(b.lastAts, "bigint"),
  byteaArrayBinary(b.datas)
]
