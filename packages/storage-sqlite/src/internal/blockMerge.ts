import type Database from "better-sqlite3"
import { storesSummary, summarizeBlock } from "@dashstream/core"
import { blockBytes, blockSize, splitBlocks } from "@dashstream/core/entryBlocks"

/**
 * The summary a block of `n` entries (`data`) is written with (migration 0013): core's `summarizeBlock` for more
 * than 4 entries, else `null` (it would hold them all).
 */
export const summaryOf = (data: Buffer, n: number): Buffer | null => (storesSummary(n) ? summarizeBlock(data) : null)

type BlockRow = { id: number; first_ts: number; last_ts: number; data: Buffer }

/** The statements {@link mergeEncoded} runs: those of `writePath.ts`'s `BlockStatements` (see `statements.ts`). */
export interface MergeStatements {
  readonly blockAt: Database.Statement<[number, number], BlockRow>
  readonly firstBlock: Database.Statement<[number], BlockRow>
  readonly nextFirst: Database.Statement<[number, number], number>
  readonly updateBlock: Database.Statement<[number, number, number, number, Buffer, Buffer | null, number]>
  readonly insertBlock: Database.Statement<[number, number, number, number, number, Buffer, Buffer | null]>
}

// Entry layout (entryBlocks.js): `ts` float64 LE at 0, value float64 LE at 8, JSON length uint32 LE at 16, JSON at 20.
const tsAt = (buf: Buffer, at: number): number => buf.readDoubleLE(at)
const sizeAt = (buf: Buffer, at: number): number => 20 + buf.readUInt32LE(at + 16)

// What `cut` found: the end (byte offset) of the block, its entry count and the offset of its last entry.
let cutEnd = 0
let cutCount = 0
let cutLastAt = 0

// The block of the encoded entries `buf[at..end)` that starts at `at`, by `blockEnd`'s rule (entryBlocks.js): entries
// join while the block holds fewer than `maxCount` and, unless it is empty, stays within `maxBytes`. Sets `cutEnd`,
// `cutCount`, `cutLastAt`.
const cut = (buf: Buffer, at: number, end: number, maxCount: number, maxBytes: number): void => {
  let n = 0
  let bytes = 0
  let lastAt = at
  while (at < end && n < maxCount) {
    const size = sizeAt(buf, at)
    if (n > 0 && bytes + size > maxBytes) break
    lastAt = at
    n++
    bytes += size
    at += size
  }
  cutEnd = at
  cutCount = n
  cutLastAt = lastAt
}

// Inserts the encoded entries `buf[from..to)` (ascending, in a gap of the stream's blocks or in a stream without
// blocks) as new blocks, views of `buf`: at once, or as rows of the block upsert queued in `rows` (`appendRowsSql`).
const insertEncoded = (
  s: MergeStatements,
  stream: number,
  buf: Buffer,
  from: number,
  to: number,
  rows: Array<number | Buffer | null> | undefined
): void => {
  for (const block of splitBlocks(buf.subarray(from, to), to - from)) {
    const { data, lastAt } = block
    const n = block.to - block.from
    const summary = summaryOf(data, n)
    if (rows === undefined) s.insertBlock.run(stream, tsAt(data, 0), tsAt(data, lastAt), n, lastAt, data, summary)
    else rows.push(stream, tsAt(data, 0), tsAt(data, lastAt), n, lastAt, data, summary)
  }
}

// The merge's output buffer, reused: its blocks are bound to statements that run at once, and better-sqlite3 binds a
// blob as SQLITE_TRANSIENT (SQLite copies it). A merge of a late 100-entry batch into a block is about 5 KB, above
// `Buffer`'s pool (4 KiB): a buffer each would be an ArrayBuffer of its own each, left to the GC.
let scratch = Buffer.allocUnsafe(0)
const scratchMax = 1024 * 1024

/** A buffer of at least `bytes` bytes for one merge, reused up to {@link scratchMax}. */
const mergeBuffer = (bytes: number): Buffer => {
  if (bytes <= scratch.length) return scratch
  if (bytes > scratchMax) return Buffer.allocUnsafe(bytes)
  scratch = Buffer.allocUnsafe(Math.min(scratchMax, Math.max(bytes, 2 * scratch.length, 64 * 1024)))
  return scratch
}

/**
 * Stores the encoded entries `src[0..end)` (strictly ascending by `ts`, laid out as `encodeBlock` writes them) into
 * stream `stream`'s blocks: each entry goes to the block with the greatest `first_ts <= ts` (the first block when
 * none), an entry with the same `ts` as a stored one replacing it (docs/api.md section 3). Entries that all lie in the
 * gap after a block (a late batch) become new blocks; the others are merged into their block and the result cut by
 * `blockEnd`'s rule (one block while it fits twice the bounds, else blocks of up to 32 entries or 16 KiB). Every
 * block it writes is written with its summary (`summaryOf`).
 *
 * With `rows`, the new blocks of gaps are queued there as rows of the block upsert (`appendRowsSql`), for the caller
 * to store with the group's appends in one statement rather than one insert each; a gap's blocks never hold the
 * stream's newest entry, and the rest of `src` is in no gap they fill. Returns whether a stored block was rewritten
 * or the stream had none (as opposed to gaps only): only then may the stream's tail block have changed.
 *
 * The merge works on the bytes (a late line protocol batch): stored and new entries are copied in runs
 * into one buffer, none decoded into objects or encoded again, so its cost is a few copies and statements, not a
 * string and an object per entry. Throws SQLite errors.
 */
export const mergeEncoded = (
  s: MergeStatements,
  stream: number,
  src: Buffer,
  end: number,
  rows?: Array<number | Buffer | null>
): boolean => {
  let rewrote = false
  let idx = 0
  while (idx < end) {
    const ts0 = tsAt(src, idx)
    const block = s.blockAt.get(stream, ts0) ?? s.firstBlock.get(stream)
    if (block === undefined) {
      // A stream without blocks: these are its first, its tail among them.
      insertEncoded(s, stream, src, idx, end, undefined)
      return true
    }
    const next = s.nextFirst.get(stream, block.first_ts)
    let k = idx
    while (k < end && (next === undefined || tsAt(src, k) < next)) k += sizeAt(src, k)
    if (block.first_ts <= ts0 && ts0 > block.last_ts) {
      // Every entry taken lies in the gap after this block (an older batch arriving late): new blocks.
      insertEncoded(s, stream, src, idx, k, rows)
      idx = k
      continue
    }
    rewrote = true
    const old = block.data
    const oldEnd = old.length
    const out = mergeBuffer(oldEnd + (k - idx))
    let o = 0
    let a = 0
    let b = idx
    while (b < k) {
      // The stored entries below the next new one, then that one and the new entries below the next stored one; a
      // stored entry with a new entry's `ts` is left out (replaced).
      const tb = tsAt(src, b)
      let r = a
      while (r < oldEnd && tsAt(old, r) < tb) r += sizeAt(old, r)
      if (r > a) o += old.copy(out, o, a, r)
      a = r
      if (a < oldEnd && tsAt(old, a) === tb) a += sizeAt(old, a)
      const limit = a < oldEnd ? tsAt(old, a) : Infinity
      r = b
      while (r < k && tsAt(src, r) < limit) r += sizeAt(src, r)
      o += src.copy(out, o, b, r)
      b = r
    }
    if (a < oldEnd) o += old.copy(out, o, a, oldEnd)
    // A merge that still fits twice the bounds stays one block (a replacement does not split a full block in two).
    cut(out, 0, o, 2 * blockSize, 2 * blockBytes)
    if (cutEnd !== o) cut(out, 0, o, blockSize, blockBytes)
    const head = out.subarray(0, cutEnd)
    const headSummary = summaryOf(head, cutCount)
    s.updateBlock.run(tsAt(out, 0), tsAt(out, cutLastAt), cutCount, cutLastAt, head, headSummary, block.id)
    for (let at = cutEnd; at < o; at = cutEnd) {
      cut(out, at, o, blockSize, blockBytes)
      const data = out.subarray(at, cutEnd)
      const summary = summaryOf(data, cutCount)
      s.insertBlock.run(stream, tsAt(out, at), tsAt(out, cutLastAt), cutCount, cutLastAt - at, data, summary)
    }
    idx = k
  }
  return rewrote
}
