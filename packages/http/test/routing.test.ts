import { StorageError, StorageUnavailable } from "@dashstream/core"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { json, startServer, type TestServer } from "./support/server.js"

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

  it("answers 404 for a path with a malformed percent escape, never 405 (issue 13, defect 6)", async () => {
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
      ["path:accessKey", "path:streamName", "query:since", "query:limit"]
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
