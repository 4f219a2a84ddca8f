import { type EntryWrite, parseLineProtocol, type StreamChange } from "@dashstream/core"
import { assert, describe, it } from "@effect/vitest"
import { Either } from "effect"
import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { mutationChanges } from "../src/ChangeFeed.js"

setFlagsFromString("--expose-gc")
const gc = runInNewContext("gc") as () => void

const usedHeap = (): number => {
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** A body of `lines` lines of one plain float each: their points' JSON is about 30 bytes apiece. */
const body = (lines: number, second: number): string =>
  Array.from(
    { length: lines },
    (_, k) => `m,k=${k % 10} v=${k + 0.012345678901} ${second}${String(k).padStart(3, "0")}\n`
  ).join("")

describe("mutationChanges", () => {
  it("gives each changed entry its point's JSON as a text of its own, not a slice of its line protocol body's", () => {
    // 40 bodies of 20,000 numbers: their JSON texts weigh about 24 MB together. A subscriber buffering one change
    // of each must not keep them alive (`LineBatch.numberJsonText`; docs/api.md section 10's memory bound).
    const bodies = 40
    const lines = 20_000
    const before = usedHeap()
    const kept: Array<StreamChange> = []
    for (let b = 0; b < bodies; b++) {
      const parsed = parseLineProtocol(body(lines, 1_000_000 + b), { precision: "ms", maxFieldValues: 100_000 })
      if (Either.isLeft(parsed)) assert.fail(parsed.left.message)
      const batch = parsed.right
      // What a line protocol write's entries carry (`LineProtocolRequest.decoded`): slices of one text.
      const start = new Int32Array(lines)
      const end = new Int32Array(lines)
      const text = batch.numberJsonText(
        Array.from({ length: lines }, (_, i) => i),
        start,
        end
      )
      const json = text.slice(start[7], end[7])
      assert.strictEqual(json, `{"number":${7 + 0.012345678901}}`)
      const entry: EntryWrite = { ts: batch.timestamp(7)!, point: { number: batch.numbers[7]! }, json, value: 7 }
      kept.push(...mutationChanges({ clear: false, clearedAt: null, entries: [entry], lastTs: entry.ts }, null))
    }
    const retained = usedHeap() - before
    assert.strictEqual(kept.length, bodies)
    for (const change of kept) {
      assert.strictEqual(change._tag, "Stored")
      if (change._tag === "Stored") assert.strictEqual(change.entries[0]!.json, `{"number":${7 + 0.012345678901}}`)
    }
    assert.isBelow(retained, 4 * 1024 * 1024, `the kept changes hold ${retained} bytes`)
  })
})
