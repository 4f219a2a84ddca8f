import { assert, describe, it } from "@effect/vitest"
import { Effect, type Layer } from "effect"
import { SessionStore } from "../SessionStore.js"
import { micros } from "../Time.js"

/**
 * The contract suite of `SessionStore` (docs/api.md section 14: a signed-out console session is refused from then on).
 * Each adapter's test file calls {@link sessionSuite} with its layer, so memory, SQLite and PostgreSQL are held to the
 * same behaviour.
 */

/** A time well inside the valid range (2023-11-14T22:13:20Z), in microseconds. */
const T0 = 1_700_000_000_000_000
const hour = 3_600_000_000

/** Registers the suite under `describe("session store contract: <name>")`; `makeLayer` gives a fresh store per test. */
export const sessionSuite = (name: string, makeLayer: () => Layer.Layer<SessionStore, unknown>): void => {
  describe(`session store contract: ${name}`, () => {
    const test = (title: string, body: Effect.Effect<unknown, unknown, SessionStore>) =>
      it.effect(title, () => Effect.provide(body, makeLayer()))

    test(
      "a session is signed in until it is ended; ending one ends no other",
      Effect.gen(function* () {
        const store = yield* SessionStore
        assert.isFalse(yield* store.isSessionEnded("AAAAAAAAAAAAAAAAAAAAAA"))
        yield* store.endSession("AAAAAAAAAAAAAAAAAAAAAA", micros(T0 + 12 * hour), micros(T0))
        assert.isTrue(yield* store.isSessionEnded("AAAAAAAAAAAAAAAAAAAAAA"))
        assert.isFalse(yield* store.isSessionEnded("AAAAAAAAAAAAAAAAAAAAAB"))
        assert.isFalse(yield* store.isSessionEnded("aaaaaaaaaaaaaaaaaaaaaa"))
      })
    )

    test(
      "ending a session twice keeps it ended",
      Effect.gen(function* () {
        const store = yield* SessionStore
        yield* store.endSession("s1", micros(T0 + hour), micros(T0))
        yield* store.endSession("s1", micros(T0 + hour), micros(T0 + 1))
        assert.isTrue(yield* store.isSessionEnded("s1"))
      })
    )

    test(
      "a later sign-out keeps every record that has not expired yet",
      Effect.gen(function* () {
        const store = yield* SessionStore
        yield* store.endSession("early", micros(T0 + hour), micros(T0))
        yield* store.endSession("late", micros(T0 + 12 * hour), micros(T0))
        // Two hours on: "early" expired (it may be dropped), "late" has not.
        yield* store.endSession("other", micros(T0 + 14 * hour), micros(T0 + 2 * hour))
        assert.isTrue(yield* store.isSessionEnded("late"))
        assert.isTrue(yield* store.isSessionEnded("other"))
        // At the instant of its expiry a session is still recorded.
        yield* store.endSession("edge", micros(T0 + 3 * hour), micros(T0 + 3 * hour))
        assert.isTrue(yield* store.isSessionEnded("edge"))
      })
    )

    test(
      "many sign-outs at once are all recorded",
      Effect.gen(function* () {
        const store = yield* SessionStore
        const ids = Array.from({ length: 50 }, (_, i) => `session-${i}`)
        yield* Effect.forEach(ids, (id) => store.endSession(id, micros(T0 + hour), micros(T0)), {
          concurrency: "unbounded"
        })
        for (const id of ids) assert.isTrue(yield* store.isSessionEnded(id))
      })
    )
  })
}
