import { StorageError, StorageUnavailable } from "@dashstream/core"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { admin, json, setupAccount, startServer, testAdminToken, type TestServer } from "./support/server.js"

describe("routing, health and documentation", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  it("prints exactly one listening line with the real port", () => {
    assert.strictEqual(server.stdout.length, 1)
    assert.match(server.stdout[0]!, /^Dashstream listening on http:\/\/127\.0\.0\.1:\d+$/)
    assert.notStrictEqual(new URL(server.url).port, "0")
  })

  it("answers 404 not_found (JSON) for unknown paths", async () => {
    for (const path of [
      "/",
      "/nope",
      "/api/v2/k/datastream",
      "/api/v2/k/datastream/s/extra",
      "/customSend/x",
      "/openapi"
    ]) {
      const res = await json(await fetch(`${server.url}${path}`))
      assert.deepStrictEqual([path, res.status, res.body.error.code], [path, 404, "not_found"])
      assert.strictEqual(res.headers.get("content-type"), "application/json")
    }
    const post = await json(await fetch(`${server.url}/nope`, { method: "POST", body: "{}" }))
    assert.deepStrictEqual([post.status, post.body.error.code], [404, "not_found"])
  })

  it("answers 404 for a path with a malformed percent escape, never 405", async () => {
    for (const path of [
      "/api/v2/k/datastream/%ZZ",
      "/api/v2/%ZZ/datastream/s",
      "/api/v2/k/datastream/a%",
      "/api/v2/k/datastream/%E0%A4%A"
    ]) {
      for (const method of ["GET", "HEAD"]) {
        const res = await fetch(`${server.url}${path}`, { method })
        assert.deepStrictEqual([path, method, res.status], [path, method, 404])
        if (method === "GET")
          assert.strictEqual(((await res.json()) as { error: { code: string } }).error.code, "not_found")
      }
    }
    // The event streams and the pages decode their key, stream and view token the same way (the lanes' kit).
    for (const path of [
      "/api/v2/k/datastream/%ZZ/events",
      "/api/v2/%ZZ/datastream/s/events",
      "/d/%ZZ",
      "/d/%ZZ/events",
      "/r/%ZZ",
      "/r/%ZZ/events"
    ]) {
      const res = await json(await fetch(`${server.url}${path}`))
      assert.deepStrictEqual([path, res.status, res.body.error.code], [path, 404, "not_found"])
    }
  })

  it("answers 405 method_not_allowed with Allow for a known path", async () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["GET", "/customSend", "POST"],
      ["PUT", "/customSend/", "POST"],
      ["DELETE", "/api/v2/k/datastream/s", "GET, HEAD"],
      ["POST", "/healthz", "GET, HEAD"],
      ["PATCH", "/admin/accounts/x/widgets", "GET, HEAD, POST"],
      ["PUT", "/admin/accounts", "GET, HEAD, POST"],
      ["PUT", "/console/session", "DELETE, GET, HEAD, POST"],
      ["POST", "/openapi.json", "GET, HEAD"]
    ]
    for (const [method, path, allow] of cases) {
      const res = await json(await fetch(`${server.url}${path}`, { method }))
      assert.deepStrictEqual([method, path, res.status, res.body.error.code], [method, path, 405, "method_not_allowed"])
      assert.strictEqual(res.headers.get("allow"), allow)
    }
  })

  it("never answers 405 with an Allow that names the method it refused", async () => {
    const { id, accessKey } = await setupAccount(server, [["s", "number"]])
    const created = await admin(server, "POST", `/admin/accounts/${id}/dashboards`, { name: "d" })
    const token = created.json.viewToken as string
    // The page and its event stream with one trailing slash are served, as every other route is.
    const page = await fetch(`${server.url}/d/${token}/`)
    assert.strictEqual(page.status, 200)
    assert.match(page.headers.get("content-type") ?? "", /^text\/html/)
    const events = new AbortController()
    const stream = await fetch(`${server.url}/d/${token}/events/`, { signal: events.signal })
    assert.deepStrictEqual(
      [stream.status, stream.headers.get("content-type")],
      [200, "text/event-stream; charset=utf-8"]
    )
    events.abort()
    // An event stream does not answer HEAD, and says so.
    const head = await fetch(`${server.url}/d/${token}/events`, { method: "HEAD" })
    assert.deepStrictEqual([head.status, head.headers.get("allow")], [405, "GET"])
    const paths = [
      `/d/${token}`,
      `/d/${token}/`,
      `/d/${token}/events`,
      `/d/${token}/events/`,
      `/d/unknown/`,
      `/api/v2/${accessKey}/datastream/s`,
      `/api/v2/${accessKey}/datastream/s/`,
      `/api/v2/${accessKey}/datastream/s/events`,
      `/api/v2/${accessKey}/datastream/s/events/`,
      // Longer than any stream name: the router matches no route for it.
      `/api/v2/${accessKey}/datastream/${"r".repeat(6_000)}`,
      "/assets/x.js",
      "/assets/x.js/",
      "/customSend",
      "/customSend/",
      "/healthz/",
      "/openapi.json/",
      "/docs/",
      "/metrics/",
      `/admin/accounts/${id}/widgets/`,
      `/admin/accounts/${id}/dashboards/${created.json.id}/`
    ]
    // Every method on every path (the admin DELETE last removes the dashboard: checked above while it existed).
    const contradictions: Array<string> = []
    for (const path of paths) {
      for (const method of ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]) {
        const controller = new AbortController()
        const res = await fetch(`${server.url}${path}`, {
          method,
          signal: controller.signal,
          headers: { authorization: `Bearer ${testAdminToken}` }
        })
        const allow = (res.headers.get("allow") ?? "").split(/,\s*/)
        if (res.status === 405 && allow.includes(method)) contradictions.push(`${method} ${path}: Allow ${allow}`)
        if (res.status !== 405 && res.headers.has("allow"))
          contradictions.push(`${method} ${path}: ${res.status} with Allow`)
        controller.abort()
      }
    }
    assert.deepStrictEqual(contradictions, [])
    const long = await json(await fetch(`${server.url}/api/v2/${accessKey}/datastream/${"r".repeat(6_000)}`))
    assert.deepStrictEqual([long.status, long.body.error.code], [404, "not_found"])
    assert.isBelow(long.body.error.message.length, 200)
  })

  it("answers HEAD where GET is served", async () => {
    const res = await fetch(`${server.url}/healthz`, { method: "HEAD" })
    assert.strictEqual(res.status, 200)
  })

  it("serves /healthz and /readyz", async () => {
    assert.deepStrictEqual(await json(await fetch(`${server.url}/healthz`)).then((r) => [r.status, r.body]), [
      200,
      { status: "ok" }
    ])
    assert.deepStrictEqual(await json(await fetch(`${server.url}/readyz`)).then((r) => [r.status, r.body]), [
      200,
      { status: "ok" }
    ])
    for (const failure of [new StorageUnavailable({ cause: "down" }), new StorageError({ cause: "broken" })]) {
      server.faults.ping = failure
      const res = await json(await fetch(`${server.url}/readyz`))
      server.faults.ping = undefined
      assert.deepStrictEqual([res.status, res.body.error.code], [503, "unavailable"])
    }
    assert.strictEqual((await fetch(`${server.url}/healthz`)).status, 200)
  })

  it("serves an OpenAPI document describing the push and read paths with the contract's error body", async () => {
    const res = await fetch(`${server.url}/openapi.json`)
    assert.strictEqual(res.status, 200)
    const spec = (await res.json()) as any
    assert.strictEqual(spec.openapi, "3.1.0")
    for (const path of [
      "/customSend",
      "/customSend/",
      "/api/v2/{accessKey}/datastream/{streamName}",
      "/healthz",
      "/readyz"
    ]) {
      assert.property(spec.paths, path)
    }
    assert.property(spec.paths["/customSend"], "post")
    assert.property(spec.paths["/admin/accounts"], "post")
    const read = spec.paths["/api/v2/{accessKey}/datastream/{streamName}"].get
    assert.deepStrictEqual(
      read.parameters.map((p: any) => `${p.in}:${p.name}`),
      ["path:accessKey", "path:streamName", "query:since", "query:limit", "query:from", "query:to", "query:points"]
    )
    assert.hasAllKeys(read.responses, ["200", "400", "403", "404", "429", "500", "503"])
    const text = JSON.stringify(spec)
    assert.notInclude(text, "HttpApiDecodeError")
    assert.property(spec.components.schemas, "ErrorResponse")
    assert.deepStrictEqual(spec.paths["/customSend"].post.responses["400"].content["application/json"].schema, {
      $ref: "#/components/schemas/ErrorResponse"
    })
    assert.notProperty(spec.paths["/healthz"].get.responses, "400")
  })

  it("serves /docs as a self-contained page (no external scripts)", async () => {
    const res = await fetch(`${server.url}/docs`)
    assert.strictEqual(res.status, 200)
    assert.match(res.headers.get("content-type") ?? "", /^text\/html/)
    const html = await res.text()
    assert.include(html, "SwaggerUIBundle")
    assert.include(html, "/customSend")
    assert.notMatch(html, /<script[^>]+src=["']?https?:/)
    assert.notMatch(html, /<link[^>]+href=["']?https?:/)
  })
})
