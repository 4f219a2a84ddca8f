import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Either, Fiber, Option, Runtime } from "effect"
import * as fc from "fast-check"
import { digestAccessKey, newAccessKey, newAccountId } from "../src/Account.js"
import { ChangeFeed, type ChangeListener, gapChange } from "../src/ChangeFeed.js"
import { followStart, followStream, type Follower, type FollowStart, type LiveSink } from "../src/Follow.js"
import type { PointOp } from "../src/Point.js"
import { StreamName } from "../src/StreamName.js"
import { StreamStore } from "../src/StreamStore.js"
import { formatTs, type Micros, micros } from "../src/Time.js"
import type { Widget } from "../src/Widget.js"
import { MemoryStore } from "../src/testing/index.js"

const T0 = 1_700_000_000_000_000

/** What a client holds after the events it received, and what it noticed. */
class Client {
  readonly view = new Map<number, string>()
  lastId: Micros | undefined = undefined
  deleted = false
  failed = false
  /** Violations: an entry sent twice, or server-assigned entries out of order within a connection. */
  readonly problems: Array<string> = []
  private lastFreshTs = -Infinity
  /** Server-assigned entries received on the current connection. */
  private seen = new Set<number>()

  sink(): LiveSink {
    this.lastFreshTs = -Infinity
    this.seen = new Set()
    return {
      entry: (ts, data) => {
        const parsed = JSON.parse(data) as { ts: number; point: { number: number } }
        assert.strictEqual(formatTs(ts), String(parsed.ts))
        const json = JSON.stringify(parsed.point)
        // Server-assigned points carry a number >= 0 (unique per push); timestamped ones a negative number.
        if (parsed.point.number >= 0) {
          // "None twice" holds within one connection. Across a reconnect an entry may come again: a replaced or
          // back-filled entry's id is its own (older) ts, so a client resuming from it is sent what followed it.
          if (this.seen.has(ts)) this.problems.push(`entry ${ts} sent twice`)
          this.seen.add(ts)
          if (ts <= this.lastFreshTs) this.problems.push(`entry ${ts} after ${this.lastFreshTs}`)
          this.lastFreshTs = ts
        }
        this.view.set(ts, json)
        this.lastId = ts
      },
      clear: (id) => {
        this.view.clear()
        this.lastId = id
      },
      deleted: () => {
        this.deleted = true
      },
      failed: () => {
        this.failed = true
      },
      writable: Effect.void
    }
  }
}

/** A memory store whose reads first run a few scripted actions, so that writes land while a backlog is read. */
const setup = Effect.gen(function* () {
  const stores = yield* MemoryStore.make
  const accountId = newAccountId()
  yield* stores.accountStore.createAccount({ id: accountId, name: "t", createdAt: T0 }, digestAccessKey(newAccessKey()))
  const widget = yield* stores.accountStore.createWidget(accountId, StreamName.make("s"), "sparkline", T0)
  let hook: () => void = () => {}
  let muted = false
  const listeners = new Set<ChangeListener>()
  const store: StreamStore["Type"] = {
    ...stores.streamStore,
    read: (stream, query) => Effect.suspend(() => (hook(), stores.streamStore.read(stream, query))),
    readLive: (stream, query) => Effect.suspend(() => (hook(), stores.streamStore.readLive(stream, query)))
  }
  // A feed that can lose changes (an outage of the notification connection) and then announce a Gap.
  const feed: ChangeFeed["Type"] = {
    subscribe: (stream, listener) =>
      Effect.map(
        stores.changeFeed.subscribe(stream, (change) => {
          if (!muted) listener(change)
        }),
        (unsubscribe) => {
          listeners.add(listener)
          return () => {
            listeners.delete(listener)
            unsubscribe()
          }
        }
      )
  }
  const runtime = yield* Effect.runtime<StreamStore | ChangeFeed>().pipe(
    Effect.provide(Context.make(StreamStore, store).pipe(Context.add(ChangeFeed, feed)))
  )
  return {
    stores,
    widget,
    runtime,
    setHook: (f: () => void) => {
      hook = f
    },
    mute: (on: boolean) => {
      muted = on
      if (!on) for (const l of [...listeners]) l(gapChange)
    }
  }
})

type Setup = Effect.Effect.Success<typeof setup>

const write = (s: Setup, widget: Widget, op: PointOp, now: number) =>
  Effect.runSync(Effect.either(s.stores.streamStore.write([{ widget, op, path: "point" }], micros(now))))

/** Lets forked catch-ups (after a Gap) run to the end: the memory store never waits, so a few turns are enough. */
const settle = () => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 5)))

const start = (s: Setup, from: FollowStart, client: Client, pageSize: number) =>
  followStream(s.widget.id, from, s.runtime, pageSize).start(client.sink())

const readAll = (s: Setup) =>
  Effect.map(s.stores.streamStore.read(s.widget.id, { since: micros(-1), limit: null }), (entries) =>
    entries.map((e) => [e.ts as number, e.json] as const)
  )

type Action =
  | { readonly _tag: "push"; readonly count: number }
  | { readonly _tag: "stamp"; readonly pick: number }
  | { readonly _tag: "clear" }
  | { readonly _tag: "reconnect" }
  | { readonly _tag: "outage"; readonly writes: number }

const action: fc.Arbitrary<Action> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ _tag: fc.constant("push" as const), count: fc.integer({ min: 1, max: 3 }) }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("stamp" as const), pick: fc.nat(1000) }) },
  { weight: 1, arbitrary: fc.constant({ _tag: "clear" as const }) },
  { weight: 2, arbitrary: fc.constant({ _tag: "reconnect" as const }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("outage" as const), writes: fc.integer({ min: 1, max: 4 }) }) }
)

describe("follow: backlog then live (docs/api.md section 10)", () => {
  it.effect(
    "property: random pushes, timestamped replacements, clears, outages and reconnects with the last id: the client ends with exactly what is stored, no server-assigned entry twice or out of order",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            fc.array(action, { minLength: 1, maxLength: 40 }),
            fc.array(fc.integer({ min: 0, max: 2 }), { minLength: 1, maxLength: 20 }),
            fc.integer({ min: 1, max: 4 }),
            fc.boolean(),
            (actions, interleave, pageSize, fromSince) =>
              Effect.runPromise(
                Effect.gen(function* () {
                  const s = yield* setup
                  let counter = 0
                  let clock = T0
                  const pushOne = () => {
                    // The clock sometimes stalls or goes back: server ts stay strictly increasing anyway.
                    clock += counter % 5 === 0 ? -3 : 7
                    const r = write(s, s.widget, { _tag: "Put", entries: [{ point: { number: counter++ } }] }, clock)
                    assert.isTrue(Either.isRight(r))
                  }
                  const apply = (a: Action) => {
                    switch (a._tag) {
                      case "push":
                        for (let i = 0; i < a.count; i++) pushOne()
                        return
                      case "stamp": {
                        // A timestamped point: on an existing entry's ts (a replacement) or between/after them.
                        const stored = Effect.runSync(readAll(s))
                        const ts =
                          stored.length > 0 && a.pick % 2 === 0 ? stored[a.pick % stored.length]![0] : T0 + a.pick * 3
                        const point = { number: -1 - counter++ }
                        write(s, s.widget, { _tag: "Put", entries: [{ point, ts: micros(ts) }] }, clock)
                        return
                      }
                      case "clear":
                        clock += 7
                        write(s, s.widget, { _tag: "Clear" }, clock)
                        return
                      case "outage":
                        s.mute(true)
                        for (let i = 0; i < a.writes; i++) pushOne()
                        s.mute(false)
                        return
                      case "reconnect":
                        return
                    }
                  }
                  const queue = [...actions]
                  let turn = 0
                  // Each storage read of a subscriber first runs 0-2 of the next writes.
                  s.setHook(() => {
                    const n = interleave[turn++ % interleave.length]!
                    for (let i = 0; i < n && queue.length > 0 && queue[0]!._tag !== "reconnect"; i++)
                      apply(queue.shift()!)
                  })
                  const client = new Client()
                  const first: FollowStart = fromSince
                    ? { _tag: "Since", since: micros(-1) }
                    : { _tag: "Resume", after: micros(-1) }
                  let follower: Follower = yield* start(s, first, client, pageSize)
                  while (queue.length > 0) {
                    const a = queue.shift()!
                    if (a._tag === "reconnect") {
                      follower.close()
                      yield* settle()
                      const from: FollowStart =
                        client.lastId === undefined ? first : { _tag: "Resume", after: client.lastId }
                      follower = yield* start(s, from, client, pageSize)
                    } else {
                      apply(a)
                    }
                  }
                  yield* settle()
                  follower.close()
                  const stored = yield* readAll(s)
                  assert.deepStrictEqual(client.problems, [])
                  assert.isFalse(client.failed)
                  assert.deepStrictEqual(
                    [...client.view.entries()].sort((a, b) => a[0] - b[0]),
                    stored.map(([ts, json]) => [ts, json])
                  )
                })
              )
          ),
          { numRuns: 300 }
        )
      ),
    // 300 runs take about a second alone; a shared, busy machine may take many times that.
    60_000
  )

  it.effect("without since or Last-Event-ID: the latest entry, then new ones", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const client = new Client()
      write(s, s.widget, { _tag: "Put", entries: [{ point: { number: 1 } }, { point: { number: 2 } }] }, T0)
      const follower = yield* start(s, { _tag: "Latest" }, client, 10)
      assert.deepStrictEqual([...client.view.values()], ['{"number":2}'])
      write(s, s.widget, { _tag: "Put", entries: [{ point: { number: 3 } }] }, T0 + 10)
      assert.deepStrictEqual([...client.view.values()], ['{"number":2}', '{"number":3}'])
      follower.close()
      write(s, s.widget, { _tag: "Put", entries: [{ point: { number: 4 } }] }, T0 + 20)
      assert.strictEqual(client.view.size, 2)
    })
  )

  it.effect("Recent: the most recent entries (at most count), then new ones", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const client = new Client()
      write(s, s.widget, { _tag: "Put", entries: [1, 2, 3].map((n) => ({ point: { number: n } })) }, T0)
      const follower = yield* start(s, { _tag: "Recent", count: 2 }, client, 10)
      assert.deepStrictEqual([...client.view.values()], ['{"number":2}', '{"number":3}'])
      write(s, s.widget, { _tag: "Put", entries: [{ point: { number: 4 } }] }, T0 + 10)
      assert.deepStrictEqual([...client.view.values()], ['{"number":2}', '{"number":3}', '{"number":4}'])
      follower.close()
    })
  )

  it.effect("a client resuming from an id older than the last clear gets the clear first, then what came after", () =>
    Effect.gen(function* () {
      const s = yield* setup
      write(s, s.widget, { _tag: "Put", entries: [{ point: { number: 1 } }] }, T0)
      write(s, s.widget, { _tag: "Clear" }, T0 + 10)
      write(s, s.widget, { _tag: "Put", entries: [{ point: { number: 2 } }] }, T0 + 20)
      const events: Array<string> = []
      const sink: LiveSink = {
        entry: (ts) => events.push(`entry ${ts}`),
        clear: (id) => events.push(`clear ${id}`),
        deleted: () => events.push("deleted"),
        failed: () => events.push("failed"),
        writable: Effect.void
      }
      const follower = yield* followStream(s.widget.id, { _tag: "Resume", after: micros(T0) }, s.runtime).start(sink)
      assert.deepStrictEqual(events, [`clear ${T0 + 10}`, `entry ${T0 + 20}`])
      follower.close()
      // Resuming from the clear's own id: nothing was missed.
      events.length = 0
      const again = yield* followStream(s.widget.id, { _tag: "Resume", after: micros(T0 + 10) }, s.runtime).start(sink)
      assert.deepStrictEqual(events, [`entry ${T0 + 20}`])
      again.close()
      // since is not a resume: no clear.
      events.length = 0
      const since = yield* followStream(s.widget.id, { _tag: "Since", since: micros(0) }, s.runtime).start(sink)
      assert.deepStrictEqual(events, [`entry ${T0 + 20}`])
      since.close()
    })
  )

  it.effect(
    "a backlog read while its client takes nothing: one page at a time, pages sized by bytes; more than maxPendingBytes of writes meanwhile lose nothing and send nothing twice",
    () =>
      Effect.gen(function* () {
        const s = yield* setup
        const big = "x".repeat(20_000)
        let now = T0
        const put = (n: number) =>
          write(s, s.widget, { _tag: "Put", entries: [{ point: { number: n, suffix: big } as never }] }, (now += 10))
        for (let n = 0; n < 100; n++) put(n)
        const reads: Array<number> = []
        s.setHook(() => void reads.push(0))
        const got: Array<number> = []
        let open = false
        const waiting: Array<() => void> = []
        const sink: LiveSink = {
          entry: (ts) => void got.push(ts),
          clear: () => {},
          deleted: () => {},
          failed: () => {},
          writable: Effect.async<void>((resume) => {
            if (open) return resume(Effect.void)
            waiting.push(() => resume(Effect.void))
          })
        }
        const started = Effect.runFork(
          followStream(s.widget.id, { _tag: "Since", since: micros(-1) }, s.runtime).start(sink)
        )
        yield* settle()
        // The first page is at most 8 entries; then the sink takes nothing and nothing more is read.
        assert.deepStrictEqual([reads.length, got.length], [1, 8])
        // 60 entries of ~20 KB (1.2 MB) stored meanwhile: more than the subscriber buffers.
        for (let n = 100; n < 160; n++) put(n)
        open = true
        for (const w of waiting.splice(0)) w()
        const follower = yield* Fiber.join(started)
        // Pages after the first hold about 128 KiB: 6 entries of ~20 KB.
        assert.isAbove(reads.length, 10)
        put(160)
        const stored = (yield* readAll(s)).map(([ts]) => ts)
        assert.strictEqual(stored.length, 161)
        assert.deepStrictEqual(got, stored)
        follower.close()
      })
  )

  it.effect("deleting the widget sends deleted and ends the subscription", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const client = new Client()
      yield* start(s, { _tag: "Latest" }, client, 10)
      yield* s.stores.accountStore.deleteWidget(s.widget.accountId, "s")
      assert.isTrue(client.deleted)
      // Deleted before the subscription starts: deleted at once.
      const late = new Client()
      yield* start(s, { _tag: "Latest" }, late, 10)
      assert.isTrue(late.deleted)
    })
  )

  it("followStart: Last-Event-ID wins over since; both must be non-negative numbers", () => {
    assert.deepStrictEqual(followStart({}), Either.right({ _tag: "Latest" }))
    assert.deepStrictEqual(followStart({ since: "0" }), Either.right({ _tag: "Since", since: micros(-1) }))
    assert.deepStrictEqual(
      followStart({ since: "5", lastEventId: "1700000000.5" }),
      Either.right({ _tag: "Resume", after: micros(1_700_000_000_500_000) })
    )
    assert.isTrue(Either.isLeft(followStart({ since: "-1" })))
    assert.isTrue(Either.isLeft(followStart({ lastEventId: "abc" })))
    assert.isTrue(Either.isLeft(followStart({ since: "" })))
    // A decimal number, as the export read's since: no hexadecimal, binary, sign or spaces.
    for (const since of ["0x10", "0b1", "+5", " 5", "Infinity"]) assert.isTrue(Either.isLeft(followStart({ since })))
    assert.isTrue(Either.isLeft(followStart({ lastEventId: "0x10" })))
    // Beyond the largest ts (MAX_SECONDS) a cursor would never deliver: refused.
    for (const cursor of ["1e20", "4294967296", "4294967295.5", "9".repeat(400)]) {
      assert.isTrue(Either.isLeft(followStart({ lastEventId: cursor })), cursor)
      assert.isTrue(Either.isLeft(followStart({ since: cursor })), cursor)
    }
    assert.deepStrictEqual(
      followStart({ lastEventId: "4294967295" }),
      Either.right({ _tag: "Resume", after: micros(4_294_967_295_000_000) })
    )
  })
})

// Keep Option and Runtime imports used by type positions above in strict builds.
void Option
void Runtime
