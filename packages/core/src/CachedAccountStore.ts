import { Effect, Layer, Option } from "effect"
import { type AccountId, digestAccessKey, type KeyDigest } from "./Account.js"
import { AccountStore } from "./AccountStore.js"
import { replaceService } from "./internal/replaceService.js"
import type { Widget } from "./Widget.js"

/**
 * How long the push and read paths may trust what they looked up. `ttlMillis` in milliseconds; `maxEntries` caps each
 * of the two caches of found things (access keys, widgets); `maxAbsentEntries` (default `maxEntries`) caps the stream
 * names remembered as not being widgets, kept apart so that names an agent makes up cannot push out the widgets. In
 * each, the oldest entries go first.
 */
export interface AccountCacheOptions {
  readonly ttlMillis: number
  readonly maxEntries: number
  readonly maxAbsentEntries?: number | undefined
  /**
   * The doorkeeper of the synchronous lookups, in milliseconds: a widget that `peekWidget` had to ask the store's own
   * synchronous lookup for (SQLite) is remembered only when that lookup found the same widget before, within this
   * long; `undefined` remembers it at once. Widgets found by `findWidgets` (the effect path, PostgreSQL's only one)
   * are remembered at once either way.
   */
  readonly peekAdmissionMillis?: number | undefined
}

/**
 * One second, 100,000 entries each: at a few hundred pushes per second per key almost every lookup is a hit. A
 * remembered absent name costs about 100-600 bytes (the name, up to 255 characters, and the entry). A widget looked
 * up synchronously is remembered from its second lookup within two seconds on (see {@link Doorkeeper}): twice the
 * time to live, so that a widget asked for steadily is remembered again at its first lookup after its entry expired.
 */
export const defaultAccountCacheOptions: AccountCacheOptions = {
  ttlMillis: 1_000,
  maxEntries: 100_000,
  maxAbsentEntries: 100_000,
  peekAdmissionMillis: 2_000
}

interface Cached<A> {
  readonly value: A
  readonly until: number
}

/**
 * Makes room in a full cache: drops, oldest first, every expired entry and at least a tenth of the entries. Entries
 * are stored in the order they expire (an entry is only set when absent or expired, always for `ttlMillis`), so the
 * oldest come first. Evicting in bulk keeps it cheap: a `Map` leaves a hole where an entry was deleted until it
 * rehashes, and iteration walks the holes, so taking the first key one eviction at a time walks every hole left by
 * the evictions before (about 100 µs per insert into a full 100,000-entry cache, measured).
 */
const evict = <A>(map: Map<string, Cached<A>>, now: number) => {
  let drop = Math.max(1, Math.ceil(map.size / 10))
  for (const [key, cached] of map) {
    if (drop <= 0 && cached.until > now) break
    map.delete(key)
    drop--
  }
}

const remember = <A>(map: Map<string, Cached<A>>, key: string, value: A, ttlMillis: number, maxEntries: number) => {
  const now = Date.now()
  if (map.size >= maxEntries) evict(map, now)
  map.set(key, { value, until: now + ttlMillis })
}

const recall = <A>(map: Map<string, Cached<A>>, key: string): A | undefined => {
  const hit = map.get(key)
  if (hit === undefined) return undefined
  if (hit.until > Date.now()) return hit.value
  map.delete(key)
  return undefined
}

/**
 * Which widgets the synchronous lookup found lately: a table of `slots` (a power of two) stream ids and when each was
 * last found (milliseconds), indexed by the id, with no allocation per lookup. A widget is worth remembering only
 * when it will be asked for again within the cache's time to live; one looked up once among a million (a read or
 * push of a random stream) would only be allocated, kept alive for the time to live, promoted by the garbage
 * collector's young generation and collected from the old one. Measured (`bench:scale`'s random-stream
 * reads of 1,000,000 streams on SQLite): the remembered widgets were most of what outlived a young-generation
 * collection, and those collections set the reads' p99. Two ids sharing a slot only cost a lookup more: an id is never
 * taken for another. `windowMillis`: how long a lookup counts, in milliseconds; `slots`: the table's size (a power of
 * two; 65,536 by default, 1 MiB).
 */
export class Doorkeeper {
  private readonly ids: Float64Array
  private readonly at: Float64Array

  constructor(
    private readonly windowMillis: number,
    slots = 65_536
  ) {
    if (!(Number.isSafeInteger(slots) && slots > 0 && (slots & (slots - 1)) === 0))
      throw new Error(`Doorkeeper: slots must be a power of two, got ${slots}`)
    this.ids = new Float64Array(slots).fill(Number.NaN)
    this.at = new Float64Array(slots)
  }

  /**
   * Records that stream `id` (a non-negative safe integer) was found at `now` (milliseconds), and tells whether it was
   * found before within the window (then it is worth remembering).
   */
  admit(id: number, now: number): boolean {
    // The low bits of an id (ids count up as streams are created): consecutive streams take consecutive slots.
    const slot = id % this.ids.length
    const seen = this.ids[slot] === id && now - this.at[slot]! <= this.windowMillis
    this.ids[slot] = id
    this.at[slot] = now
    return seen
  }
}

interface Named<A> extends Cached<A> {
  readonly id: AccountId
  readonly name: string
}

/**
 * What is remembered of the stream names of every account (their widgets, or their absence): looked up by account
 * then by name, so that a lookup builds no key (a key string `account + name` per stream name was hashed afresh on
 * every lookup: 3 % of a 100-stream push's CPU), and kept in the order remembered, which is the order
 * they expire, for {@link evict}'s bulk eviction. At most `maxEntries` entries.
 */
class NameCache<A> {
  private readonly byAccount = new Map<AccountId, Map<string, Named<A>>>()
  private readonly order = new Set<Named<A>>()

  constructor(
    private readonly ttlMillis: number,
    private readonly maxEntries: number
  ) {}

  /** What is remembered of `name` of account `id` until after `now` (milliseconds), or `undefined`. */
  get(id: AccountId, name: string, now: number): A | undefined {
    const hit = this.byAccount.get(id)?.get(name)
    if (hit === undefined) return undefined
    if (hit.until > now) return hit.value
    this.forget(hit)
    return undefined
  }

  /**
   * Remembers `value` for `name` of account `id` for `ttlMillis`. `name` is kept: it must hold only its own
   * characters (see `ownCopy`).
   */
  set(id: AccountId, name: string, value: A): void {
    const now = Date.now()
    if (this.order.size >= this.maxEntries) this.evict(now)
    let names = this.byAccount.get(id)
    if (names === undefined) this.byAccount.set(id, (names = new Map()))
    const old = names.get(name)
    if (old !== undefined) this.order.delete(old)
    const entry: Named<A> = { value, until: now + this.ttlMillis, id, name }
    names.set(name, entry)
    this.order.add(entry)
  }

  /** Forgets `name` of account `id`. */
  delete(id: AccountId, name: string): void {
    const hit = this.byAccount.get(id)?.get(name)
    if (hit !== undefined) this.forget(hit)
  }

  private forget(entry: Named<A>): void {
    const names = this.byAccount.get(entry.id)!
    names.delete(entry.name)
    if (names.size === 0) this.byAccount.delete(entry.id)
    this.order.delete(entry)
  }

  // As `evict` does for a map: every expired entry and at least a tenth of the entries, oldest first.
  private evict(now: number): void {
    let drop = Math.max(1, Math.ceil(this.order.size / 10))
    for (const entry of this.order) {
      if (drop <= 0 && entry.until > now) break
      this.forget(entry)
      drop--
    }
  }
}

/**
 * A copy of `key` that holds only its own characters. A name a parser cut out of a request body is a V8 slice (or a
 * concatenation of slices) of the whole body: kept as a map key, it would keep the body alive (measured: 20,000
 * absent names from 100 KB bodies held 2 GB). Concatenating then slicing makes V8 flatten the key into a fresh string.
 */
const ownCopy = (key: string): string => (key + "\u0000").slice(0, -1)

/**
 * Wraps an {@link AccountStore} so that the two lookups every push and read makes, access key → account and stream
 * name → widget, are answered from memory for `ttlMillis` after the store answered them. A widget is remembered
 * found or absent: a stream name the account has no widget of is answered "absent" from memory too (the line
 * protocol skips such names, docs/api.md section 13.1, and an agent sends far more of them than a dashboard declares), so that
 * a request naming them is answered without asking the store, and `peekWidget` can say `null`. An access key is
 * only remembered when found (a key created a moment ago is seen at once).
 *
 * Changes made through this store take effect at once in this process: `addAccessKey` with `revokeOthers` forgets
 * every cached key, `createWidget` forgets the name's absence, `deleteWidget` forgets the widget; a lookup that was
 * under way meanwhile (it may have read the store before the change) remembers nothing. Changes made through another
 * process (several servers on one PostgreSQL) take effect here within `ttlMillis`: a revoked key keeps working, a
 * deleted widget keeps resolving (a push to it then fails with `StreamNotFound` at write time, never landing in
 * another stream), and a created widget stays absent (the line protocol skips its values; the original push answers
 * `StreamNotFound`), each for at most that long.
 *
 * Memory is bounded: `maxEntries` keys (and as many digests of found keys by the key as sent, so that `peekAccount`
 * computes no SHA-256 per request) and widgets, and apart from them `maxAbsentEntries` absent names, so that a
 * flood of made-up names evicts only absent names, a tenth of them at a time (O(1) amortised per name).
 */
export const cachedAccountStore = (
  store: AccountStore["Type"],
  options: AccountCacheOptions = defaultAccountCacheOptions
): AccountStore["Type"] => makeAccountCache(store, options).store

/**
 * A {@link cachedAccountStore} and the means to forget what it holds when another process changed the accounts:
 * `serve --workers N` tells every worker of a revocation, or of a widget created or deleted, through one of them, so
 * that it takes effect in all of them at once rather than within `ttlMillis`.
 */
export interface AccountCache {
  /** The cached store (see {@link cachedAccountStore}). */
  readonly store: AccountStore["Type"]
  /** Forgets every cached access key (keys were revoked elsewhere). */
  readonly forgetKeys: () => void
  /** Forgets what is cached of stream `streamName` of account `id`, found or absent (created or deleted elsewhere). */
  readonly forgetWidget: (id: AccountId, streamName: string) => void
}

/** {@link cachedAccountStore} with its {@link AccountCache} handles. */
export const makeAccountCache = (
  store: AccountStore["Type"],
  options: AccountCacheOptions = defaultAccountCacheOptions
): AccountCache => {
  const { ttlMillis, maxEntries } = options
  const maxAbsent = options.maxAbsentEntries ?? maxEntries
  const keys = new Map<string, Cached<AccountId>>()
  // The digests of the access keys `peekAccount` found, by the key as sent: no SHA-256 per request.
  const digests = new Map<string, KeyDigest>()
  const widgets = new NameCache<Widget>(ttlMillis, maxEntries)
  const absent = new NameCache<true>(ttlMillis, maxAbsent)
  const doorkeeper = options.peekAdmissionMillis === undefined ? undefined : new Doorkeeper(options.peekAdmissionMillis)
  const lookup = store.lookupWidget?.bind(store)
  // Bumped by every change to the widgets made or learnt of here: a lookup that began before it may have read the
  // store before the change, so what it found is not remembered.
  let generation = 0
  const forgetKeys = () => {
    keys.clear()
    digests.clear()
  }
  // What is remembered of stream name `name` of account `id` at `now` (milliseconds): its widget, `null` (remembered
  // absent) or `undefined` (nothing).
  const recallWidget = (id: AccountId, name: string, now: number): Widget | null | undefined => {
    const hit = widgets.get(id, name, now)
    if (hit !== undefined) return hit
    return absent.get(id, name, now) === undefined ? undefined : null
  }
  // Remembers what the store answered for `name`: its widget, keyed by the store's own name (a name from a request may
  // hold the request's body, `ownCopy`), or its absence.
  const learnWidget = (id: AccountId, name: string, widget: Widget | null) => {
    if (widget !== null) widgets.set(id, widget.streamName, widget)
    else absent.set(id, ownCopy(name), true)
  }
  const forgetWidget = (id: AccountId, streamName: string) => {
    widgets.delete(id, streamName)
    absent.delete(id, streamName)
    generation++
  }
  const cached: AccountStore["Type"] = {
    ...store,
    // Effect.suspend: the cache is consulted each time the effect runs, not once when it is built.
    findAccountByKey: (digest: KeyDigest) =>
      Effect.suspend(() => {
        const hit = recall(keys, digest)
        if (hit !== undefined) return Effect.succeed(Option.some(hit))
        return Effect.tap(store.findAccountByKey(digest), (found) => {
          if (Option.isSome(found)) remember(keys, digest, found.value, ttlMillis, maxEntries)
        })
      }),
    findWidgets: (id, names) =>
      Effect.suspend(() => {
        const found = new Map<string, Widget>()
        let missing: Array<string> | undefined
        const now = Date.now()
        for (const name of names) {
          const known = recallWidget(id, name, now)
          if (known) found.set(name, known)
          else if (known === undefined) (missing ??= []).push(name)
        }
        if (missing === undefined) return Effect.succeed(found)
        const asked = generation
        const lookedUp = missing
        return Effect.map(store.findWidgets(id, lookedUp), (fetched) => {
          const current = asked === generation
          for (const name of lookedUp) {
            const widget = fetched.get(name)
            if (widget !== undefined) found.set(name, widget)
            if (current) learnWidget(id, name, widget ?? null)
          }
          return found
        })
      }),
    // The key's digest is remembered (a SHA-256 per push was ~4% of the push path's CPU); a miss asks the
    // store's own synchronous lookup (SQLite), and remembers what it answered.
    peekAccount: (accessKey) => {
      if (accessKey === "") return undefined
      const known = digests.get(accessKey)
      const digest = known ?? digestAccessKey(accessKey)
      let found = recall(keys, digest)
      if (found === undefined) {
        found = store.peekAccount(accessKey)
        if (found === undefined) return undefined
        remember(keys, digest, found, ttlMillis, maxEntries)
      }
      // Only found keys, so unknown keys sent over and over cannot fill it; bounded like the keys, and forgotten
      // with them. A copy: a key cut out of a request body would keep the body alive (`ownCopy`).
      if (known === undefined) {
        if (digests.size >= maxEntries) digests.clear()
        digests.set(ownCopy(accessKey), digest)
      }
      return found
    },
    peekWidget: (id, name, nowMillis) => {
      const now = nowMillis ?? Date.now()
      const known = recallWidget(id, name, now)
      if (known !== undefined) return known
      const found = store.peekWidget(id, name)
      if (found === null || (found !== undefined && (doorkeeper === undefined || doorkeeper.admit(found.id, now))))
        learnWidget(id, name, found)
      return found
    },
    // The store's lookup without an effect (PostgreSQL), cached as findWidgets is; absent when the store has none.
    lookupWidget:
      lookup === undefined
        ? undefined
        : (id, name, done) => {
            const known = recallWidget(id, name, Date.now())
            if (known !== undefined) return done(undefined, known)
            const asked = generation
            lookup(id, name, (error, widget) => {
              if (error === undefined && asked === generation) learnWidget(id, name, widget)
              done(error, widget)
            })
          },
    addAccessKey: (id, key, createdAt, revokeOthers) =>
      Effect.tap(store.addAccessKey(id, key, createdAt, revokeOthers), () => {
        if (revokeOthers) forgetKeys()
      }),
    // Forgotten whatever the outcome: a failure may come after the change was made (a lost connection at commit).
    createWidget: (id, streamName, type, createdAt) =>
      Effect.ensuring(
        store.createWidget(id, streamName, type, createdAt),
        Effect.sync(() => forgetWidget(id, streamName))
      ),
    deleteWidget: (id, streamName) =>
      Effect.ensuring(
        store.deleteWidget(id, streamName),
        Effect.sync(() => forgetWidget(id, streamName))
      )
  }
  return { store: cached, forgetKeys, forgetWidget }
}

/**
 * `storage` with its {@link AccountStore} replaced by {@link cachedAccountStore} of it; every other service of
 * `storage` passes through unchanged.
 */
export const withAccountCache = <ROut, E, RIn>(
  storage: Layer.Layer<ROut | AccountStore, E, RIn>,
  options: AccountCacheOptions = defaultAccountCacheOptions
): Layer.Layer<ROut | AccountStore, E, RIn> =>
  replaceService(storage, AccountStore, (store) => cachedAccountStore(store, options))
