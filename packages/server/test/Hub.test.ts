import type { PendingChange, StreamId } from "@dashstream/core"
import { afterEach, describe, expect, it, vi } from "vitest"
import { Hub } from "../src/internal/cluster/Hub.js"
import type { FromPrimary } from "../src/internal/cluster/protocol.js"

/**
 * The primary's rules of `serve --workers N` without processes: the live-update sequence (commit order whatever order
 * the workers' messages arrive in; a baseline; a gap when a number never comes), delivery to the workers that follow a
 * stream, the server's token buckets and event-stream slots, and requests answered by every other worker.
 */

const stored = (stream: number, n: number): PendingChange => ({
  stream: stream as StreamId,
  changes: [{ _tag: "Stored", entries: [{ ts: n as never, json: String(n), fresh: true }] }]
})

const setup = (workers: number, options: { rateLimit?: number | null; now?: () => number } = {}) => {
  const sent: Array<[number, FromPrimary]> = []
  const hub = new Hub({
    send: (worker, message) => void sent.push([worker, message]),
    rateLimit: options.rateLimit ?? null,
    now: options.now ?? (() => 0),
    sequenceWaitMs: 1_000,
    answerWaitMs: 2_000
  })
  for (let w = 1; w <= workers; w++) {
    hub.added(w)
    hub.ready(w, w === 1, false)
  }
  sent.length = 0
  return { hub, sent }
}

/** The values delivered to `worker`, in order (`gap` for a gap). */
const delivered = (sent: ReadonlyArray<[number, FromPrimary]>, worker: number): Array<string> =>
  sent
    .filter(([w]) => w === worker)
    .flatMap(([, m]) =>
      m.ds === "gap"
        ? ["gap"]
        : m.ds === "changes"
          ? m.changes.flatMap((c) =>
              c.changes.flatMap((x) => (x._tag === "Stored" ? x.entries.map((e) => e.json) : [x._tag]))
            )
          : []
    )

/** Worker `worker` follows `stream`; the other workers' acknowledgements are answered. */
const follow = (hub: Hub, sent: Array<[number, FromPrimary]>, worker: number, stream: number) => {
  hub.receive(worker, { ds: "follow", id: 100 + stream, stream })
  for (const [w, m] of sent.splice(0))
    if (m.ds === "followed" && m.id !== undefined) hub.receive(w, { ds: "reply", id: m.id })
}

afterEach(() => vi.useRealTimers())

describe("Hub: the live-update sequence", () => {
  it("delivers in sequence order whatever the arrival order, to the followers of each stream only", () => {
    const { hub, sent } = setup(3)
    follow(hub, sent, 1, 7)
    follow(hub, sent, 2, 7)
    follow(hub, sent, 3, 8)
    sent.length = 0
    hub.receive(1, { ds: "baseline", seq: 10 })
    hub.receive(2, { ds: "changes", seq: 12, changes: [stored(7, 12)] })
    hub.receive(3, { ds: "changes", seq: 13, changes: [stored(8, 13), stored(7, 13)] })
    expect(sent).toEqual([])
    hub.receive(1, { ds: "changes", seq: 11, changes: [stored(7, 11)] })
    expect(delivered(sent, 1)).toEqual(["11", "12", "13"])
    expect(delivered(sent, 2)).toEqual(["11", "12", "13"])
    expect(delivered(sent, 3)).toEqual(["13"])
    hub.close()
  })

  it("holds everything until the first baseline, and drops what the baseline covers", () => {
    const { hub, sent } = setup(2)
    follow(hub, sent, 1, 7)
    sent.length = 0
    hub.receive(2, { ds: "changes", seq: 6, changes: [stored(7, 6)] })
    hub.receive(2, { ds: "changes", seq: 5, changes: [stored(7, 5)] })
    expect(sent).toEqual([])
    hub.receive(1, { ds: "baseline", seq: 5 })
    expect(delivered(sent, 1)).toEqual(["6"])
    // A later baseline changes nothing; a skipped number is passed over.
    hub.receive(2, { ds: "baseline", seq: 100 })
    hub.receive(2, { ds: "skip", seq: 7 })
    hub.receive(2, { ds: "changes", seq: 8, changes: [stored(7, 8)] })
    expect(delivered(sent, 1)).toEqual(["6", "8"])
    hub.close()
  })

  it("a number that never comes: after the wait, a gap to everyone, then delivery goes on; the late one is dropped", () => {
    vi.useFakeTimers()
    const { hub, sent } = setup(2)
    follow(hub, sent, 1, 7)
    sent.length = 0
    hub.receive(1, { ds: "baseline", seq: 0 })
    hub.receive(2, { ds: "changes", seq: 2, changes: [stored(7, 2)] })
    vi.advanceTimersByTime(999)
    expect(sent).toEqual([])
    vi.advanceTimersByTime(2)
    expect(delivered(sent, 1)).toEqual(["gap", "2"])
    expect(delivered(sent, 2)).toEqual(["gap"])
    hub.receive(2, { ds: "changes", seq: 1, changes: [stored(7, 1)] })
    hub.receive(2, { ds: "changes", seq: 3, changes: [stored(7, 3)] })
    expect(delivered(sent, 1)).toEqual(["gap", "2", "3"])
    hub.close()
  })

  it("a widget deletion (unsequenced) is delivered after the changes held when it arrives", () => {
    const { hub, sent } = setup(2)
    follow(hub, sent, 1, 7)
    sent.length = 0
    hub.receive(1, { ds: "baseline", seq: 0 })
    hub.receive(2, { ds: "changes", seq: 2, changes: [stored(7, 2)] })
    hub.receive(2, { ds: "changes", changes: [{ stream: 7 as StreamId, changes: [{ _tag: "Deleted" }] }] })
    hub.receive(1, { ds: "changes", seq: 1, changes: [stored(7, 1)] })
    expect(delivered(sent, 1)).toEqual(["1", "2", "Deleted"])
    hub.close()
  })

  it("a follow is answered once every other worker has recorded it; a worker gone counts as recorded", () => {
    const { hub, sent } = setup(3)
    hub.receive(1, { ds: "follow", id: 1, stream: 9 })
    const asks = sent.splice(0)
    expect(asks.map(([w, m]) => [w, m.ds])).toEqual([
      [2, "followed"],
      [3, "followed"]
    ])
    const ask2 = asks[0]![1] as Extract<FromPrimary, { ds: "followed" }>
    hub.receive(2, { ds: "reply", id: ask2.id! })
    expect(sent).toEqual([])
    hub.removed(3)
    expect(sent.filter(([, m]) => m.ds === "reply")).toEqual([[1, { ds: "reply", id: 1 }]])
    // The worker that joins later is told what the others follow.
    hub.added(4)
    hub.ready(4, false, false)
    expect(sent.at(-1)).toEqual([4, { ds: "welcome", migrate: false, decimate: false, followed: [[9, 1]] }])
    hub.close()
  })
})

describe("Hub: limits per server", () => {
  it("token buckets: grants of several tokens, never more than the rate with its burst", () => {
    let now = 0
    const { hub, sent } = setup(2, { rateLimit: 10, now: () => now })
    hub.receive(1, { ds: "tokens", id: 1, key: "k", want: 4 })
    hub.receive(2, { ds: "tokens", id: 2, key: "k", want: 4 })
    hub.receive(1, { ds: "tokens", id: 3, key: "k", want: 4 })
    hub.receive(2, { ds: "tokens", id: 4, key: "k", want: 4 })
    expect(sent.map(([, m]) => (m as { value: { granted: number } }).value.granted)).toEqual([4, 4, 2, 0])
    expect((sent[3]![1] as { value: { waitMs: number } }).value.waitMs).toBeCloseTo(100)
    now = 250
    hub.receive(2, { ds: "tokens", id: 5, key: "k", want: 4 })
    expect((sent[4]![1] as { value: { granted: number } }).value.granted).toBe(2)
    hub.close()
  })

  it("event-stream slots are counted for the server and freed when a worker dies", () => {
    const { hub, sent } = setup(2)
    const take = (worker: number, id: number) => {
      hub.receive(worker, { ds: "slot", id, key: "k", max: 2 })
      return (sent.at(-1)![1] as { value: boolean }).value
    }
    expect([take(1, 1), take(2, 2), take(1, 3)]).toEqual([true, true, false])
    hub.receive(1, { ds: "unslot", key: "k" })
    expect(take(2, 4)).toBe(true)
    hub.removed(2)
    expect(take(1, 5)).toBe(true)
    hub.close()
  })

  it("an invalidation is answered once every other worker forgot; metrics gather the others' snapshots", () => {
    const { hub, sent } = setup(3)
    hub.receive(2, { ds: "invalidate", id: 1, what: { keys: true } })
    const forgets = sent.splice(0)
    expect(forgets.map(([w, m]) => [w, m.ds])).toEqual([
      [1, "forget"],
      [3, "forget"]
    ])
    for (const [w, m] of forgets) hub.receive(w, { ds: "reply", id: (m as { id: number }).id })
    expect(sent).toEqual([[2, { ds: "reply", id: 1 }]])
    sent.length = 0
    hub.receive(1, { ds: "metrics", id: 2 })
    for (const [w, m] of sent.splice(0)) hub.receive(w, { ds: "reply", id: (m as { id: number }).id, value: [w] })
    expect(sent).toEqual([[1, { ds: "reply", id: 2, value: [[2], [3]] }]])
    hub.close()
  })

  it("a console sign-out is passed to every other worker; a first run's admin token is given to every worker", () => {
    const { hub, sent } = setup(3)
    hub.receive(3, { ds: "invalidate", id: 7, what: { session: "SESSION" } })
    const forgets = sent.splice(0)
    expect(forgets.map(([w, m]) => [w, m.ds === "forget" ? m.what : m.ds])).toEqual([
      [1, { session: "SESSION" }],
      [2, { session: "SESSION" }]
    ])
    hub.close()
    const welcomed: Array<[number, FromPrimary]> = []
    const firstRun = new Hub({
      send: (w, m) => void welcomed.push([w, m]),
      rateLimit: null,
      now: () => 0,
      adminToken: "T"
    })
    for (let w = 1; w <= 2; w++) {
      firstRun.added(w)
      firstRun.ready(w, w === 1, w === 1)
    }
    expect(welcomed.map(([w, m]) => [w, m.ds === "welcome" ? m.adminToken : undefined])).toEqual([
      [1, "T"],
      [2, "T"]
    ])
    firstRun.close()
  })
})
