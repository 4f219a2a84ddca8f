import { assert, describe, it } from "@effect/vitest"
import { type GroupTurn, micros, retryGroup, takeGroup, WriteQueue, writeSize } from "@dashstream/core"
import {
  widget,
  put,
  pending,
  closedError,
  failure,
  invalid,
  recordingRunner,
  makeCalls,
  numbers,
  limits,
  FakeTimers
} from "./writeQueueSupport.js"

// takeGroup, and the WriteQueue on fake timers and fake runners: grouping, retries, defer. Durability, waiting,
// closing and the property: WriteQueue.closing.test.ts.

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

// ---- the queue (WriteQueue), on fake timers and fake runners ----

describe("WriteQueue", () => {
  it("the calls of one turn form one group; a group ended synchronously ends the turn, the next runs a turn later", () => {
    const timers = new FakeTimers()
    const { runner, started } = recordingRunner((group) => group.map(() => undefined))
    const queue = new WriteQueue(runner, { maxCalls: 3, maxEntries: 100 }, { closed: closedError }, undefined, timers)
    const { answers, call } = makeCalls(queue)
    for (let n = 0; n < 5; n++) call(n)
    assert.strictEqual(started.length, 0, "nothing runs before the turn")
    assert.strictEqual(queue.pending, 5)
    timers.turn()
    assert.deepStrictEqual(
      started.map((s) => numbers(s.group)),
      [[0, 1, 2]]
    )
    call(5)
    timers.turn()
    assert.deepStrictEqual(
      started.map((s) => numbers(s.group)),
      [
        [0, 1, 2],
        [3, 4, 5]
      ]
    )
    assert.deepStrictEqual(
      answers.map(([n]) => n),
      [0, 1, 2, 3, 4, 5]
    )
    assert.deepStrictEqual([queue.groups, queue.calls, queue.pending], [2, 6, 0])
    assert.deepStrictEqual(
      started.map((s) => s.turn.number),
      [0, 1]
    )
    assert.isFalse(timers.turn(), "no turn is left scheduled")
  })

  it("a continuation that throws is answered again with a StorageError carrying the throw; the rest of its group is answered", () => {
    const timers = new FakeTimers()
    const { runner, started } = recordingRunner()
    const queue = new WriteQueue(runner, limits, { closed: closedError }, undefined, timers)
    const answers: Array<[call: number, answer: string, cause?: unknown]> = []
    const thrown = new Error("the answer code failed")
    for (let n = 0; n < 3; n++) {
      queue.writeDirect(
        put(1).map((w) => ({ ...w, path: `call ${n}` })),
        micros(n),
        (error) => {
          answers.push([
            n,
            error === undefined ? "ok" : error._tag,
            error?._tag === "StorageError" ? error.cause : undefined
          ])
          if (n === 1 && error === undefined) throw thrown
        }
      )
    }
    timers.turn()
    // The group ends later, as in an adapter's promise handler: nothing may escape `end`.
    started[0]!.end([undefined, undefined, undefined])
    assert.deepStrictEqual(answers, [
      [0, "ok", undefined],
      [1, "ok", undefined],
      [1, "StorageError", thrown],
      [2, "ok", undefined]
    ])
    assert.strictEqual(queue.pending, 0)
  })

  it("asynchronous groups run up to maxInFlight at once; the calls behind them form the next group when one ends", () => {
    const timers = new FakeTimers()
    const { runner, started } = recordingRunner()
    const queue = new WriteQueue(
      runner,
      { ...limits, maxCalls: 2, maxInFlight: 2 },
      { closed: closedError },
      undefined,
      timers
    )
    const { answers, call } = makeCalls(queue)
    for (let n = 0; n < 5; n++) call(n)
    timers.turn()
    assert.deepStrictEqual(
      started.map((s) => numbers(s.group)),
      [
        [0, 1],
        [2, 3]
      ]
    )
    call(5)
    assert.isFalse(timers.turn(), "both groups run: no turn until one ends")
    started[1]!.end([undefined, invalid(3)])
    assert.deepStrictEqual(answers, [
      [2, "ok"],
      [3, "InvalidPoint"]
    ])
    timers.turn()
    assert.deepStrictEqual(numbers(started[2]!.group), [4, 5])
    started[0]!.end(failure)
    started[2]!.end([undefined, undefined])
    assert.deepStrictEqual(answers.slice(2), [
      [0, "StorageError"],
      [1, "StorageError"],
      [4, "ok"],
      [5, "ok"]
    ])
    assert.deepStrictEqual([queue.groups, queue.calls], [3, 6])
  })

  it("a group refused for now goes back to the head, later calls join it; tried again at once twice, then every ms", () => {
    const timers = new FakeTimers()
    let refuse = true
    const turns: Array<GroupTurn> = []
    const groups: Array<Array<number>> = []
    const queue = new WriteQueue(
      {
        run: (group, turn, end) => {
          turns.push(turn)
          groups.push(numbers(group))
          if (refuse) return retryGroup
          end(group.map(() => undefined))
        }
      },
      limits,
      { closed: closedError },
      undefined,
      timers
    )
    const { answers, call } = makeCalls(queue)
    timers.clock = 2
    call(0)
    timers.turn()
    timers.clock = 5
    call(1)
    timers.turn()
    timers.turn()
    assert.deepStrictEqual(groups, [[0], [0, 1], [0, 1]])
    assert.isFalse(timers.turn(), "after two immediate tries, a 1 ms timer")
    timers.advance(1)
    assert.deepStrictEqual(
      turns.map((t) => t.retryingMs),
      [undefined, 3, 3, 4]
    )
    assert.strictEqual(queue.retries, 4)
    refuse = false
    timers.advance(1)
    assert.deepStrictEqual(answers, [
      [0, "ok"],
      [1, "ok"]
    ])
    assert.deepStrictEqual([queue.groups, queue.calls], [1, 2])
    call(2)
    timers.turn()
    assert.strictEqual(turns.at(-1)!.retryingMs, undefined, "a group that ran ends the run of refusals")
  })

  it("defer holds the queue until resumed; the calls arriving meanwhile join one group", () => {
    const timers = new FakeTimers()
    // A sync runs after each group, until `resume` is called.
    let syncing = false
    let resume: (() => void) | undefined
    const { runner, started } = recordingRunner((group) => group.map(() => undefined))
    const queue = new WriteQueue(
      {
        ...runner,
        run: (group, turn, end) => {
          syncing = true
          return runner.run(group, turn, end)
        },
        defer: (r) => {
          if (!syncing) return false
          resume = r
          return true
        }
      },
      limits,
      { closed: closedError },
      undefined,
      timers
    )
    const { call } = makeCalls(queue)
    call(0)
    timers.turn()
    call(1)
    timers.turn()
    call(2)
    call(3)
    assert.isFalse(timers.turn(), "no turn is scheduled while deferred")
    assert.strictEqual(started.length, 1)
    syncing = false
    resume!()
    assert.deepStrictEqual(
      started.map((s) => numbers(s.group)),
      [[0], [1, 2, 3]]
    )
  })
})
