import { request as httpRequest } from "node:http"
import { ConsoleSession, micros } from "@dashstream/core"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { admin, json, read, setupAccount, startServer, testAdminToken, type TestServer } from "./support/server.js"
import { hour, nowMicros, key, signIn, session, withCookie, consoleHeader, accountCount } from "./support/console.js"

// Console sessions (docs/api.md section 14): the cookie, what it may do, sign-out, redaction, sign-in throttling.

describe("console sessions (docs/api.md section 14)", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer({ logRequests: true })
  })
  afterAll(() => server.close())

  it("sign-in with the admin token answers 204 and sets an HttpOnly, SameSite=Strict session cookie, never the token", async () => {
    const { res, setCookie } = await signIn(server, testAdminToken)
    assert.strictEqual(res.status, 204)
    assert.strictEqual(await res.text(), "")
    const attributes = setCookie!.split(";").map((part) => part.trim())
    assert.match(attributes[0]!, /^dashstream_session=[A-Za-z0-9_-]{22}\.\d+\.[A-Za-z0-9_-]{43}$/)
    assert.includeMembers(attributes, ["Path=/", "HttpOnly", "SameSite=Strict", "Max-Age=43200"])
    // Over plain HTTP the cookie is not Secure (the browser would never send it back).
    assert.notInclude(attributes, "Secure")
    assert.notInclude(setCookie!, testAdminToken)
    const status = await withCookie(server, attributes[0]!, "GET", "/console/session")
    assert.strictEqual(status.status, 200)
    assert.isBelow(Math.abs(Date.parse(status.body.expiresAt) - (Date.now() + 12 * 3600_000)), 60_000)
  })

  it("a wrong token is 401 and sets no cookie", async () => {
    for (const token of ["wrong", "", `${testAdminToken}x`, testAdminToken.slice(1)]) {
      const { res, setCookie } = await signIn(server, token)
      assert.deepStrictEqual([token, res.status, ((await res.json()) as any).error.code], [token, 401, "unauthorized"])
      assert.isNull(setCookie)
    }
    const noBody = await json(await fetch(`${server.url}/console/session`, { method: "POST", body: "{}" }))
    assert.deepStrictEqual([noBody.status, noBody.body.error.code], [400, "invalid_request"])
  })

  it("the admin API accepts the session cookie as it accepts the bearer token", async () => {
    const cookie = await session(server)
    const list = await withCookie(server, cookie, "GET", "/admin/accounts")
    assert.strictEqual(list.status, 200)
    const created = await withCookie(server, cookie, "POST", "/admin/accounts", { name: "by cookie" }, consoleHeader)
    assert.deepStrictEqual([created.status, created.body.name], [201, "by cookie"])
    const widget = await withCookie(
      server,
      cookie,
      "POST",
      `/admin/accounts/${created.body.id}/widgets`,
      { streamName: "s", type: "number" },
      consoleHeader
    )
    assert.strictEqual(widget.status, 201)
    const point = await withCookie(
      server,
      cookie,
      "POST",
      `/admin/accounts/${created.body.id}/widgets/s/points`,
      42,
      consoleHeader
    )
    assert.deepStrictEqual([point.status, point.body], [200, { message: "Success!" }])
    const widgets = await withCookie(server, cookie, "GET", `/admin/accounts/${created.body.id}/widgets`)
    assert.deepStrictEqual(widgets.body.widgets[0].latest.point, { number: 42 })
  })

  it("a cookie-authenticated change without X-Dashstream-Console: 1 is 403 and changes nothing", async () => {
    const cookie = await session(server)
    const before = await accountCount(server)
    for (const headers of [{}, { "x-dashstream-console": "0" }, { "x-dashstream-console": "true" }]) {
      const res = await withCookie(server, cookie, "POST", "/admin/accounts", { name: "csrf" }, headers)
      assert.deepStrictEqual([res.status, res.body.error.code], [403, "forbidden"])
    }
    // A cross-site form post: form content type, no header, the cookie a browser would attach.
    const form = await json(
      await fetch(`${server.url}/admin/accounts`, {
        method: "POST",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded", origin: "https://evil.example" },
        body: "name=csrf"
      })
    )
    assert.deepStrictEqual([form.status, form.body.error.code], [403, "forbidden"])
    const { id, accessKey } = await setupAccount(server, [["s", "number"]])
    const changes: ReadonlyArray<readonly [string, string, unknown]> = [
      ["POST", `/admin/accounts/${id}/widgets`, { streamName: "t", type: "number" }],
      ["DELETE", `/admin/accounts/${id}/widgets/s`, undefined],
      ["POST", `/admin/accounts/${id}/access-keys?revokeOthers=true`, undefined],
      ["POST", `/admin/accounts/${id}/widgets/s/points`, 5],
      ["POST", `/admin/accounts/${id}/dashboards`, { name: "d" }]
    ]
    for (const [method, path, body] of changes) {
      const res = await withCookie(server, cookie, method, path, body)
      assert.deepStrictEqual([method, path, res.status], [method, path, 403])
    }
    assert.strictEqual(await accountCount(server), before + 1)
    const widgets = await admin(server, "GET", `/admin/accounts/${id}/widgets`)
    assert.deepStrictEqual(
      widgets.json.widgets.map((w: any) => [w.streamName, w.latest]),
      [["s", null]]
    )
    assert.strictEqual((await read(server, accessKey, "s")).status, 200)
    assert.deepStrictEqual((await admin(server, "GET", `/admin/accounts/${id}/dashboards`)).json.dashboards, [])
    // GET and HEAD need no header.
    assert.strictEqual((await withCookie(server, cookie, "GET", `/admin/accounts/${id}/widgets`)).status, 200)
    assert.strictEqual((await withCookie(server, cookie, "HEAD", `/admin/accounts/${id}/widgets`)).status, 200)
  })

  it("an invalid, tampered, expired or foreign cookie is 401, and changes nothing", async () => {
    const cookie = await session(server)
    const value = cookie.slice("dashstream_session=".length)
    const [id, expires, signature] = value.split(".") as [string, string, string]
    const expired = ConsoleSession.issueSession(key, micros(nowMicros() - 13 * hour))
    const foreign = ConsoleSession.issueSession(ConsoleSession.sessionKey("another admin token"), nowMicros())
    const bad = [
      "",
      "garbage",
      `${id}.${Number(expires) + 3600}.${signature}`,
      `${id.replace(/^./, (c) => (c === "A" ? "B" : "A"))}.${expires}.${signature}`,
      `${id}.${expires}.${signature.replace(/.$/, (c) => (c === "A" ? "B" : "A"))}`,
      expired.token,
      foreign.token
    ]
    const before = await accountCount(server)
    for (const token of bad) {
      const get = await withCookie(server, `dashstream_session=${token}`, "GET", "/admin/accounts")
      assert.deepStrictEqual([token, get.status, get.body.error.code], [token, 401, "unauthorized"])
      const post = await withCookie(server, `dashstream_session=${token}`, "POST", "/admin/accounts", {}, consoleHeader)
      assert.deepStrictEqual([token, post.status], [token, 401])
      const status = await withCookie(server, `dashstream_session=${token}`, "GET", "/console/session")
      assert.deepStrictEqual([token, status.status], [token, 401])
    }
    assert.strictEqual(await accountCount(server), before)
    // A wrong bearer token is judged alone, even beside a valid cookie.
    const both = await withCookie(server, cookie, "GET", "/admin/accounts", undefined, {
      authorization: "Bearer wrong"
    })
    assert.strictEqual(both.status, 401)
  })

  it("sign-out clears the cookie and the session is refused from then on, also replayed", async () => {
    const cookie = await session(server)
    const other = await session(server)
    const noHeader = await withCookie(server, cookie, "DELETE", "/console/session")
    assert.deepStrictEqual([noHeader.status, noHeader.body.error.code], [403, "forbidden"])
    assert.strictEqual((await withCookie(server, cookie, "GET", "/admin/accounts")).status, 200)
    const out = await fetch(`${server.url}/console/session`, {
      method: "DELETE",
      headers: { cookie, ...consoleHeader }
    })
    assert.strictEqual(out.status, 204)
    const cleared = out.headers.get("set-cookie")!
    assert.match(cleared, /^dashstream_session=;/)
    assert.include(cleared, "Max-Age=0")
    for (const [method, path] of [
      ["GET", "/admin/accounts"],
      ["GET", "/console/session"]
    ] as const) {
      const replayed = await withCookie(server, cookie, method, path)
      assert.deepStrictEqual([path, replayed.status], [path, 401])
    }
    const replayedChange = await withCookie(server, cookie, "POST", "/admin/accounts", {}, consoleHeader)
    assert.strictEqual(replayedChange.status, 401)
    // Another session of the same token stays signed in.
    assert.strictEqual((await withCookie(server, other, "GET", "/admin/accounts")).status, 200)
    // Signing out again, or without a session, is harmless.
    const again = await fetch(`${server.url}/console/session`, {
      method: "DELETE",
      headers: { cookie, ...consoleHeader }
    })
    assert.strictEqual(again.status, 204)
    const none = await fetch(`${server.url}/console/session`, { method: "DELETE", headers: consoleHeader })
    assert.strictEqual(none.status, 204)
  })

  it("neither the admin token nor the cookie reaches a log line or a metrics label", async () => {
    const cookie = await session(server)
    await signIn(server, "a-wrong-token-that-must-not-be-logged")
    await withCookie(server, cookie, "GET", "/admin/accounts")
    await withCookie(server, cookie, "POST", "/admin/accounts", { name: "x" })
    await fetch(`${server.url}/console/session`, { method: "DELETE", headers: { cookie, ...consoleHeader } })
    await withCookie(server, cookie, "GET", "/admin/accounts")
    const metrics = await (await fetch(`${server.url}/metrics`)).text()
    const value = cookie.slice("dashstream_session=".length)
    const sessionId = value.split(".")[0]!
    assert.isAbove(server.logs.filter((l) => l.includes("/console/session")).length, 2)
    for (const secret of [testAdminToken, "a-wrong-token-that-must-not-be-logged", value, sessionId]) {
      for (const line of [...server.logs, ...server.stdout]) assert.notInclude(line, secret)
      assert.notInclude(metrics, secret)
    }
    assert.include(metrics, 'route="/console/session"')
  })

  it("the admin token and session tokens a client puts in a path or query are redacted from the request log", async () => {
    const value = (await session(server)).slice("dashstream_session=".length)
    const sessionPart = value.split(".").slice(0, 2).join(".")
    const paths = [
      `/console/${testAdminToken}`,
      `/admin/${testAdminToken}`,
      `/admin/accounts/${encodeURIComponent(`Bearer ${testAdminToken}`)}`,
      `/x/token=${testAdminToken}.txt`,
      `/console?token=${testAdminToken}`,
      `/console/${value}`,
      `/console/session/${sessionPart}`,
      `/d/x/${value}/events`
    ]
    const before = server.logs.length
    for (const path of paths) await (await fetch(`${server.url}${path}`)).arrayBuffer()
    await new Promise((r) => setTimeout(r, 50))
    const lines = server.logs.slice(before).filter((l) => l.startsWith("INFO GET "))
    assert.strictEqual(lines.length, paths.length, lines.join("\n"))
    for (const secret of [testAdminToken, value, sessionPart, value.split(".")[0]!]) {
      for (const line of lines) assert.notInclude(line, secret)
    }
    assert.includeMembers(
      lines.map((line) => line.split(" ")[2]),
      [
        "/console/<redacted>",
        "/admin/<redacted>",
        "/admin/accounts/<redacted>",
        "/x/<redacted>",
        "/console",
        "/console/session/<redacted>"
      ]
    )
  })
})

describe("sign-in throttling", () => {
  it("the sixth failed sign-in from one address within a minute, and every sign-in after it, is 429 with Retry-After", async () => {
    const server = await startServer()
    try {
      for (let i = 1; i <= 5; i++) {
        const { res } = await signIn(server, `wrong ${i}`)
        assert.deepStrictEqual([i, res.status], [i, 401])
      }
      const sixth = await signIn(server, "wrong 6")
      assert.strictEqual(sixth.res.status, 429)
      assert.strictEqual(((await sixth.res.json()) as any).error.code, "rate_limited")
      const retryAfter = Number(sixth.res.headers.get("retry-after"))
      assert.isAtLeast(retryAfter, 55)
      assert.isAtMost(retryAfter, 60)
      // The right token too, for the rest of the minute.
      const right = await signIn(server, testAdminToken)
      assert.strictEqual(right.res.status, 429)
      assert.isNull(right.setCookie)
      assert.isAbove(Number(right.res.headers.get("retry-after")), 0)
      // Another address is not refused.
      const other = await new Promise<{ status: number; cookie: string | undefined }>((resolve, reject) => {
        const url = new URL(`${server.url}/console/session`)
        const req = httpRequest(
          {
            host: url.hostname,
            port: url.port,
            path: url.pathname,
            method: "POST",
            localAddress: "127.0.0.2",
            headers: { "content-type": "application/json" }
          },
          (res) => {
            res.resume()
            res.on("end", () => resolve({ status: res.statusCode!, cookie: res.headers["set-cookie"]?.[0] }))
          }
        )
        req.on("error", reject)
        req.end(JSON.stringify({ token: testAdminToken }))
      })
      assert.strictEqual(other.status, 204)
      assert.match(other.cookie!, /^dashstream_session=/)
      // The bearer token is not throttled.
      assert.strictEqual((await admin(server, "GET", "/admin/accounts")).status, 200)
    } finally {
      await server.close()
    }
  })
})
