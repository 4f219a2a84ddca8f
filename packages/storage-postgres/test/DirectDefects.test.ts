import { AccountStore, micros, type StorageFailure, StreamStore } from "@dashstream/core"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect } from "effect"
import { openTestDatabase } from "../src/testing/index.js"
import { freshSchema, processes, put, widgets, write } from "./fixtures.js"

// Never skipped: without a PostgreSQL server, opening the database throws and this file fails.
const db = await openTestDatabase()
afterAll(() => db.close())

/** One call of a continuation: the failure's tag and its cause, or the value. */
interface Call {
  readonly error: StorageFailure | undefined
  readonly value: unknown
}

/**
 * A continuation that throws `thrown` on its first call (as the caller's answer code or core's rendering may) and
 * records every call, with a promise of the call after the throw.
 */
const throwingOnce = (thrown: Error) => {
  const calls: Array<Call> = []
  let settle: () => void = () => {}
  const second = new Promise<void>((resolve) => {
    settle = resolve
  })
  const done = (error: StorageFailure | undefined, value: unknown): void => {
    calls.push({ error, value })
    if (calls.length === 1) throw thrown
    settle()
  }
  return { calls, done, second }
}

/** The rejections nobody handled while `body` ran (each would end `serve`). */
const unhandledDuring = <A, E, R>(body: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const seen: Array<unknown> = []
      const listener = (reason: unknown) => void seen.push(reason)
      process.on("unhandledRejection", listener)
      return { seen, listener }
    }),
    ({ seen }) => Effect.map(body, (a) => [a, seen] as const),
    ({ listener }) =>
      // A turn for Node to report a rejection left unhandled by the last answer.
      Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20))).pipe(
        Effect.andThen(Effect.sync(() => process.off("unhandledRejection", listener)))
      )
  )

describe("a throw from a direct form's continuation on PostgreSQL", () => {
  it.scopedLive(
    "is answered once more with a StorageError carrying it, on every direct path; nothing is unhandled",
    () =>
      Effect.gen(function* () {
        const [stores] = yield* processes(db.url, freshSchema("dd"), 1)
        const [n] = yield* widgets(stores!, [["number", "n"]])
        yield* write(stores!, [[n!, put(7)]])
        const streams = Context.get(stores!, StreamStore)
        const accounts = Context.get(stores!, AccountStore)
        const paths: ReadonlyArray<
          readonly [string, (done: (e: StorageFailure | undefined, v: unknown) => void) => void]
        > = [
          ["readDirect, latest entry", (done) => streams.readDirect(n!.id, { since: null, limit: null }, done)],
          ["readDirect, since", (done) => streams.readDirect(n!.id, { since: micros(0), limit: null }, done)],
          ["lookupWidget", (done) => accounts.lookupWidget!(n!.accountId, "n", done)]
        ]
        for (const [path, call] of paths) {
          const thrown = new Error(`thrown by the continuation of ${path}`)
          const { calls, done, second } = throwingOnce(thrown)
          const [, unhandled] = yield* unhandledDuring(
            Effect.promise(() => {
              call(done)
              return second
            }).pipe(Effect.timeout("5 seconds"))
          )
          assert.deepStrictEqual(unhandled, [], path)
          assert.strictEqual(calls.length, 2, path)
          assert.isUndefined(calls[0]!.error, path)
          assert.strictEqual(calls[1]!.error?._tag, "StorageError", path)
          assert.strictEqual(calls[1]!.error?.cause, thrown, path)
        }
      })
  )

  it.scopedLive("in a batch of latest reads, only the read whose continuation threw is answered again", () =>
    Effect.gen(function* () {
      const [stores] = yield* processes(db.url, freshSchema("dd"), 1)
      const [n] = yield* widgets(stores!, [["number", "n"]])
      yield* write(stores!, [[n!, put(7)]])
      const streams = Context.get(stores!, StreamStore)
      const thrown = new Error("thrown by the first read's continuation")
      const first = throwingOnce(thrown)
      const others: Array<Call> = []
      const [, unhandled] = yield* unhandledDuring(
        Effect.promise(async () => {
          // Asked in one turn: one query answers all three.
          streams.readDirect(n!.id, { since: null, limit: null }, first.done)
          const rest = [0, 1].map(
            () =>
              new Promise<void>((resolve) =>
                streams.readDirect(n!.id, { since: null, limit: null }, (error, value) => {
                  others.push({ error, value })
                  resolve()
                })
              )
          )
          await Promise.all([first.second, ...rest])
        }).pipe(Effect.timeout("5 seconds"))
      )
      assert.deepStrictEqual(unhandled, [])
      assert.deepStrictEqual(
        first.calls.map((c) => c.error?._tag),
        [undefined, "StorageError"]
      )
      assert.deepStrictEqual(
        others.map((c) => [c.error, (c.value as ReadonlyArray<{ json: string }>).map((e) => e.json)]),
        [
          [undefined, ['{"number":7}']],
          [undefined, ['{"number":7}']]
        ]
      )
    })
  )
})
