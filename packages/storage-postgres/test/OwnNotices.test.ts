import { micros, type PointOp, type StreamChange, type Widget } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import type pg from "pg"
import { parseUrl } from "../src/index.js"
import { defaultGroupLimits, GroupCommit } from "../src/internal/groupCommit.js"
import { defaultListenerOptions, Listener } from "../src/internal/listener.js"
import { channelName } from "../src/internal/notify.js"
import { maxKept, OwnNotices } from "../src/internal/ownNotices.js"
import { makePool } from "../src/internal/pool.js"
import { openTestDatabase, withSchema } from "../src/testing/index.js"
import {
  delta,
  flat,
  freshSchema,
  gatedPool,
  ownPool,
  processes,
  put,
  readAll,
  T0,
  until,
  widgets,
  write
} from "./fixtures.js"

// Never skipped: without a PostgreSQL server, opening the database throws and this file fails.
const db = await openTestDatabase()
afterAll(() => db.close())
const url = db.url

const stored = (n: number): ReadonlyArray<StreamChange> => [
  { _tag: "Stored", entries: [{ ts: micros(n), json: `{"number":${n}}`, fresh: true }] }
]

describe("OwnNotices", () => {
  it("gives each kept change once, per backend pid and payload, in the order kept", () => {
    const own = new OwnNotices(() => true)
    const [a, b, c] = [stored(1), stored(2), stored(3)]
    own.expect(7, [
      { payload: "p", changes: a },
      { payload: "q", changes: b }
    ])
    own.expect(7, [{ payload: "p", changes: c }])
    assert.strictEqual(own.size, 3)
    assert.isUndefined(own.take(8, "p"))
    assert.strictEqual(own.take(7, "p"), a)
    assert.strictEqual(own.take(7, "p"), c)
    assert.isUndefined(own.take(7, "p"))
    assert.strictEqual(own.take(7, "q"), b)
    assert.strictEqual(own.size, 0)
  })

  it("forgets what a failed transaction withdraws, and everything on clear or past its bound", () => {
    const own = new OwnNotices(() => true)
    const [a, b] = [stored(1), stored(2)]
    const first = [{ payload: "p", changes: a }]
    own.expect(7, first)
    own.expect(7, [{ payload: "p", changes: b }])
    own.withdraw(7, first)
    assert.strictEqual(own.take(7, "p"), b)
    own.expect(7, first)
    own.clear()
    assert.isUndefined(own.take(7, "p"))
    for (let i = 0; i < maxKept; i++) own.expect(1, [{ payload: String(i), changes: a }])
    assert.strictEqual(own.size, maxKept)
    own.expect(1, [{ payload: "last", changes: b }])
    assert.strictEqual(own.size, 1)
    assert.isUndefined(own.take(1, "0"))
    assert.strictEqual(own.take(1, "last"), b)
  })
})

/** A listener on `schema` over `pool` (started), closed with the scope. */
const listening = (config: Parameters<typeof makePool>[0], pool: pg.Pool, schema: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const listener = new Listener(config, pool, channelName(schema), { ...defaultListenerOptions, warn: () => {} })
      await listener.start()
      return listener
    }),
    (listener) => Effect.promise(() => listener.close())
  )

describe("a process's own changes (docs/api.md section 10)", () => {
  it.scopedLive(
    "are published from what its write path kept, the same changes another process reads back, no read made",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("own")
        const [setup] = yield* processes(url, schema, 1)
        const [g] = yield* widgets(setup!, [["line-graph", "g"]])
        const config = yield* parseUrl(withSchema(url, schema))
        const pool = makePool(config)
        yield* Effect.addFinalizer(() => Effect.promise(() => pool.end()))
        // This process: its listener and the group commit that keeps its changes for it.
        const mine = yield* listening(config, pool, schema)
        const groups = yield* Effect.acquireRelease(
          Effect.sync(() => new GroupCommit(pool, defaultGroupLimits, channelName(schema), undefined, mine.own)),
          (g) => Effect.promise(() => g.close())
        )
        // Another process's listener: it reads every change back.
        const other = yield* listening(config, pool, schema)
        const received = { mine: [] as Array<StreamChange>, other: [] as Array<StreamChange> }
        mine.fanout.subscribe(g!.id, (c) => received.mine.push(c))
        other.fanout.subscribe(g!.id, (c) => received.other.push(c))
        const run = (ops: ReadonlyArray<PointOp>, offset: number) =>
          groups.write(
            ops.map((op) => ({ widget: g as Widget, op, path: "point" })),
            micros(T0 + offset)
          )
        // Each step waits until both received it: a read-back then sees the entries as this step left them.
        let lines = 0
        const step = (ops: ReadonlyArray<PointOp>, offset: number, adds: number) =>
          Effect.gen(function* () {
            yield* run(ops, offset)
            lines += adds
            yield* until(
              `${lines} lines`,
              () => flat(received.mine).length >= lines && flat(received.other).length >= lines
            )
          })
        yield* step([put(1)], 0, 1)
        yield* step([put(2), put(3)], 10, 2)
        const first = yield* readAll(setup!, g!)
        // A replacement, a replacement with a new entry, a back-fill below the newest.
        const at = (ts: number, n: number): PointOp => ({
          _tag: "Put",
          entries: [{ point: { number: n }, ts: micros(ts) }]
        })
        yield* step([at(first[0]!.ts, 11)], 20, 1)
        yield* step([at(first[1]!.ts, 12), put(4)], 30, 2)
        yield* step([at(first[0]!.ts + 1, 5)], 40, 1)
        yield* step([delta(10)], 50, 1)
        // A clear; a clear and an entry; a clear and an entry below the clear's ts.
        yield* step([{ _tag: "Clear" }], 60, 1)
        yield* step([{ _tag: "Clear" }, put(6)], 70, 2)
        const last = (yield* readAll(setup!, g!))[0]!.ts
        yield* step([{ _tag: "Clear" }, at(last + 1, 7)], 1_000_000, 2)
        assert.deepStrictEqual(flat(received.mine), flat(received.other))
        assert.strictEqual(flat(received.mine).length, 13)
        assert.strictEqual(mine.stats.own, mine.stats.notices)
        assert.strictEqual(mine.stats.reads, 0)
        assert.strictEqual(other.stats.own, 0)
        assert.isAbove(other.stats.reads, 0)
        assert.strictEqual(mine.own.size, 0)
      })
  )

  it.scopedLive("wait for the changes of another process committed before them, whose read is still pending", () =>
    Effect.gen(function* () {
      const schema = freshSchema("own")
      const [elsewhere] = yield* processes(url, schema, 1)
      const [x, y] = yield* widgets(elsewhere!, [
        ["number", "x"],
        ["number", "y"]
      ])
      const config = yield* parseUrl(withSchema(url, schema))
      const pool = yield* ownPool(url, schema)
      // The listener's reads wait for the gate.
      const gate = gatedPool(pool)
      const mine = yield* listening(config, gate.pool, schema)
      const groups = yield* Effect.acquireRelease(
        Effect.sync(() => new GroupCommit(pool, defaultGroupLimits, channelName(schema), undefined, mine.own)),
        (g) => Effect.promise(() => g.close())
      )
      const received: Array<string> = []
      for (const [w, name] of [
        [x!, "x"],
        [y!, "y"]
      ] as const)
        mine.fanout.subscribe(w.id, (c) => {
          for (const line of flat([c])) received.push(`${name} ${line.replace(/^entry \d+ /, "")}`)
        })
      // x through the other process (read back, held at the gate), then y through this one (kept), twice.
      yield* write(elsewhere!, [[x!, put(1)]], 0)
      yield* groups.write([{ widget: y!, op: put(2), path: "point" }], micros(T0 + 10))
      yield* write(elsewhere!, [[x!, put(3)]], 20)
      yield* groups.write([{ widget: y!, op: put(4), path: "point" }], micros(T0 + 30))
      yield* until("the four notifications", () => mine.stats.notices === 4)
      yield* Effect.sleep("200 millis")
      assert.deepStrictEqual(received, [])
      gate.open()
      yield* until("four entries", () => received.length >= 4)
      const json = (n: number) => JSON.stringify({ number: n })
      assert.deepStrictEqual(received, [
        `x fresh ${json(1)}`,
        `y fresh ${json(2)}`,
        `x fresh ${json(3)}`,
        `y fresh ${json(4)}`
      ])
      assert.strictEqual(mine.stats.own, 2)
    })
  )

  it.scopedLive(
    "between notifications of another process queued behind a read of their stream, are published once",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("own")
        const [elsewhere] = yield* processes(url, schema, 1)
        const [x] = yield* widgets(elsewhere!, [["number", "x"]])
        const config = yield* parseUrl(withSchema(url, schema))
        const pool = yield* ownPool(url, schema)
        const gate = gatedPool(pool)
        const mine = yield* listening(config, gate.pool, schema)
        const groups = yield* Effect.acquireRelease(
          Effect.sync(() => new GroupCommit(pool, defaultGroupLimits, channelName(schema), undefined, mine.own)),
          (g) => Effect.promise(() => g.close())
        )
        const received: Array<StreamChange> = []
        mine.fanout.subscribe(x!.id, (c) => received.push(c))
        // Another process's append (its read held at the gate), another's, this process's own, another's: the two
        // behind the held read would be read together, as one range that holds this process's entry too.
        yield* write(elsewhere!, [[x!, put(1)]], 0)
        yield* until("the first notification", () => mine.stats.notices === 1)
        yield* write(elsewhere!, [[x!, put(2)]], 10)
        yield* groups.write([{ widget: x!, op: put(3), path: "point" }], micros(T0 + 20))
        yield* write(elsewhere!, [[x!, put(4)]], 30)
        yield* until("the four notifications", () => mine.stats.notices === 4)
        gate.open()
        yield* until("four entries", () => flat(received).length >= 4)
        yield* Effect.sleep("200 millis")
        const stored = yield* readAll(elsewhere!, x!)
        assert.deepStrictEqual(
          flat(received),
          stored.map((e) => `entry ${e.ts} fresh ${JSON.stringify(e.point)}`)
        )
        assert.strictEqual(mine.stats.own, 1)
      })
  )
})
