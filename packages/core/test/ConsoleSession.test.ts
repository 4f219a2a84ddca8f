import { ConsoleSession, makeSessionCache, micros, SessionStore } from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"

const T0 = micros(1_700_000_000_000_000)
const second = 1_000_000
const key = ConsoleSession.sessionKey("the admin token")

describe("console sessions", () => {
  it("a session issued now reads back with its id and its expiry 12 hours on", () => {
    const issued = ConsoleSession.issueSession(key, T0)
    assert.match(issued.token, /^[A-Za-z0-9_-]{22}\.\d+\.[A-Za-z0-9_-]{43}$/)
    assert.strictEqual(issued.expiresAt, T0 + 12 * 3600 * second)
    assert.deepStrictEqual(ConsoleSession.readSession(key, issued.token, T0), {
      id: issued.id,
      expiresAt: issued.expiresAt
    })
    assert.notStrictEqual(ConsoleSession.issueSession(key, T0).id, issued.id)
  })

  it("an expired session is refused (from the second it expires)", () => {
    const issued = ConsoleSession.issueSession(key, T0)
    assert.isDefined(ConsoleSession.readSession(key, issued.token, micros(issued.expiresAt - 1)))
    assert.isUndefined(ConsoleSession.readSession(key, issued.token, issued.expiresAt))
    assert.isUndefined(ConsoleSession.readSession(key, issued.token, micros(T0 + 13 * 3600 * second)))
  })

  it("a session signed under another admin token is refused", () => {
    const issued = ConsoleSession.issueSession(key, T0)
    assert.isUndefined(ConsoleSession.readSession(ConsoleSession.sessionKey("a new admin token"), issued.token, T0))
    // The same token derives the same key: another process holding it accepts the session.
    assert.isDefined(ConsoleSession.readSession(ConsoleSession.sessionKey("the admin token"), issued.token, T0))
  })

  it("a tampered session is refused: another id, a later expiry, another signature, junk", () => {
    const issued = ConsoleSession.issueSession(key, T0)
    const [id, expires, signature] = issued.token.split(".") as [string, string, string]
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === "A" ? "B" : "A") + s.slice(i + 1)
    const tampered = [
      `${flip(id, 0)}.${expires}.${signature}`,
      `${id}.${Number(expires) + 3600}.${signature}`,
      `${id}.${expires}.${flip(signature, 10)}`,
      `${id}.${expires}.${signature}x`,
      `${id}.${expires}`,
      "",
      "not a session",
      `${id}.${expires}.${signature}.${signature}`
    ]
    for (const token of tampered) assert.isUndefined(ConsoleSession.readSession(key, token, T0), token)
  })

  it("a signature is accepted in its one spelling only (not with other spare bits in its last character)", () => {
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    for (let i = 0; i < 20; i++) {
      const issued = ConsoleSession.issueSession(key, T0)
      const accepted = [...alphabet].filter((c) => ConsoleSession.readSession(key, issued.token.slice(0, -1) + c, T0))
      assert.deepStrictEqual(accepted, [issued.token.slice(-1)])
    }
  })

  it("isAdminToken compares the whole token", () => {
    assert.isTrue(ConsoleSession.isAdminToken(key, "the admin token"))
    for (const wrong of ["", "the admin toke", "the admin tokenx", "THE ADMIN TOKEN"]) {
      assert.isFalse(ConsoleSession.isAdminToken(key, wrong), wrong)
    }
  })

  it.effect("signOut ends the session for good; other sessions stay signed in", () =>
    Effect.gen(function* () {
      const a = ConsoleSession.issueSession(key, T0)
      const b = ConsoleSession.issueSession(key, T0)
      assert.isTrue(yield* ConsoleSession.isSignedIn(a))
      yield* ConsoleSession.signOut(a, T0)
      assert.isFalse(yield* ConsoleSession.isSignedIn(a))
      assert.isTrue(yield* ConsoleSession.isSignedIn(b))
    }).pipe(Effect.provide(MemoryStore.layer))
  )
})

describe("session cache", () => {
  // A store that counts its lookups, over the memory store.
  const counted = Effect.gen(function* () {
    const inner = yield* SessionStore
    const calls = { lookups: 0 }
    const store: SessionStore["Type"] = {
      ...inner,
      isSessionEnded: (id) => Effect.suspend(() => (calls.lookups++, inner.isSessionEnded(id)))
    }
    return { inner, store, calls }
  }).pipe(
    Effect.provide(
      Layer.effect(
        SessionStore,
        Effect.map(MemoryStore.make, (s) => s.sessionStore)
      )
    )
  )

  // Live clock: the cache reads Date.now().
  it.live("a signed-in answer is trusted for the time to live, then asked again", () =>
    Effect.gen(function* () {
      const { inner, store, calls } = yield* counted
      const cache = makeSessionCache(store, { ttlMillis: 50, maxEntries: 100 })
      assert.isFalse(yield* cache.store.isSessionEnded("a"))
      assert.isFalse(yield* cache.store.isSessionEnded("a"))
      assert.strictEqual(calls.lookups, 1)
      // Signed out through another process: seen here once the answer expires.
      yield* inner.endSession("a", micros(T0 + 3600 * second), T0)
      assert.isFalse(yield* cache.store.isSessionEnded("a"))
      yield* Effect.sleep("60 millis")
      assert.isTrue(yield* cache.store.isSessionEnded("a"))
      assert.strictEqual(calls.lookups, 2)
      // A sign-out is final: never asked again.
      assert.isTrue(yield* cache.store.isSessionEnded("a"))
      assert.strictEqual(calls.lookups, 2)
    })
  )

  it.effect("a sign-out through the cache, or told by another worker, takes effect at once", () =>
    Effect.gen(function* () {
      const { store } = yield* counted
      const cache = makeSessionCache(store, { ttlMillis: 60_000, maxEntries: 100 })
      assert.isFalse(yield* cache.store.isSessionEnded("a"))
      assert.isFalse(yield* cache.store.isSessionEnded("b"))
      yield* cache.store.endSession("a", micros(T0 + 3600 * second), T0)
      assert.isTrue(yield* cache.store.isSessionEnded("a"))
      cache.ended("b")
      assert.isTrue(yield* cache.store.isSessionEnded("b"))
    })
  )

  it.effect("a full cache makes room and keeps answering right", () =>
    Effect.gen(function* () {
      const { inner, store } = yield* counted
      const cache = makeSessionCache(store, { ttlMillis: 60_000, maxEntries: 10 })
      for (let i = 0; i < 25; i++) assert.isFalse(yield* cache.store.isSessionEnded(`s${i}`))
      for (let i = 0; i < 25; i++) yield* inner.endSession(`e${i}`, micros(T0 + 3600 * second), T0)
      for (let i = 0; i < 25; i++) assert.isTrue(yield* cache.store.isSessionEnded(`e${i}`))
      for (let i = 0; i < 25; i++) assert.isTrue(yield* cache.store.isSessionEnded(`e${i}`))
    })
  )
})
