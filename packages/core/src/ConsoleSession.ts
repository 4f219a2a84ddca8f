import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto"
import { Effect } from "effect"
import type { StorageFailure } from "./Errors.js"
import { SessionStore } from "./SessionStore.js"
import { MICROS_PER_SECOND, type Micros } from "./Time.js"

/**
 * Console sessions (docs/api.md section 14): what a signed-in browser holds instead of the admin token. A session is a
 * signed token `<id>.<expires>.<signature>`:
 * - `id`: 128 random bits, base64url (22 characters), the name under which a sign-out is recorded;
 * - `expires`: UNIX seconds, 12 hours after sign-in;
 * - `signature`: HMAC-SHA256 of `<id>.<expires>` under a key derived from the admin token (HKDF-SHA256), base64url.
 *
 * Anyone holding the admin token can check a session without asking the storage, so it works on every worker and
 * every process of a deployment; a new admin token derives another key, which ends every session at once. What the
 * signature cannot tell, that a session was signed out, is asked of `SessionStore` (see {@link isSignedIn}).
 */

/** How long a session lasts after sign-in: 12 hours (docs/api.md section 14), in seconds. */
export const SESSION_LIFETIME_SECONDS = 12 * 60 * 60

/** The key sessions are signed with, derived from one admin token (see {@link sessionKey}). */
export interface SessionKey {
  readonly hmacKey: Buffer
  /** SHA-256 of the admin token, to compare an offered token in constant time (see {@link isAdminToken}). */
  readonly tokenDigest: Buffer
}

/**
 * The session key of `adminToken`: HKDF-SHA256 of the token (salt and info name Dashstream's console sessions, so
 * the key is used for nothing else). Same token, same key, in every process; another token, another key.
 */
export const sessionKey = (adminToken: string): SessionKey => ({
  hmacKey: Buffer.from(hkdfSync("sha256", adminToken, "dashstream console", "session signature v1", 32)),
  tokenDigest: sha256(adminToken)
})

const sha256 = (text: string): Buffer => createHash("sha256").update(text, "utf8").digest()

/**
 * True when `offered` is the admin token `key` was derived from. Constant time: both sides are hashed first, so
 * neither the length nor the content of the token leaks through timing.
 */
export const isAdminToken = (key: SessionKey, offered: string): boolean =>
  timingSafeEqual(sha256(offered), key.tokenDigest)

/** A session whose signature and expiry were checked: its id and when it expires (integer microseconds). */
export interface Session {
  readonly id: string
  readonly expiresAt: Micros
}

/** A new session: its token (the cookie value) and what it names. */
export interface IssuedSession extends Session {
  readonly token: string
}

const signature = (key: SessionKey, payload: string): Buffer =>
  createHmac("sha256", key.hmacKey).update(payload, "utf8").digest()

/** Issues a new session at `now` (integer microseconds), valid for {@link SESSION_LIFETIME_SECONDS}. */
export const issueSession = (key: SessionKey, now: Micros): IssuedSession => {
  const id = randomBytes(16).toString("base64url")
  const expires = Math.floor(now / MICROS_PER_SECOND) + SESSION_LIFETIME_SECONDS
  const payload = `${id}.${expires}`
  return {
    id,
    expiresAt: (expires * MICROS_PER_SECOND) as Micros,
    token: `${payload}.${signature(key, payload).toString("base64url")}`
  }
}

const tokenShape = /^([A-Za-z0-9_-]{22})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/

/**
 * The session a token names, when its signature is `key`'s and it has not expired at `now` (integer microseconds);
 * `undefined` for anything else: malformed, signed with another key (another admin token), tampered with, expired.
 * Says nothing about a sign-out (see {@link isSignedIn}).
 */
export const readSession = (key: SessionKey, token: string, now: Micros): Session | undefined => {
  const match = tokenShape.exec(token)
  if (match === null) return undefined
  const [, id, expires, signed] = match
  // Compared as text: base64url decoding ignores the spare low bits of the last character, so comparing decoded
  // bytes would accept several spellings of one signature.
  const expected = Buffer.from(signature(key, `${id}.${expires}`).toString("base64url"))
  const given = Buffer.from(signed!)
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined
  const expiresAt = Number(expires) * MICROS_PER_SECOND
  if (expiresAt <= now) return undefined
  return { id: id!, expiresAt: expiresAt as Micros }
}

/**
 * True unless `session` was signed out (by any process on the database): the check each request with a session
 * makes besides {@link readSession}.
 */
export const isSignedIn = (session: Session): Effect.Effect<boolean, StorageFailure, SessionStore> =>
  Effect.flatMap(SessionStore, (store) => Effect.map(store.isSessionEnded(session.id), (ended) => !ended))

/**
 * Signs `session` out (docs/api.md section 14): from then on {@link isSignedIn} is false for it, in every process on the
 * database, also when its token is replayed. `now` in integer microseconds.
 */
export const signOut = (session: Session, now: Micros): Effect.Effect<void, StorageFailure, SessionStore> =>
  Effect.flatMap(SessionStore, (store) => store.endSession(session.id, session.expiresAt, now))
