import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
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

// The admin API's additions for the console (docs/api.md section 14). Sessions and sign-in throttling:
// console.sessions.test.ts; the console page, with the admin API off and over HTTPS: console.page.test.ts.

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
