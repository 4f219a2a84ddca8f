import { assert, describe, it } from "@effect/vitest"
import {
  type GroupEnd,
  type GroupResult,
  type GroupRunner,
  type GroupTurn,
  InvalidPoint,
  micros,
  PendingWrite,
  type QueueTimers,
  retryGroup,
  StorageError,
  type StorageFailure,
  StorageUnavailable,
  type StreamWrite,
  takeGroup,
  type Widget,
  WriteQueue,
  writeSize
} from "@dashstream/core"
import { Effect, Exit, Fiber } from "effect"
import * as fc from "fast-check"

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

// ---- the queue (WriteQueue), on fake timers and fake runners ----

// Timers that run only when told: `turn()` runs the immediates queued so far (one turn of the event loop),
// `advance(ms)` moves the clock and runs the timeouts and intervals that came due.
class FakeTimers implements QueueTimers {
  clock = 0
  immediates: Array<{ run: () => void; live: boolean }> = []
  timeouts: Array<{ at: number; run: () => void; live: boolean }> = []
  intervals: Array<{ every: number; next: number; run: () => void; live: boolean }> = []
  readonly immediate = (run: () => void) => {
    const entry = { run, live: true }
    this.immediates.push(entry)
    return () => {
      entry.live = false
    }
  }
  readonly after = (ms: number, run: () => void) => {
    const entry = { at: this.clock + ms, run, live: true }
    this.timeouts.push(entry)
    return () => {
      entry.live = false
    }
  }
  readonly every = (ms: number, run: () => void) => {
    const entry = { every: ms, next: this.clock + ms, run, live: true }
    this.intervals.push(entry)
    return () => {
      entry.live = false
    }
  }
  readonly now = () => this.clock
  /** Runs one turn; returns whether anything ran. */
  turn(): boolean {
    const due = this.immediates.filter((e) => e.live)
    this.immediates = []
    for (const e of due) e.run()
    return due.length > 0
  }
  advance(ms: number): void {
    const end = this.clock + ms
    for (;;) {
      const live = [
        ...this.timeouts.filter((t) => t.live).map((t) => ({ at: t.at, t, i: undefined })),
        ...this.intervals.filter((i) => i.live).map((i) => ({ at: i.next, t: undefined, i }))
      ]
        .filter((x) => x.at <= end)
        .sort((a, b) => a.at - b.at)
      if (live.length === 0) break
      const first = live[0]!
      this.clock = first.at
      if (first.t !== undefined) {
        first.t.live = false
        first.t.run()
      } else {
        first.i!.next += first.i!.every
        first.i!.run()
      }
    }
    this.clock = end
    this.timeouts = this.timeouts.filter((t) => t.live)
  }
  get liveTimers(): number {
    return this.immediates.filter((e) => e.live).length + this.timeouts.filter((t) => t.live).length
  }
}

const closedError = new StorageUnavailable({ cause: new Error("closed") })
const failure = new StorageError({ cause: new Error("group failed") })
const invalid = (n: number) => new InvalidPoint({ path: `call ${n}`, message: "bad" })

interface Started {
  readonly group: ReadonlyArray<PendingWrite>
  readonly turn: GroupTurn
  readonly end: GroupEnd
}

// A runner that records every group and ends it when the test says (asynchronous), or at once with `decide`
// (synchronous).
const recordingRunner = (decide?: (group: ReadonlyArray<PendingWrite>) => GroupResult) => {
  const started: Array<Started> = []
  const runner: GroupRunner = {
    run: (group, turn, end) => {
      started.push({ group, turn, end })
      if (decide !== undefined) end(decide(group))
    }
  }
  return { runner, started }
}

// Calls are told apart by the number of entries of their one Put, and answered into `answers`.
const makeCalls = (queue: WriteQueue) => {
  const answers: Array<[call: number, answer: string]> = []
  const call = (n: number, entries = 1) =>
    queue.writeDirect(
      put(entries).map((w) => ({ ...w, path: `call ${n}` })),
      micros(n),
      (error) => answers.push([n, error === undefined ? "ok" : error._tag])
    )
  return { answers, call }
}
const callNumber = (pending: PendingWrite): number => Number(pending.writes[0]!.path.slice(5))
const numbers = (group: ReadonlyArray<PendingWrite>) => group.map(callNumber)

const limits = { maxCalls: 1000, maxEntries: 20_000 }

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
