import { assert, describe, it } from "@effect/vitest"
import { micros, PendingWrite, type StreamWrite, takeGroup, type Widget, writeSize } from "@dashstream/core"

const widget = { id: 1, accountId: "a", streamName: "s", type: "sparkline", createdAt: 0 } as unknown as Widget
const put = (entries: number): ReadonlyArray<StreamWrite> => [
  {
    widget,
    op: { _tag: "Put", entries: Array.from({ length: entries }, (_, i) => ({ point: { number: i } })) },
    path: "point"
  }
]
const pending = (entries: number) => new PendingWrite(put(entries), micros(0), () => {})

describe("write queue", () => {
  it("writeSize counts a Put per entry and any other write as one", () => {
    assert.strictEqual(writeSize(put(7)), 7)
    assert.strictEqual(writeSize([{ widget, op: { _tag: "Delta", delta: 1 }, path: "point" }, ...put(2)]), 3)
  })

  it("takeGroup stops at maxCalls or maxEntries, drops cancelled calls, keeps arrival order", () => {
    const queue = [pending(1), pending(1), pending(1), pending(1)]
    queue[1]!.cancelled = true
    const [group, rest] = takeGroup(queue, { maxCalls: 2, maxEntries: 100 })
    assert.deepStrictEqual(group, [queue[0], queue[2]])
    assert.deepStrictEqual(rest, [queue[3]])

    const sized = [pending(3), pending(3), pending(1)]
    const [first, after] = takeGroup(sized, { maxCalls: 10, maxEntries: 5 })
    assert.deepStrictEqual(first, [sized[0]])
    assert.deepStrictEqual(after, [sized[1], sized[2]])
  })

  it("takeGroup gives a call larger than maxEntries a group of its own", () => {
    const queue = [pending(50), pending(1)]
    const [group, rest] = takeGroup(queue, { maxCalls: 10, maxEntries: 5 })
    assert.deepStrictEqual(group, [queue[0]])
    assert.deepStrictEqual(rest, [queue[1]])
  })
})
