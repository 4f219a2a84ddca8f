import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { admin, json, push, read, startServer, testAdminToken, type TestServer } from "./support/server.js"

describe("admin API", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("answers 401 unauthorized without the right bearer token", async () => {
    const attempts: ReadonlyArray<Record<string, string>> = [
      {},
      { authorization: "Bearer wrong" },
      { authorization: `Basic ${testAdminToken}` },
      { authorization: testAdminToken },
      { authorization: `Bearer ${testAdminToken}x` }
    ]
    for (const headers of attempts) {
      const res = await json(
        await fetch(`${server.url}/admin/accounts`, {
          method: "POST",
          headers: { ...headers, "content-type": "application/json" },
          body: "{}"
        })
      )
      assert.deepStrictEqual([res.status, res.body.error.code], [401, "unauthorized"])
      assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer/)
    }
    const list = await json(await fetch(`${server.url}/admin/accounts/x/widgets`))
    assert.strictEqual(list.status, 401)
    // Scheme case does not matter.
    const lower = await fetch(`${server.url}/admin/accounts`, {
      method: "POST",
      headers: { authorization: `bearer ${testAdminToken}`, "content-type": "application/json" },
      body: "{}"
    })
    assert.strictEqual(lower.status, 201)
  })

  it("parses admin bodies as JSON whatever their Content-Type says (curl -d sends a form label)", async () => {
    const post = (path: string, body: string, headers: Record<string, string>) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${testAdminToken}`, ...headers },
        body
      }).then(json)
    for (const label of ["application/x-www-form-urlencoded", "text/plain"]) {
      const account = await post("/admin/accounts", '{"name":"curl"}', { "content-type": label })
      assert.deepStrictEqual([label, account.status, account.body.name], [label, 201, "curl"])
      const widget = await post(`/admin/accounts/${account.body.id}/widgets`, '{"streamName":"s","type":"number"}', {
        "content-type": label
      })
      assert.deepStrictEqual([label, widget.status, widget.body.streamName], [label, 201, "s"])
    }
    const unlabelled = await post("/admin/accounts", '{"name":"bytes"}', {})
    assert.deepStrictEqual([unlabelled.status, unlabelled.body.name], [201, "bytes"])
  })

  it("creates accounts, widgets and access keys; lists and deletes widgets", async () => {
    const account = await admin(server, "POST", "/admin/accounts", { name: "acme" })
    assert.strictEqual(account.status, 201)
    assert.deepStrictEqual(Object.keys(account.json).sort(), ["accessKey", "id", "name"])
    assert.strictEqual(account.json.name, "acme")
    const id: string = account.json.id
    const unnamed = await admin(server, "POST", "/admin/accounts", {})
    assert.deepStrictEqual([unnamed.status, unnamed.json.name], [201, ""])

    const widget = await admin(server, "POST", `/admin/accounts/${id}/widgets`, { streamName: "sales", type: "number" })
    assert.strictEqual(widget.status, 201)
    assert.deepStrictEqual([widget.json.streamName, widget.json.type], ["sales", "number"])
    assert.strictEqual(new Date(widget.json.createdAt).toISOString(), widget.json.createdAt)
    assert.isBelow(Math.abs(Date.parse(widget.json.createdAt) - Date.now()), 60_000)
    await admin(server, "POST", `/admin/accounts/${id}/widgets`, { streamName: "a list", type: "list" })

    const conflict = await admin(server, "POST", `/admin/accounts/${id}/widgets`, { streamName: "sales", type: "dial" })
    assert.deepStrictEqual([conflict.status, conflict.json.error.code], [409, "conflict"])

    const list = await admin(server, "GET", `/admin/accounts/${id}/widgets`)
    assert.strictEqual(list.status, 200)
    assert.deepStrictEqual(
      list.json.widgets.map((w: any) => [w.streamName, w.type]),
      [
        ["a list", "list"],
        ["sales", "number"]
      ]
    )

    const oldKey: string = account.json.accessKey
    assert.strictEqual((await push(server, { accessKey: oldKey, streamName: "sales", point: 1 })).status, 200)
    const added = await admin(server, "POST", `/admin/accounts/${id}/access-keys`)
    assert.strictEqual(added.status, 201)
    assert.deepStrictEqual(Object.keys(added.json), ["accessKey"])
    assert.strictEqual((await read(server, oldKey, "sales")).status, 200)
    assert.strictEqual((await read(server, added.json.accessKey, "sales")).status, 200)
    const revoking = await admin(server, "POST", `/admin/accounts/${id}/access-keys?revokeOthers=true`)
    assert.strictEqual(revoking.status, 201)
    assert.strictEqual((await read(server, oldKey, "sales")).status, 403)
    assert.strictEqual((await read(server, added.json.accessKey, "sales")).status, 403)
    assert.strictEqual((await read(server, revoking.json.accessKey, "sales")).status, 200)

    const deleted = await fetch(`${server.url}/admin/accounts/${id}/widgets/a%20list`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${testAdminToken}` }
    })
    assert.strictEqual(deleted.status, 204)
    assert.strictEqual(await deleted.text(), "")
    const again = await admin(server, "DELETE", `/admin/accounts/${id}/widgets/a%20list`)
    assert.deepStrictEqual([again.status, again.json.error.code], [404, "stream_not_found"])
    assert.deepStrictEqual(
      (await admin(server, "GET", `/admin/accounts/${id}/widgets`)).json.widgets.map((w: any) => w.streamName),
      ["sales"]
    )
  })

  it("answers 404 account_not_found for an unknown account", async () => {
    for (const [method, path, body] of [
      ["GET", "/admin/accounts/nope/widgets", undefined],
      ["POST", "/admin/accounts/nope/widgets", { streamName: "s", type: "number" }],
      ["POST", "/admin/accounts/nope/access-keys", undefined],
      ["DELETE", "/admin/accounts/nope/widgets/s", undefined]
    ] as const) {
      const res = await admin(server, method, path, body)
      assert.deepStrictEqual([method, path, res.status, res.json.error.code], [method, path, 404, "account_not_found"])
    }
  })

  it("answers 400 invalid_json and invalid_request for bad bodies and parameters", async () => {
    const { json: account } = await admin(server, "POST", "/admin/accounts", { name: "x" })
    const post = (path: string, body: string) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${testAdminToken}`, "content-type": "application/json" },
        body
      }).then(json)
    const badJson = await post("/admin/accounts", "{nope")
    assert.deepStrictEqual([badJson.status, badJson.body.error.code], [400, "invalid_json"])
    const badName = await post("/admin/accounts", '{"name": 5}')
    assert.deepStrictEqual(
      [badName.status, badName.body.error.code, badName.body.error.path],
      [400, "invalid_request", "name"]
    )
    const widgets = `/admin/accounts/${account.id}/widgets`
    const missingType = await post(widgets, '{"streamName": "s"}')
    assert.deepStrictEqual(
      [missingType.status, missingType.body.error.code, missingType.body.error.path],
      [400, "invalid_request", "type"]
    )
    const unknownType = await post(widgets, '{"streamName": "s", "type": "pie"}')
    assert.deepStrictEqual(
      [unknownType.status, unknownType.body.error.code, unknownType.body.error.path],
      [400, "invalid_request", "type"]
    )
    assert.include(unknownType.body.error.message, "pie-chart")
    const badName2 = await post(widgets, '{"streamName": "a/b", "type": "number"}')
    assert.deepStrictEqual(
      [badName2.status, badName2.body.error.code, badName2.body.error.path],
      [400, "invalid_request", "streamName"]
    )
    const badFlag = await admin(server, "POST", `/admin/accounts/${account.id}/access-keys?revokeOthers=maybe`)
    assert.deepStrictEqual(
      [badFlag.status, badFlag.json.error.code, badFlag.json.error.path],
      [400, "invalid_request", "revokeOthers"]
    )
  })

  it("answers 400 invalid_request, never 500, for deeply nested bodies, and keeps the message short", async () => {
    const { json: account } = await admin(server, "POST", "/admin/accounts", { name: "deep" })
    await admin(server, "POST", `/admin/accounts/${account.id}/widgets`, { streamName: "s", type: "number" })
    const { json: dashboard } = await admin(server, "POST", `/admin/accounts/${account.id}/dashboards`, { name: "d" })
    const nested = (depth: number, open: string, close: string) => `${open.repeat(depth)}1${close.repeat(depth)}`
    const tile = (title: string) => `{"streamName":"s","title":${title},"x":0,"y":0,"w":1,"h":1}`
    const send = (method: string, path: string, body: string) =>
      fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${testAdminToken}`, "content-type": "application/json" },
        body
      }).then(json)
    const accounts = "/admin/accounts"
    const widgets = `/admin/accounts/${account.id}/widgets`
    const dashboards = `/admin/accounts/${account.id}/dashboards`
    const one = `${dashboards}/${dashboard.id}`
    for (const depth of [5_000, 100_000]) {
      const arrays = nested(depth, "[", "]")
      const objects = nested(depth, '{"a":', "}")
      const cases: ReadonlyArray<readonly [string, string, string]> = [
        ["POST", accounts, arrays],
        ["POST", accounts, `{"name":${arrays}}`],
        ["POST", accounts, `{"name":${objects}}`],
        ["POST", widgets, objects],
        ["POST", widgets, `{"streamName":${objects},"type":"number"}`],
        ["POST", widgets, `{"streamName":"t","type":${arrays}}`],
        ["POST", dashboards, arrays],
        ["POST", dashboards, `{"name":${arrays}}`],
        ["POST", dashboards, `{"name":"d","tiles":${arrays}}`],
        ["POST", dashboards, `{"name":"d","tiles":[${tile(objects)}]}`],
        ["PUT", one, objects],
        ["PUT", one, `{"name":"d","tiles":[${tile(arrays)}]}`]
      ]
      for (const [method, path, body] of cases) {
        const res = await send(method, path, body)
        const label = `${method} ${path} ${body.slice(0, 40)} (depth ${depth})`
        assert.deepStrictEqual([label, res.status, res.body.error.code], [label, 400, "invalid_request"])
        assert.isBelow(res.body.error.message.length, 300, label)
      }
    }
    // A wide value is not echoed whole either.
    const wide = await send("POST", accounts, JSON.stringify({ name: Array.from({ length: 100_000 }, () => 1) }))
    assert.deepStrictEqual([wide.status, wide.body.error.code, wide.body.error.path], [400, "invalid_request", "name"])
    assert.isBelow(wide.body.error.message.length, 300)
    assert.isFalse(
      server.logs.some((line) => line.includes("internal error")),
      server.logs.join("\n").slice(0, 2000)
    )
    // Bodies that are nested but valid are not refused for it.
    const fine = await send("POST", dashboards, `{"name":"fine","tiles":[${tile('"t"')}]}`)
    assert.strictEqual(fine.status, 201)
  })
})

describe("admin API without an admin token", () => {
  it("answers 404 not_found on every admin path", async () => {
    const server = await startServer({ adminToken: undefined })
    try {
      for (const [method, path] of [
        ["POST", "/admin/accounts"],
        ["GET", "/admin/accounts"],
        ["GET", "/admin/accounts/x/widgets"],
        ["DELETE", "/admin/accounts/x/widgets/s"]
      ] as const) {
        const res = await json(
          await fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${testAdminToken}` } })
        )
        assert.deepStrictEqual([method, path, res.status, res.body.error.code], [method, path, 404, "not_found"])
      }
      const spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> }
      assert.isFalse(Object.keys(spec.paths).some((p) => p.startsWith("/admin")))
    } finally {
      await server.close()
    }
  })
})
