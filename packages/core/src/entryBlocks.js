// @ts-check
// The packed encoding of the `entry_blocks` rows of both storage adapters (SQLite migration 0007, PostgreSQL
// migration 0007): up to `blockSize` entries of one stream a row. Pure (no I/O), exported as
// `@dashstream/core/entryBlocks`. JavaScript, checked from its JSDoc, because storage-sqlite's page reader's thread
// (a module node loads itself, no TypeScript on Node 20) imports it too; the subpath's default is this file.

/** Entries per block written by appends at most; a merge may leave up to twice as many. */
export const blockSize = 32

/**
 * Bytes of `data` per block written by appends at most (entries of 20 bytes plus the point's JSON, see
 * {@link encodeBlock}), unless one entry alone is larger; a merge may leave up to twice as many. Whichever of
 * {@link blockSize} and this comes first closes a block: small points fill 32 entries, a text feed's 6 KB points 2,
 * so a read of a few large entries never materialises a block much larger than them, and an append, which rewrites
 * its tail block's row, never rewrites more than this.
 */
export const blockBytes = 16 * 1024

/**
 * The UTF-8 length of `text`: a short ASCII text (a number point's JSON) is counted without a native call.
 * @param {string} text
 * @returns {number}
 */
export const utf8Length = (text) => {
  const n = text.length
  if (n <= shortText) {
    let i = 0
    while (i < n && text.charCodeAt(i) < 0x80) i++
    if (i === n) return n
  }
  return Buffer.byteLength(text)
}

// Texts up to this many UTF-16 units are tried as ASCII, a byte a unit, before the native UTF-8 encoder, whose call
// costs more than such a text's copy (entries of number points are 1-20 characters of JSON).
const shortText = 64

/**
 * Writes one entry at byte offset `at` of `buf` (viewed by `view`) and returns its size in bytes (see
 * {@link encodeBlock} for the layout). `buf` must have room for the entry's UTF-8 bound (3 bytes a unit).
 * @param {Buffer} buf
 * @param {DataView} view
 * @param {BlockEntry} e
 * @param {number} at
 * @returns {number}
 */
export const writeEntry = (buf, view, e, at) => {
  view.setFloat64(at, e.ts, true)
  view.setFloat64(at + 8, e.value ?? NaN, true)
  const text = e.json
  const n = text.length
  let len = -1
  if (n <= shortText) {
    let i = 0
    for (; i < n; i++) {
      const c = text.charCodeAt(i)
      if (c >= 0x80) break
      buf[at + 20 + i] = c
    }
    if (i === n) len = n
  }
  if (len < 0) len = buf.write(text, at + 20)
  view.setUint32(at + 16, len, true)
  return 20 + len
}

/**
 * A view of `buf`'s bytes for {@link writeEntry}.
 * @param {Buffer} buf
 * @returns {DataView}
 */
export const viewOf = (buf) => new DataView(buf.buffer, buf.byteOffset, buf.byteLength)

/**
 * Where the block that takes `entries[from..to)` ends (the index after its last entry) when it already holds `n`
 * entries of `bytes` bytes: entries join while the block holds fewer than `maxCount` and, unless it is empty, stays
 * within `maxBytes`. Returns `from` when the block is full.
 * @param {ReadonlyArray<BlockEntry>} entries
 * @param {number} from
 * @param {number} to
 * @param {number} [n]
 * @param {number} [bytes]
 * @param {number} [maxCount]
 * @param {number} [maxBytes]
 * @returns {number}
 */
export const blockEnd = (entries, from, to, n = 0, bytes = 0, maxCount = blockSize, maxBytes = blockBytes) => {
  let j = from
  while (j < to && n < maxCount) {
    const size = 20 + utf8Length(/** @type {BlockEntry} */ (entries[j]).json)
    if (n > 0 && bytes + size > maxBytes) break
    n++
    bytes += size
    j++
  }
  return j
}

/**
 * One stored entry: `ts` (integer microseconds), the decimation value (`null` for none) and the point's JSON text.
 * @typedef {object} BlockEntry
 * @property {number} ts
 * @property {number | null} value
 * @property {string} json
 */

/**
 * Encodes `entries[from..to)` (ascending by `ts`) as one block's bytes: each entry is `ts` (float64 LE, exact below
 * 2^53), the value (float64 LE, NaN for null), the JSON text's UTF-8 length (uint32 LE) and the text. `lastAt` is
 * the byte offset of the last entry (the row's `last_at`, so a latest read decodes one entry).
 * @param {ReadonlyArray<BlockEntry>} entries
 * @param {number} [from]
 * @param {number} [to]
 * @returns {{ data: Buffer, lastAt: number }}
 */
export const encodeBlock = (entries, from = 0, to = entries.length) => {
  let bytes = 0
  for (let i = from; i < to; i++) bytes += 20 + utf8Length(/** @type {BlockEntry} */ (entries[i]).json)
  const buf = Buffer.allocUnsafe(bytes)
  const view = viewOf(buf)
  let at = 0
  let lastAt = 0
  for (let i = from; i < to; i++) {
    lastAt = at
    at += writeEntry(buf, view, /** @type {BlockEntry} */ (entries[i]), at)
  }
  return { data: buf, lastAt }
}

/**
 * One block of {@link encodeBlocks}: `entries[from..to)` encoded, `lastAt` the offset of its last entry in `data`;
 * `continues`: these entries go on the end of the block the encoding started in (a tail block's append).
 * @typedef {object} EncodedBlock
 * @property {number} from
 * @property {number} to
 * @property {Buffer} data
 * @property {number} lastAt
 * @property {boolean} continues
 */

/**
 * Encodes `entries[from..to)` (ascending by `ts`) as consecutive blocks by the rule of {@link blockEnd}, the first
 * continuing a block that already holds `n` entries of `bytes` bytes (a stream's tail block; 0 and 0 for none). Each
 * entry is written once into one buffer, which {@link splitBlocks} then cuts: the blocks are views of it.
 * @param {ReadonlyArray<BlockEntry>} entries
 * @param {number} from
 * @param {number} to
 * @param {number} [n]
 * @param {number} [bytes]
 * @returns {Array<EncodedBlock>}
 */
export const encodeBlocks = (entries, from, to, n = 0, bytes = 0) => {
  // A UTF-8 length is at most 3 bytes a UTF-16 unit; above 1 MiB of that bound, the exact size is worth counting.
  let max = 0
  for (let i = from; i < to; i++) max += 20 + 3 * /** @type {BlockEntry} */ (entries[i]).json.length
  if (max > 1 << 20) {
    max = 0
    for (let i = from; i < to; i++) max += 20 + Buffer.byteLength(/** @type {BlockEntry} */ (entries[i]).json)
  }
  const buf = Buffer.allocUnsafe(max)
  const view = viewOf(buf)
  let at = 0
  for (let i = from; i < to; i++) at += writeEntry(buf, view, /** @type {BlockEntry} */ (entries[i]), at)
  const blocks = splitBlocks(buf, at, n, bytes)
  if (from === 0) return blocks
  for (const block of blocks) {
    block.from += from
    block.to += from
  }
  return blocks
}

/**
 * Splits entries already encoded (`buf[0..end)`, ascending by `ts`, laid out as {@link encodeBlock} does) into
 * consecutive blocks by the rule of {@link blockEnd}, the first continuing a block that already holds `n` entries of
 * `bytes` bytes: the blocks {@link encodeBlocks} would make of the same entries, as views of `buf` (`from`, `to`:
 * entry indices in `buf`).
 * @param {Buffer} buf
 * @param {number} end
 * @param {number} [n]
 * @param {number} [bytes]
 * @returns {Array<EncodedBlock>}
 */
export const splitBlocks = (buf, end, n = 0, bytes = 0) => {
  /** @type {Array<EncodedBlock>} */
  const out = []
  let continues = n > 0
  let first = 0
  let start = 0
  let at = 0
  let lastAt = 0
  let i = 0
  while (at < end) {
    const size = 20 + buf.readUInt32LE(at + 16)
    if (n > 0 && (n >= blockSize || bytes + size > blockBytes)) {
      if (i > first) out.push({ from: first, to: i, data: buf.subarray(start, at), lastAt: lastAt - start, continues })
      continues = false
      first = i
      start = at
      n = 0
      bytes = 0
    }
    lastAt = at
    at += size
    n++
    bytes += size
    i++
  }
  if (i > first) out.push({ from: first, to: i, data: buf.subarray(start, at), lastAt: lastAt - start, continues })
  return out
}

/**
 * The entry at byte offset `at` of a block's bytes.
 * @param {Buffer} buf
 * @param {number} at
 * @returns {BlockEntry}
 */
export const decodeEntryAt = (buf, at) => {
  const v = buf.readDoubleLE(at + 8)
  const len = buf.readUInt32LE(at + 16)
  return {
    ts: buf.readDoubleLE(at),
    value: Number.isNaN(v) ? null : v,
    json: buf.toString("utf8", at + 20, at + 20 + len)
  }
}

/**
 * Every entry of a block, ascending by `ts`.
 * @param {Buffer} buf
 * @returns {Array<BlockEntry>}
 */
export const decodeBlock = (buf) => {
  /** @type {Array<BlockEntry>} */
  const out = []
  for (let at = 0; at < buf.length; at += 20 + buf.readUInt32LE(at + 16)) out.push(decodeEntryAt(buf, at))
  return out
}

/**
 * The entries with `ts > after` of blocks given ascending (the first may start before `after`), at most `limit`
 * (-1: all), appended to `out` through `each`.
 * @template T
 * @param {Iterable<Buffer>} blocks
 * @param {number} after
 * @param {number} limit
 * @param {(e: BlockEntry) => T} each
 * @returns {Array<T>}
 */
export const entriesAfter = (blocks, after, limit, each) => entriesBetween(blocks, after, Infinity, limit, each)

/**
 * The entries with `after < ts <= to` of blocks given ascending (the first may start before `after`), at most
 * `limit` (-1: all), through `each`: a range read's page. The blocks after the first entry past `to` are not read.
 * @template T
 * @param {Iterable<Buffer>} blocks
 * @param {number} after
 * @param {number} to
 * @param {number} limit
 * @param {(e: BlockEntry) => T} each
 * @returns {Array<T>}
 */
export const entriesBetween = (blocks, after, to, limit, each) =>
  scanBetween(blocks, after, to, limit, (buf, at) => each(decodeEntryAt(buf, at)))

/**
 * {@link entriesBetween} as {@link EntryRef}s: `ts` and value read, the JSON text only when asked for (a range read
 * with `points` renders the few entries its buckets keep, not every entry it ranks).
 * @param {Iterable<Buffer>} blocks
 * @param {number} after
 * @param {number} to
 * @param {number} limit
 * @returns {Array<EntryRef>}
 */
export const refsBetween = (blocks, after, to, limit) =>
  scanBetween(blocks, after, to, limit, (buf, at, ts) => new EntryRef(buf, at, ts))

/**
 * @template T
 * @param {Iterable<Buffer>} blocks
 * @param {number} after
 * @param {number} to
 * @param {number} limit
 * @param {(buf: Buffer, at: number, ts: number) => T} make
 * @returns {Array<T>}
 */
const scanBetween = (blocks, after, to, limit, make) => {
  /** @type {Array<T>} */
  const out = []
  if (limit === 0) return out
  for (const buf of blocks) {
    for (let at = 0; at < buf.length; at += 20 + buf.readUInt32LE(at + 16)) {
      const ts = buf.readDoubleLE(at)
      if (ts <= after) continue
      if (ts > to) return out
      out.push(make(buf, at, ts))
      if (out.length === limit) return out
    }
  }
  return out
}

/** The entry at a byte offset of a block, its `ts` and value read, its JSON text decoded when first asked for. */
export class EntryRef {
  /**
   * @param {Buffer} buf
   * @param {number} at
   * @param {number} [ts] the entry's `ts` when the caller has read it already
   */
  constructor(buf, at, ts = buf.readDoubleLE(at)) {
    const v = buf.readDoubleLE(at + 8)
    /** @readonly */
    this.ts = ts
    /** @readonly */
    this.value = Number.isNaN(v) ? null : v
    /** @private */
    this.buf = buf
    /** @private */
    this.at = at
  }

  /** @returns {string} */
  get json() {
    const at = this.at
    return this.buf.toString("utf8", at + 20, at + 20 + this.buf.readUInt32LE(at + 16))
  }
}

/**
 * The entries of blocks given ascending, from the `skip`-th entry of the first on, at most `limit` (-1: all), through
 * `each`. Only the entries taken are decoded; the blocks after the last taken are not read.
 * @template T
 * @param {Iterable<Buffer>} blocks
 * @param {number} skip
 * @param {number} limit
 * @param {(e: BlockEntry) => T} each
 * @returns {Array<T>}
 */
export const entriesFrom = (blocks, skip, limit, each) => {
  /** @type {Array<T>} */
  const out = []
  if (limit === 0) return out
  let skipped = 0
  for (const buf of blocks) {
    for (let at = 0; at < buf.length; at += 20 + buf.readUInt32LE(at + 16)) {
      if (skipped < skip) {
        skipped++
        continue
      }
      out.push(each(decodeEntryAt(buf, at)))
      if (out.length === limit) return out
    }
  }
  return out
}

/**
 * Core's `formatTs` (`Time.ts`), copied for the page reader's thread, which cannot import the TypeScript
 * sources; `EntryBlocks.test.ts` checks they agree.
 * @param {number} ts
 * @returns {string}
 */
export const formatTs = (ts) => {
  const whole = Math.floor(ts / 1_000_000)
  const frac = ts - whole * 1_000_000
  if (frac === 0) return String(whole)
  return `${whole}.${String(frac).padStart(6, "0").replace(/0+$/, "")}`
}

/**
 * An entry rendered as a read body's `data` element: `{"ts":<seconds>,"point":<point>}`.
 * @param {BlockEntry} e
 * @returns {string}
 */
export const renderEntry = (e) => `{"ts":${formatTs(e.ts)},"point":${e.json}}`
