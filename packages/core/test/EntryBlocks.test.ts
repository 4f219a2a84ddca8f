import { describe, expect, it } from "vitest"
import {
  blockBytes,
  blockSize,
  decodeBlock,
  encodeBlock,
  encodeBlocks,
  entriesAfter,
  entriesFrom,
  formatTs,
  renderEntry
} from "../src/entryBlocks.js"
import { formatTs as coreFormatTs } from "../src/Time.js"

const entry = (ts: number, json: string, value: number | null = null) => ({ ts, value, json })

describe("entryBlocks", () => {
  it("formatTs agrees with core's", () => {
    for (const ts of [0, 1, 999_999, 1_000_000, 1_500_000, 1_700_000_000_123_456, 1_700_000_000_000_010]) {
      expect(formatTs(ts)).toBe(coreFormatTs(ts as never))
    }
  })

  it("decodes what it encodes (non-ASCII, null and NaN-free values, last_at)", () => {
    const entries = [entry(1, '{"text":"héllo ✓ 𝄞"}', 2.5), entry(2, '{"number":-0.1}', null), entry(3, '"x"', 0)]
    const { data, lastAt } = encodeBlock(entries)
    expect(decodeBlock(data)).toEqual(entries)
    expect(data.subarray(lastAt + 20).toString("utf8")).toBe('"x"')
    expect(entriesAfter([data], 1, -1, (e) => e.ts)).toEqual([2, 3])
    expect(entriesFrom([data], 1, 1, renderEntry)).toEqual(['{"ts":0.000002,"point":{"number":-0.1}}'])
  })

  it("encodeBlocks closes a block at blockSize entries or blockBytes bytes", () => {
    const small = Array.from({ length: blockSize * 2 + 1 }, (_, i) => entry(i, "1"))
    expect(encodeBlocks(small, 0, small.length).map((b) => b.to - b.from)).toEqual([blockSize, blockSize, 1])
    const big = "x".repeat(blockBytes / 2)
    const large = Array.from({ length: 3 }, (_, i) => entry(i, `"${big}"`))
    const blocks = encodeBlocks(large, 0, large.length)
    expect(blocks.map((b) => b.to - b.from)).toEqual([1, 1, 1])
    expect(blocks.flatMap((b) => decodeBlock(b.data))).toEqual(large)
  })
})
