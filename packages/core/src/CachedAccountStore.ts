import { Effect, Layer, Option } from "effect"
import type { AccountId, KeyDigest } from "./Account.js"
import { AccountStore } from "./AccountStore.js"
import type { Widget } from "./Widget.js"

/**
 * How long the push and read paths may trust what they looked up. `ttlMillis` in milliseconds; `maxEntries` caps each
 * of the two caches (access keys, widgets); the oldest entries go first.
 */
export interface AccountCacheOptions {
  readonly ttlMillis: number
  readonly maxEntries: number
}

/** One second, 100,000 entries: at a few hundred pushes per second per key almost every lookup is a hit. */
export const defaultAccountCacheOptions: AccountCacheOptions = { ttlMillis: 1_000, maxEntries: 100_000 }

interface Cached<A> {
  readonly value: A
  readonly until: number
}

/**
 * Makes room in a full cache: drops, oldest first, every expired entry and at least a tenth of the entries. Entries
 * are stored in the order they expire (an entry is only set when absent or expired, always for `ttlMillis`), so the
 * oldest come first. Evicting in bulk keeps it cheap: a `Map` leaves a hole where an entry was deleted until it
 * rehashes, and iteration walks the holes, so taking the first key one eviction at a time walks every hole left by
 * the evictions before (about 100 µs per insert into a full 100,000-entry cache, measured; issue 12).
 */
const evict = <A>(map: Map<string, Cached<A>>, now: number) => {
  let drop = Math.max(1, Math.ceil(map.size / 10))
  for (const [key, cached] of map) {
    if (drop <= 0 && cached.until > now) break
    map.delete(key)
    drop--
  }
}

const remember = <A>(map: Map<string, Cached<A>>, key: string, value: A, options: AccountCacheOptions) => {
  const now = Date.now()
  if (map.size >= options.maxEntries) evict(map, now)
  map.set(key, { value, until: now + options.ttlMillis })
}

const recall = <A>(map: Map<string, Cached<A>>, key: string): A | undefined => {
  const hit = map.get(key)
  if (hit === undefined) return undefined
  if (hit.until > Date.now()) return hit.value
  map.delete(key)
  return undefined
}

const widgetKey = (id: AccountId, name: string) => `${id}\u0000${name}`

/**
 * Wraps an {@link AccountStore} so that the two lookups every push and read makes, access key → account and stream
 * name → widget, are answered from memory for `ttlMillis` after a hit in the store. Only found results are cached
 * (a key or widget created a moment ago is seen at once). Changes made through this store take effect at once in
 * this process: `addAccessKey` with `revokeOthers` forgets every cached key, `deleteWidget` forgets the widget.
 * Changes made through another process (several servers on one PostgreSQL) take effect here within `ttlMillis`:
 * a revoked key keeps working, and a deleted widget keeps resolving, for at most that long (a push to a deleted
 * widget then fails with `StreamNotFound` at write time, never landing in another stream).
 */
export const cachedAccountStore = (
  store: AccountStore["Type"],
  options: AccountCacheOptions = defaultAccountCacheOptions
): AccountStore["Type"] => makeAccountCache(store, options).store

/**
 * A {@link cachedAccountStore} and the means to forget what it holds when another process changed the accounts:
 * `serve --workers N` tells every worker of a revocation or deletion made through one of them, so that it takes
 * effect in all of them at once rather than within `ttlMillis`.
 */
export interface AccountCache {
  /** The cached store (see {@link cachedAccountStore}). */
  readonly store: AccountStore["Type"]
  /** Forgets every cached access key (keys were revoked elsewhere). */
  readonly forgetKeys: () => void
  /** Forgets the cached widget `streamName` of account `id` (deleted elsewhere). */
  readonly forgetWidget: (id: AccountId, streamName: string) => void
}

/** {@link cachedAccountStore} with its {@link AccountCache} handles. */
export const makeAccountCache = (
  store: AccountStore["Type"],
  options: AccountCacheOptions = defaultAccountCacheOptions
): AccountCache => {
  const keys = new Map<string, Cached<AccountId>>()
  const widgets = new Map<string, Cached<Widget>>()
  const cached: AccountStore["Type"] = {
    ...store,
    // Effect.suspend: the cache is consulted each time the effect runs, not once when it is built.
    findAccountByKey: (digest: KeyDigest) =>
      Effect.suspend(() => {
        const hit = recall(keys, digest)
        if (hit !== undefined) return Effect.succeed(Option.some(hit))
        return Effect.tap(store.findAccountByKey(digest), (found) => {
          if (Option.isSome(found)) remember(keys, digest, found.value, options)
        })
      }),
    findWidgets: (id, names) =>
      Effect.suspend(() => {
        const found = new Map<string, Widget>()
        let missing: Array<string> | undefined
        for (const name of names) {
          const hit = recall(widgets, widgetKey(id, name))
          if (hit !== undefined) found.set(name, hit)
          else (missing ??= []).push(name)
        }
        if (missing === undefined) return Effect.succeed(found)
        return Effect.map(store.findWidgets(id, missing), (fetched) => {
          for (const [name, widget] of fetched) {
            remember(widgets, widgetKey(id, name), widget, options)
            found.set(name, widget)
          }
          return found
        })
      }),
    // A miss asks the store's own synchronous lookup, when it has one (SQLite), and remembers what it found.
    peekAccountByKey: (digest) => {
      const hit = recall(keys, digest)
      if (hit !== undefined || store.peekAccountByKey === undefined) return hit
      const found = store.peekAccountByKey(digest)
      if (found !== undefined) remember(keys, digest, found, options)
      return found
    },
    peekWidget: (id, name) => {
      const key = widgetKey(id, name)
      const hit = recall(widgets, key)
      if (hit !== undefined || store.peekWidget === undefined) return hit
      const found = store.peekWidget(id, name)
      if (found !== undefined) remember(widgets, key, found, options)
      return found
    },
    addAccessKey: (id, key, createdAt, revokeOthers) =>
      Effect.tap(store.addAccessKey(id, key, createdAt, revokeOthers), () => {
        if (revokeOthers) keys.clear()
      }),
    deleteWidget: (id, streamName) =>
      Effect.ensuring(
        store.deleteWidget(id, streamName),
        Effect.sync(() => widgets.delete(widgetKey(id, streamName)))
      )
  }
  return {
    store: cached,
    forgetKeys: () => keys.clear(),
    forgetWidget: (id, streamName) => void widgets.delete(widgetKey(id, streamName))
  }
}

/**
 * `storage` with its {@link AccountStore} replaced by {@link cachedAccountStore} of it; every other service of
 * `storage` passes through unchanged.
 */
export const withAccountCache = <ROut, E, RIn>(
  storage: Layer.Layer<ROut | AccountStore, E, RIn>,
  options: AccountCacheOptions = defaultAccountCacheOptions
): Layer.Layer<ROut | AccountStore, E, RIn> =>
  // Layer.merge: the right side's services win; layers are memoised by reference, so `storage` is built once.
  Layer.merge(
    storage,
    Layer.effect(
      AccountStore,
      Effect.map(AccountStore, (store) => cachedAccountStore(store, options))
    ).pipe(Layer.provide(storage))
  )
