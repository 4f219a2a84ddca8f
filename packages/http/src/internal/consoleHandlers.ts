import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { ConsoleSession, Forbidden, isoTime, SessionStore } from "@dashstream/core"
import { Effect } from "effect"
import { api, sessionCookieName } from "../Api.js"
import { RateLimited, Unauthorized } from "../HttpErrors.js"
import { checkSession, clearedSessionCookie, hasConsoleHeader, nowMicros, sessionCookie } from "./adminAuth.js"
import { clientInfo } from "./clientInfo.js"
import { makeSignInThrottle } from "./signInThrottle.js"

/**
 * The console's sign-in and sign-out (docs/api.md section 14): `POST /console/session` trades the admin token for a
 * session cookie, `GET /console/session` tells whether the cookie's session is signed in, `DELETE /console/session`
 * signs it out. The token is never echoed, logged or put in the cookie.
 */

const wrongToken = new Unauthorized({ message: "the admin token is wrong" })
const notSignedIn = new Unauthorized({ message: "no console session is signed in; sign in with the admin token" })
const missingHeader = new Forbidden({
  message: "signing out with the console session must carry the header X-Dashstream-Console: 1"
})

const tooManyFailures = (retryAfter: number) =>
  new RateLimited({
    message: `too many failed sign-ins from this address; retry in ${retryAfter} s`,
    retryAfter
  })

/** The request's client address and scheme (see `clientInfo`, the hook for a reverse proxy). */
const clientOf = (request: HttpServerRequest.HttpServerRequest) =>
  clientInfo(NodeHttpServerRequest.toIncomingMessage(request))

/**
 * The console's session handlers; `key` is the session key of the admin token, `basePath` the session cookie's `Path`
 * (docs/api.md section 16; `""` for `/`). Sign-in throttling is per process, by the client address of `clientInfo`.
 */
export const consoleLive = (key: ConsoleSession.SessionKey, basePath = "") =>
  HttpApiBuilder.group(api, "console", (handlers) => {
    const throttle = makeSignInThrottle()
    return handlers
      .handle("signIn", ({ payload, request }) =>
        Effect.suspend(() => {
          const client = clientOf(request)
          const now = Date.now()
          const refused = throttle.refusedFor(client.address, now)
          if (refused > 0) return Effect.fail(tooManyFailures(refused))
          if (!ConsoleSession.isAdminToken(key, payload.token)) {
            const wait = throttle.failed(client.address, now)
            return Effect.fail(wait > 0 ? tooManyFailures(wait) : wrongToken)
          }
          const session = ConsoleSession.issueSession(key, nowMicros())
          return Effect.succeed(
            HttpServerResponse.empty({
              status: 204,
              headers: {
                "set-cookie": sessionCookie(session.token, client.https, basePath),
                "cache-control": "no-store"
              }
            })
          )
        })
      )
      .handle("getSession", ({ request }) =>
        Effect.gen(function* () {
          const token = request.cookies[sessionCookieName] ?? ""
          if (token === "") return yield* notSignedIn
          const session = yield* checkSession(key, token, yield* SessionStore)
          return { expiresAt: isoTime(session.expiresAt) }
        })
      )
      .handle("signOut", ({ request }) =>
        Effect.gen(function* () {
          if (!hasConsoleHeader(request)) return yield* missingHeader
          const token = request.cookies[sessionCookieName] ?? ""
          const session = token === "" ? undefined : ConsoleSession.readSession(key, token, nowMicros())
          if (session !== undefined) yield* ConsoleSession.signOut(session, nowMicros())
          return HttpServerResponse.empty({
            status: 204,
            headers: {
              "set-cookie": clearedSessionCookie(clientOf(request).https, basePath),
              "cache-control": "no-store"
            }
          })
        })
      )
  })
