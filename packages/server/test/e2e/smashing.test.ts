/**
 * Smashing (Dashing) widget pushes (docs/api.md section 13.2): `POST /widgets/<stream name>` with
 * `{"auth_token", ...widget data}`, as a Smashing job sends them (curl-shaped: raw JSON, whatever the Content-Type),
 * each row of the mapping table, and the answers: 204 empty, 401 text `Invalid API key`, 404 `stream_not_found`,
 * 400 `invalid_json` and `invalid_point` in section 5's JSON shape, nothing stored on a refusal.
 */
import { describe, expect, it } from "vitest"
import { type Api, backends, expectError, expectUnchanged, type Reply, suiteName, useServer } from "./harness.js"

/** What a Smashing job does: `curl -d '{"auth_token": ..., ...}' http://host/widgets/<id>` (a form label). */
const smash = (
  api: Api,
  stream: string,
  body: unknown,
  contentType: string | null = "application/x-www-form-urlencoded"
) =>
  api.pushRaw(typeof body === "string" ? body : JSON.stringify(body), {
    path: `/widgets/${encodeURIComponent(stream)}`,
    contentType
  })

const expectStored = (r: Reply): void => {
  expect(r.status, r.text).toBe(204)
  expect(r.text).toBe("")
}

for (const backend of backends) {
  describe(suiteName("Smashing widget pushes", backend), () => {
    const ctx = useServer(backend)

    it("Number data on number and bar widgets: {number: current, prefix?, suffix?}, other fields ignored", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number", h: "horizontal-bar", v: "vertical-bar" })
      for (const stream of ["n", "h", "v"]) {
        expectStored(
          await smash(api, stream, {
            auth_token: accessKey,
            current: 42.5,
            last: 40,
            prefix: "$",
            suffix: "k",
            moreinfo: "ignored",
            updatedAt: 1700000000,
            title: "ignored"
          })
        )
        expect(await api.latest(accessKey, stream)).toEqual({ number: 42.5, prefix: "$", suffix: "k" })
      }
      // A numeric string is a number, as in a push (docs/api.md section 3).
      expectStored(await smash(api, "n", { auth_token: accessKey, current: "7" }))
      expect(await api.latest(accessKey, "n")).toEqual({ number: 7 })
    })

    it("Meter data on dial widgets: {number: value} (or current)", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ d: "dial" })
      expectStored(await smash(api, "d", { auth_token: accessKey, value: 63, min: 0, max: 100 }))
      expect(await api.latest(accessKey, "d")).toEqual({ number: 63 })
      expectStored(await smash(api, "d", { auth_token: accessKey, current: 12 }))
      expect(await api.latest(accessKey, "d")).toEqual({ number: 12 })
    })

    it("Graph data on sparkline and line-graph: one timestamped entry per point; a stored x is replaced, older points stay", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "sparkline", l: "line-graph" })
      const t = 1_700_000_000
      for (const stream of ["s", "l"]) {
        const window1 = [1, 2, 3].map((i) => ({ x: t + i, y: i * 10 }))
        expectStored(await smash(api, stream, { auth_token: accessKey, points: window1 }))
        // The next window slides: x = t+2 and t+3 again (t+3 with a new y), t+4 new; t+1 stays (history).
        const window2 = [
          { x: t + 2, y: 20 },
          { x: t + 3, y: 33 },
          { x: t + 4, y: 40 }
        ]
        expectStored(await smash(api, stream, { auth_token: accessKey, points: window2 }))
        expect(await api.entries(accessKey, stream)).toEqual([
          { ts: t + 1, point: { number: 10 } },
          { ts: t + 2, point: { number: 20 } },
          { ts: t + 3, point: { number: 33 } },
          { ts: t + 4, point: { number: 40 } }
        ])
      }
    })

    it("{current} on sparkline and line-graph: one entry at the server's time", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ s: "sparkline", l: "line-graph" })
      for (const stream of ["s", "l"]) {
        const before = Date.now() / 1000
        expectStored(await smash(api, stream, { auth_token: accessKey, current: 5 }))
        const [entry] = await api.entries(accessKey, stream)
        expect(entry!.point).toEqual({ number: 5 })
        expect(entry!.ts).toBeGreaterThanOrEqual(Math.floor(before) - 1)
        expect(entry!.ts).toBeLessThanOrEqual(Date.now() / 1000 + 1)
      }
    })

    it("List data on leaderboard and pie-chart: {leaderboard: [{name: label, value}]}, in the order given", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ b: "leaderboard", p: "pie-chart" })
      for (const stream of ["b", "p"]) {
        const items = [
          { label: "Ann", value: 3 },
          { label: "Bob", value: 9 }
        ]
        expectStored(await smash(api, stream, { auth_token: accessKey, items, title: "ignored" }))
        expect(await api.latest(accessKey, stream)).toEqual({
          leaderboard: [
            { name: "Ann", value: 3 },
            { name: "Bob", value: 9 }
          ]
        })
      }
    })

    it('List data on list widgets: {list: [{listItem: label}]}, or label + " " + value, in the order given', async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ l: "list" })
      const items = [{ label: "deploys", value: 12 }, { label: "alone" }, { label: "status", value: "ok" }]
      expectStored(await smash(api, "l", { auth_token: accessKey, items }))
      expect(await api.latest(accessKey, "l")).toEqual({
        list: [{ listItem: "deploys 12" }, { listItem: "alone" }, { listItem: "status ok" }]
      })
    })

    it("Text data on label widgets: {label: text}", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ t: "label" })
      expectStored(await smash(api, "t", { auth_token: accessKey, text: "All good", moreinfo: "x" }))
      expect(await api.latest(accessKey, "t")).toEqual({ label: "All good" })
    })

    it("Comments and Text data on text-feed widgets", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ "team feed": "text-feed" })
      const comments = [
        { name: "Ann", body: "shipped", avatar: "https://example.com/ann.png" },
        { name: "Bob", body: "reviewed" }
      ]
      expectStored(await smash(api, "team feed", { auth_token: accessKey, comments }))
      expect(await api.points(accessKey, "team feed")).toEqual([
        { title: "Ann", msg: "shipped", imgUrl: "https://example.com/ann.png" },
        { title: "Bob", msg: "reviewed" }
      ])
      expectStored(await smash(api, "team feed", { auth_token: accessKey, text: "with a title", title: "Build" }))
      expectStored(await smash(api, "team feed", { auth_token: accessKey, text: "no title" }))
      const points = await api.points(accessKey, "team feed")
      expect(points.slice(2)).toEqual([
        { title: "Build", msg: "with a title" },
        { title: "team feed", msg: "no title" }
      ])
    })

    it("Image data on image widgets: {imgUrl: image}", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ i: "image" })
      expectStored(await smash(api, "i", { auth_token: accessKey, image: "https://example.com/chart.png" }))
      expect(await api.latest(accessKey, "i")).toEqual({ imgUrl: "https://example.com/chart.png" })
    })

    it("every other type: the body without auth_token is the point", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ m: "usa-map", t: "table", h: "html", c: "bar-chart" })
      expectStored(await smash(api, "m", { auth_token: accessKey, latitude: 40.7, longitude: -74 }))
      expect(await api.latest(accessKey, "m")).toEqual({ latitude: 40.7, longitude: -74 })
      expectStored(
        await smash(api, "t", {
          auth_token: accessKey,
          table: [
            ["a", "b"],
            ["1", "2"]
          ]
        })
      )
      expect(await api.latest(accessKey, "t")).toEqual({
        table: [
          ["a", "b"],
          ["1", "2"]
        ]
      })
      expectStored(await smash(api, "h", { auth_token: accessKey, html: "<b>hi</b>" }))
      expect(await api.latest(accessKey, "h")).toEqual({ html: "<b>hi</b>" })
      expectStored(await smash(api, "c", { auth_token: accessKey, chart: [{ name: "x", value: 1 }] }))
      expect(await api.latest(accessKey, "c")).toEqual({ chart: [{ name: "x", value: 1 }] })
    })

    it("parses the body as JSON whatever the Content-Type; a trailing slash and a query are ignored", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number" })
      let value = 0
      for (const contentType of ["application/json", "application/x-www-form-urlencoded", "text/plain", null]) {
        expectStored(await smash(api, "n", { auth_token: accessKey, current: ++value }, contentType))
        expect(await api.latest(accessKey, "n")).toEqual({ number: value })
      }
      const body = JSON.stringify({ auth_token: accessKey, current: 99 })
      expectStored(await api.pushRaw(body, { path: "/widgets/n/?x=1" }))
      expect(await api.latest(accessKey, "n")).toEqual({ number: 99 })
    })

    it("401 text `Invalid API key` for a missing or unknown auth_token, checked before the stream", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number" })
      for (const [stream, body] of [
        ["n", { current: 1 }],
        ["n", { auth_token: "ds_nobody", current: 1 }],
        ["n", { auth_token: 42, current: 1 }],
        ["n", { auth_token: "", current: 1 }],
        ["undeclared", { auth_token: "ds_nobody", current: 1 }],
        ["n", [1, 2]]
      ] as const) {
        const r = await expectUnchanged(api, accessKey, ["n"], () => smash(api, stream, body))
        expect(r.status, r.text).toBe(401)
        expect(r.text).toBe("Invalid API key")
        expect(r.headers.get("content-type") ?? "").toMatch(/^text\/plain/)
      }
    })

    it("404 stream_not_found for an undeclared stream (also another account's)", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number" })
      const other = await api.setup({ theirs: "number" })
      for (const stream of ["undeclared", "theirs"]) {
        const r = await smash(api, stream, { auth_token: accessKey, current: 1 })
        expectError(r, 404, "stream_not_found")
      }
      expect(await api.entries(other.accessKey, "theirs")).toEqual([])
    })

    it("400 invalid_json for a body that is not JSON (or empty)", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number" })
      for (const body of ["{not json", "", "auth_token=k&current=1"]) {
        const r = await expectUnchanged(api, accessKey, ["n"], () => smash(api, "n", body))
        expectError(r, 400, "invalid_json")
      }
    })

    it("400 invalid_point for data that does not fit, naming the widget data's field; nothing stored", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number", s: "sparkline", b: "leaderboard", l: "list", i: "image" })
      const t = 1_700_000_000
      const cases: ReadonlyArray<readonly [string, Record<string, unknown>, string]> = [
        ["n", {}, "current"],
        ["n", { current: "abc" }, "current"],
        ["n", { current: 1, prefix: 5 }, "prefix"],
        ["s", { points: "x" }, "points"],
        ["s", { points: [{ x: t, y: 1 }, { x: t + 1 }] }, "points[1].y"],
        ["s", { points: [{ x: t, y: "NaN" }] }, "points[0].y"],
        [
          "s",
          {
            points: [
              { x: t + 1, y: 1 },
              { x: t, y: 2 }
            ]
          },
          "points[1].x"
        ],
        ["s", { points: [{ x: 1e15, y: 1 }] }, "points[0].x"],
        ["b", { items: [{ label: "a", value: "many" }] }, "items[0].value"],
        ["b", { items: [{ value: 1 }] }, "items[0].label"],
        ["l", { items: [5] }, "items[0]"],
        ["i", { image: "not a url" }, "image"]
      ]
      for (const [stream, data, path] of cases) {
        const r = await expectUnchanged(api, accessKey, ["n", "s", "b", "l", "i"], () =>
          smash(api, stream, { auth_token: accessKey, ...data })
        )
        expectError(r, 400, "invalid_point", path)
      }
    })

    it("other methods are 405 (Allow: POST); a malformed path is 404 not_found", async () => {
      const { api } = ctx
      const get = await api.fetch("/widgets/n")
      expectError(get, 405, "method_not_allowed")
      expect(get.headers.get("allow")).toBe("POST")
      expectError(await api.pushRaw("{}", { path: "/widgets/%ZZ" }), 404, "not_found")
      expectError(await api.pushRaw("{}", { path: "/widgets/a/b" }), 404, "not_found")
    })

    it("is described in the OpenAPI document", async () => {
      const { api } = ctx
      const r = await api.fetch("/openapi.json")
      const post = r.json.paths["/widgets/{streamName}"].post
      expect(Object.keys(post.responses).sort()).toEqual(["204", "400", "401", "404", "413", "429", "500", "503"])
      expect(post.responses["401"].content).toHaveProperty("text/plain")
    })
  })
}
