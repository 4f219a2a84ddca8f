/**
 * Reads through a view token over HTTP (README, "Range reads"; docs/api.md section 6.1): `GET /d/<viewToken>/range`
 * and `/r/<viewToken>/range` answer a stream the dashboard (or one of the rotation's dashboards) shows exactly as the
 * keyed read does, `since`, `limit` and range reads included, with the keyed read's errors; `stream` missing is 400
 * with `path` `"stream"`, a stream not shown 404 `stream_not_found`, an unknown or rotated token 404 as for the page.
 */
import { describe, expect, it } from "vitest"
import {
  type Api,
  backends,
  expectError,
  expectReadOk,
  expectSuccess,
  suiteName,
  useServer,
  type WidgetType,
  widgetTypes
} from "./harness.js"

const T = 1_600_000_000

/** A dashboard of the given stream names (one row each); returns its id and view token. */
const dashboardOf = async (api: Api, accountId: string, streams: ReadonlyArray<string>) => {
  const r = await api.admin("POST", `/admin/accounts/${accountId}/dashboards`, {
    name: streams.join("+"),
    tiles: streams.map((streamName, i) => ({ streamName, x: 0, y: i, w: 12, h: 1 }))
  })
  expect(r.status, r.text).toBe(201)
  return { id: r.json.id as string, token: r.json.viewToken as string }
}

/** The keyed read's answer and the view token's, for the same query. */
const both = async (api: Api, accessKey: string, view: string, stream: string, query: string) => {
  const keyed = await api.read(accessKey, stream, query === "" ? "" : `?${query}`)
  const viewed = await api.fetch(`${view}/range?stream=${encodeURIComponent(stream)}${query === "" ? "" : `&${query}`}`)
  return { keyed, viewed }
}

for (const backend of backends) {
  describe(suiteName("view token range read", backend), () => {
    const ctx = useServer(backend)

    it("a dashboard's view token reads a shown stream as the keyed read does, since and streaming included", async () => {
      const { api } = ctx
      const account = await api.setup({ s: "line-graph", n: "number", hidden: "number" })
      for (let start = 0; start < 2_500; start += 1_000) {
        const point = Array.from({ length: Math.min(1_000, 2_500 - start) }, (_, j) => ({
          number: Math.round(40 * Math.sin((start + j) / 23)),
          timestamp: T + (start + j) * 60
        }))
        expectSuccess(await api.pushPoint(account.accessKey, "s", point))
      }
      expectSuccess(await api.pushPoint(account.accessKey, "n", { number: 7 }))
      const { token } = await dashboardOf(api, account.id, ["s", "n"])
      for (const query of [
        "",
        "since=0",
        `since=${T + 600}&limit=10`,
        `from=${T + 600}&to=${T + 90_000.5}`,
        `from=${T}&points=50`,
        `since=${T + 60_000}&to=${T + 100_000}`,
        "points=2"
      ]) {
        const { keyed, viewed } = await both(api, account.accessKey, `/d/${token}`, "s", query)
        expectReadOk(viewed)
        expect(viewed.json, query).toEqual(keyed.json)
        expect(viewed.headers.get("cache-control"), query).toMatch(/\bno-store\b/)
        expect(viewed.headers.get("content-type"), query).toMatch(/^application\/json/)
      }
      // More than a page: streamed, the same entries.
      const all = await both(api, account.accessKey, `/d/${token}`, "s", "since=0")
      expect(all.viewed.json.data).toHaveLength(2_500)
      const n = await both(api, account.accessKey, `/d/${token}`, "n", "")
      expect(n.viewed.json).toEqual(n.keyed.json)
      expect(n.viewed.json.data).toHaveLength(1)
    })

    it("the keyed read's errors; stream missing 400, a stream not shown 404, an unknown or rotated token 404", async () => {
      const { api } = ctx
      const account = await api.setup({ s: "sparkline", hidden: "number", gone: "number" })
      expectSuccess(await api.pushPoint(account.accessKey, "s", { number: 1, timestamp: T }))
      const { id, token } = await dashboardOf(api, account.id, ["s", "gone"])
      expect((await api.admin("DELETE", `/admin/accounts/${account.id}/widgets/gone`)).status).toBe(204)
      for (const [query, path] of [
        ["since=1&from=1", "since"],
        ["from=1e9", "from"],
        ["from=2&to=1", "to"],
        ["points=1", "points"],
        ["points=5&limit=10", "limit"],
        ["since=0&limit=0", "limit"]
      ] as const) {
        const { keyed, viewed } = await both(api, account.accessKey, `/d/${token}`, "s", query)
        expectError(viewed, 400, "invalid_request", path)
        expect(viewed.json, query).toEqual(keyed.json)
      }
      const since = await both(api, account.accessKey, `/d/${token}`, "s", "since=x")
      expectError(since.viewed, since.keyed.status, since.keyed.json.error.code)
      expect(since.viewed.json).toEqual(since.keyed.json)

      expectError(await api.fetch(`/d/${token}/range`), 400, "invalid_request", "stream")
      expectError(await api.fetch(`/d/${token}/range?from=1`), 400, "invalid_request", "stream")
      // A widget of the account the dashboard does not show; a tile whose widget does not exist; no such stream.
      for (const stream of ["hidden", "gone", "nope"]) {
        expectError(await api.fetch(`/d/${token}/range?stream=${stream}&since=0`), 404, "stream_not_found")
        expectError(await api.fetch(`/d/${token}/range?stream=${stream}&points=5`), 404, "stream_not_found")
      }
      // A bad parameter is 400 before the stream is looked for, as on the keyed read.
      expectError(await api.fetch(`/d/${token}/range?stream=hidden&points=1`), 400, "invalid_request", "points")
      const unknown = await api.fetch(`/d/dv_unknown0123456789abcdef0123456789abcdef012/range?stream=s`)
      expect(unknown.status).toBe(404)
      expect(unknown.json).toEqual((await api.fetch("/d/dv_unknown0123456789abcdef0123456789abcdef012")).json)
      const rotated = await api.admin("POST", `/admin/accounts/${account.id}/dashboards/${id}/view-token`)
      expect(rotated.status, rotated.text).toBe(201)
      const old = await api.fetch(`/d/${token}/range?stream=s&since=0`)
      expect(old.status).toBe(404)
      expect(old.json).toEqual((await api.fetch(`/d/${token}`)).json)
      expectReadOk(await api.fetch(`/d/${rotated.json.viewToken as string}/range?stream=s&since=0`))
      // A dashboard's token opens no rotation.
      expect((await api.fetch(`/r/${rotated.json.viewToken as string}/range?stream=s`)).status).toBe(404)
    })

    it("a rotation's view token reads the union of its dashboards' tiles", async () => {
      const { api } = ctx
      const account = await api.setup({ a: "sparkline", b: "line-graph", c: "label" })
      for (const stream of ["a", "b"]) {
        const point = Array.from({ length: 30 }, (_, i) => ({ number: i, timestamp: T + i }))
        expectSuccess(await api.pushPoint(account.accessKey, stream, point))
      }
      const da = await dashboardOf(api, account.id, ["a"])
      const db = await dashboardOf(api, account.id, ["b"])
      const created = await api.admin("POST", `/admin/accounts/${account.id}/rotations`, {
        name: "Wall",
        dashboardIds: [da.id, db.id],
        intervalSeconds: 30
      })
      expect(created.status, created.text).toBe(201)
      const token = created.json.viewToken as string
      for (const stream of ["a", "b"]) {
        for (const query of ["", "since=0", `from=${T + 5}&to=${T + 20}`, "points=4", `since=${T + 10}&to=${T + 12}`]) {
          const { keyed, viewed } = await both(api, account.accessKey, `/r/${token}`, stream, query)
          expectReadOk(viewed)
          expect(viewed.json, `${stream} ${query}`).toEqual(keyed.json)
        }
      }
      expectError(await api.fetch(`/r/${token}/range?stream=c&since=0`), 404, "stream_not_found")
      expectError(await api.fetch(`/r/${token}/range?since=0`), 400, "invalid_request", "stream")
      expectError(await api.fetch(`/r/${token}/range?stream=a&points=0`), 400, "invalid_request", "points")
      // A rotation's token opens no dashboard; a rotated token is 404 as for the page.
      expect((await api.fetch(`/d/${token}/range?stream=a`)).status).toBe(404)
      const rotated = await api.admin("POST", `/admin/accounts/${account.id}/rotations/${created.json.id}/view-token`)
      expect(rotated.status, rotated.text).toBe(201)
      const old = await api.fetch(`/r/${token}/range?stream=a`)
      expect(old.status).toBe(404)
      expect(old.json).toEqual((await api.fetch(`/r/${token}`)).json)
    })

    it("the tile option range: stored on number, sparkline and line-graph tiles, refused elsewhere with its path", async () => {
      const { api } = ctx
      const account = await api.setup({ n: "number", s: "sparkline", l: "line-graph", b: "dial" })
      const base = `/admin/accounts/${account.id}/dashboards`
      const tiles = [
        { streamName: "n", x: 0, y: 0, w: 4, h: 1, options: { range: 604_800 } },
        { streamName: "s", x: 4, y: 0, w: 4, h: 1, options: { range: 60 } },
        { streamName: "l", x: 8, y: 0, w: 4, h: 1, options: { range: 31_536_000, staleAfter: 60 } }
      ]
      const created = await api.admin("POST", base, { name: "ranged", tiles })
      expect(created.status, created.text).toBe(201)
      expect(created.json.tiles).toEqual(tiles)
      expect((await api.admin("GET", `${base}/${created.json.id}`)).json.tiles).toEqual(tiles)
      const dial = { streamName: "b", x: 0, y: 1, w: 4, h: 1, options: { range: 3600 } }
      for (const [tile, message] of [
        [dial, /range is not an option of dial tiles/],
        [{ ...tiles[0], options: { range: 59 } }, /from 60 to 31536000/],
        [{ ...tiles[0], options: { range: 31_536_001 } }, /from 60 to 31536000/],
        [{ ...tiles[0], options: { range: 90.5 } }, /whole number/],
        [{ ...tiles[0], options: { range: "7d" } }, /number of seconds/]
      ] as const) {
        const r = await api.admin("PUT", `${base}/${created.json.id}`, { name: "ranged", tiles: [tiles[1], tile] })
        expectError(r, 400, "invalid_request", "tiles[1].options.range")
        expect(r.json.error.message).toMatch(message)
      }
      // Nothing was stored by the refused updates.
      expect((await api.admin("GET", `${base}/${created.json.id}`)).json.tiles).toEqual(tiles)
    })

    it("the tile option range on every other widget type is 400 with its path", async () => {
      const { api } = ctx
      const timeTypes: ReadonlyArray<WidgetType> = ["number", "sparkline", "line-graph"]
      const others = widgetTypes.filter((t) => !timeTypes.includes(t))
      const account = await api.setup(Object.fromEntries(widgetTypes.map((t) => [t, t])))
      const base = `/admin/accounts/${account.id}/dashboards`
      for (const type of widgetTypes) {
        const tiles = [
          { streamName: "line-graph", x: 0, y: 0, w: 4, h: 1 },
          { streamName: type, x: 4, y: 0, w: 4, h: 1, options: { range: 3_600 } }
        ]
        const r = await api.admin("POST", base, { name: type, tiles })
        if (others.includes(type)) expectError(r, 400, "invalid_request", "tiles[1].options.range")
        else expect(r.status, `${type}: ${r.text}`).toBe(201)
      }
      expect(others).toHaveLength(widgetTypes.length - 3)
    })
  })
}
