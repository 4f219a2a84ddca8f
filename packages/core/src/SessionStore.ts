import { Context, Effect, Layer } from "effect"
import type { StorageFailure } from "./Errors.js"
import { replaceService } from "./internal/replaceService.js"
import type { Micros } from "./Time.js"

/**
 * The storage port of console sign-outs (docs/api.md section 14). A console session is a signed token that any process
 * holding the admin token can check by itself (see `ConsoleSession.ts`); what a signature cannot say is that the
 * session was signed out, so sign-outs are recorded here, where every process on the database sees them. A record is
 * needed only until the session would have expired anyway.
 */
export class SessionStore extends Context.Tag("@dashstream/core/SessionStore")<
  SessionStore,
  {
    /**
     * Records that session `id` was signed out. `expiresAt` (integer microseconds) is when the session expires; the
     * record may be dropped after it. Recording an id again keeps one record. Records that expired before `now`
     * (integer microseconds) may be dropped in the same call, so the records do not pile up.
     */
    readonly endSession: (id: string, expiresAt: Micros, now: Micros) => Effect.Effect<void, StorageFailure>
    /** True when session `id` was signed out (and its record not yet dropped, which happens only after it expired). */
    readonly isSessionEnded: (id: string) => Effect.Effect<boolean, StorageFailure>
  }
>() {}

/**
 * How long a "not signed out" answer is trusted, in milliseconds, and how many answers are held. A sign-out made
 * through the cached store is seen at once; one made by another process within `ttlMillis`.
 */
export interface SessionCacheOptions {
  readonly ttlMillis: number
  readonly maxEntries: number
}

/**
 * "Signed in" is not trusted at all (`ttlMillis` 0): every console request asks the store (one indexed lookup), so a
 * sign-out made through any process is refused by every other at once, as docs/api.md section 14 asks ("from then on").
 * A console makes a few requests a second, one operator at a time, so the lookup costs nothing that matters. Sign-outs
 * are still remembered (10,000 of them), so a replayed cookie is refused from memory.
 */
export const defaultSessionCacheOptions: SessionCacheOptions = { ttlMillis: 0, maxEntries: 10_000 }

/**
 * A cached {@link SessionStore} and the means to learn of a sign-out made through another process (`serve --workers
 * N` tells every worker, so that it takes effect in all of them at once).
 */
export interface SessionCache {
  /** The cached store (see {@link makeSessionCache}). */
  readonly store: SessionStore["Type"]
  /** Records in this process's cache that session `id` was signed out (through another process). */
  readonly ended: (id: string) => void
}

/**
 * Wraps a {@link SessionStore} so that the check each console request makes is answered from memory: a signed-out
 * session is remembered as such (a sign-out is final), a session found signed in is trusted for `ttlMillis`. A
 * sign-out through this store takes effect in this process at once; through another process (several servers on
 * one PostgreSQL), here within `ttlMillis`, as a revoked access key does (see `cachedAccountStore`).
 */
export const makeSessionCache = (
  store: SessionStore["Type"],
  options: SessionCacheOptions = defaultSessionCacheOptions
): SessionCache => {
  const ended = new Set<string>()
  // Session id -> until when (Date.now() milliseconds) "signed in" is trusted; insertion order is expiry order.
  const signedIn = new Map<string, number>()
  const markEnded = (id: string) => {
    signedIn.delete(id)
    // Forgetting a sign-out is safe (the store is asked again), so a full set simply starts over.
    if (ended.size >= options.maxEntries) ended.clear()
    ended.add(id)
  }
  const trustSignedIn = (id: string) => {
    if (signedIn.size >= options.maxEntries) {
      const now = Date.now()
      for (const [key, until] of signedIn) {
        if (until > now && signedIn.size < options.maxEntries) break
        signedIn.delete(key)
      }
    }
    signedIn.set(id, Date.now() + options.ttlMillis)
  }
  return {
    store: {
      endSession: (id, expiresAt, now) => Effect.tap(store.endSession(id, expiresAt, now), () => markEnded(id)),
      // Effect.suspend: the cache is consulted each time the effect runs, not once when it is built.
      isSessionEnded: (id) =>
        Effect.suspend(() => {
          if (ended.has(id)) return Effect.succeed(true)
          const until = signedIn.get(id)
          if (until !== undefined) {
            if (until > Date.now()) return Effect.succeed(false)
            signedIn.delete(id)
          }
          return Effect.tap(store.isSessionEnded(id), (isEnded) => (isEnded ? markEnded(id) : trustSignedIn(id)))
        })
    },
    ended: markEnded
  }
}

/**
 * `storage` with its {@link SessionStore} replaced by the cached store of {@link makeSessionCache}; every other
 * service passes through unchanged.
 */
export const withSessionCache = <ROut, E, RIn>(
  storage: Layer.Layer<ROut | SessionStore, E, RIn>,
  options: SessionCacheOptions = defaultSessionCacheOptions
): Layer.Layer<ROut | SessionStore, E, RIn> =>
  replaceService(storage, SessionStore, (store) => makeSessionCache(store, options).store)
