/**
 * Rotations (docs/api.md section 15) end to end on every backend: the admin API (create, list, get, update, delete,
 * view-token, the errors with their paths and codes), a deleted dashboard leaving every rotation, the rotation page,
 * and its ONE event stream (`event: rotation`, one snapshot of the union of its dashboards' tiles, entries naming
 * their dashboards, a re-scope on edit, the end on a rotated or deleted token).
 */
import { describe, expect, it } from "vitest"
import { type Api, backends, expectError, expectSuccess, suiteName, useServer } from "./harness.js"
import { openEvents, openOk } from "./sse.js"

/** A dashboard of the given stream names (one row each); returns its id. */
const dashboardOf = async (api: Api, accountId: string, name: string, streams: ReadonlyArray<string>) => {
  const r = await api.admin("POST", `/admin/accounts/${accountId}/dashboards`, {
    name,
    tiles: streams.map((streamName, i) => ({ streamName, x: 0, y: i, w: 12, h: 1 }))
  })
  expect(r.status, r.text).toBe(201)
  return r.json.id as string
}

const isoTime = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

for (const backend of backends) {
  describe(suiteName("rotations", backend), () => {
    const ctx = useServer(backend)

    it("create, list, get, update, delete and rotate the view token through the admin API", async () => {
      const { api } = ctx
      const account = await api.setup({ a: "number", b: "label" })
      const da = await dashboardOf(api, account.id, "A", ["a"])
      const db = await dashboardOf(api, account.id, "B", ["b"])
      const base = `/admin/accounts/${account.id}/rotations`

      const created = await api.admin("POST", base, { name: "Wall", dashboardIds: [da, db, da], intervalSeconds: 30 })
      expect(created.status, created.text).toBe(201)
      const rotation = created.json as Record<string, unknown>
      expect(Object.keys(rotation).sort()).toEqual(
        ["createdAt", "dashboardIds", "id", "intervalSeconds", "name", "url", "viewToken"].sort()
      )
      expect(rotation).toMatchObject({ name: "Wall", dashboardIds: [da, db, da], intervalSeconds: 30 })
      expect(rotation["createdAt"]).toMatch(isoTime)
      const token = rotation["viewToken"] as string
      expect(token.length).toBeGreaterThanOrEqual(22)
      expect(rotation["url"]).toBe(`/r/${token}`)
      const id = rotation["id"] as string

      // Listed and read with the same share link (docs/api.md section 11).
      const listed = await api.admin("GET", base)
      expect(listed.status).toBe(200)
      expect(listed.json).toEqual({ rotations: [rotation] })
      const got = await api.admin("GET", `${base}/${id}`)
      expect(got.status).toBe(200)
      expect(got.json).toEqual(rotation)

      // The page opens with its token; the same token opens no dashboard, a dashboard's token no rotation.
      const page = await api.fetch(`/r/${token}`)
      expect(page.status, page.text).toBe(200)
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'")
      expect(page.headers.get("referrer-policy")).toBe("no-referrer")
      expect(page.text).toContain("<title>A</title>")
      expect((await api.fetch(`/d/${token}`)).status).toBe(404)
      const dashboardToken = (await api.admin("POST", `/admin/accounts/${account.id}/dashboards/${da}/view-token`)).json
        .viewToken as string
      expect((await api.fetch(`/r/${dashboardToken}`)).status).toBe(404)

      // PUT replaces name, dashboards and interval; the view URL keeps working.
      const put = await api.admin("PUT", `${base}/${id}`, { name: "Wall 2", dashboardIds: [db], intervalSeconds: 5 })
      expect(put.status, put.text).toBe(200)
      expect(put.json).toEqual({
        ...rotation,
        name: "Wall 2",
        dashboardIds: [db],
        intervalSeconds: 5
      })
      expect((await api.fetch(`/r/${token}`)).text).toContain("<title>B</title>")

      // A new token: the old URL stops working at once.
      const rotated = await api.admin("POST", `${base}/${id}/view-token`)
      expect(rotated.status, rotated.text).toBe(201)
      const next = rotated.json.viewToken as string
      expect(next).not.toBe(token)
      expect(rotated.json.url).toBe(`/r/${next}`)
      expect((await api.admin("GET", `${base}/${id}`)).json).toEqual(rotated.json)
      expect((await api.fetch(`/r/${token}`)).status).toBe(404)
      expectError(await api.fetch(`/r/${token}/events`), 404, "rotation_not_found")
      expect((await api.fetch(`/r/${next}`)).status).toBe(200)

      // Delete: 204, then 404 everywhere.
      expect((await api.admin("DELETE", `${base}/${id}`)).status).toBe(204)
      expectError(await api.admin("DELETE", `${base}/${id}`), 404, "rotation_not_found")
      expectError(await api.admin("GET", `${base}/${id}`), 404, "rotation_not_found")
      expect((await api.fetch(`/r/${next}`)).status).toBe(404)
      expect((await api.admin("GET", base)).json).toEqual({ rotations: [] })
    })

    it("refuses bad bodies with invalid_request and a path, unknown rotations with rotation_not_found; nothing stored", async () => {
      const { api } = ctx
      const account = await api.setup({ a: "number" })
      const other = await api.setup({ a: "number" })
      const da = await dashboardOf(api, account.id, "A", ["a"])
      const foreign = await dashboardOf(api, other.id, "theirs", ["a"])
      const base = `/admin/accounts/${account.id}/rotations`
      const ok = { name: "r", dashboardIds: [da], intervalSeconds: 30 }
      const cases: Array<[unknown, string]> = [
        [{ ...ok, intervalSeconds: 4 }, "intervalSeconds"],
        [{ ...ok, intervalSeconds: 3601 }, "intervalSeconds"],
        [{ ...ok, intervalSeconds: 7.5 }, "intervalSeconds"],
        [{ ...ok, intervalSeconds: "30" }, "intervalSeconds"],
        [{ ...ok, name: "" }, "name"],
        [{ ...ok, name: "x".repeat(201) }, "name"],
        [{ ...ok, dashboardIds: [da, foreign] }, "dashboardIds[1]"],
        [{ ...ok, dashboardIds: [da, "no-such-dashboard"] }, "dashboardIds[1]"],
        [{ ...ok, dashboardIds: [da, 7] }, "dashboardIds[1]"],
        [{ ...ok, dashboardIds: Array.from({ length: 51 }, () => da) }, "dashboardIds"],
        [{ name: "r", intervalSeconds: 30 }, "dashboardIds"]
      ]
      for (const [body, path] of cases) expectError(await api.admin("POST", base, body), 400, "invalid_request", path)
      expect((await api.admin("GET", base)).json).toEqual({ rotations: [] })

      // 50 dashboards (one repeated) and none at all are fine.
      const fifty = await api.admin("POST", base, { ...ok, dashboardIds: Array.from({ length: 50 }, () => da) })
      expect(fifty.status, fifty.text).toBe(201)
      const empty = await api.admin("POST", base, { ...ok, dashboardIds: [], intervalSeconds: 3600 })
      expect(empty.status, empty.text).toBe(201)

      // PUT: the same rules; a refused PUT changes nothing.
      const id = empty.json.id as string
      expectError(
        await api.admin("PUT", `${base}/${id}`, { ...ok, dashboardIds: [foreign] }),
        400,
        "invalid_request",
        "dashboardIds[0]"
      )
      expect((await api.admin("GET", `${base}/${id}`)).json.dashboardIds).toEqual([])

      // Unknown rotation, another account's rotation, unknown account.
      for (const method of ["GET", "PUT", "DELETE"]) {
        expectError(
          await api.admin(method, `${base}/nope`, method === "PUT" ? ok : undefined),
          404,
          "rotation_not_found"
        )
        expectError(
          await api.admin(
            method,
            `/admin/accounts/${other.id}/rotations/${id}`,
            method === "PUT" ? { ...ok, dashboardIds: [] } : undefined
          ),
          404,
          "rotation_not_found"
        )
      }
      expectError(await api.admin("POST", `${base}/nope/view-token`), 404, "rotation_not_found")
      expectError(await api.admin("GET", "/admin/accounts/nope/rotations"), 404, "account_not_found")
      // The bearer token is required.
      expect((await api.admin("GET", base, undefined, null)).status).toBe(401)
      // Every route is in the OpenAPI document.
      const paths = Object.keys((await api.fetch("/openapi.json")).json.paths as Record<string, unknown>)
      for (const path of [
        "/admin/accounts/{id}/rotations",
        "/admin/accounts/{id}/rotations/{rotationId}",
        "/admin/accounts/{id}/rotations/{rotationId}/view-token",
        "/r/{viewToken}",
        "/r/{viewToken}/events"
      ])
        expect(paths).toContain(path)
    })

    it("a deleted dashboard leaves every rotation's dashboardIds", async () => {
      const { api } = ctx
      const account = await api.setup({ a: "number" })
      const da = await dashboardOf(api, account.id, "A", ["a"])
      const db = await dashboardOf(api, account.id, "B", ["a"])
      const base = `/admin/accounts/${account.id}/rotations`
      const one = await api.admin("POST", base, { name: "one", dashboardIds: [da, db, da], intervalSeconds: 10 })
      const two = await api.admin("POST", base, { name: "two", dashboardIds: [da], intervalSeconds: 10 })
      expect((await api.admin("DELETE", `/admin/accounts/${account.id}/dashboards/${da}`)).status).toBe(204)
      expect((await api.admin("GET", `${base}/${one.json.id as string}`)).json.dashboardIds).toEqual([db])
      expect((await api.admin("GET", `${base}/${two.json.id as string}`)).json.dashboardIds).toEqual([])
      // The emptied rotation still opens; its page says it has no dashboards.
      const page = await api.fetch(two.json.url as string)
      expect(page.status).toBe(200)
      expect(page.text).toContain('"dashboardIds":[]')
    })

    it("one event stream: event: rotation, one snapshot of every dashboard's tiles, entries naming their dashboards", async () => {
      const { api, server } = ctx
      const account = await api.setup({ shared: "number", onlyA: "label", onlyB: "sparkline" })
      expectSuccess(await api.pushPoint(account.accessKey, "shared", 1))
      expectSuccess(await api.pushPoint(account.accessKey, "onlyA", { label: "x" }))
      const da = await dashboardOf(api, account.id, "A", ["shared", "onlyA"])
      const db = await dashboardOf(api, account.id, "B", ["onlyB", "shared"])
      const created = await api.admin("POST", `/admin/accounts/${account.id}/rotations`, {
        name: "Wall",
        dashboardIds: [da, db],
        intervalSeconds: 5
      })
      expect(created.status, created.text).toBe(201)
      const url = created.json.url as string
      const stream = await openOk(server.baseUrl, `${url}/events`)
      await stream.until("the rotation and the snapshot", () => stream.events.length >= 2)
      expect(stream.events.slice(0, 2).map((e) => e.event)).toEqual(["rotation", "snapshot"])
      const rotation = JSON.parse(stream.events[0]!.data) as {
        rotation: Record<string, unknown>
        dashboards: Array<{ id: string; name: string; tiles: Array<Record<string, unknown>> }>
      }
      expect(rotation.rotation).toMatchObject({
        id: created.json.id,
        name: "Wall",
        dashboardIds: [da, db],
        intervalSeconds: 5,
        url
      })
      expect(rotation.dashboards.map((d) => [d.id, d.name, d.tiles.map((t) => [t.streamName, t.type])])).toEqual([
        [
          da,
          "A",
          [
            ["shared", "number"],
            ["onlyA", "label"]
          ]
        ],
        [
          db,
          "B",
          [
            ["onlyB", "sparkline"],
            ["shared", "number"]
          ]
        ]
      ])
      const snapshot = JSON.parse(stream.events[1]!.data) as { tiles: Record<string, Array<{ point: unknown }>> }
      expect(Object.keys(snapshot.tiles).sort()).toEqual(["onlyA", "onlyB", "shared"])
      expect(snapshot.tiles["shared"]!.map((e) => e.point)).toEqual([{ number: 1 }])

      // A push to a stream both dashboards show arrives once, naming both.
      expectSuccess(await api.pushPoint(account.accessKey, "shared", 2))
      expectSuccess(await api.pushPoint(account.accessKey, "onlyB", 7))
      await stream.until("two entries", () => stream.events.filter((e) => e.event === "entry").length >= 2)
      await new Promise((resolve) => setTimeout(resolve, 300))
      const entries = stream.events.filter((e) => e.event === "entry").map((e) => JSON.parse(e.data))
      expect(entries).toEqual([
        { streamName: "shared", dashboardId: da, dashboardIds: [da, db], ts: expect.any(Number), point: { number: 2 } },
        { streamName: "onlyB", dashboardId: db, dashboardIds: [db], ts: expect.any(Number), point: { number: 7 } }
      ])

      // An edit re-scopes the open stream: a new rotation event, a snapshot of the tiles it did not show, no more
      // entries of a stream no longer shown.
      const dc = await dashboardOf(api, account.id, "C", ["onlyB"])
      const at = stream.events.length
      const changedAt = performance.now()
      const put = await api.admin("PUT", `/admin/accounts/${account.id}/rotations/${created.json.id as string}`, {
        name: "Wall 2",
        dashboardIds: [dc],
        intervalSeconds: 60
      })
      expect(put.status, put.text).toBe(200)
      await stream.until("the new rotation event", () => stream.events.slice(at).some((e) => e.event === "rotation"))
      expect(performance.now() - changedAt).toBeLessThan(2_000)
      const r2 = stream.events.slice(at).find((e) => e.event === "rotation")!
      expect(JSON.parse(r2.data).rotation).toMatchObject({ name: "Wall 2", dashboardIds: [dc], intervalSeconds: 60 })
      expectSuccess(await api.pushPoint(account.accessKey, "shared", 3))
      expectSuccess(await api.pushPoint(account.accessKey, "onlyB", 8))
      await stream.until("the entry of onlyB", () =>
        stream.events.slice(at).some((e) => e.event === "entry" && JSON.parse(e.data).point.number === 8)
      )
      await new Promise((resolve) => setTimeout(resolve, 300))
      const later = stream.events
        .slice(at)
        .filter((e) => e.event === "entry")
        .map((e) => JSON.parse(e.data))
      expect(later).toEqual([
        { streamName: "onlyB", dashboardId: dc, dashboardIds: [dc], ts: expect.any(Number), point: { number: 8 } }
      ])

      // Rotating the token ends the open stream within 5 s (as for dashboards).
      const endedAt = performance.now()
      expect(
        (await api.admin("POST", `/admin/accounts/${account.id}/rotations/${created.json.id as string}/view-token`))
          .status
      ).toBe(201)
      await stream.until("the end of the stream", () => stream.state() !== "open", 6_000)
      expect(performance.now() - endedAt).toBeLessThan(5_000)
      expectError(await api.fetch(`${url}/events`), 404, "rotation_not_found")
    })

    it("a deleted rotation ends its open streams; an empty rotation's stream sends its rotation and an empty snapshot", async () => {
      const { api, server } = ctx
      const account = await api.setup({ a: "number" })
      const created = await api.admin("POST", `/admin/accounts/${account.id}/rotations`, {
        name: "Nothing",
        dashboardIds: [],
        intervalSeconds: 5
      })
      expect(created.status, created.text).toBe(201)
      const stream = await openOk(server.baseUrl, `${created.json.url as string}/events`)
      await stream.until("the rotation and the snapshot", () => stream.events.length >= 2)
      expect(stream.events.map((e) => e.event)).toEqual(["rotation", "snapshot"])
      expect(JSON.parse(stream.events[0]!.data).dashboards).toEqual([])
      expect(JSON.parse(stream.events[1]!.data)).toEqual({
        tiles: {},
        deleted: [],
        firing: {},
        now: expect.any(Number)
      })
      const endedAt = performance.now()
      expect(
        (await api.admin("DELETE", `/admin/accounts/${account.id}/rotations/${created.json.id as string}`)).status
      ).toBe(204)
      await stream.until("the end of the stream", () => stream.state() !== "open", 6_000)
      expect(performance.now() - endedAt).toBeLessThan(5_000)
      const gone = await openEvents(server.baseUrl, `${created.json.url as string}/events`)
      expect(gone.status).toBe(404)
    })
  })
}
