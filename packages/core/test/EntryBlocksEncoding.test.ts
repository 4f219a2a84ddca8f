import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  blockBytes,
  blockEnd,
  decodeBlock,
  encodeBlock,
  encodeBlocks,
  splitBlocks,
  utf8Length
} from "../src/entryBlocks.js"

// The packed block encoding (migration 0007) with its short-ASCII fast path: every text, short or long,
// ASCII or not, must come back as it went in, with the lengths the native UTF-8 encoder gives.

const entry = fc.record({
  ts: fc.integer({ min: 0, max: 2 ** 52 }),
  value: fc.option(fc.double({ noNaN: true }), { nil: null }),
  json: fc.oneof(
    fc.string({ maxLength: 70 }),
    fc.string({ unit: "grapheme", maxLength: 70 }),
    fc.string({ unit: "binary", maxLength: 70 }),
    fc.string({ minLength: 60, maxLength: 300 })
  )
})
const entries = fc.array(entry, { maxLength: 80 }).map((list) => {
  let ts = 0
  return list.map((e) => ({ ...e, ts: (ts += 1 + (e.ts % 1000)) }))
})

describe("entry blocks", () => {
  it("utf8Length is Buffer.byteLength", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (text) => {
        assert.strictEqual(utf8Length(text), Buffer.byteLength(text))
      })
    )
  })

  it("encodeBlock and encodeBlocks decode to what was encoded", () => {
    fc.assert(fc.property(entries, check), { numRuns: 300 })
  })
})

const check = (list: Array<{ ts: number; value: number | null; json: string }>) => {
  const whole = encodeBlock(list)
  assert.deepStrictEqual(decodeBlock(whole.data), list)
  assert.strictEqual(
    whole.data.length,
    list.reduce((n, e) => n + 20 + Buffer.byteLength(e.json), 0)
  )
  const blocks = encodeBlocks(list, 0, list.length)
  assert.deepStrictEqual(
    blocks.flatMap((b) => decodeBlock(b.data)),
    list
  )
  // The same blocks from the entries encoded once (a group's queued entries), alone and continuing a tail block.
  for (const [n, bytes] of [
    [0, 0],
    [5, 200],
    [31, 1000],
    [3, 16_000]
  ] as const) {
    const split = splitBlocks(whole.data, whole.data.length, n, bytes)
    const encoded = encodeBlocks(list, 0, list.length, n, bytes)
    assert.deepStrictEqual(
      split.map((b) => [b.from, b.to, b.lastAt, b.continues, b.data.toString("hex")]),
      encoded.map((b) => [b.from, b.to, b.lastAt, b.continues, b.data.toString("hex")])
    )
  }
  // A part of the entries (`from` > 0): the same blocks, their `from` and `to` indices into the whole list.
  const from = Math.floor(list.length / 3)
  assert.deepStrictEqual(
    encodeBlocks(list, from, list.length).map((b) => [b.from, b.to, b.lastAt, b.data.toString("hex")]),
    encodeBlocks(list.slice(from), 0, list.length - from).map((b) => [
      b.from + from,
      b.to + from,
      b.lastAt,
      b.data.toString("hex")
    ])
  )
  for (const b of blocks) {
    assert.strictEqual(b.to, blockEnd(list, b.from, list.length))
    assert.isTrue(b.to - b.from === 1 || b.data.length <= blockBytes)
    assert.deepStrictEqual(decodeBlock(b.data.subarray(b.lastAt)), [list[b.to - 1]!])
  }
}
