import { type BlockEntry, decodeBlock, encodeBlock } from "@dashstream/core/entryBlocks"

/**
 * Putting a stream's queued entries in ascending `ts` order before they are stored (see `EntryBatch` in
 * `writePath.ts`), on their encoded bytes (the block layout of `entryBlocks.js`) where that is exact.
 */

/** Beyond this many runs a queue is sorted (see {@link sortEncoded}) rather than merged by {@link mergeRuns}. */
export const maxMergedRuns = 64

/**
 * The queue `buf[0..end)`, whose runs (starting at the byte offsets `starts`, the first at 0, each strictly
 * ascending) have no `ts` in common, as one ascending queue: the runs merged on their bytes, each stretch of a run
 * below the other runs' next entries copied at once, with `cuts` (ascending byte offsets of calls that begin blocks
 * of their own) moved with their entries. `undefined` when two runs hold the same `ts` (the later must replace the
 * earlier: see {@link sortEncoded}).
 *
 * Two clients' batches of different seconds arrive in one group out of order (the `lp` benchmark's two wrk threads):
 * merging them costs a read of each entry's `ts` and a copy of their bytes, where storing the queue before each late
 * call cost a block upsert per call, and merging that call into the stored blocks a read and a rewrite of them.
 */
export const mergeEncodedRuns = (
  buf: Buffer,
  end: number,
  starts: ReadonlyArray<number>,
  cuts: ReadonlyArray<number> | undefined
): { readonly buf: Buffer; readonly cuts: Array<number> | undefined } | undefined => {
  const k = starts.length
  const at = starts.slice()
  const stop = starts.map((_, i) => (i + 1 < k ? starts[i + 1]! : end))
  const out = Buffer.allocUnsafe(end)
  // The stretches copied: source start, source end, destination start.
  const moves: Array<number> = []
  let o = 0
  for (;;) {
    // The run with the lowest next entry; the second lowest bounds the stretch copied from it.
    let best = -1
    let bestTs = Infinity
    let bound = Infinity
    for (let i = 0; i < k; i++) {
      if (at[i]! >= stop[i]!) continue
      const ts = buf.readDoubleLE(at[i]!)
      if (ts < bestTs) {
        bound = bestTs
        bestTs = ts
        best = i
      } else if (ts < bound) bound = ts
    }
    if (best < 0) break
    if (bestTs === bound) return undefined
    const from = at[best]!
    const to = stop[best]!
    let r = from
    while (r < to && buf.readDoubleLE(r) < bound) r += 20 + buf.readUInt32LE(r + 16)
    moves.push(from, r, o)
    o += buf.copy(out, o, from, r)
    at[best] = r
  }
  if (cuts === undefined) return { buf: out, cuts }
  // Each cut moves with the stretch that holds it (the stretches cover the queue; the cuts ascend).
  const moved: Array<number> = []
  for (let m = 0; m < moves.length; m += 3) {
    const from = moves[m]!
    let lo = 0
    let hi = cuts.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (cuts[mid]! < from) lo = mid + 1
      else hi = mid
    }
    for (let c = lo; c < cuts.length && cuts[c]! < moves[m + 1]!; c++) moved.push(cuts[c]! - from + moves[m + 2]!)
  }
  return { buf: out, cuts: moved.sort((x, y) => x - y) }
}

/** The entries of `buf[0..end)` in ascending `ts`, a later entry with the same `ts` replacing an earlier one, encoded. */
export const sortEncoded = (buf: Buffer, end: number): Buffer =>
  encodeBlock(sortUnique(decodeBlock(buf.subarray(0, end)))).data

// `list` in ascending `ts`, an entry replaced by a later one with the same `ts`. The list is the concatenation of the
// calls' entries, each call's mostly ascending already: its ascending runs are merged pairwise (a later run wins a
// tie), O(n log runs) and no allocation per entry, rather than sorted (a group of 1,000-point batches to one stream
// holds 20,000 entries).
const sortUnique = (list: ReadonlyArray<BlockEntry>): Array<BlockEntry> => {
  let runs: Array<Array<BlockEntry>> = []
  let run: Array<BlockEntry> = [list[0]!]
  for (let i = 1; i < list.length; i++) {
    const e = list[i]!
    if (e.ts > run[run.length - 1]!.ts) run.push(e)
    else {
      runs.push(run)
      run = [e]
    }
  }
  runs.push(run)
  while (runs.length > 1) {
    const next: Array<Array<BlockEntry>> = []
    for (let r = 0; r + 1 < runs.length; r += 2) next.push(mergeRuns(runs[r]!, runs[r + 1]!))
    if (runs.length % 2 === 1) next.push(runs[runs.length - 1]!)
    runs = next
  }
  return runs[0]!
}

// Merges two strictly ascending runs into one; on the same `ts`, `later`'s entry is kept.
const mergeRuns = (earlier: ReadonlyArray<BlockEntry>, later: ReadonlyArray<BlockEntry>): Array<BlockEntry> => {
  const out: Array<BlockEntry> = []
  let a = 0
  let b = 0
  while (a < earlier.length && b < later.length) {
    const x = earlier[a]!
    const y = later[b]!
    if (x.ts < y.ts) {
      out.push(x)
      a++
    } else {
      if (x.ts === y.ts) a++
      out.push(y)
      b++
    }
  }
  while (a < earlier.length) out.push(earlier[a++]!)
  while (b < later.length) out.push(later[b++]!)
  return out
}
