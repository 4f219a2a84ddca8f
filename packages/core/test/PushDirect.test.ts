import {
  type AccountId,
  AccountStore,
  cachedAccountStore,
  defaultLimits,
  digestAccessKey,
  StorageUnavailable,
  type StreamName,
  StreamStore,
  UseCases
} from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"

/**
 * `UseCases.pushDirect` is `UseCases.push` without a fiber: for every body it either declines (and `push` runs) or
 * answers exactly what `push` answers, and stores exactly what `push` stores.
 */

const KEY = "ds_key-1"
const NOW = 1_700_000_000_000_000

/** The outcome of a push as a comparable value: "ok", or the error's tag, message and path. */
type Outcome = string

const outcomeOfError = (error: unknown): Outcome => {
  const e = error as { _tag: string; message?: string; path?: string }
  return `${e._tag}|${e.message ?? ""}|${e.path ?? ""}`
}

/**
 * Fresh memory stores behind the account cache, without the memory store's synchronous lookups (as on PostgreSQL:
 * the direct paths need the cache), counting the direct writes and reads.
 */
const fixtureWith = (withLookup: boolean) =>
  Effect.gen(function* () {
    const { accountStore, streamStore } = yield* MemoryStore.make
    let lookups = 0
    // `withLookup`: as PostgreSQL, a widget lookup with a callback, answered on a later turn (as a query is).
    const lookupWidget: AccountStore["Type"]["lookupWidget"] = (account, name, done) => {
      lookups++
      Effect.runCallback(accountStore.findWidgets(account, [name]), {
        onExit: (exit) =>
          setImmediate(() =>
            exit._tag === "Success" ? done(undefined, exit.value.get(name) ?? null) : done(lookupFailure, null)
          )
      })
    }
    const accounts = cachedAccountStore(
      {
        ...accountStore,
        peekAccount: () => undefined,
        peekWidget: () => undefined,
        ...(withLookup ? { lookupWidget } : {})
      },
      { ttlMillis: 60_000, maxEntries: 1000 }
    )
    let directWrites = 0
    let directReads = 0
    const streams: StreamStore["Type"] = {
      ...streamStore,
      writeDirect: (writes, now, done) => {
        directWrites++
        return streamStore.writeDirect(writes, now, done)
      },
      readDirect: (stream, query, done) => {
        directReads++
        streamStore.readDirect(stream, query, done)
      }
    }
    const id = "acc-1" as AccountId
    yield* accountStore.createAccount({ id, name: "a", createdAt: 0 }, digestAccessKey(KEY))
    const types = { n: "number", spark: "sparkline", board: "leaderboard", table: "table", list: "list" } as const
    for (const [name, type] of Object.entries(types)) yield* accountStore.createWidget(id, name as StreamName, type, 0)
    const run = <A, E>(effect: Effect.Effect<A, E, AccountStore | StreamStore>) =>
      effect.pipe(Effect.provideService(AccountStore, accounts), Effect.provideService(StreamStore, streams))
    const viaPush = (body: unknown, now: number): Effect.Effect<Outcome> =>
      run(UseCases.push(body, defaultLimits, now as never)).pipe(
        Effect.match({ onSuccess: () => "ok", onFailure: outcomeOfError })
      )
    /** pushDirect, falling back to push as the push lane does; `direct` tells which ran. */
    const viaDirect = (body: unknown, now: number): Effect.Effect<{ outcome: Outcome; direct: boolean }> =>
      Effect.async((resume) => {
        const direct = UseCases.pushDirect(
          body,
          defaultLimits,
          accounts,
          streams,
          (error) =>
            resume(Effect.succeed({ outcome: error === undefined ? "ok" : outcomeOfError(error), direct: true })),
          now as never
        )
        if (!direct) resume(Effect.map(viaPush(body, now), (outcome) => ({ outcome, direct: false })))
      })
    const readAll = Effect.gen(function* () {
      const out: Record<string, unknown> = {}
      for (const name of Object.keys(types)) {
        const entries = yield* run(UseCases.read(KEY, name, { since: "0" }))
        out[name] = entries
      }
      return out
    })
    /** The latest-entry read's body text through `readPages`, and through `readLatestDirect` when it answers. */
    const latestBoth = (accessKey: string, name: string) =>
      Effect.gen(function* () {
        // Direct first: readPages fills the cache.
        let viaDirect: string | undefined
        const direct = UseCases.readLatestDirect(accessKey, name, accounts, streams, (error, page) => {
          viaDirect = error === undefined ? `ok|${page!.text}` : outcomeOfError(error)
        })
        const viaPages = yield* run(UseCases.readPages(accessKey, name, {})).pipe(
          Effect.match({ onSuccess: (pages) => `ok|${pages.first.text}`, onFailure: outcomeOfError })
        )
        return { viaPages, direct, viaDirect }
      })
    return {
      accounts,
      streams,
      viaPush,
      viaDirect,
      readAll,
      latestBoth,
      directWrites: () => directWrites,
      directReads: () => directReads,
      lookups: () => lookups
    }
  })
const fixture = fixtureWith(false)
const lookupFailure = new StorageUnavailable({ cause: new Error("lookup failed") })

// Bodies: valid and invalid, single and multi-stream, known and unknown keys and streams.
const streamName = fc.constantFrom("n", "spark", "board", "table", "list", "missing", "", "x\u0085y")
const point = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }),
  fc.record({ number: fc.integer({ min: -5, max: 5 }) }),
  fc.record({ delta: fc.integer({ min: -5, max: 5 }) }),
  fc.record({ delta: fc.constant(1e308) }),
  fc.record({ number: fc.integer(), timestamp: fc.integer({ min: 1_600_000_000, max: 1_700_000_000 }) }),
  fc.record({ leaderboardItem: fc.record({ name: fc.constantFrom("a", "b"), value: fc.integer({ max: 9, min: 0 }) }) }),
  fc.record({ listItem: fc.constantFrom("x", "y") }),
  fc.record({ tableRow: fc.array(fc.constantFrom("1", "2"), { maxLength: 3 }) }),
  fc.record({ table: fc.constant([["a", "b"]]) }),
  fc.constant(null),
  fc.constant("not a point"),
  fc.array(fc.record({ number: fc.integer({ min: 0, max: 9 }) }), { maxLength: 3 })
)
const part = fc.oneof(
  fc.record({ streamName, point }),
  fc.record({ streamName, command: fc.constantFrom("clear", "nope") }),
  fc.record({ streamName })
)
const key = fc.constantFrom(KEY, KEY, KEY, "ds_other", "")
// Mostly valid multi-stream pushes, so that many of them store something through the direct path.
const validPart = fc.record({
  streamName: fc.constantFrom("n", "spark"),
  point: fc.oneof(fc.integer({ min: 0, max: 9 }), fc.record({ delta: fc.integer({ min: -5, max: 5 }) }))
})
const body = fc.oneof(
  fc.tuple(key, part).map(([accessKey, p]) => ({ accessKey, ...p })),
  fc.record({ accessKey: fc.constant(KEY), streams: fc.array(validPart, { minLength: 1, maxLength: 4 }) }),
  fc.record({ accessKey: key, streams: fc.array(part, { maxLength: 4 }) }),
  fc.constantFrom(null, [], "text", { streamName: "n", point: 1 }, { accessKey: 7, streamName: "n", point: 1 })
)

describe("UseCases.pushDirect", () => {
  it.effect.prop(
    "answers and stores what UseCases.push does, for any sequence of bodies",
    [fc.array(body, { minLength: 1, maxLength: 40 })],
    ([bodies]) =>
      Effect.gen(function* () {
        const a = yield* fixture
        const b = yield* fixture
        // A store with lookupWidget (PostgreSQL): the direct path looks up what the cache does not hold.
        const c = yield* fixtureWith(true)
        for (let i = 0; i < bodies.length; i++) {
          const now = NOW + i * 1000
          const expected = yield* a.viaPush(bodies[i], now)
          const got = yield* b.viaDirect(bodies[i], now)
          assert.strictEqual(got.outcome, expected, JSON.stringify(bodies[i]))
          assert.strictEqual((yield* c.viaDirect(bodies[i], now)).outcome, expected, JSON.stringify(bodies[i]))
        }
        assert.deepStrictEqual(yield* b.readAll, yield* a.readAll)
        assert.deepStrictEqual(yield* c.readAll, yield* a.readAll)
        // The latest-entry read: readLatestDirect answers what readPages does, whenever it answers.
        for (const name of ["n", "spark", "board", "table", "list", "missing", "", "x\u0085y"]) {
          for (const accessKey of [KEY, "ds_other", ""]) {
            const { viaPages, direct, viaDirect } = yield* b.latestBoth(accessKey, name)
            if (direct) assert.strictEqual(viaDirect, viaPages, `${accessKey} ${name}`)
            else assert.isUndefined(viaDirect)
          }
        }
      }),
    { fastCheck: { numRuns: 150 } }
  )

  it.effect("takes the direct path once the key and widgets are cached, and declines before", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const push = { accessKey: KEY, streamName: "n", point: { delta: 2 } }
      const first = yield* f.viaDirect(push, NOW)
      assert.deepStrictEqual(first, { outcome: "ok", direct: false })
      const second = yield* f.viaDirect(push, NOW + 1)
      assert.deepStrictEqual(second, { outcome: "ok", direct: true })
      // Both paths store through the one form of the store's write, `writeDirect`.
      assert.strictEqual(f.directWrites(), 2)
      // A stream not yet cached: declined, then cached by push.
      const other = {
        accessKey: KEY,
        streams: [
          { streamName: "n", point: 1 },
          { streamName: "spark", point: 3 }
        ]
      }
      assert.deepStrictEqual(yield* f.viaDirect(other, NOW + 2), { outcome: "ok", direct: false })
      assert.deepStrictEqual(yield* f.viaDirect(other, NOW + 3), { outcome: "ok", direct: true })
      // An unknown key is never cached: always declined, and push refuses it.
      const unknown = yield* f.viaDirect({ ...push, accessKey: "ds_nobody" }, NOW + 4)
      assert.strictEqual(unknown.direct, false)
      assert.match(unknown.outcome, /^Forbidden\|/)
    })
  )

  it.live("with a store's lookupWidget, a push of widgets the cache does not hold takes the direct path too", () =>
    Effect.gen(function* () {
      const f = yield* fixtureWith(true)
      // The key is looked up by the effect path once (no direct form for keys).
      assert.deepStrictEqual(yield* f.viaDirect({ accessKey: KEY, streamName: "n", point: 1 }, NOW), {
        outcome: "ok",
        direct: false
      })
      const lookedUp = f.lookups()
      // Two streams the cache does not hold (one no widget at all), one it does: direct, two lookups.
      const push = {
        accessKey: KEY,
        streams: [
          { streamName: "spark", point: 3 },
          { streamName: "n", point: 2 },
          { streamName: "missing", point: 1 }
        ]
      }
      const refused = yield* f.viaDirect(push, NOW + 1)
      assert.strictEqual(refused.direct, true)
      assert.match(refused.outcome, /^StreamNotFound\|.*"missing"/)
      assert.strictEqual(f.lookups() - lookedUp, 2)
      const stored = yield* f.viaDirect({ ...push, streams: push.streams.slice(0, 2) }, NOW + 2)
      assert.deepStrictEqual(stored, { outcome: "ok", direct: true })
      // Now cached: no more lookups.
      assert.strictEqual(f.lookups() - lookedUp, 2)
      const all = (yield* f.readAll) as Record<string, ReadonlyArray<unknown>>
      assert.deepStrictEqual([all["spark"]!.length, all["n"]!.length], [1, 2])
    })
  )

  it.effect("reads the latest entry directly once the key and widget are cached", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const before = yield* f.latestBoth(KEY, "n")
      assert.isFalse(before.direct)
      assert.strictEqual(before.viaPages, "ok|")
      yield* f.viaPush({ accessKey: KEY, streamName: "n", point: 7 }, NOW)
      const after = yield* f.latestBoth(KEY, "n")
      assert.deepStrictEqual(after, {
        viaPages: `ok|{"ts":1700000000,"point":{"number":7}}`,
        direct: true,
        viaDirect: after.viaPages
      })
      // Both paths read through the one form of the store's read, `readDirect`: readPages twice, the direct read once.
      assert.strictEqual(f.directReads(), 3)
      // Not cached: declined (readPages refuses them).
      assert.isFalse((yield* f.latestBoth("ds_nobody", "n")).direct)
      assert.isFalse((yield* f.latestBoth(KEY, "missing")).direct)
    })
  )

  it.effect("refuses a malformed body itself, and declines when the account is not at hand", () =>
    Effect.gen(function* () {
      const f = yield* fixture
      const malformed = yield* f.viaDirect({ accessKey: KEY }, NOW)
      assert.strictEqual(malformed.direct, true)
      assert.match(malformed.outcome, /^InvalidRequest\|/)
      yield* f.viaPush({ accessKey: KEY, streamName: "n", point: 1 }, NOW)
      let called = false
      const done = () => {
        called = true
      }
      const body = { accessKey: KEY, streamName: "n", point: 1 }
      const noPeek = { ...f.accounts, peekAccount: () => undefined }
      assert.isFalse(UseCases.pushDirect(body, defaultLimits, noPeek, f.streams, done))
      assert.isFalse(called)
      assert.isTrue(UseCases.pushDirect(body, defaultLimits, f.accounts, f.streams, done))
      yield* Effect.yieldNow()
      assert.isTrue(called)
    })
  )
})
