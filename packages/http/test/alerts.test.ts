import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { AttemptResult, NotificationRequest } from "@dashstream/core"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { admin, setupAccount, startServer, type TestServer } from "./support/server.js"

/**
 * The alert endpoints of the admin API (docs/api.md section 18): rules, receivers, silences, test notifications and
 * the transition history, over the real server and the memory store. Test notifications go over loopback HTTP.
 */

/** A plain `fetch` sender: the receiver's status, or `Unreachable` when nothing answers. */
const send = (request: NotificationRequest): Effect.Effect<AttemptResult> =>
  Effect.promise(() =>
    fetch(request.url, { method: "POST", headers: request.headers, body: request.body, redirect: "manual" }).then(
      (res): AttemptResult => ({ _tag: "Answered", status: res.status }),
      (): AttemptResult => ({ _tag: "Unreachable", reason: "connection refused" })
    )
  )

/** A loopback receiver answering `status`, keeping what it got. */
const receiver = async (status: number) => {
  const got: Array<{ url: string; headers: Record<string, unknown>; body: string }> = []
  const server: Server = createServer((req, res) => {
    let body = ""
    req.on("data", (c: Buffer) => (body += c.toString()))
    req.on("end", () => {
      got.push({ url: req.url ?? "", headers: req.headers, body })
      res.statusCode = status
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { got, url, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

describe("admin API: alert rules and receivers", () => {
  let server: TestServer
  let teapot: Awaited<ReturnType<typeof receiver>>

  beforeAll(async () => {
    server = await startServer({ notificationSender: { send } })
    teapot = await receiver(418)
  })
  afterAll(async () => {
    await server.close()
    await teapot.close()
  })

  const rulesOf = (id: string) => `/admin/accounts/${id}/alert-rules`
  const receiversOf = (id: string) => `/admin/accounts/${id}/receivers`
  const iso = (text: unknown) => assert.strictEqual(new Date(text as string).toISOString(), text)

  it("receivers: 201 without the secret, list, get, PUT keeps or removes the secret, DELETE 204 then 404", async () => {
    const { id } = await setupAccount(server, [])
    const created = await admin(server, "POST", receiversOf(id), {
      name: "ops hook",
      kind: "webhook",
      url: "https://hooks.example.com/x",
      secret: "s3cret-value"
    })
    assert.strictEqual(created.status, 201)
    const r = created.json
    assert.deepStrictEqual(Object.keys(r).sort(), ["createdAt", "hasSecret", "id", "kind", "name", "url"])
    assert.deepStrictEqual(
      [r.name, r.kind, r.url, r.hasSecret],
      ["ops hook", "webhook", "https://hooks.example.com/x", true]
    )
    iso(r.createdAt)
    assert.notInclude(JSON.stringify(created.json), "s3cret-value")

    const path = `${receiversOf(id)}/${r.id}`
    assert.deepStrictEqual(await admin(server, "GET", path), { status: 200, json: r })
    assert.deepStrictEqual(await admin(server, "GET", receiversOf(id)), { status: 200, json: { receivers: [r] } })

    // Without secret: kept. With null: removed.
    const kept = await admin(server, "PUT", path, { name: "renamed", kind: "slack", url: "https://hooks.slack.com/a" })
    assert.deepStrictEqual(
      [kept.status, kept.json.name, kept.json.kind, kept.json.hasSecret],
      [200, "renamed", "slack", true]
    )
    assert.deepStrictEqual([kept.json.id, kept.json.createdAt], [r.id, r.createdAt])
    const removed = await admin(server, "PUT", path, {
      ...kept.json,
      id: undefined,
      createdAt: undefined,
      hasSecret: undefined,
      secret: null
    })
    assert.deepStrictEqual([removed.status, removed.json.hasSecret], [200, false])
    const again = await admin(server, "PUT", path, {
      name: "n",
      kind: "webhook",
      url: "http://h.example/",
      secret: "k"
    })
    assert.strictEqual(again.json.hasSecret, true)

    assert.strictEqual((await admin(server, "DELETE", path)).status, 204)
    for (const [method, body] of [
      ["GET", undefined],
      ["PUT", { name: "n", kind: "webhook", url: "http://h.example/" }],
      ["DELETE", undefined],
      ["POST", undefined]
    ] as const) {
      const gone = await admin(server, method, method === "POST" ? `${path}/test` : path, body)
      assert.deepStrictEqual([gone.status, gone.json.error.code], [404, "receiver_not_found"], `${method}`)
    }
  })

  it("receivers: bad bodies are 400 invalid_request with their path, and nothing is stored", async () => {
    const { id } = await setupAccount(server, [])
    const good = { name: "r", kind: "webhook", url: "https://h.example/" }
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ ...good, kind: "email" }, "kind"],
      [{ ...good, url: "ftp://h.example/" }, "url"],
      [{ ...good, url: "not a url" }, "url"],
      [{ ...good, url: `https://h.example/${"a".repeat(2000)}` }, "url"],
      [{ ...good, secret: "" }, "secret"],
      [{ ...good, name: "" }, "name"],
      [{ ...good, colour: "red" }, "colour"],
      [{ name: "r", kind: "webhook" }, "url"]
    ]
    for (const [body, path] of cases) {
      const res = await admin(server, "POST", receiversOf(id), body)
      assert.deepStrictEqual([res.status, res.json.error.code, res.json.error.path], [400, "invalid_request", path])
    }
    assert.deepStrictEqual((await admin(server, "GET", receiversOf(id))).json, { receivers: [] })
    const missing = await admin(server, "POST", receiversOf("no-such-account"), good)
    assert.deepStrictEqual([missing.status, missing.json.error.code], [404, "account_not_found"])
  })

  it("test: 200 with the receiver's status whatever it is; 502 receiver_unreachable with the reason", async () => {
    const { id } = await setupAccount(server, [])
    const made = await admin(server, "POST", receiversOf(id), { name: "t", kind: "alertmanager", url: teapot.url })
    const tested = await admin(server, "POST", `${receiversOf(id)}/${made.json.id}/test`)
    assert.deepStrictEqual([tested.status, tested.json], [200, { status: 418 }])
    const sent = teapot.got.at(-1)!
    assert.strictEqual(sent.url, "/api/v2/alerts")
    assert.strictEqual(JSON.parse(sent.body)[0].labels.alertname, "Dashstream test notification")

    const closed = await new Promise<number>((resolve) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const port = (s.address() as AddressInfo).port
        s.close(() => resolve(port))
      })
    })
    const dead = await admin(server, "POST", receiversOf(id), {
      name: "d",
      kind: "webhook",
      url: `http://127.0.0.1:${closed}/`
    })
    const failed = await admin(server, "POST", `${receiversOf(id)}/${dead.json.id}/test`)
    assert.deepStrictEqual([failed.status, failed.json.error.code], [502, "receiver_unreachable"])
    assert.include(failed.json.error.message, "connection refused")
    assert.notInclude(failed.json.error.message, String(closed))
  })

  it("rules: 201 in state ok, list, get, PUT, silence and lift, DELETE 204 then 404 rule_not_found", async () => {
    const { id } = await setupAccount(server, [
      ["cpu", "number"],
      ["log", "text-feed"]
    ])
    const hook = (await admin(server, "POST", receiversOf(id), { name: "h", kind: "webhook", url: teapot.url })).json
    const body = { name: "CPU high", streamName: "cpu", condition: { above: 90 }, for: 60, receiverIds: [hook.id] }
    const created = await admin(server, "POST", rulesOf(id), body)
    assert.strictEqual(created.status, 201)
    const rule = created.json
    assert.deepStrictEqual(Object.keys(rule).sort(), [
      "condition",
      "createdAt",
      "for",
      "id",
      "name",
      "receiverIds",
      "silencedUntil",
      "state",
      "stateSince",
      "streamName",
      "value"
    ])
    assert.deepStrictEqual(
      [
        rule.name,
        rule.streamName,
        rule.condition,
        rule.for,
        rule.receiverIds,
        rule.state,
        rule.value,
        rule.silencedUntil
      ],
      ["CPU high", "cpu", { above: 90 }, 60, [hook.id], "ok", null, null]
    )
    iso(rule.createdAt)
    iso(rule.stateSince)
    const path = `${rulesOf(id)}/${rule.id}`
    assert.deepStrictEqual(await admin(server, "GET", path), { status: 200, json: rule })
    assert.deepStrictEqual(await admin(server, "GET", rulesOf(id)), { status: 200, json: { rules: [rule] } })

    // `for` defaults to 0; noDataFor on any type.
    const quiet = await admin(server, "POST", rulesOf(id), {
      name: "log quiet",
      streamName: "log",
      condition: { noDataFor: 600 },
      receiverIds: []
    })
    assert.deepStrictEqual([quiet.status, quiet.json.for, quiet.json.condition], [201, 0, { noDataFor: 600 }])

    const put = await admin(server, "PUT", path, { ...body, name: "CPU very high", condition: { below: 5 }, for: 0 })
    assert.deepStrictEqual(
      [put.status, put.json.id, put.json.name, put.json.condition, put.json.for, put.json.createdAt],
      [200, rule.id, "CPU very high", { below: 5 }, 0, rule.createdAt]
    )

    const until = "2099-01-02T03:04:05.678Z"
    const silenced = await admin(server, "POST", `${path}/silence`, { until: "2099-01-02T04:04:05.678+01:00" })
    assert.deepStrictEqual([silenced.status, silenced.json.silencedUntil], [200, until])
    assert.strictEqual((await admin(server, "GET", path)).json.silencedUntil, until)
    const lifted = await admin(server, "POST", `${path}/silence`, { until: null })
    assert.deepStrictEqual([lifted.status, lifted.json.silencedUntil], [200, null])
    for (const [bad, at] of [
      [{ until: "tomorrow" }, "until"],
      [{ until: "2099-01-02T03:04:05" }, "until"],
      [{ until: 5 }, "until"],
      [{}, "until"],
      [{ until: null, for: 3 }, "for"]
    ] as const) {
      const res = await admin(server, "POST", `${path}/silence`, bad)
      assert.deepStrictEqual([res.status, res.json.error.code, res.json.error.path], [400, "invalid_request", at])
    }

    // Deleting the receiver takes its id out of the rule.
    assert.strictEqual((await admin(server, "DELETE", `${receiversOf(id)}/${hook.id}`)).status, 204)
    assert.deepStrictEqual((await admin(server, "GET", path)).json.receiverIds, [])

    assert.strictEqual((await admin(server, "DELETE", path)).status, 204)
    for (const [method, suffix, payload] of [
      ["GET", "", undefined],
      ["PUT", "", body],
      ["DELETE", "", undefined],
      ["POST", "/silence", { until: null }]
    ] as const) {
      const gone = await admin(
        server,
        method,
        `${path}${suffix}`,
        method === "PUT" ? { ...payload, receiverIds: [] } : payload
      )
      assert.deepStrictEqual([gone.status, gone.json.error.code], [404, "rule_not_found"], `${method} ${suffix}`)
    }
    assert.deepStrictEqual(
      (await admin(server, "GET", rulesOf(id))).json.rules.map((r: any) => r.name),
      ["log quiet"]
    )
  })

  it("rules: bad bodies are 400 invalid_request with their path, and nothing is stored", async () => {
    const { id } = await setupAccount(server, [
      ["cpu", "number"],
      ["log", "text-feed"]
    ])
    const other = await setupAccount(server, [])
    const mine = (await admin(server, "POST", receiversOf(id), { name: "h", kind: "webhook", url: teapot.url })).json
    const theirs = (await admin(server, "POST", receiversOf(other.id), { name: "h", kind: "slack", url: teapot.url }))
      .json
    const good = { name: "r", streamName: "cpu", condition: { above: 1 }, receiverIds: [mine.id] }
    const cases: ReadonlyArray<readonly [unknown, string]> = [
      [{ ...good, streamName: "nope" }, "streamName"],
      [{ ...good, streamName: "log" }, "condition"],
      [{ ...good, condition: { above: "x" } }, "condition"],
      [{ ...good, condition: { above: 1, below: 0 } }, "condition"],
      [{ ...good, condition: { noDataFor: 5 } }, "condition"],
      [{ ...good, condition: { limit: 5 } }, "condition.limit"],
      [{ ...good, condition: 7 }, "condition"],
      [{ ...good, for: 1.5 }, "for"],
      [{ ...good, for: 86_401 }, "for"],
      [{ ...good, receiverIds: [mine.id, theirs.id] }, "receiverIds[1]"],
      [{ ...good, receiverIds: [mine.id, mine.id] }, "receiverIds[1]"],
      [{ ...good, receiverIds: ["x"] }, "receiverIds[0]"],
      [{ ...good, colour: "red" }, "colour"],
      [{ ...good, name: "" }, "name"]
    ]
    for (const [body, path] of cases) {
      const res = await admin(server, "POST", rulesOf(id), body)
      assert.deepStrictEqual(
        [res.status, res.json.error.code, res.json.error.path],
        [400, "invalid_request", path],
        JSON.stringify(body)
      )
    }
    assert.deepStrictEqual((await admin(server, "GET", rulesOf(id))).json, { rules: [] })
    const created = await admin(server, "POST", rulesOf(id), good)
    const put = await admin(server, "PUT", `${rulesOf(id)}/${created.json.id}`, { ...good, streamName: "log" })
    assert.deepStrictEqual([put.status, put.json.error.path], [400, "condition"])
    const invalidJson = await fetch(`${server.url}${rulesOf(id)}`, {
      method: "POST",
      headers: { authorization: "Bearer test-admin-token", "content-type": "application/json" },
      body: "{"
    })
    assert.strictEqual(invalidJson.status, 400)
    assert.strictEqual(((await invalidJson.json()) as any).error.code, "invalid_json")
    const missing = await admin(server, "POST", rulesOf("no-such-account"), good)
    assert.deepStrictEqual([missing.status, missing.json.error.code], [404, "account_not_found"])
  })

  it("alert-events: 200 {events: []} without transitions; a bad since is 400 with path since", async () => {
    const { id } = await setupAccount(server, [])
    const events = `/admin/accounts/${id}/alert-events`
    assert.deepStrictEqual(await admin(server, "GET", events), { status: 200, json: { events: [] } })
    assert.deepStrictEqual(await admin(server, "GET", `${events}?since=2026-01-01T00:00:00Z`), {
      status: 200,
      json: { events: [] }
    })
    const bad = await admin(server, "GET", `${events}?since=yesterday`)
    assert.deepStrictEqual([bad.status, bad.json.error.code, bad.json.error.path], [400, "invalid_request", "since"])
    const missing = await admin(server, "GET", "/admin/accounts/nope/alert-events")
    assert.deepStrictEqual([missing.status, missing.json.error.code], [404, "account_not_found"])
  })

  it("every alert route answers 401 without the admin token", async () => {
    const { id } = await setupAccount(server, [])
    for (const [method, path] of [
      ["GET", rulesOf(id)],
      ["POST", rulesOf(id)],
      ["GET", receiversOf(id)],
      ["POST", `${receiversOf(id)}/x/test`],
      ["POST", `${rulesOf(id)}/x/silence`],
      ["GET", `/admin/accounts/${id}/alert-events`]
    ] as const) {
      const res = await fetch(`${server.url}${path}`, { method })
      assert.strictEqual(res.status, 401, `${method} ${path}`)
    }
  })

  it("without a notification sender, a test answers 502 saying so", async () => {
    const plain = await startServer()
    try {
      const { id } = await setupAccount(plain, [])
      const made = await admin(plain, "POST", receiversOf(id), { name: "t", kind: "webhook", url: teapot.url })
      const tested = await admin(plain, "POST", `${receiversOf(id)}/${made.json.id}/test`)
      assert.deepStrictEqual([tested.status, tested.json.error.code], [502, "receiver_unreachable"])
      assert.include(tested.json.error.message, "this server sends no notifications")
    } finally {
      await plain.close()
    }
  })
})
