import {
  AccountStore,
  ChangeFeed,
  gapChange,
  micros,
  type StreamChange,
  StreamStore,
  type Widget
} from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import * as net from "node:net"
import pg from "pg"
import { layer, migrate, parseUrl } from "../src/index.js"
import { defaultListenerOptions, Listener } from "../src/internal/listener.js"
import { channelName } from "../src/internal/notify.js"
import { makePool } from "../src/internal/pool.js"
import { openTestDatabase, startEmbeddedPostgres, withSchema } from "../src/testing/index.js"
import {
  delta,
  flat,
  freshSchema,
  gatedPool,
  ownPool,
  processes,
  put,
  readAll,
  type Stores,
  T0,
  until,
  widgets,
  write
} from "./fixtures.js"

// Never skipped: without a PostgreSQL server, opening the database throws and this file fails.
const db = await openTestDatabase()
afterAll(() => db.close())
const url = db.url

/** Subscribes on `on` to `widget`'s stream; the changes received, in order. */
const follow = (on: Stores, widget: Widget) =>
  Effect.gen(function* () {
    const received: Array<StreamChange> = []
    const unsubscribe = yield* Context.get(on, ChangeFeed).subscribe(widget.id, (c) => received.push(c))
    yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
    return received
  })

const liveState = (on: Stores, widget: Widget) =>
  Effect.map(Context.get(on, StreamStore).readLive(widget.id, { _tag: "Recent", count: 1 }), (page) =>
    Option.map(page, ({ lastClear }) => ({ lastClear }))
  )

const sql = async (text: string, values: Array<unknown> = []) => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query(text, values)
  } finally {
    await client.end()
  }
}

/** Terminates the listening connections named `application_name` of this database; how many there were. */
const terminateListener = (applicationName: string) =>
  sql(
    `select pg_terminate_backend(pid) from pg_stat_activity
     where datname = current_database() and application_name = $1 and query like 'LISTEN%'`,
    [applicationName]
  ).then((r) => r.rowCount ?? 0)

/**
 * A TCP proxy on 127.0.0.1 to the PostgreSQL server of `target` that can play an outage: `down` drops every
 * connection through it and resets new ones until `up`.
 */
const outageProxy = async (target: URL) => {
  let isDown = false
  const sockets = new Set<net.Socket>()
  const server = net.createServer((client) => {
    if (isDown) return void client.resetAndDestroy()
    const upstream = net.connect(Number(target.port || 5432), target.hostname)
    const end = () => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on("error", end)
      socket.on("close", end)
    }
    client.pipe(upstream)
    upstream.pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as net.AddressInfo).port
  const dropAll = () => {
    for (const socket of sockets) socket.resetAndDestroy()
  }
  return {
    /** `url` with the proxy's host and port. */
    through: (url: string) => {
      const u = new URL(url)
      u.hostname = "127.0.0.1"
      u.port = String(port)
      return u.toString()
    },
    down: () => {
      isDown = true
      dropAll()
    },
    up: () => {
      isDown = false
    },
    close: () =>
      new Promise<void>((resolve) => {
        dropAll()
        server.close(() => resolve())
      })
  }
}

/**
 * Writes through `writer` and measures how long after its acknowledgement `received` (a subscriber's changes) shows
 * it: the entry itself, or a `Gap` published after the acknowledgement (the subscriber then reads it from the database).
 */
const ackToReceived = (writer: Stores, widget: Widget, received: ReadonlyArray<StreamChange>, offset: number) =>
  Effect.gen(function* () {
    yield* write(writer, [[widget, delta(1)]], offset)
    const acked = performance.now()
    const before = received.length
    yield* until("the entry or a Gap", () =>
      received.slice(before).some((c) => c._tag === "Gap" || c._tag === "Stored")
    )
    return performance.now() - acked
  })

describe("live updates across processes (docs/api.md section 10)", () => {
  it.scopedLive(
    "a subscriber of one process receives the writes, clears and deletion made through another, in order",
    () =>
      Effect.gen(function* () {
        const [a, b] = yield* processes(url, freshSchema("live"), 2)
        const [g, other] = yield* widgets(b!, [
          ["line-graph", "g"],
          ["number", "n"]
        ])
        const received = yield* follow(a!, g!)
        const unrelated = yield* follow(a!, other!)
        // The entries a notification names are read when it arrives, so a later write to them may show instead: each
        // step waits for the previous one to be received, for a deterministic transcript.
        const receivedAll = (n: number) => until(`${n} changes`, () => flat(received).length >= n)
        // Server-assigned ts: new entries.
        yield* write(b!, [[g!, put(1)]], 0)
        yield* receivedAll(1)
        yield* write(b!, [[g!, put(2)]], 10)
        yield* receivedAll(2)
        const before = yield* readAll(b!, g!)
        assert.strictEqual(before.length, 2)
        // A timestamped push replacing the first entry: not new.
        yield* write(b!, [[g!, { _tag: "Put", entries: [{ point: { number: 11 }, ts: micros(before[0]!.ts) }] }]], 20)
        yield* receivedAll(3)
        // A push with a replaced entry and a new one, in one write.
        yield* write(
          b!,
          [
            [
              g!,
              {
                _tag: "Put",
                entries: [{ point: { number: 12 }, ts: micros(before[1]!.ts) }, { point: { number: 13 } }]
              }
            ]
          ],
          30
        )
        yield* receivedAll(5)
        const third = (yield* readAll(b!, g!))[2]!.ts
        yield* write(b!, [[g!, { _tag: "Clear" }]], 40)
        const cleared = Option.getOrThrow(yield* liveState(a!, g!)).lastClear!
        assert.isNotNull(cleared)
        yield* receivedAll(6)
        yield* write(b!, [[g!, put(3)]], 50)
        yield* receivedAll(7)
        const fourth = (yield* readAll(b!, g!))[0]!.ts
        // A clear and a push in one write: the clear, then the entry.
        yield* write(
          b!,
          [
            [g!, { _tag: "Clear" }],
            [g!, put(4)]
          ],
          60
        )
        const lastClear = Option.getOrThrow(yield* liveState(a!, g!)).lastClear!
        const fifth = (yield* readAll(b!, g!))[0]!.ts
        yield* receivedAll(9)
        // A clear (at the receive time, 1 s later) and a timestamped entry above every earlier ts but below the clear's:
        // not new (a subscriber that was sent the clear holds ids up to it).
        yield* write(
          b!,
          [
            [g!, { _tag: "Clear" }],
            [g!, { _tag: "Put", entries: [{ point: { number: 5 }, ts: micros(fifth + 1) }] }]
          ],
          1_000_000
        )
        yield* receivedAll(11)
        yield* Context.get(b!, AccountStore).deleteWidget(g!.accountId, g!.streamName)
        yield* until("the deletion", () => received.some((c) => c._tag === "Deleted"))
        const json = (n: number) => JSON.stringify({ number: n })
        assert.deepStrictEqual(flat(received), [
          `entry ${before[0]!.ts} fresh ${json(1)}`,
          `entry ${before[1]!.ts} fresh ${json(2)}`,
          `entry ${before[0]!.ts} old ${json(11)}`,
          `entry ${before[1]!.ts} old ${json(12)}`,
          `entry ${third} fresh ${json(13)}`,
          `clear ${cleared}`,
          `entry ${fourth} fresh ${json(3)}`,
          `clear ${lastClear}`,
          `entry ${fifth} fresh ${json(4)}`,
          `clear ${T0 + 1_000_000}`,
          `entry ${fifth + 1} old ${json(5)}`,
          "Deleted"
        ])
        // The clear's ts is above every ts it cleared and below the next server ts.
        assert.isAbove(third, before[1]!.ts)
        assert.isAbove(cleared, third)
        assert.isAbove(fourth, cleared)
        assert.isAbove(lastClear, fourth)
        assert.isAbove(fifth, lastClear)
        // Every entry change is a Stored; nothing of the other stream leaked.
        assert.deepStrictEqual(unrelated, [])
      })
  )

  it.scopedLive("a timestamped push replacing scattered entries sends those entries only, not the ones between", () =>
    Effect.gen(function* () {
      const [a, b] = yield* processes(url, freshSchema("live"), 2)
      const [g] = yield* widgets(b!, [["line-graph", "g"]])
      const received = yield* follow(a!, g!)
      for (let i = 0; i < 5; i++) yield* write(b!, [[g!, put(i)]], i)
      yield* until("the first entries", () => flat(received).length === 5)
      received.length = 0
      const [e0, , e2, , e4] = yield* readAll(b!, g!)
      const at = (e: { ts: number }, n: number) => ({ point: { number: n }, ts: micros(e.ts) })
      yield* write(b!, [[g!, { _tag: "Put", entries: [at(e0!, 10), at(e2!, 12), at(e4!, 14)] }]], 10)
      yield* write(b!, [[g!, put(5)]], 20)
      const last = (yield* readAll(b!, g!))[5]!
      yield* until("the entries", () => flat(received).length >= 4)
      const json = (n: number) => JSON.stringify({ number: n })
      assert.deepStrictEqual(flat(received), [
        `entry ${e0!.ts} old ${json(10)}`,
        `entry ${e2!.ts} old ${json(12)}`,
        `entry ${e4!.ts} old ${json(14)}`,
        `entry ${last.ts} fresh ${json(5)}`
      ])
    })
  )

  it.scopedLive(
    "changes of different streams are published in commit order, also when an earlier stream's read returns last",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("live")
        const [b] = yield* processes(url, schema, 1)
        const [x, y] = yield* widgets(b!, [
          ["number", "x"],
          ["number", "y"]
        ])
        const config = yield* parseUrl(withSchema(url, schema))
        // The listener's queries that read `x` wait for the gate; the others return at once.
        const gate = gatedPool(yield* ownPool(url, schema), (q) => (q.values[0] as Array<number>).includes(x!.id))
        const listener = new Listener(config, gate.pool, channelName(schema), {
          ...defaultListenerOptions,
          warn: () => {}
        })
        yield* Effect.addFinalizer(() => Effect.promise(() => listener.close()))
        yield* Effect.promise(() => listener.start())
        const received: Array<string> = []
        for (const [w, name] of [
          [x!, "x"],
          [y!, "y"]
        ] as const)
          listener.fanout.subscribe(w.id, (c) => {
            for (const line of flat([c])) received.push(`${name} ${line.replace(/^entry \d+ /, "")}`)
          })
        // Five acknowledged writes, one after the other: x, y, x, y, x.
        for (let i = 0; i < 5; i++) yield* write(b!, [[i % 2 === 0 ? x! : y!, delta(i + 1)]], i)
        yield* until("the five notifications", () => listener.stats.notices === 5)
        yield* Effect.sleep("200 millis")
        // Nothing is published while x's first read, the oldest, is pending.
        assert.deepStrictEqual(received, [])
        gate.open()
        yield* until("five entries", () => received.length >= 5)
        const json = (n: number) => JSON.stringify({ number: n })
        assert.deepStrictEqual(received, [
          `x fresh ${json(1)}`,
          `y fresh ${json(2)}`,
          `x fresh ${json(4)}`,
          `y fresh ${json(6)}`,
          `x fresh ${json(9)}`
        ])
        // x's second and third notifications queued behind its first read were read together, and still published
        // each at its own place.
        assert.strictEqual(gate.counts.held, 2)
      })
  )

  it.scopedLive("one group's notifications of several followed streams are read back in one query", () =>
    Effect.gen(function* () {
      const schema = freshSchema("live")
      const [b] = yield* processes(url, schema, 1)
      const names = Array.from({ length: 12 }, (_, i) => `s${i}`)
      const ws = yield* widgets(
        b!,
        names.map((name) => ["number", name] as const)
      )
      const config = yield* parseUrl(withSchema(url, schema))
      const pool = makePool(config)
      yield* Effect.addFinalizer(() => Effect.promise(() => pool.end()))
      const listener = new Listener(config, pool, channelName(schema), { ...defaultListenerOptions, warn: () => {} })
      yield* Effect.addFinalizer(() => Effect.promise(() => listener.close()))
      yield* Effect.promise(() => listener.start())
      const received: Array<string> = []
      ws.forEach((w, i) =>
        listener.fanout.subscribe(w.id, (c) => {
          for (const line of flat([c])) received.push(`${names[i]} ${line.replace(/^entry \d+ /, "")}`)
        })
      )
      // One acknowledged write of every stream: one group, one notification a stream.
      yield* write(
        b!,
        ws.map((w, i) => [w, put(i)] as const),
        0
      )
      yield* until("every entry", () => received.length >= names.length)
      const json = (n: number) => JSON.stringify({ number: n })
      assert.deepStrictEqual(
        received,
        names.map((name, i) => `${name} fresh ${json(i)}`)
      )
      assert.strictEqual(listener.stats.reads, names.length)
      assert.strictEqual(listener.stats.queries, 1)
    })
  )

  it.scopedLive("many writes through several processes arrive in commit order, each entry once", () =>
    Effect.gen(function* () {
      const [a, b, c] = yield* processes(url, freshSchema("live"), 3)
      const [n] = yield* widgets(b!, [["number", "n"]])
      const received = yield* follow(a!, n!)
      yield* Effect.all(
        Array.from({ length: 300 }, (_, i) => write(i % 2 === 0 ? b! : c!, [[n!, delta(1)]], i)),
        { concurrency: 20, discard: true }
      )
      const stored = yield* readAll(a!, n!)
      yield* until("every entry", () => flat(received).length === 300)
      const entries = received.flatMap((ch) => (ch._tag === "Stored" ? ch.entries : []))
      assert.deepStrictEqual(
        entries.map((e) => [e.ts, JSON.parse(e.json).number, e.fresh]),
        stored.map((e) => [e.ts, e.point.number, true])
      )
      assert.deepStrictEqual(
        stored.map((e) => e.point.number),
        Array.from({ length: 300 }, (_, i) => i + 1)
      )
    })
  )

  it.scopedLive(
    "a terminated listening connection reconnects and sends a Gap; nothing written meanwhile is lost",
    () =>
      Effect.gen(function* () {
        const app = freshSchema("app")
        const [a, b] = yield* processes(url, freshSchema("live"), 2, { application_name: app })
        const [g] = yield* widgets(b!, [["line-graph", "g"]])
        const received = yield* follow(a!, g!)
        yield* write(b!, [[g!, put(0)]], 0)
        yield* until("the first entry", () => flat(received).length === 1)
        let written = 1
        let writing = true
        const writer = Effect.promise(async () => {
          while (writing) {
            await Effect.runPromise(write(b!, [[g!, put(written)]], written))
            written++
            await new Promise((resolve) => setTimeout(resolve, 5))
          }
        })
        const killer = Effect.promise(async () => {
          await new Promise((resolve) => setTimeout(resolve, 100))
          // Both processes' listeners have this name; each is terminated and reconnects.
          const killed = await terminateListener(`${app}-listener`)
          assert.strictEqual(killed, 2)
          await new Promise((resolve) => setTimeout(resolve, 100))
        })
        yield* Effect.fork(writer)
        yield* killer
        yield* until("the Gap", () => received.some((c) => c._tag === "Gap"))
        // Still live after the reconnection.
        const gapAt = received.findIndex((c) => c._tag === "Gap")
        yield* until("an entry after the Gap", () => flat(received.slice(gapAt + 1)).some((l) => l.startsWith("entry")))
        writing = false
        yield* Effect.sleep("50 millis")
        // The database has every acknowledged write; what the subscriber missed it reads from there after the Gap.
        const stored = yield* readAll(a!, g!)
        assert.isAtLeast(stored.length, written - 1)
        assert.deepStrictEqual(
          stored.slice(0, written - 1).map((e) => e.point.number),
          Array.from({ length: written - 1 }, (_, i) => i)
        )
        const entries = received.flatMap((ch) => (ch._tag === "Stored" ? ch.entries : []))
        // In order and never twice.
        for (let i = 1; i < entries.length; i++) assert.isAbove(entries[i]!.ts, entries[i - 1]!.ts)
        assert.isTrue(Option.isSome(yield* liveState(a!, g!)))
      }),
    30_000
  )

  it.scopedLive(
    "after an outage of the listening connection, an acknowledged write reaches a subscriber within 1 s",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("live")
        const [b] = yield* processes(url, schema, 1)
        const [n] = yield* widgets(b!, [["number", "n"]])
        const proxy = yield* Effect.acquireRelease(
          Effect.promise(() => outageProxy(new URL(url))),
          (p) => Effect.promise(p.close)
        )
        // Process `a` reaches the database through the proxy; `b` writes directly, so nothing of `a` but its own
        // attempts can tell it that the database is back.
        const warnings: Array<string> = []
        const config = yield* parseUrl(proxy.through(withSchema(url, schema)))
        const pool = makePool(config)
        yield* Effect.addFinalizer(() => Effect.promise(() => pool.end()))
        const listener = new Listener(config, pool, channelName(schema), {
          ...defaultListenerOptions,
          warn: (message) => warnings.push(message),
          info: () => {}
        })
        yield* Effect.addFinalizer(() => Effect.promise(() => listener.close()))
        yield* Effect.promise(() => listener.start())
        const received: Array<StreamChange> = []
        listener.fanout.subscribe(n!.id, (c) => received.push(c))
        assert.isBelow(yield* ackToReceived(b!, n!, received, 0), 1_000)
        // A 3.3 s outage: with a delay doubling from 100 ms the attempts would come at 3.1 s and 6.3 s.
        proxy.down()
        yield* Effect.sleep("3300 millis")
        proxy.up()
        const latency = yield* ackToReceived(b!, n!, received, 1)
        assert.isBelow(latency, 1_000)
        // A warning per cause (the connection lost, then each attempt refused), not one per attempt (about 16).
        assert.deepStrictEqual(
          warnings.map((w) => w.replace(/127\.0\.0\.1:\d+/, "<proxy>")),
          [
            "live updates: the PostgreSQL notification connection failed (read ECONNRESET); retrying every 200 ms",
            "live updates: the PostgreSQL notification connection failed (connect ECONNRESET <proxy>); retrying every 200 ms"
          ]
        )
        // `wake` (a pooled connection was just opened) tries at once, whatever the delay.
        const slow = new Listener(config, pool, channelName(schema), {
          ...defaultListenerOptions,
          reconnectMs: 60_000,
          warn: () => {},
          info: () => {}
        })
        yield* Effect.addFinalizer(() => Effect.promise(() => slow.close()))
        yield* Effect.promise(() => slow.start())
        const slowReceived: Array<StreamChange> = []
        slow.fanout.subscribe(n!.id, (c) => slowReceived.push(c))
        proxy.down()
        yield* until("the lost connection", () => !slow.listening)
        proxy.up()
        slow.wake()
        assert.isBelow(yield* ackToReceived(b!, n!, slowReceived, 2), 1_000)
      }),
    30_000
  )

  it.scopedLive(
    "a store whose database is down at start keeps retrying, and sends a Gap once it listens",
    () =>
      Effect.gen(function* () {
        const server = yield* Effect.acquireRelease(Effect.promise(startEmbeddedPostgres), (s) =>
          Effect.promise(s.stop)
        )
        const config = yield* parseUrl(`${server.url}?connect_timeout_ms=2000`)
        yield* migrate(config)
        const [w] = yield* Effect.flatMap(Layer.build(layer(config)), (s) => widgets(s, [["number", "n"]]))
        yield* Effect.promise(server.pause)
        const stores = yield* Layer.build(layer(config))
        // Subscribing waits for the first attempt only, which fails at once (connection refused).
        const received = yield* follow(stores, w!)
        yield* Effect.sleep("300 millis")
        assert.deepStrictEqual(received, [])
        yield* Effect.promise(server.resume)
        yield* until("the Gap", () => received.length > 0)
        assert.deepStrictEqual(received, [gapChange])
        yield* write(stores, [[w!, delta(1)]])
        yield* until("the entry", () => received.length > 1)
        assert.deepStrictEqual(flat(received), ["Gap", `entry ${T0} fresh ${JSON.stringify({ number: 1 })}`])
      }),
    60_000
  )
})
