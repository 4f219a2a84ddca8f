import { HttpServerRequest } from "@effect/platform"
import {
  ConsoleSession,
  Forbidden,
  type Micros,
  micros,
  SessionStore,
  type StorageError,
  type StorageUnavailable
} from "@dashstream/core"
import { Effect, Layer, Redacted } from "effect"
import { AdminAuth, consoleHeader, sessionCookieName } from "../Api.js"
import { Unauthorized } from "../HttpErrors.js"

/**
 * The admin API's credentials (docs/api.md sections 7 and 14): the bearer token, or the console's session cookie. The
 * session cookie is a signed console session (see core's `ConsoleSession`), checked here without the storage except
 * for the sign-out record (`SessionStore`, cached by the composition root).
 */

/** The current time in integer microseconds, as sessions count it. */
export const nowMicros = (): Micros => micros(Date.now() * 1000)

/** `Max-Age` of the session cookie: the session's lifetime (12 hours), in seconds. */
const cookieMaxAge = ConsoleSession.SESSION_LIFETIME_SECONDS

const secureAttribute = (https: boolean) => (https ? "; Secure" : "")

/**
 * The `Set-Cookie` value that hands a browser its session (docs/api.md section 14): `HttpOnly` (no script reads it),
 * `SameSite=Strict` (no other site's page sends it), `Path=<basePath>` (`/` at the root, docs/api.md section 16),
 * `Secure` when the request came over HTTPS (directly, or said by a trusted proxy's `X-Forwarded-Proto`).
 */
export const sessionCookie = (token: string, https: boolean, basePath = ""): string =>
  `${sessionCookieName}=${token}; Path=${basePath || "/"}; Max-Age=${cookieMaxAge}; HttpOnly; SameSite=Strict${secureAttribute(https)}`

/** The `Set-Cookie` value that clears the session cookie (sign-out). */
export const clearedSessionCookie = (https: boolean, basePath = ""): string =>
  `${sessionCookieName}=; Path=${basePath || "/"}; Max-Age=0; HttpOnly; SameSite=Strict${secureAttribute(https)}`

const noSession = new Unauthorized({ message: "a valid admin bearer token or console session is required" })
const badSession = new Unauthorized({
  message: "the console session is invalid, expired or signed out; sign in again"
})
const missingHeader = new Forbidden({
  message: `a change made with the console session must carry the header ${consoleHeader.name}: ${consoleHeader.value}`
})

/**
 * The console session a cookie value names, when it is signed with `key`, has not expired and was not signed out;
 * otherwise `Unauthorized`. Storage failures of the sign-out check pass through (503 or 500).
 */
export const checkSession = (
  key: ConsoleSession.SessionKey,
  token: string,
  sessions: SessionStore["Type"]
): Effect.Effect<ConsoleSession.Session, Unauthorized | StorageError | StorageUnavailable> => {
  const session = token === "" ? undefined : ConsoleSession.readSession(key, token, nowMicros())
  if (session === undefined) return Effect.fail(badSession)
  return Effect.flatMap(
    Effect.provideService(ConsoleSession.isSignedIn(session), SessionStore, sessions),
    (signedIn) => (signedIn ? Effect.succeed(session) : Effect.fail(badSession))
  )
}

/** GET and HEAD change nothing; every other method must carry the console header when authenticated by cookie. */
const changes = (method: string) => method !== "GET" && method !== "HEAD"

/** True when the request carries `X-Dashstream-Console: 1`. */
export const hasConsoleHeader = (request: HttpServerRequest.HttpServerRequest): boolean =>
  request.headers[consoleHeader.name.toLowerCase()] === consoleHeader.value

/**
 * The {@link AdminAuth} middleware. A request with an `Authorization` header is judged by it alone: `Bearer <admin
 * token>`, compared in constant time (both sides hashed), else 401. Without one, the session cookie: 401 when it is
 * missing, malformed, tampered with, signed with another admin token, expired or signed out; 403 `forbidden` when the
 * request would change something (any method but GET and HEAD) without `X-Dashstream-Console: 1`, so that no other
 * site's form or script can act with a signed-in browser's cookie. The middleware runs before the body is read.
 */
export const adminAuthLive = (key: ConsoleSession.SessionKey): Layer.Layer<AdminAuth, never, SessionStore> =>
  Layer.effect(
    AdminAuth,
    Effect.map(SessionStore, (sessions) =>
      AdminAuth.of({
        adminToken: (token) =>
          Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
            const header = request.headers["authorization"]
            // No header: the cookie decides (HttpApi tries the next scheme when this one fails).
            if (header === undefined) return Effect.fail(noSession)
            return /^bearer /i.test(header) && ConsoleSession.isAdminToken(key, Redacted.value(token))
              ? Effect.void
              : Effect.fail(noSession)
          }),
        consoleSession: (cookie) =>
          Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
            // Tried after the bearer scheme failed: a request that sent a header was refused by it.
            if (request.headers["authorization"] !== undefined) return Effect.fail(noSession)
            const token = Redacted.value(cookie)
            if (token === "") return Effect.fail(noSession)
            return Effect.flatMap(checkSession(key, token, sessions), () =>
              changes(request.method) && !hasConsoleHeader(request) ? Effect.fail(missingHeader) : Effect.void
            )
          })
      })
    )
  )
