import {
  type AccountId,
  type Micros,
  AccountStore,
  cachedAccountStore,
  defaultLimits,
  digestAccessKey,
  StorageUnavailable,
  type StreamName,
  StreamStore,
  UseCases,
  type WidgetLookupDone
} from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"

/**
 * `UseCases.readLatestDirect` with a store that cannot read synchronously but has `AccountStore.lookupWidget`
 * (PostgreSQL's case): a widget the cache does not hold is looked up without a fiber, and the read answers
 * what `readPages` answers, or hands a missing widget back to the caller (`declined`) for the refusal.
 */

const KEY = "ds_key-1"
const NOW = 1_700_000_000_000_000 as Micros

const fixture = (failLookups = false) =>
  Effect.gen(function* () {
    const { accountStore, streamStore } = yield* MemoryStore.make
    let lookups = 0
    // As PostgreSQL: no synchronous lookups; the lookup answers later, on another turn of the event loop.
    const lookupWidget = (id: AccountId, name: string, done: WidgetLookupDone) => {
      lookups++
      setImmediate(() => {
        if (failLookups) return done(new StorageUnavailable({ cause: new Error("down") }), null)
        const found = Effect.runSync(accountStore.findWidgets(id, [name])).get(name)
        done(undefined, found ?? null)
      })
    }
    const accounts = cachedAccountStore(
      { ...accountStore, peekAccount: () => undefined, peekWidget: () => undefined, lookupWidget },
      { ttlMillis: 60_000, maxEntries: 1000 }
    )
    const id = "acc-1" as AccountId
    yield* accountStore.createAccount({ id, name: "a", createdAt: 0 }, digestAccessKey(KEY))
    yield* accountStore.createWidget(id, "n" as StreamName, "number", 0)
    const run = <A, E>(effect: Effect.Effect<A, E, AccountStore | StreamStore>) =>
      effect.pipe(Effect.provideService(AccountStore, accounts), Effect.provideService(StreamStore, streamStore))
    // Pushed through the raw store: the cached one under test remembers no widget yet.
    yield* UseCases.push({ accessKey: KEY, streamName: "n", point: 42 }, defaultLimits, NOW).pipe(
      Effect.provideService(AccountStore, accountStore),
      Effect.provideService(StreamStore, streamStore)
    )
    // The key is remembered by the effect path's lookup (as the first request of a key does); no widget is.
    yield* run(UseCases.readPages(KEY, "missing", {})).pipe(Effect.ignore)
    const viaPages = (name: string) =>
      run(UseCases.readPages(KEY, name, {})).pipe(
        Effect.match({ onSuccess: (pages) => `ok|${pages.first.text}`, onFailure: (e) => `${e._tag}` })
      )
    /**
     * readLatestDirect with a `declined`: whether it took the read, and how it answered ("declined", "ok|<text>", the
     * error's tag, or "none" when it declined at once).
     */
    const viaDirect = (name: string) =>
      Effect.async<{ taken: boolean; answer: string }>((resume) => {
        let answer: string | undefined
        let returned: boolean | undefined
        const answered = (a: string) => {
          answer = a
          if (returned !== undefined) resume(Effect.succeed({ taken: returned, answer: a }))
        }
        returned = UseCases.readLatestDirect(
          KEY,
          name,
          accounts,
          streamStore,
          (error, page) => answered(error === undefined ? `ok|${page!.text}` : error._tag),
          () => answered("declined")
        )
        if (answer !== undefined) resume(Effect.succeed({ taken: returned, answer }))
        else if (!returned) resume(Effect.succeed({ taken: false, answer: "none" }))
      })
    return { accounts, viaPages, viaDirect, lookups: () => lookups }
  })

describe("readLatestDirect with AccountStore.lookupWidget", () => {
  it.effect(
    "looks an uncached widget up without an effect and answers what readPages answers; then from the cache",
    () =>
      Effect.gen(function* () {
        const { viaPages, viaDirect, lookups } = yield* fixture()
        const first = yield* viaDirect("n")
        assert.isTrue(first.taken)
        assert.strictEqual(lookups(), 1)
        assert.match(first.answer, /^ok\|.*42/)
        // Remembered: the next read asks the store nothing.
        const second = yield* viaDirect("n")
        assert.deepStrictEqual(second, first)
        assert.strictEqual(lookups(), 1)
        assert.strictEqual(first.answer, yield* viaPages("n"))
        assert.strictEqual(lookups(), 1)
      })
  )

  it.effect("hands a missing widget back to the caller (declined) once, and remembers its absence", () =>
    Effect.gen(function* () {
      const { viaPages, viaDirect, lookups } = yield* fixture()
      assert.deepStrictEqual(yield* viaDirect("other"), { taken: true, answer: "declined" })
      // The absence is remembered: the direct path declines at once (peekWidget answers null), asking nothing.
      assert.deepStrictEqual(yield* viaDirect("other"), { taken: false, answer: "none" })
      assert.strictEqual(lookups(), 1)
      assert.strictEqual(yield* viaPages("other"), "StreamNotFound")
    })
  )

  it.effect("answers the lookup's storage failure as readPages fails", () =>
    Effect.gen(function* () {
      const { viaDirect } = yield* fixture(true)
      assert.deepStrictEqual(yield* viaDirect("n"), { taken: true, answer: "StorageUnavailable" })
    })
  )

  it.effect("without a declined callback, or with a store that has no lookup, declines at once as before", () =>
    Effect.gen(function* () {
      const { accounts, lookups } = yield* fixture()
      const { accountStore, streamStore } = yield* MemoryStore.make
      let answered = false
      assert.isFalse(UseCases.readLatestDirect(KEY, "n", accounts, streamStore, () => (answered = true)))
      assert.strictEqual(lookups(), 0)
      assert.isFalse(answered)
      assert.isUndefined(cachedAccountStore({ ...accountStore, peekWidget: () => undefined }).lookupWidget)
    })
  )
})
