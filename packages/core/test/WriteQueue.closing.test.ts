import { assert, describe, it } from "@effect/vitest"
import {
  type GroupResult,
  micros,
  PendingWrite,
  type StorageFailure,
  StorageUnavailable,
  WriteQueue
} from "@dashstream/core"
import { Effect, Exit, Fiber } from "effect"
import * as fc from "fast-check"
import {
  put,
  closedError,
  failure,
  invalid,
  recordingRunner,
  makeCalls,
  callNumber,
  numbers,
  limits,
  FakeTimers,
  type Started
} from "./writeQueueSupport.js"

// The WriteQueue on fake timers and fake runners: durability, waiting limits, closing, interruption, and the property
// over all of it.

describe("WriteQueue", () => {
  it("whenDurable: failed calls are answered at once, stored ones on acknowledge; the observer after", () => {
    const timers = new FakeTimers()
    const observed: Array<[number, number]> = []
    let acknowledge: ((failure: StorageFailure | undefined) => void) | undefined
    const queue = new WriteQueue(
      {
        run: (group, _turn, end) =>
          end(
            group.map((p) => (callNumber(p) === 1 ? invalid(1) : undefined)),
            (ack) => {
              acknowledge = ack
            }
          )
      },
      limits,
      { closed: closedError },
      { groupCommitted: (calls, points) => observed.push([calls, points]) },
      timers
    )
    const { answers, call } = makeCalls(queue)
    call(0, 3)
    call(1, 2)
    call(2, 4)
    timers.turn()
    assert.deepStrictEqual(answers, [[1, "InvalidPoint"]])
    assert.deepStrictEqual(observed, [])
    acknowledge!(undefined)
    assert.deepStrictEqual(answers.slice(1), [
      [0, "ok"],
      [2, "ok"]
    ])
    assert.deepStrictEqual(observed, [[3, 7]])
    call(3, 5)
    timers.turn()
    acknowledge!(failure)
    assert.deepStrictEqual(answers.at(-1), [3, "StorageError"])
    assert.deepStrictEqual(observed.at(-1), [1, 0])
  })

  it("a call queued longer than maxWaitMs fails with the waited error; withdrawn calls are dropped", () => {
    const timers = new FakeTimers()
    const { runner, started } = recordingRunner()
    const waited = (ms: number) => new StorageUnavailable({ cause: new Error(`waited ${ms}`) })
    const queue = new WriteQueue(
      runner,
      { ...limits, maxWaitMs: 100 },
      { closed: closedError, waited },
      undefined,
      timers
    )
    const { answers, call } = makeCalls(queue)
    call(0)
    timers.turn()
    call(1)
    timers.advance(50)
    call(2)
    timers.advance(60)
    assert.deepStrictEqual(answers, [[1, "StorageUnavailable"]])
    assert.strictEqual(queue.pending, 1)
    started[0]!.end([undefined])
    timers.turn()
    assert.deepStrictEqual(numbers(started[1]!.group), [2])
    started[1]!.end([undefined])
    timers.advance(200)
    assert.strictEqual(timers.intervals.filter((i) => i.live).length, 0, "the sweep stops with the queue empty")
  })

  it("close refuses later calls and runs every queued call; synchronous groups run back to back, defer unasked", () => {
    const timers = new FakeTimers()
    let deferAsked = 0
    const { runner, started } = recordingRunner((group) => group.map(() => undefined))
    const queue = new WriteQueue(
      {
        ...runner,
        defer: () => {
          deferAsked++
          return false
        }
      },
      { maxCalls: 2, maxEntries: 100 },
      { closed: closedError },
      undefined,
      timers
    )
    const { answers, call } = makeCalls(queue)
    for (let n = 0; n < 5; n++) call(n)
    let resolved = false
    void queue.close().then(() => {
      resolved = true
    })
    assert.deepStrictEqual(
      started.map((s) => numbers(s.group)),
      [[0, 1], [2, 3], [4]]
    )
    assert.isTrue(started.every((s) => s.turn.closing))
    assert.strictEqual(deferAsked, 0)
    assert.strictEqual(answers.length, 5)
    call(5)
    assert.deepStrictEqual(answers.at(-1), [5, "StorageUnavailable"])
    assert.isFalse(timers.turn(), "the scheduled turn was cancelled")
    return Promise.resolve().then(() => assert.isTrue(resolved))
  })

  it("close of an asynchronous queue resolves once every running and queued group has ended", async () => {
    const timers = new FakeTimers()
    const { runner, started } = recordingRunner()
    const queue = new WriteQueue(
      runner,
      { ...limits, maxCalls: 1, maxInFlight: 2 },
      { closed: closedError },
      undefined,
      timers
    )
    const { answers, call } = makeCalls(queue)
    for (let n = 0; n < 3; n++) call(n)
    timers.turn()
    let resolved = false
    const closing = queue.close().then(() => {
      resolved = true
    })
    started[0]!.end([undefined])
    assert.strictEqual(started.length, 3, "the queued call starts as soon as a group ends, without a turn")
    started[1]!.end([undefined])
    await Promise.resolve()
    assert.isFalse(resolved)
    started[2]!.end([undefined])
    await closing
    assert.deepStrictEqual(
      answers.map(([n]) => n),
      [0, 1, 2]
    )
  })

  it.effect("an interrupted call is withdrawn: its group forms without it and it is never answered", () =>
    Effect.gen(function* () {
      const timers = new FakeTimers()
      const { runner, started } = recordingRunner((group) => group.map(() => undefined))
      const queue = new WriteQueue(runner, limits, { closed: closedError }, undefined, timers)
      const fiber = Effect.runFork(queue.write(put(1), micros(0)))
      const kept = Effect.runFork(queue.write(put(2), micros(0)))
      assert.strictEqual(queue.pending, 2)
      yield* Fiber.interrupt(fiber)
      timers.turn()
      assert.deepStrictEqual(
        started.map((s) => s.group.map((p) => p.size)),
        [[2]]
      )
      assert.isTrue(Exit.isSuccess(yield* Fiber.await(kept)))
      assert.deepStrictEqual([queue.groups, queue.calls], [1, 1])
      yield* Effect.promise(() => queue.close())
      assert.strictEqual((yield* Effect.flip(queue.write(put(1), micros(0))))._tag, "StorageUnavailable")
    })
  )

  // A script of calls, turns, group ends and a close, against a runner that decides each call's answer from its
  // number; checked: every call answered exactly once, as decided, groups in arrival order within the limits, no more
  // than maxInFlight at once, close drains, counters and observer agree.
  it("property: no call lost or answered twice, arrival order, limits, close drains, counters", () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant("call" as const), entries: fc.integer({ min: 1, max: 6 }) }),
      fc.record({ op: fc.constant("turn" as const) }),
      fc.record({ op: fc.constant("end" as const), pick: fc.nat(), fail: fc.boolean() }),
      fc.record({ op: fc.constant("close" as const) })
    )
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 60 }),
        fc.integer({ min: 1, max: 3 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 3, max: 12 }),
        (steps, maxInFlight, synchronous, maxCalls, maxEntries) => {
          const timers = new FakeTimers()
          const running: Array<Started> = []
          const groups: Array<Array<number>> = []
          let observedCalls = 0
          let observedPoints = 0
          let maxRunning = 0
          // Call n fails alone when n % 5 === 3; a group fails whole when the script says so.
          const expected = new Map<number, string>()
          // The answer of each call of `group`, recorded in `expected`.
          const decide = (group: ReadonlyArray<PendingWrite>, fail: boolean): GroupResult => {
            const result = fail
              ? failure
              : group.map((p) => (callNumber(p) % 5 === 3 ? invalid(callNumber(p)) : undefined))
            group.forEach((p, i) =>
              expected.set(
                callNumber(p),
                Array.isArray(result) ? (result[i] === undefined ? "ok" : "InvalidPoint") : "StorageError"
              )
            )
            return result
          }
          const queue = new WriteQueue(
            {
              run: (group, turn, end) => {
                groups.push(numbers(group))
                if (synchronous) return end(decide(group, callNumber(group[0]!) % 7 === 6))
                running.push({ group, turn, end })
                maxRunning = Math.max(maxRunning, running.length)
              }
            },
            { maxCalls, maxEntries, maxInFlight: synchronous ? 1 : maxInFlight },
            { closed: closedError },
            {
              groupCommitted: (calls, points) => {
                observedCalls += calls
                observedPoints += points
              }
            },
            timers
          )
          const answers = new Map<number, Array<string>>()
          const sizes: Array<number> = []
          let closedAt = Infinity
          const call = (entries: number) => {
            const n = sizes.length
            sizes.push(entries)
            queue.writeDirect(
              put(entries).map((w) => ({ ...w, path: `call ${n}` })),
              micros(n),
              (error) => answers.set(n, [...(answers.get(n) ?? []), error === undefined ? "ok" : error._tag])
            )
          }
          const endOne = (pick: number, fail: boolean) => {
            if (running.length === 0) return
            const [started] = running.splice(pick % running.length, 1)
            const result = decide(started!.group, fail)
            started!.group.forEach((p, i) =>
              expected.set(
                callNumber(p),
                Array.isArray(result) ? (result[i] === undefined ? "ok" : "InvalidPoint") : "StorageError"
              )
            )
            started!.end(result)
          }
          for (const s of steps) {
            if (s.op === "call") {
              if (closedAt !== Infinity) expected.set(sizes.length, "StorageUnavailable")
              call(s.entries)
            } else if (s.op === "turn") timers.turn()
            else if (s.op === "end") endOne(s.pick, s.fail)
            else if (closedAt === Infinity) {
              closedAt = sizes.length
              void queue.close()
            }
          }
          // Close, then end whatever runs until nothing is left.
          void queue.close()
          for (let guard = 0; guard < 10_000 && (running.length > 0 || queue.pending > 0); guard++) {
            endOne(0, false)
            timers.turn()
          }
          assert.strictEqual(queue.pending, 0)
          assert.strictEqual(running.length, 0)
          // Every call answered exactly once, as decided.
          for (let n = 0; n < sizes.length; n++) {
            assert.deepStrictEqual(answers.get(n), [expected.get(n)], `call ${n}`)
          }
          // Groups: arrival order, within the limits, only calls made before the close.
          const grouped = groups.flat()
          assert.deepStrictEqual(
            grouped,
            [...grouped].sort((a, b) => a - b)
          )
          assert.strictEqual(grouped.length, Math.min(sizes.length, closedAt))
          for (const group of groups) {
            assert.isAtMost(group.length, maxCalls)
            const entries = group.reduce((sum, n) => sum + sizes[n]!, 0)
            assert.isTrue(group.length === 1 || entries <= maxEntries, `group of ${entries} entries`)
          }
          assert.isAtMost(maxRunning, synchronous ? 0 : maxInFlight)
          assert.deepStrictEqual(
            [queue.groups, queue.calls, observedCalls],
            [groups.length, grouped.length, grouped.length]
          )
          const storedEntries = [...expected].filter(([, a]) => a === "ok").reduce((sum, [n]) => sum + sizes[n]!, 0)
          assert.strictEqual(observedPoints, storedEntries)
        }
      ),
      { numRuns: 300 }
    )
  })
})
