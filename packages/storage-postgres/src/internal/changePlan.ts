import type { EntryWrite, Micros, WritePlan } from "@dashstream/core"
import { type BlockEntry, decodeBlock, encodeBlocks } from "@dashstream/core/entryBlocks"
import { maxListed, storedPayload } from "./notify.js"

/**
 * The change planning of the PostgreSQL group commit (see `groupCommit.ts` and `storeSql.ts`): what a group's planned
 * writes change, per stream ({@link netChanges}), as the arrays its statements take ({@link storeArrays}), and how old
 * entries merge into the stored blocks they overlap ({@link mergeOld}). No SQL text is written here.
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
  /** The stream of each of {@link payloads}. */
  readonly payloadStreams: Array<number>
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
    payloads: [],
    payloadStreams: []
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
      out.payloadStreams.push(id)
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
