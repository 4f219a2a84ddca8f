import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber } from "effect"
import { makeReadTurns } from "../src/internal/readHandlers.js"

/**
 * The read turns of streamed reads: one page fetch at a time for the whole server, each on a
 * later turn of the event loop, so pushes are served between any two pages whatever the number of readers; while
 * pushes are in flight, reads get at most about half of the loop.
 */
describe("read turns", () => {
  it.live("runs one fetch at a time, even when the fetches are asynchronous (PostgreSQL pages)", () =>
    Effect.gen(function* () {
      const turns = makeReadTurns()
      let running = 0
      let most = 0
      const fetch = (n: number) =>
        Effect.gen(function* () {
          running++
          most = Math.max(most, running)
          yield* Effect.sleep("5 millis")
          running--
          return n
        })
      const results = yield* Effect.all(
        // Readers arrive while earlier fetches are running, as well as all at once.
        Array.from({ length: 8 }, (_, n) => Effect.zipRight(Effect.sleep(`${n} millis`), turns(fetch(n)))),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual([...results].sort(), [0, 1, 2, 3, 4, 5, 6, 7])
      assert.strictEqual(most, 1)
    })
  )

  it.effect("lets the I/O that arrived meanwhile in between two fetches (a new turn of the event loop)", () =>
    Effect.gen(function* () {
      const turns = makeReadTurns()
      const order: Array<string> = []
      // Each synchronous fetch schedules an "I/O callback"; it must run before the next fetch.
      const fetch = (n: number) =>
        Effect.sync(() => {
          order.push(`page ${n}`)
          setImmediate(() => order.push(`io after ${n}`))
        })
      yield* Effect.all(
        Array.from({ length: 3 }, (_, n) => turns(fetch(n))),
        { concurrency: "unbounded" }
      )
      yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
      assert.deepStrictEqual(order, ["page 0", "io after 0", "page 1", "io after 1", "page 2", "io after 2"])
    })
  )

  it.live(
    "while pushes are in flight, each turn waits as long as the last fetch took (reads get at most about half the loop)",
    () =>
      Effect.gen(function* () {
        const pressure = { inFlight: 0 }
        const turns = makeReadTurns(pressure)
        // A synchronous fetch that holds the loop for 4 ms, as a large SQLite page would.
        const busy = Effect.sync(() => {
          const until = performance.now() + 4
          while (performance.now() < until);
        })
        const timed = (pages: number) =>
          Effect.map(
            Effect.timed(
              Effect.all(
                Array.from({ length: pages }, () => turns(busy)),
                { concurrency: "unbounded" }
              )
            ),
            ([duration]) => Duration.toMillis(duration)
          )
        pressure.inFlight = 3
        const paced = yield* timed(10)
        // 10 fetches of 4 ms: ~40 ms back to back; at least 76 ms with a pause as long as the fetch after each of the
        // first 9. (A lower bound only: a busy machine can make both slower, never the paced one faster.)
        assert.isAtLeast(paced, 76, `with pushes in flight: ${paced} ms`)
      })
  )

  it.effect("a fetch interrupted while waiting or while running gives its turn back", () =>
    Effect.gen(function* () {
      const turns = makeReadTurns()
      const started = yield* Deferred.make<void>()
      const holder = yield* Effect.fork(turns(Effect.zipRight(Deferred.succeed(started, undefined), Effect.never)))
      yield* Deferred.await(started)
      const waiter = yield* Effect.fork(turns(Effect.succeed("never served")))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(waiter)
      yield* Fiber.interrupt(holder)
      const next = yield* turns(Effect.succeed("served")).pipe(Effect.timeout("1 second"))
      assert.strictEqual(next, "served")
    })
  )
})
