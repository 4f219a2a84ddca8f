/** What the WriteQueue suites (WriteQueue*.test.ts) share: calls, fake timers and recording group runners. */
import {
  type GroupEnd,
  type GroupResult,
  type GroupRunner,
  type GroupTurn,
  InvalidPoint,
  micros,
  PendingWrite,
  type QueueTimers,
  StorageError,
  StorageUnavailable,
  type StreamWrite,
  type Widget,
  WriteQueue
} from "@dashstream/core"

/** A sparkline widget the writes go to. */
export const widget = { id: 1, accountId: "a", streamName: "s", type: "sparkline", createdAt: 0 } as unknown as Widget
/** A one-write call putting `entries` number points. */
export const put = (entries: number): ReadonlyArray<StreamWrite> => [
  {
    widget,
    op: { _tag: "Put", entries: Array.from({ length: entries }, (_, i) => ({ point: { number: i } })) },
    path: "point"
  }
]
/** A queued call of `entries` entries, answered nowhere. */
export const pending = (entries: number) => new PendingWrite(put(entries), micros(0), () => {})

// Timers that run only when told: `turn()` runs the immediates queued so far (one turn of the event loop),
// `advance(ms)` moves the clock and runs the timeouts and intervals that came due.
export class FakeTimers implements QueueTimers {
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

/** The errors a test's groups end with. */
export const closedError = new StorageUnavailable({ cause: new Error("closed") })
export const failure = new StorageError({ cause: new Error("group failed") })
export const invalid = (n: number) => new InvalidPoint({ path: `call ${n}`, message: "bad" })

/** A group a recording runner was given: its calls, and how to end it. */
export interface Started {
  readonly group: ReadonlyArray<PendingWrite>
  readonly turn: GroupTurn
  readonly end: GroupEnd
}

// A runner that records every group and ends it when the test says (asynchronous), or at once with `decide`
// (synchronous).
export const recordingRunner = (decide?: (group: ReadonlyArray<PendingWrite>) => GroupResult) => {
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
export const makeCalls = (queue: WriteQueue) => {
  const answers: Array<[call: number, answer: string]> = []
  const call = (n: number, entries = 1) =>
    queue.writeDirect(
      put(entries).map((w) => ({ ...w, path: `call ${n}` })),
      micros(n),
      (error) => answers.push([n, error === undefined ? "ok" : error._tag])
    )
  return { answers, call }
}
/** The number a call was made with (see makeCalls); those of a group's calls. */
export const callNumber = (pending: PendingWrite): number => Number(pending.writes[0]!.path.slice(5))
export const numbers = (group: ReadonlyArray<PendingWrite>) => group.map(callNumber)

/** The group limits of most tests. */
export const limits = { maxCalls: 1000, maxEntries: 20_000 }
