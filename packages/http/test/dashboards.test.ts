import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { admin, json, setupAccount, startServer, testAdminToken, type TestServer } from "./support/server.js"

/** The dashboard endpoints of the admin API (docs/api.md section 11), over the real server and the memory store. */
describe("admin API: dashboards", () => {
  let server: TestServer

  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  const dashboards = (id: string) => `/admin/accounts/${id}/dashboards`

  it("create without tiles: 201, one tile per widget in creation order, the view token and /d/<token> url", async () => {
    const { id } = await setupAccount(server, [
      ["zeta", "number"],
      ["alpha", "world-map"],
      ["mid", "table"]
    ])
    const created = await admin(server, "POST", dashboards(id), { name: "Wall" })
    assert.strictEqual(created.status, 201)
    const d = created.json
    assert.deepStrictEqual(Object.keys(d).sort(), ["createdAt", "id", "name", "tiles", "url", "viewToken"])
    assert.strictEqual(d.name, "Wall")
    assert.match(d.id, /^[0-9a-f-]{36}$/)
    assert.match(d.viewToken, /^dv_[A-Za-z0-9_-]{43}$/)
    assert.strictEqual(d.url, `/d/${d.viewToken}`)
    assert.strictEqual(new Date(d.createdAt).toISOString(), d.createdAt)
    assert.deepStrictEqual(
      d.tiles.map((t: any) => t.streamName),
      ["zeta", "alpha", "mid"]
    )
    for (const t of d.tiles) assert.deepStrictEqual(Object.keys(t).sort(), ["h", "streamName", "w", "x", "y"])

    // GET, list: the same dashboard with the same share link (docs/api.md section 11).
    const got = await admin(server, "GET", `${dashboards(id)}/${d.id}`)
    assert.strictEqual(got.status, 200)
    assert.deepStrictEqual(got.json, d)
    const list = await admin(server, "GET", dashboards(id))
    assert.deepStrictEqual([list.status, list.json], [200, { dashboards: [d] }])
  })

  it("the page may be framed only by its own origin unless frameAncestors says otherwise", async () => {
    const frameAncestors = async (target: TestServer) => {
      const { id } = await setupAccount(target, [["n", "number"]])
      const created = await admin(target, "POST", dashboards(id), { name: "Framed" })
      const page = await fetch(`${target.url}${created.json.url}`)
      assert.strictEqual(page.status, 200)
      const csp = page.headers.get("content-security-policy") ?? ""
      return /(?:^|;\s*)frame-ancestors ([^;]*)/.exec(csp)?.[1]
    }
    assert.strictEqual(await frameAncestors(server), "'self'")
    const embedding = await startServer({ frameAncestors: "'self' https://wiki.example.com" })
    try {
      assert.strictEqual(await frameAncestors(embedding), "'self' https://wiki.example.com")
    } finally {
      await embedding.close()
    }
  })

  it("create with tiles keeps them as given (title included); PUT replaces name and tiles; DELETE answers 204", async () => {
    const { id } = await setupAccount(server, [
      ["a", "number"],
      ["b", "list"]
    ])
    const tiles = [
      { streamName: "b", title: "Todo", x: 0, y: 0, w: 6, h: 3 },
      { streamName: "a", x: 6, y: 0, w: 6, h: 3 }
    ]
    const created = await admin(server, "POST", dashboards(id), { name: "mine", tiles })
    assert.deepStrictEqual([created.status, created.json.tiles], [201, tiles])
    const path = `${dashboards(id)}/${created.json.id}`

    const next = [{ streamName: "a", x: 0, y: 0, w: 12, h: 1 }]
    const put = await admin(server, "PUT", path, { name: "renamed", tiles: next })
    assert.strictEqual(put.status, 200)
    assert.deepStrictEqual(put.json, {
      ...created.json,
      name: "renamed",
      tiles: next
    })
    assert.deepStrictEqual((await admin(server, "GET", path)).json.tiles, next)

    const deleted = await fetch(`${server.url}${path}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${testAdminToken}` }
    })
    assert.deepStrictEqual([deleted.status, await deleted.text()], [204, ""])
    const again = await admin(server, "DELETE", path)
    assert.deepStrictEqual([again.status, again.json.error.code], [404, "dashboard_not_found"])
    assert.deepStrictEqual((await admin(server, "GET", dashboards(id))).json, { dashboards: [] })
  })

  it("rotate: 201 with a new token and url; the dashboard is unchanged", async () => {
    const { id } = await setupAccount(server, [["s", "label"]])
    const created = (await admin(server, "POST", dashboards(id), { name: "d" })).json
    const rotated = await admin(server, "POST", `${dashboards(id)}/${created.id}/view-token`)
    assert.strictEqual(rotated.status, 201)
    assert.notStrictEqual(rotated.json.viewToken, created.viewToken)
    assert.match(rotated.json.viewToken, /^dv_[A-Za-z0-9_-]{43}$/)
    assert.deepStrictEqual(rotated.json, { ...created, viewToken: rotated.json.viewToken, url: rotated.json.url })
    assert.strictEqual(rotated.json.url, `/d/${rotated.json.viewToken}`)
  })

  it("400 invalid_request with the path of the broken rule", async () => {
    const { id } = await setupAccount(server, [
      ["a", "number"],
      ["b", "number"]
    ])
    const t = (streamName: string, x: number, y: number, w: number, h: number) => ({ streamName, x, y, w, h })
    const cases: ReadonlyArray<[unknown, string]> = [
      [{ name: "d", tiles: [t("a", 0, 0, 1, 1), t("b", 1, 0, 1, 1), t("nope", 2, 0, 1, 1)] }, "tiles[2].streamName"],
      [{ name: "d", tiles: [t("a", 8, 0, 5, 1)] }, "tiles[0].w"],
      [{ name: "d", tiles: [t("a", -1, 0, 1, 1)] }, "tiles[0].x"],
      [{ name: "d", tiles: [t("a", 0, 0, 1.5, 1)] }, "tiles[0].w"],
      [{ name: "d", tiles: [t("a", 0, 0, 1, 0)] }, "tiles[0].h"],
      [{ name: "d", tiles: [t("a", 0, -2, 1, 1)] }, "tiles[0].y"],
      [{ name: "d", tiles: [t("a", 0, 0, 4, 4), t("b", 3, 3, 2, 2)] }, "tiles[1]"],
      [{ name: "d", tiles: [{ x: 0, y: 0, w: 1, h: 1 }] }, "tiles[0].streamName"],
      [{ name: "d", tiles: "all" }, "tiles"],
      [{ name: "" }, "name"],
      [{ name: "n".repeat(201) }, "name"],
      [{ tiles: [] }, "name"]
    ]
    for (const [body, path] of cases) {
      const res = await admin(server, "POST", dashboards(id), body)
      assert.deepStrictEqual(
        [res.status, res.json.error.code, res.json.error.path],
        [400, "invalid_request", path],
        `${JSON.stringify(body).slice(0, 80)}: ${res.json.error.message}`
      )
      assert.isString(res.json.error.message)
    }
    const nope = await admin(server, "POST", dashboards(id), cases[0]![0])
    assert.include(nope.json.error.message, '"nope"')

    const created = (await admin(server, "POST", dashboards(id), { name: "d" })).json
    const path = `${dashboards(id)}/${created.id}`
    const put = await admin(server, "PUT", path, { name: "d", tiles: [t("ghost", 0, 0, 1, 1)] })
    assert.deepStrictEqual([put.status, put.json.error.path], [400, "tiles[0].streamName"])
    const noTiles = await admin(server, "PUT", path, { name: "d" })
    assert.deepStrictEqual([noTiles.status, noTiles.json.error.path], [400, "tiles"])
    // Nothing changed.
    assert.deepStrictEqual((await admin(server, "GET", path)).json.tiles, created.tiles)

    const badJson = await fetch(`${server.url}${dashboards(id)}`, {
      method: "POST",
      headers: { authorization: `Bearer ${testAdminToken}`, "content-type": "application/x-www-form-urlencoded" },
      body: "{nope"
    }).then(json)
    assert.deepStrictEqual([badJson.status, badJson.body.error.code], [400, "invalid_json"])
  })

  it("tile options (docs/api.md section 15): stored and answered as given; invalid ones are 400 with path, nothing stored", async () => {
    const { id } = await setupAccount(server, [
      ["n", "number"],
      ["l", "list"],
      ["d", "dial"]
    ])
    const options = {
      thresholds: [
        { above: 80, color: "amber" },
        { above: 95, color: "red" }
      ],
      min: 0,
      max: 120,
      staleAfter: 60
    }
    const tiles = [
      { streamName: "d", x: 0, y: 0, w: 2, h: 2, options },
      { streamName: "l", x: 2, y: 0, w: 2, h: 2, options: { staleAfter: 10 } }
    ]
    const created = await admin(server, "POST", dashboards(id), { name: "opts", tiles })
    assert.deepStrictEqual([created.status, created.json.tiles], [201, tiles])
    const path = `${dashboards(id)}/${created.json.id}`
    assert.deepStrictEqual((await admin(server, "GET", path)).json.tiles, tiles)
    assert.deepStrictEqual((await admin(server, "GET", dashboards(id))).json.dashboards[0].tiles, tiles)

    const at = (streamName: string, options: unknown) => ({
      name: "opts",
      tiles: [tiles[0], { streamName, x: 4, y: 0, w: 1, h: 1, options }]
    })
    const cases: ReadonlyArray<[unknown, string]> = [
      [at("n", { thresholds: [{ above: 1, color: "pink" }] }), "tiles[1].options.thresholds[0].color"],
      [at("n", { thresholds: [{ above: 1, below: 2, color: "red" }] }), "tiles[1].options.thresholds[0]"],
      [at("n", { colour: "red" }), "tiles[1].options.colour"],
      [at("d", { min: 3, max: 3 }), "tiles[1].options.max"],
      [at("n", { staleAfter: 5 }), "tiles[1].options.staleAfter"],
      [at("l", { thresholds: [{ above: 1, color: "red" }] }), "tiles[1].options.thresholds"],
      [at("n", { min: 0 }), "tiles[1].options.min"],
      [at("n", 7), "tiles[1].options"]
    ]
    for (const [body, errorPath] of cases) {
      for (const [method, url] of [
        ["PUT", path],
        ["POST", dashboards(id)]
      ] as const) {
        const res = await admin(server, method, url, body)
        assert.deepStrictEqual(
          [res.status, res.json.error.code, res.json.error.path],
          [400, "invalid_request", errorPath],
          `${method} ${JSON.stringify(body).slice(0, 120)}: ${res.json.error.message}`
        )
      }
    }
    // Nothing stored: the dashboard is as created, and no other dashboard was made.
    assert.deepStrictEqual((await admin(server, "GET", path)).json.tiles, tiles)
    assert.strictEqual((await admin(server, "GET", dashboards(id))).json.dashboards.length, 1)
  })

  it("404 account_not_found for an unknown account, dashboard_not_found for an unknown or foreign dashboard", async () => {
    const { id } = await setupAccount(server, [["s", "number"]])
    const { id: other } = await setupAccount(server, [["s", "number"]])
    const foreign = (await admin(server, "POST", dashboards(other), { name: "theirs" })).json.id
    const body = { name: "d", tiles: [] }
    for (const [method, path, payload] of [
      ["POST", dashboards("nope"), body],
      ["GET", dashboards("nope"), undefined],
      ["GET", `${dashboards("nope")}/${foreign}`, undefined],
      ["PUT", `${dashboards("nope")}/${foreign}`, body],
      ["DELETE", `${dashboards("nope")}/${foreign}`, undefined],
      ["POST", `${dashboards("nope")}/${foreign}/view-token`, undefined]
    ] as const) {
      const res = await admin(server, method, path, payload)
      assert.deepStrictEqual([method, path, res.status, res.json.error.code], [method, path, 404, "account_not_found"])
    }
    for (const dashboardId of [foreign, "no-such-dashboard"]) {
      for (const [method, path, payload] of [
        ["GET", `${dashboards(id)}/${dashboardId}`, undefined],
        ["PUT", `${dashboards(id)}/${dashboardId}`, body],
        ["DELETE", `${dashboards(id)}/${dashboardId}`, undefined],
        ["POST", `${dashboards(id)}/${dashboardId}/view-token`, undefined]
      ] as const) {
        const res = await admin(server, method, path, payload)
        assert.deepStrictEqual(
          [method, path, res.status, res.json.error.code],
          [method, path, 404, "dashboard_not_found"]
        )
      }
    }
    // The other account's dashboard is untouched.
    assert.strictEqual((await admin(server, "GET", `${dashboards(other)}/${foreign}`)).json.name, "theirs")
  })

  it("401 without the admin token; 405 for a wrong method", async () => {
    const { id } = await setupAccount(server, [])
    const res = await json(await fetch(`${server.url}${dashboards(id)}`))
    assert.deepStrictEqual([res.status, res.body.error.code], [401, "unauthorized"])
    const patch = await admin(server, "PATCH", `${dashboards(id)}/x`, {})
    assert.deepStrictEqual([patch.status, patch.json.error.code], [405, "method_not_allowed"])
  })

  it("the OpenAPI document describes the five dashboard paths, their bodies and the view token deviation", async () => {
    const spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as any
    const paths = spec.paths as Record<string, Record<string, any>>
    assert.deepStrictEqual(Object.keys(paths["/admin/accounts/{id}/dashboards"]!).sort(), ["get", "post"])
    assert.deepStrictEqual(Object.keys(paths["/admin/accounts/{id}/dashboards/{dashboardId}"]!).sort(), [
      "delete",
      "get",
      "put"
    ])
    assert.deepStrictEqual(Object.keys(paths["/admin/accounts/{id}/dashboards/{dashboardId}/view-token"]!), ["post"])
    const post = paths["/admin/accounts/{id}/dashboards"]!["post"]
    assert.containsAllKeys(post.responses, ["201", "400", "404"])
    const text = JSON.stringify(spec)
    assert.include(text, "dashboard_not_found")
    assert.include(text, "SHA-256 digest")
    const schemas = spec.components.schemas as Record<string, any>
    assert.containsAllKeys(schemas, ["Dashboard", "Tile", "CreateDashboard", "UpdateDashboard"])
    assert.deepStrictEqual(Object.keys(schemas["Tile"].properties).sort(), [
      "h",
      "options",
      "streamName",
      "title",
      "w",
      "x",
      "y"
    ])
    assert.containsAllKeys(schemas, ["TileOptions", "Threshold"])
    assert.deepStrictEqual(Object.keys(schemas["TileOptions"].properties).sort(), [
      "max",
      "min",
      "range",
      "staleAfter",
      "thresholds"
    ])
    assert.include(schemas["TileOptions"].properties.thresholds.description, "LAST threshold")
    assert.include(schemas["TileOptions"].properties.staleAfter.description, "No data for")
  })
})
