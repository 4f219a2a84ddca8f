import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { createServer as createHttpsServer, request as httpsRequest } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  AccountStore,
  ChangeFeed,
  ConsoleSession,
  DashboardStore,
  defaultLimits,
  micros,
  SessionStore,
  AlertStore,
  StreamStore
} from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { handler } from "../src/index.js"
import {
  admin,
  json,
  push,
  read,
  setupAccount,
  startServer,
  testAdminToken,
  type TestServer
} from "./support/server.js"

const hour = 3_600_000_000
const nowMicros = () => micros(Date.now() * 1000)
const key = ConsoleSession.sessionKey(testAdminToken)

/** Signs in with `token`; the answer, and the cookie's `name=value` when one was set. */
const signIn = async (server: TestServer, token: string) => {
  const res = await fetch(`${server.url}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token })
  })
  const setCookie = res.headers.get("set-cookie")
  return { res, setCookie, cookie: setCookie === null ? undefined : setCookie.split(";")[0]! }
}

/** A signed-in session cookie (`dashstream_session=...`). */
const session = async (server: TestServer): Promise<string> => {
  const { res, cookie } = await signIn(server, testAdminToken)
  assert.strictEqual(res.status, 204)
  return cookie!
}

/** A request with a cookie and no bearer token. */
const withCookie = (
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

const consoleHeader = { "x-dashstream-console": "1" }

const accountCount = async (server: TestServer) => (await admin(server, "GET", "/admin/accounts")).json.accounts.length

describe("admin API additions (docs/api.md section 14)", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("GET /admin/accounts lists every account, oldest first, with id, name and createdAt, never a key", async () => {
    const a = await admin(server, "POST", "/admin/accounts", { name: "first" })
    const b = await admin(server, "POST", "/admin/accounts", {})
    const list = await admin(server, "GET", "/admin/accounts")
    assert.strictEqual(list.status, 200)
    assert.deepStrictEqual(Object.keys(list.json), ["accounts"])
    const mine = list.json.accounts.filter((x: any) => x.id === a.json.id || x.id === b.json.id)
    assert.deepStrictEqual(
      mine.map((x: any) => [x.id, x.name]),
      [
        [a.json.id, "first"],
        [b.json.id, ""]
      ]
    )
    for (const account of list.json.accounts) {
      assert.deepStrictEqual(Object.keys(account).sort(), ["createdAt", "id", "name"])
      assert.strictEqual(new Date(account.createdAt).toISOString(), account.createdAt)
    }
    assert.notInclude(JSON.stringify(list.json), a.json.accessKey)
    const unauthorized = await json(await fetch(`${server.url}/admin/accounts`))
    assert.deepStrictEqual([unauthorized.status, unauthorized.body.error.code], [401, "unauthorized"])
  })

  it("GET .../widgets carries each widget's latest entry, as a read without since gives it, or null", async () => {
    const { id, accessKey } = await setupAccount(server, [
      ["sales", "number"],
      ["board", "leaderboard"],
      ["empty", "line-graph"]
    ])
    assert.strictEqual((await push(server, { accessKey, streamName: "sales", point: 1 })).status, 200)
    assert.strictEqual(
      (await push(server, { accessKey, streamName: "sales", point: { delta: 41, suffix: "€" } })).status,
      200
    )
    const board = { leaderboard: [{ name: "ann", value: 3 }] }
    assert.strictEqual((await push(server, { accessKey, streamName: "board", point: board })).status, 200)
    const list = await admin(server, "GET", `/admin/accounts/${id}/widgets`)
    assert.strictEqual(list.status, 200)
    const byName = Object.fromEntries(list.json.widgets.map((w: any) => [w.streamName, w]))
    assert.deepStrictEqual(Object.keys(byName), ["board", "empty", "sales"])
    const latestOf = async (stream: string) => ((await (await read(server, accessKey, stream)).json()) as any).data[0]
    assert.deepStrictEqual(byName.sales.latest, await latestOf("sales"))
    assert.deepStrictEqual(byName.sales.latest.point, { number: 42, suffix: "€" })
    assert.deepStrictEqual(byName.board.latest, await latestOf("board"))
    assert.isNull(byName.empty.latest)
    assert.deepStrictEqual(Object.keys(byName.sales).sort(), ["createdAt", "latest", "streamName", "type"])
    const missing = await admin(server, "GET", "/admin/accounts/nope/widgets")
    assert.deepStrictEqual([missing.status, missing.json.error.code], [404, "account_not_found"])
  })

  it("POST .../points stores a point exactly as a push with the account's key would, and answers as a push", async () => {
    const widgets = [
      ["n", "number"],
      ["board", "leaderboard"],
      ["feed", "text-feed"],
      ["table", "table"]
    ] as const
    const viaAdmin = await setupAccount(server, widgets)
    const viaPush = await setupAccount(server, widgets)
    const points: ReadonlyArray<readonly [string, unknown]> = [
      ["n", 5],
      ["n", { delta: 2, prefix: "$" }],
      ["n", "7"],
      ["board", { leaderboard: [{ name: "a", value: 1 }] }],
      ["board", { leaderboardItem: { name: "b", value: 9 } }],
      [
        "feed",
        [
          { title: "t1", msg: "m1" },
          { title: "t2", msg: "m2" }
        ]
      ],
      [
        "table",
        {
          table: [
            ["h1", "h2"],
            ["a", 1]
          ]
        }
      ],
      ["table", { tableRow: ["b", 2] }]
    ]
    for (const [stream, point] of points) {
      const res = await admin(server, "POST", `/admin/accounts/${viaAdmin.id}/widgets/${stream}/points`, point)
      assert.deepStrictEqual([stream, res.status, res.json], [stream, 200, { message: "Success!" }])
      const pushed = await push(server, { accessKey: viaPush.accessKey, streamName: stream, point })
      assert.strictEqual(pushed.status, 200)
    }
    for (const [stream] of widgets) {
      const all = async (accessKey: string) =>
        (((await (await read(server, accessKey, stream, "?since=0")).json()) as any).data as Array<any>).map(
          (e) => e.point
        )
      assert.deepStrictEqual(await all(viaAdmin.accessKey), await all(viaPush.accessKey), stream)
    }
    const n = ((await (await read(server, viaAdmin.accessKey, "n")).json()) as any).data[0].point
    // A bare number carries no prefix over (only a delta does).
    assert.deepStrictEqual(n, { number: 7 })
    // An empty point clears, as in a push.
    const cleared = await admin(server, "POST", `/admin/accounts/${viaAdmin.id}/widgets/board/points`, {})
    assert.strictEqual(cleared.status, 200)
    assert.deepStrictEqual(
      ((await (await read(server, viaAdmin.accessKey, "board", "?since=0")).json()) as any).data,
      []
    )
  })

  it("POST .../points answers a push's errors, and stores nothing", async () => {
    const { id, accessKey } = await setupAccount(server, [
      ["n", "number"],
      ["table", "table"],
      ["line", "line-graph"]
    ])
    const post = (stream: string, body: string) =>
      fetch(`${server.url}/admin/accounts/${id}/widgets/${stream}/points`, {
        method: "POST",
        headers: { authorization: `Bearer ${testAdminToken}`, "content-type": "application/json" },
        body
      }).then(json)
    const expectError = async (stream: string, body: string, status: number, code: string, path?: string) => {
      const res = await post(stream, body)
      assert.deepStrictEqual(
        [body, res.status, res.body.error.code, res.body.error.path],
        [body, status, code, path],
        JSON.stringify(res.body)
      )
      // The same point in a push gets the same answer.
      const pushed = await json(
        await fetch(`${server.url}/customSend`, {
          method: "POST",
          body: `{"accessKey":${JSON.stringify(accessKey)},"streamName":${JSON.stringify(decodeURIComponent(stream))},"point":${body}}`
        })
      )
      // (A body that is not JSON is not a point; an unknown stream came from the URL: its error has no path.)
      if (code !== "invalid_json" && code !== "stream_not_found") assert.deepStrictEqual(pushed.body, res.body, body)
    }
    await expectError("n", '"abc"', 400, "invalid_point", "point")
    await expectError("n", '{"number": 1, "delta": 2}', 400, "invalid_point", "point.delta")
    await expectError("table", '{"table": [["a", "b"], ["only one"]]}', 400, "invalid_point", "point.table[1]")
    await expectError("nope", "1", 404, "stream_not_found")
    await expectError("n", "{nope", 400, "invalid_json")
    const tooMany = JSON.stringify(
      Array.from({ length: 10_001 }, (_, i) => ({ number: i, timestamp: 1_700_000_000 + i }))
    )
    await expectError("line", tooMany, 413, "payload_too_large", "point")
    const unknown = await admin(server, "POST", "/admin/accounts/nope/widgets/n/points", 1)
    assert.deepStrictEqual([unknown.status, unknown.json.error.code], [404, "account_not_found"])
    assert.deepStrictEqual(((await (await read(server, accessKey, "table", "?since=0")).json()) as any).data, [])
    assert.deepStrictEqual(((await (await read(server, accessKey, "line", "?since=0")).json()) as any).data, [])
  })

  it("documents the new endpoints and the session cookie in the OpenAPI document", async () => {
    const spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as any
    assert.isDefined(spec.paths["/admin/accounts"].get)
    assert.isDefined(spec.paths["/admin/accounts/{id}/widgets/{stream}/points"].post)
    assert.isDefined(spec.paths["/console/session"].post)
    assert.isDefined(spec.paths["/console/session"].delete)
    assert.isDefined(spec.paths["/console/session"].get)
    assert.isDefined(spec.paths["/console"].get)
    const schemes = spec.components.securitySchemes
    assert.deepStrictEqual(schemes.consoleSession, {
      type: "apiKey",
      in: "cookie",
      name: "dashstream_session",
      description: schemes.consoleSession.description
    })
    assert.deepStrictEqual(spec.paths["/admin/accounts"].get.security, [{ adminToken: [] }, { consoleSession: [] }])
    assert.isDefined(spec.paths["/admin/accounts"].post.responses["403"])
    const widgetList = JSON.stringify(spec.components.schemas.WidgetWithLatest)
    assert.include(widgetList, "latest")
  })
})

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

describe("the console when the admin API is off", () => {
  it("answers 404 on the console's paths and the admin API", async () => {
    const server = await startServer({ adminToken: undefined })
    try {
      for (const [method, path] of [
        ["GET", "/console"],
        ["GET", "/console/"],
        ["GET", "/console/assets/app.js"],
        ["POST", "/console/session"],
        ["GET", "/console/session"],
        ["DELETE", "/console/session"],
        ["GET", "/admin/accounts"]
      ] as const) {
        const res = await json(
          await fetch(`${server.url}${path}`, {
            method,
            headers: { "content-type": "application/json" },
            ...(method === "POST" ? { body: JSON.stringify({ token: testAdminToken }) } : {})
          })
        )
        assert.deepStrictEqual([method, path, res.status, res.body.error.code], [method, path, 404, "not_found"])
      }
      const spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> }
      assert.isFalse(Object.keys(spec.paths).some((p) => p.startsWith("/console")))
    } finally {
      await server.close()
    }
  })
})

describe("the console page", () => {
  it("is served from the page the server was given, with no-referrer, and its files", async () => {
    const script = Buffer.from("console.log('console page')")
    const server = await startServer({
      console: {
        html: () => "<!doctype html><title>Console</title>",
        headers: { "Content-Security-Policy": "default-src 'self'", "referrer-policy": "no-referrer" },
        assets: () => new Map([["/console/assets/app.0123abcd.js", { body: script, contentType: "text/javascript" }]])
      }
    })
    try {
      const page = await fetch(`${server.url}/console`)
      assert.strictEqual(page.status, 200)
      assert.strictEqual(await page.text(), "<!doctype html><title>Console</title>")
      assert.strictEqual(page.headers.get("content-type"), "text/html; charset=utf-8")
      assert.strictEqual(page.headers.get("referrer-policy"), "no-referrer")
      assert.strictEqual(page.headers.get("content-security-policy"), "default-src 'self'")
      assert.strictEqual(page.headers.get("cache-control"), "no-store")
      const file = await fetch(`${server.url}/console/assets/app.0123abcd.js`)
      assert.strictEqual(file.status, 200)
      assert.strictEqual(await file.text(), script.toString())
      assert.match(file.headers.get("cache-control")!, /immutable/)
      assert.strictEqual((await fetch(`${server.url}/console/assets/other.js`)).status, 404)
    } finally {
      await server.close()
    }
  })

  it("answers 404 while no page is installed, the admin API still on", async () => {
    const server = await startServer()
    try {
      const res = await json(await fetch(`${server.url}/console`))
      assert.deepStrictEqual([res.status, res.body.error.code], [404, "not_found"])
      assert.strictEqual((await admin(server, "GET", "/admin/accounts")).status, 200)
    } finally {
      await server.close()
    }
  })
})

describe("the session cookie over HTTPS", () => {
  it("is Secure when the request came over TLS", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dashstream-tls-"))
    const scope = Effect.runSync(Scope.make())
    try {
      // A throwaway self-signed certificate for 127.0.0.1.
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-keyout",
          join(dir, "key.pem"),
          "-out",
          join(dir, "cert.pem"),
          "-days",
          "1",
          "-subj",
          "/CN=127.0.0.1"
        ],
        { stdio: "ignore" }
      )
      const stores = Layer.effectContext(
        Effect.map(MemoryStore.make, (s) =>
          Context.make(AccountStore, s.accountStore).pipe(
            Context.add(StreamStore, s.streamStore),
            Context.add(ChangeFeed, s.changeFeed),
            Context.add(DashboardStore, s.dashboardStore),
            Context.add(SessionStore, s.sessionStore),
            Context.add(AlertStore, s.alertStore)
          )
        )
      )
      const { handle } = await Effect.runPromise(
        handler({ adminToken: testAdminToken, limits: defaultLimits, rateLimit: undefined, logRequests: false }).pipe(
          Effect.provide(stores),
          Scope.extend(scope)
        )
      )
      const server = createHttpsServer(
        { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
        handle
      )
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      try {
        const { port } = server.address() as AddressInfo
        const answer = await new Promise<{ status: number; cookie: string }>((resolve, reject) => {
          const req = httpsRequest(
            {
              host: "127.0.0.1",
              port,
              path: "/console/session",
              method: "POST",
              rejectUnauthorized: false,
              headers: { "content-type": "application/json" }
            },
            (res) => {
              res.resume()
              res.on("end", () => resolve({ status: res.statusCode!, cookie: res.headers["set-cookie"]![0]! }))
            }
          )
          req.on("error", reject)
          req.end(JSON.stringify({ token: testAdminToken }))
        })
        assert.strictEqual(answer.status, 204)
        assert.include(
          answer.cookie.split(";").map((p) => p.trim()),
          "Secure"
        )
      } finally {
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
      }
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
