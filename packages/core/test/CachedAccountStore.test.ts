import {
  AccountStore,
  type AccountId,
  cachedAccountStore,
  defaultAccountCacheOptions,
  digestAccessKey,
  Doorkeeper,
  makeAccountCache,
  withAccountCache,
  type StreamName
} from "@dashstream/core"
import { MemoryStore, storageSuite } from "@dashstream/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option } from "effect"

// The cache must not change what a single process observes: the whole storage contract holds through it.
storageSuite("memory behind the access-key and widget cache", () => withAccountCache(MemoryStore.layer))

const setup = Effect.gen(function* () {
  const { accountStore, streamStore } = yield* MemoryStore.make
  let keyLookups = 0
  let widgetLookups = 0
  const counted: AccountStore["Type"] = {
    ...accountStore,
    findAccountByKey: (d) => Effect.suspend(() => (keyLookups++, accountStore.findAccountByKey(d))),
    findWidgets: (id, names) => Effect.suspend(() => (widgetLookups++, accountStore.findWidgets(id, names))),
    // No synchronous lookups (as PostgreSQL): a peek is answered from the cache or not at all.
    peekAccount: () => undefined,
    peekWidget: () => undefined
  }
  const id = "acc-1" as AccountId
  yield* accountStore.createAccount({ id, name: "a", createdAt: 0 }, digestAccessKey("key-1"))
  yield* accountStore.createWidget(id, "s" as StreamName, "number", 0)
  return { accountStore, streamStore, counted, id, lookups: () => [keyLookups, widgetLookups] }
})

describe("cachedAccountStore", () => {
  it.effect("answers repeated lookups from memory within the TTL", () =>
    Effect.gen(function* () {
      const { counted, id, lookups } = yield* setup
      const cached = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 10 })
      for (let i = 0; i < 5; i++) {
        assert.strictEqual(Option.getOrNull(yield* cached.findAccountByKey(digestAccessKey("key-1"))), id)
        assert.strictEqual((yield* cached.findWidgets(id, ["s"])).get("s")?.type, "number")
      }
      assert.deepStrictEqual(lookups(), [1, 1])
    })
  )

  it.effect(
    "peeks answer from memory, ask the store's own synchronous lookup on a miss and remember what it answered",
    () =>
      Effect.gen(function* () {
        const { accountStore, counted, id } = yield* setup
        let peeks = 0
        const digest = digestAccessKey("key-1")
        const synchronous: AccountStore["Type"] = {
          ...counted,
          peekAccount: (key) => (peeks++, key === "key-1" ? id : undefined),
          // As SQLite's: `null` when the account has no such widget.
          peekWidget: (account, name) => {
            peeks++
            return Effect.runSync(accountStore.findWidgets(account, [name])).get(name) ?? null
          }
        }
        const cached = cachedAccountStore(synchronous, { ttlMillis: 60_000, maxEntries: 10 })
        for (let i = 0; i < 3; i++) {
          assert.strictEqual(cached.peekAccount("key-1"), id)
          assert.strictEqual(cached.peekWidget(id, "s")?.type, "number")
        }
        assert.strictEqual(peeks, 2)
        // An unknown key is never remembered: asked again every time.
        assert.isUndefined(cached.peekAccount("key-2"))
        assert.isUndefined(cached.peekAccount("key-2"))
        assert.strictEqual(peeks, 4)
        // An absent widget is, as absent: `null` from memory.
        assert.isNull(cached.peekWidget(id, "t"))
        assert.isNull(cached.peekWidget(id, "t"))
        assert.strictEqual(peeks, 5)
        // A store without synchronous lookups: a miss is a miss, until its effect has answered.
        const plain = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 10 })
        assert.isUndefined(plain.peekAccount("key-1"))
        assert.isUndefined(plain.peekWidget(id, "t"))
        yield* plain.findAccountByKey(digest)
        yield* plain.findWidgets(id, ["s", "t"])
        assert.strictEqual(plain.peekAccount("key-1"), id)
        assert.strictEqual(plain.peekWidget(id, "s")?.type, "number")
        assert.isNull(plain.peekWidget(id, "t"))
      })
  )

  it.effect(
    "with a doorkeeper, remembers a widget looked up synchronously from its second lookup within the window",
    () =>
      Effect.gen(function* () {
        const { accountStore, counted, id } = yield* setup
        yield* accountStore.createWidget(id, "t" as StreamName, "label", 0)
        let peeks = 0
        const synchronous: AccountStore["Type"] = {
          ...counted,
          peekWidget: (account, name) => {
            peeks++
            return Effect.runSync(accountStore.findWidgets(account, [name])).get(name) ?? null
          }
        }
        // The entries live ten minutes; the doorkeeper's window is one.
        const cached = cachedAccountStore(synchronous, {
          ttlMillis: 600_000,
          maxEntries: 10,
          peekAdmissionMillis: 60_000
        })
        const t0 = Date.now()
        assert.strictEqual(cached.peekWidget(id, "s", t0)?.type, "number")
        assert.strictEqual(peeks, 1)
        // Looked up again past the window: found, still not remembered.
        assert.strictEqual(cached.peekWidget(id, "s", t0 + 61_000)?.type, "number")
        assert.strictEqual(peeks, 2)
        // Within the window of the last lookup: remembered, and answered from memory from then on.
        assert.strictEqual(cached.peekWidget(id, "s", t0 + 62_000)?.type, "number")
        assert.strictEqual(peeks, 3)
        for (let i = 0; i < 3; i++) assert.strictEqual(cached.peekWidget(id, "s", t0 + 63_000)?.type, "number")
        assert.strictEqual(peeks, 3)
        // Another widget has its own record: its first lookup is not remembered.
        assert.strictEqual(cached.peekWidget(id, "t", t0 + 63_000)?.type, "label")
        assert.strictEqual(cached.peekWidget(id, "t", t0 + 63_000)?.type, "label")
        assert.strictEqual(peeks, 5)
        assert.strictEqual(cached.peekWidget(id, "t", t0 + 63_000)?.type, "label")
        assert.strictEqual(peeks, 5)
        // An absent name is remembered at once, as without a doorkeeper.
        assert.isNull(cached.peekWidget(id, "u", t0))
        assert.isNull(cached.peekWidget(id, "u", t0))
        assert.strictEqual(peeks, 6)
        // The effect path remembers at once.
        const viaEffect = cachedAccountStore(synchronous, {
          ttlMillis: 600_000,
          maxEntries: 10,
          peekAdmissionMillis: 60_000
        })
        yield* viaEffect.findWidgets(id, ["s"])
        assert.strictEqual(viaEffect.peekWidget(id, "s")?.type, "number")
        assert.strictEqual(peeks, 6)
        // The default options have the doorkeeper, over twice the entries' time to live.
        assert.strictEqual(defaultAccountCacheOptions.peekAdmissionMillis, 2 * defaultAccountCacheOptions.ttlMillis)
      })
  )

  it("Doorkeeper: admits an id found before within the window; ids sharing a slot push each other out", () => {
    const door = new Doorkeeper(1_000, 8)
    assert.isFalse(door.admit(3, 0))
    assert.isTrue(door.admit(3, 1_000))
    assert.isFalse(door.admit(3, 2_001))
    assert.isTrue(door.admit(3, 2_002))
    // 11 takes 3's slot (11 mod 8 = 3): neither is ever taken for the other.
    assert.isFalse(door.admit(11, 2_003))
    assert.isFalse(door.admit(3, 2_004))
    assert.isTrue(door.admit(3, 2_005))
    // Another slot is unaffected, and id 0 is not mistaken for an empty slot.
    assert.isFalse(door.admit(0, 2_005))
    assert.isTrue(door.admit(0, 2_006))
    assert.throws(() => new Doorkeeper(1_000, 12), /power of two/)
  })

  it.effect("never caches an unknown key: a key added later is found at once", () =>
    Effect.gen(function* () {
      const { accountStore, counted, id } = yield* setup
      const cached = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 10 })
      assert.isTrue(Option.isNone(yield* cached.findAccountByKey(digestAccessKey("key-2"))))
      yield* accountStore.addAccessKey(id, digestAccessKey("key-2"), 1, false)
      assert.strictEqual(Option.getOrNull(yield* cached.findAccountByKey(digestAccessKey("key-2"))), id)
    })
  )

  it.effect("remembers an absent widget: asked once within the TTL, for findWidgets and peekWidget alike", () =>
    Effect.gen(function* () {
      const { counted, id, lookups } = yield* setup
      const cached = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 10 })
      assert.deepStrictEqual([...(yield* cached.findWidgets(id, ["s", "t", "u"])).keys()], ["s"])
      for (let i = 0; i < 3; i++) {
        assert.deepStrictEqual([...(yield* cached.findWidgets(id, ["t", "s", "u"])).keys()], ["s"])
        assert.isNull(cached.peekWidget(id, "t"))
      }
      assert.deepStrictEqual(lookups(), [0, 1])
      // Per account: another account's same name is not known.
      assert.isUndefined(cached.peekWidget("acc-2" as AccountId, "t"))
    })
  )

  it.effect("peekWidget judges expiry by the clock reading it is given (one per request), else by its own", () =>
    Effect.gen(function* () {
      const { counted, id } = yield* setup
      const cached = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 10 })
      assert.strictEqual((yield* cached.findWidgets(id, ["s"])).get("s")?.type, "number")
      assert.isNull((yield* cached.findWidgets(id, ["absent"])).get("absent") ?? null)
      const now = Date.now()
      assert.strictEqual(cached.peekWidget(id, "s", now)?.type, "number")
      assert.isNull(cached.peekWidget(id, "absent", now))
      // A reading past the TTL: both entries have expired (and are forgotten), whatever the process clock says.
      assert.isUndefined(cached.peekWidget(id, "s", now + 120_000))
      assert.isUndefined(cached.peekWidget(id, "absent", now + 120_000))
      assert.isUndefined(cached.peekWidget(id, "s"))
    })
  )

  it.effect("a widget created through it is found at once, one created elsewhere once the TTL has passed", () =>
    Effect.gen(function* () {
      const { accountStore, counted, id } = yield* setup
      const cached = cachedAccountStore(counted, { ttlMillis: 100, maxEntries: 10 })
      assert.isUndefined((yield* cached.findWidgets(id, ["t", "u"])).get("t"))
      assert.isNull(cached.peekWidget(id, "u"))
      yield* cached.createWidget(id, "t" as StreamName, "list", 1)
      assert.strictEqual((yield* cached.findWidgets(id, ["t"])).get("t")?.type, "list")
      assert.strictEqual(cached.peekWidget(id, "t")?.type, "list")
      // Another process creates u (here: straight through the underlying store): still absent here, for the TTL.
      yield* accountStore.createWidget(id, "u" as StreamName, "number", 1)
      assert.isNull(cached.peekWidget(id, "u"))
      assert.isUndefined((yield* cached.findWidgets(id, ["u"])).get("u"))
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 150)))
      assert.isUndefined(cached.peekWidget(id, "u"))
      assert.strictEqual((yield* cached.findWidgets(id, ["u"])).get("u")?.type, "number")
      // serve --workers N: a worker told of the creation forgets the absence at once.
      const cache = makeAccountCache(counted, { ttlMillis: 60_000, maxEntries: 10 })
      assert.isUndefined((yield* cache.store.findWidgets(id, ["v"])).get("v"))
      yield* accountStore.createWidget(id, "v" as StreamName, "number", 1)
      assert.isNull(cache.store.peekWidget(id, "v"))
      cache.forgetWidget(id, "v")
      assert.strictEqual((yield* cache.store.findWidgets(id, ["v"])).get("v")?.type, "number")
    })
  )

  it.effect("a lookup under way while a widget is created through it does not remember the name as absent", () =>
    Effect.gen(function* () {
      const { counted, id } = yield* setup
      const gate = yield* Deferred.make<void>()
      // The store's read happens first (t is not there yet), its answer comes once the gate opens.
      const slow: AccountStore["Type"] = {
        ...counted,
        findWidgets: (account, names) =>
          Effect.flatMap(counted.findWidgets(account, names), (found) => Effect.as(Deferred.await(gate), found))
      }
      const cached = cachedAccountStore(slow, { ttlMillis: 60_000, maxEntries: 10 })
      const inFlight = yield* Effect.fork(cached.findWidgets(id, ["t"]))
      yield* Effect.yieldNow()
      yield* cached.createWidget(id, "t" as StreamName, "list", 1)
      yield* Deferred.succeed(gate, undefined)
      assert.isUndefined((yield* Fiber.join(inFlight)).get("t"))
      assert.isUndefined(cached.peekWidget(id, "t"))
      assert.strictEqual((yield* cached.findWidgets(id, ["t"])).get("t")?.type, "list")
    })
  )

  it.effect("revoking keys and deleting widgets through it take effect at once", () =>
    Effect.gen(function* () {
      const { counted, id } = yield* setup
      const cached = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 10 })
      assert.isTrue(Option.isSome(yield* cached.findAccountByKey(digestAccessKey("key-1"))))
      yield* cached.addAccessKey(id, digestAccessKey("key-2"), 1, true)
      assert.isTrue(Option.isNone(yield* cached.findAccountByKey(digestAccessKey("key-1"))))
      assert.isDefined((yield* cached.findWidgets(id, ["s"])).get("s"))
      yield* cached.deleteWidget(id, "s")
      assert.isUndefined((yield* cached.findWidgets(id, ["s"])).get("s"))
    })
  )

  it.effect("changes made elsewhere are seen once the TTL has passed", () =>
    Effect.gen(function* () {
      const { accountStore, counted, id } = yield* setup
      const cached = cachedAccountStore(counted, { ttlMillis: 50, maxEntries: 10 })
      assert.isTrue(Option.isSome(yield* cached.findAccountByKey(digestAccessKey("key-1"))))
      // Another process revokes the key (here: straight through the underlying store).
      yield* accountStore.addAccessKey(id, digestAccessKey("key-2"), 1, true)
      yield* Effect.promise(() => new Promise((r) => setTimeout(r, 80)))
      assert.isTrue(Option.isNone(yield* cached.findAccountByKey(digestAccessKey("key-1"))))
    })
  )

  it.effect("a write to a widget deleted elsewhere fails with StreamNotFound, not into another stream", () =>
    Effect.gen(function* () {
      const { accountStore, streamStore, counted, id } = yield* setup
      const cached = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 10 })
      const widget = (yield* cached.findWidgets(id, ["s"])).get("s")!
      yield* accountStore.deleteWidget(id, "s")
      yield* accountStore.createWidget(id, "s" as StreamName, "number", 2)
      const stale = (yield* cached.findWidgets(id, ["s"])).get("s")!
      assert.strictEqual(stale.id, widget.id)
      const error = yield* Effect.flip(
        streamStore.write(
          [{ widget: stale, op: { _tag: "Put", entries: [{ point: { number: 1 } }] }, path: "point" }],
          0 as never
        )
      )
      assert.strictEqual(error._tag, "StreamNotFound")
    })
  )

  it.effect("keeps at most maxEntries per cache, forgetting the oldest", () =>
    Effect.gen(function* () {
      const { accountStore, counted, id, lookups } = yield* setup
      yield* accountStore.createWidget(id, "t" as StreamName, "number", 1)
      const cached = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 1 })
      yield* cached.findWidgets(id, ["s"])
      yield* cached.findWidgets(id, ["s"])
      assert.deepStrictEqual(lookups(), [0, 1])
      yield* cached.findWidgets(id, ["t"]) // evicts s
      yield* cached.findWidgets(id, ["s"])
      assert.deepStrictEqual(lookups(), [0, 3])
    })
  )

  it.effect("a full cache makes room by forgetting a tenth of its entries, oldest first, and the expired ones", () =>
    Effect.gen(function* () {
      const { accountStore, counted, id, lookups } = yield* setup
      const names = Array.from({ length: 21 }, (_, i) => `w${i}`)
      for (const name of names) yield* accountStore.createWidget(id, name as StreamName, "number", 1)
      const cached = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 20 })
      for (const name of names.slice(0, 20)) yield* cached.findWidgets(id, [name])
      assert.deepStrictEqual(lookups(), [0, 20])
      yield* cached.findWidgets(id, ["w20"]) // full: w0 and w1 go
      for (const name of names.slice(2)) yield* cached.findWidgets(id, [name])
      assert.deepStrictEqual(lookups(), [0, 21])
      yield* cached.findWidgets(id, ["w1"])
      yield* cached.findWidgets(id, ["w0"])
      assert.deepStrictEqual(lookups(), [0, 23])
    })
  )

  // With a million streams, a full widget cache took ~100 µs per miss to make room (one eviction at a
  // time walks every hole the earlier evictions left in the Map). 300,000 misses past a full 100,000-entry cache took
  // about 10x what the same misses cost in a cache that never fills; making room in bulk costs about 2x. Compared with
  // that baseline in the same run, not against a fixed time, so a loaded machine slows both alike.
  it.effect(
    "making room in a full cache costs little per miss",
    () =>
      Effect.gen(function* () {
        const { accountStore } = yield* MemoryStore.make
        const widget = { id: 1, accountId: "a", streamName: "s", type: "number", createdAt: 0 } as never
        const found = Effect.succeed(new Map([["s", widget]]))
        const misses = (maxEntries: number) =>
          Effect.gen(function* () {
            const cached = cachedAccountStore(
              { ...accountStore, findWidgets: () => found },
              { ttlMillis: 60_000, maxEntries }
            )
            const started = performance.now()
            for (let i = 0; i < 300_000; i++) yield* cached.findWidgets(`acc-${i}` as AccountId, ["s"])
            return performance.now() - started
          })
        const roomy = yield* misses(1_000_000)
        const ratio = (yield* misses(100_000)) / roomy
        assert.isBelow(ratio, 5, `300,000 misses past a full cache cost ${ratio.toFixed(1)}x those in a roomy one`)
      }),
    120_000
  )

  it.effect("keeps at most maxAbsentEntries absent names, apart: a flood of made-up names evicts no widget", () =>
    Effect.gen(function* () {
      const { counted, id, lookups } = yield* setup
      const cached = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 10, maxAbsentEntries: 20 })
      yield* cached.findWidgets(id, ["s"])
      const names = Array.from({ length: 1000 }, (_, i) => `made-up-${i}`)
      for (const name of names) yield* cached.findWidgets(id, [name])
      assert.deepStrictEqual(lookups(), [0, 1001])
      // The widget is still remembered; so are the latest absent names (a full cache drops a tenth at a time).
      yield* cached.findWidgets(id, ["s", ...names.slice(-18)])
      assert.strictEqual(cached.peekWidget(id, "s")?.type, "number")
      assert.deepStrictEqual(lookups(), [0, 1001])
      // The first ones were forgotten: asked again.
      assert.isUndefined(cached.peekWidget(id, names[0]!))
      yield* cached.findWidgets(id, [names[0]!])
      assert.deepStrictEqual(lookups(), [0, 1002])
      // Without maxAbsentEntries, maxEntries bounds them.
      const bounded = cachedAccountStore(counted, { ttlMillis: 60_000, maxEntries: 10 })
      yield* bounded.findWidgets(id, names.slice(0, 11))
      assert.isUndefined(bounded.peekWidget(id, names[0]!))
      assert.isNull(bounded.peekWidget(id, names[10]!))
    })
  )

  // A flood of distinct made-up names (an agent's series) past a full absent cache: each costs about what it costs in
  // a cache that never fills (bulk eviction), compared in the same run as the widget test above.
  it.effect(
    "remembering absent names past a full cache costs little per name",
    () =>
      Effect.gen(function* () {
        const { accountStore } = yield* MemoryStore.make
        const none = Effect.succeed(new Map())
        const names = Array.from({ length: 300_000 }, (_, i) => `cpu.usage_idle{cpu=cpu${i},host=web1}`)
        const misses = (maxAbsentEntries: number) =>
          Effect.gen(function* () {
            const cached = cachedAccountStore(
              { ...accountStore, findWidgets: () => none },
              { ttlMillis: 60_000, maxEntries: 10, maxAbsentEntries }
            )
            const started = performance.now()
            for (const name of names) yield* cached.findWidgets("acc-1" as AccountId, [name])
            return performance.now() - started
          })
        const roomy = yield* misses(1_000_000)
        const ratio = (yield* misses(100_000)) / roomy
        assert.isBelow(ratio, 5, `300,000 names past a full absent cache cost ${ratio.toFixed(1)}x a roomy one's`)
      }),
    120_000
  )

  it.effect("withAccountCache(storage) provides the cached store, not the raw one", () =>
    Effect.gen(function* () {
      const { counted, id, lookups } = yield* setup
      const composed = withAccountCache(Layer.succeed(AccountStore, counted))
      yield* Effect.provide(
        Effect.flatMap(AccountStore, (store) => Effect.repeatN(store.findAccountByKey(digestAccessKey("key-1")), 3)),
        composed
      )
      assert.deepStrictEqual(lookups(), [1, 0])
      void id
    })
  )
})
