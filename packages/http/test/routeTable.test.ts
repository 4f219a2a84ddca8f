import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Cors, Lane } from "../src/api/Routing.js"
import { customSendRoute } from "../src/internal/ingestRoutes.js"
import { makeRouteTable, methodsOf, paramsOf, routes, routesOf } from "../src/internal/routeTable.js"
import { startServer, type TestServer } from "./support/server.js"

/**
 * The route table (`internal/routeTable.ts`) is derived from the `HttpApi` (`Api.ts`): the server dispatches from it,
 * and the OpenAPI document generated from the same definition names exactly its documented routes.
 */

const httpMethods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

/** `METHOD path` of every operation of an OpenAPI document, `{name}` parameters as `:name`, no trailing slash. */
const documentedOperations = (doc: { readonly paths: Record<string, Record<string, unknown>> }): Array<string> => {
  const out = new Set<string>()
  for (const [path, item] of Object.entries(doc.paths)) {
    const pattern = (path.length > 1 ? path.replace(/\/$/, "") : path).replace(/\{([^}]+)\}/g, ":$1")
    for (const method of Object.keys(item)) {
      if (httpMethods.includes(method)) out.add(`${method.toUpperCase()} ${pattern}`)
    }
  }
  return [...out].sort()
}

/** `METHOD path` of every documented route of the table served with the admin API on or off (HEAD not listed). */
const tableOperations = (adminOn: boolean): Array<string> =>
  makeRouteTable(adminOn)
    .routes.filter((route) => route.documented)
    .flatMap((route) => route.methods.map((method) => `${method} ${route.path}`))
    .sort()

describe("the route table and the OpenAPI document", () => {
  let withAdmin: TestServer
  let withoutAdmin: TestServer

  beforeAll(async () => {
    withAdmin = await startServer()
    withoutAdmin = await startServer({ adminToken: undefined })
  })
  afterAll(async () => {
    await withAdmin.close()
    await withoutAdmin.close()
  })

  for (const adminOn of [true, false]) {
    it(`GET /openapi.json names exactly the documented routes of the table (admin API ${adminOn ? "on" : "off"})`, async () => {
      const server = adminOn ? withAdmin : withoutAdmin
      const res = await fetch(`${server.url}/openapi.json`)
      assert.strictEqual(res.status, 200)
      const documented = documentedOperations((await res.json()) as never)
      const table = tableOperations(adminOn)
      // Both directions, each named: a path of the document with no route, a documented route missing from it.
      assert.deepStrictEqual(
        documented.filter((op) => !table.includes(op)),
        [],
        "in the OpenAPI document, not in the route table"
      )
      assert.deepStrictEqual(
        table.filter((op) => !documented.includes(op)),
        [],
        "documented in the route table, not in the OpenAPI document"
      )
    })
  }

  it("each route's path has a literal first segment and no route is listed twice for a method", () => {
    const seen = new Set<string>()
    for (const route of routes) {
      assert.notMatch(route.path.split("/")[1]!, /^:/, route.path)
      for (const method of methodsOf(route)) {
        const key = `${method} ${route.path}`
        assert.isFalse(seen.has(key), key)
        seen.add(key)
      }
    }
  })

  it("dispatches each request to its lane, HEAD wherever GET is but on event streams", () => {
    const table = makeRouteTable(true)
    const lane = (method: string, url: string) => table.match(method, url)?.lane
    assert.strictEqual(lane("POST", "/customSend/?x=1"), "ingest")
    assert.strictEqual(lane("GET", "/api/v2/k/datastream/s"), "read")
    assert.strictEqual(lane("HEAD", "/api/v2/k/datastream/s/"), "read")
    assert.strictEqual(lane("GET", "/api/v2/k/datastream/s/events/"), "live")
    assert.isUndefined(lane("HEAD", "/api/v2/k/datastream/s/events"))
    assert.strictEqual(lane("GET", "/r/t/events"), "live")
    assert.strictEqual(lane("HEAD", "/d/t/"), "page")
    assert.strictEqual(lane("GET", "/favicon.ico"), "page")
    assert.strictEqual(lane("HEAD", "/ping"), "probe")
    assert.strictEqual(lane("POST", "/query?q=x"), "probe")
    assert.strictEqual(lane("GET", "/console"), "page")
    assert.strictEqual(lane("DELETE", "/console/session"), "api")
    assert.isUndefined(makeRouteTable(false).match("GET", "/console"))
    // No route through an empty or malformed parameter, a second trailing slash, or a path not starting with `/`.
    for (const url of ["/d/%ZZ", "/d//", "/d/t//", "/api/v2//datastream/s/events", "x/customSend", "/customSendX"])
      assert.isUndefined(table.match(url.includes("customSend") ? "POST" : "GET", url), url)
    assert.deepStrictEqual(table.allowed("/d/t/events"), ["GET"])
    assert.deepStrictEqual(table.allowed("/query"), ["GET", "HEAD", "POST"])
    assert.strictEqual(table.template("/admin/accounts/7/rotations/3/"), "/admin/accounts/:id/rotations/:rotationId")
  })

  it("derives each route from its endpoints: lane, CORS, documented, admin, the push protocol by endpoint name", () => {
    const pages = HttpApiGroup.make("pages")
      .add(HttpApiEndpoint.get("page", "/p/:token"))
      .add(HttpApiEndpoint.get("events", "/p/:token/events").annotate(Lane, "live").annotate(Cors, true))
      .add(HttpApiEndpoint.get("icon", "/icon").annotate(OpenApi.Exclude, true))
      .annotate(Lane, "page")
    const pushes = HttpApiGroup.make("pushes")
      .add(HttpApiEndpoint.post("push", "/in/:stream"))
      .add(HttpApiEndpoint.post("pushSlash", "/in/:stream/"))
      .annotate(Lane, "ingest")
    const admin = HttpApiGroup.make("admin")
      .add(HttpApiEndpoint.get("list", "/things"))
      .add(HttpApiEndpoint.post("create", "/things"))
    const derived = routesOf(HttpApi.make("t").add(pages).add(pushes).add(admin), new Set(["pages", "pushes"]), {
      push: customSendRoute
    })
    const row = ({ path, methods, lane, documented, admin, cors }: (typeof derived)[number]) =>
      `${methods.join(",")} ${path} ${lane}${documented ? "" : " undocumented"}${admin ? " admin" : ""}${cors ? " cors" : ""}`
    assert.deepStrictEqual(derived.map(row), [
      "GET /p/:token page",
      "GET /p/:token/events live cors",
      "GET /icon page undocumented",
      "POST /in/:stream ingest",
      "GET,POST /things api admin"
    ])
    const push = derived[3]!.ingest!
    assert.strictEqual(push.template, "/in/:stream")
    assert.strictEqual(push.method, "POST")
    assert.strictEqual(push.parse, customSendRoute.parse)
    assert.deepStrictEqual(push.params("/in/a%20b/?x=1"), { stream: "a b" })
    assert.throws(() => routesOf(HttpApi.make("t").add(pushes), new Set(), {}), /no push protocol named push/)
  })

  it("gives the path parameters of a matched URL, percent-decoded; one shared object when there are none", () => {
    const params = paramsOf("/admin/accounts/:id/widgets/:stream")
    assert.deepStrictEqual(params("/admin/accounts/7/widgets/a%2Fb/?q=1"), { id: "7", stream: "a/b" })
    const none = paramsOf("/customSend")
    assert.strictEqual(none("/customSend"), none("/customSend/?x"))
    assert.deepStrictEqual(none("/customSend"), {})
  })
})
