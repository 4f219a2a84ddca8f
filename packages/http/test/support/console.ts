/** What the console suites (console*.test.ts) share: signing in, session cookies and the console header. */
import { ConsoleSession, micros } from "@dashstream/core"
import { assert } from "@effect/vitest"
import { admin, json, testAdminToken, type TestServer } from "./server.js"

/** An hour in microseconds. */
export const hour = 3_600_000_000
/** The time now in microseconds. */
export const nowMicros = () => micros(Date.now() * 1000)
/** The key session tokens are signed with, derived from the test admin token. */
export const key = ConsoleSession.sessionKey(testAdminToken)

/** Signs in with `token`; the answer, and the cookie's `name=value` when one was set. */
export const signIn = async (server: TestServer, token: string) => {
  const res = await fetch(`${server.url}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token })
  })
  const setCookie = res.headers.get("set-cookie")
  return { res, setCookie, cookie: setCookie === null ? undefined : setCookie.split(";")[0]! }
}

/** A signed-in session cookie (`dashstream_session=...`). */
export const session = async (server: TestServer): Promise<string> => {
  const { res, cookie } = await signIn(server, testAdminToken)
  assert.strictEqual(res.status, 204)
  return cookie!
}

/** A request with a cookie and no bearer token. */
export const withCookie = (
  server: TestServer,
  cookie: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {}
) =>
  fetch(`${server.url}${path}`, {
    method,
    headers: { cookie, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  }).then(json)

/** The header the console sends with every change (docs/api.md section 14). */
export const consoleHeader = { "x-dashstream-console": "1" }

/** How many accounts the server lists. */
export const accountCount = async (server: TestServer) =>
  (await admin(server, "GET", "/admin/accounts")).json.accounts.length
