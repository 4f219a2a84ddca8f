/**
 * Share links (docs/api.md section 11) end to end on every backend: every admin answer for a dashboard or a rotation
 * (create, get, list, put, view-token) carries the same `viewToken` and `url`, under the base path when the server has
 * one; and a database made before view tokens were kept (its schema one migration behind, a dashboard and a rotation
 * in it) migrates honestly: their answers say `viewToken: null, url: null`, their old links keep opening their pages,
 * and a new view token gives them a link that is shown from then on.
 */
import { createRequire } from "node:module"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { Api, backends, type Backend, startServer, suiteName, useServer } from "./harness.js"

/** better-sqlite3 as this test uses it (the server package depends on the driver, not on its type declarations). */
const Database = createRequire(import.meta.url)("better-sqlite3") as new (file: string) => {
  exec(sql: string): void
  close(): void
}

/** The admin answers of one view, by route, each compared with what create answered. */
const expectSameLink = async (api: Api, base: string, created: Record<string, unknown>, listKey: string) => {
  const id = created["id"] as string
  const got = await api.admin("GET", `${base}/${id}`)
  expect([got.status, got.json]).toEqual([200, created])
  const listed = await api.admin("GET", base)
  expect(listed.status).toBe(200)
  expect((listed.json[listKey] as Array<Record<string, unknown>>).find((v) => v["id"] === id)).toEqual(created)
}

/**
 * Puts the database `url` back to the schema of the version before view tokens were kept: the column that keeps them
 * dropped, what the later migrations added (the alert tables, the blocks' summaries) dropped, and those migrations
 * forgotten, as that version left it.
 */
const schemaBefore = async (backend: Backend, url: string): Promise<void> => {
  const alertTables = [
    "alert_rule_signals",
    "alert_deliveries",
    "alert_events",
    "alert_rule_receivers",
    "alert_rules",
    "alert_receivers"
  ]
  const statements = [
    "ALTER TABLE dashboards DROP COLUMN view_token_text",
    "ALTER TABLE rotations DROP COLUMN view_token_text",
    "ALTER TABLE entry_blocks DROP COLUMN summary",
    ...alertTables.map((table) => `DROP TABLE ${table}`),
    `DELETE FROM kysely_migration WHERE name >= '${backend.name === "sqlite" ? "0008" : "0009"}_view_token_text'`
  ]
  if (backend.name === "sqlite") {
    const db = new Database(url.slice("sqlite:".length))
    try {
      for (const statement of statements) db.exec(statement)
    } finally {
      db.close()
    }
    return
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (const statement of statements) await client.query(statement)
  } finally {
    await client.end()
  }
}

for (const backend of backends) {
  describe(suiteName("share links", backend), () => {
    const ctx = useServer(backend)

    it("create, get, list, put and view-token all answer the view's current link", async () => {
      const { api } = ctx
      const account = await api.setup({ a: "number" })
      const dashboards = `/admin/accounts/${account.id}/dashboards`
      const created = await api.admin("POST", dashboards, { name: "Wall" })
      expect(created.status, created.text).toBe(201)
      const dashboard = created.json as Record<string, unknown>
      expect(dashboard["url"]).toBe(`/d/${dashboard["viewToken"] as string}`)
      await expectSameLink(api, dashboards, dashboard, "dashboards")
      const put = await api.admin("PUT", `${dashboards}/${dashboard["id"] as string}`, { name: "Wall 2", tiles: [] })
      expect(put.json).toEqual({ ...dashboard, name: "Wall 2", tiles: [] })
      const rotated = await api.admin("POST", `${dashboards}/${dashboard["id"] as string}/view-token`)
      expect(rotated.status).toBe(201)
      expect(rotated.json["viewToken"]).not.toBe(dashboard["viewToken"])
      expect(rotated.json["url"]).toBe(`/d/${rotated.json["viewToken"] as string}`)
      await expectSameLink(api, dashboards, rotated.json, "dashboards")
      expect((await api.fetch(rotated.json["url"] as string)).status).toBe(200)

      const rotations = `/admin/accounts/${account.id}/rotations`
      const body = { name: "TV", dashboardIds: [dashboard["id"]], intervalSeconds: 10 }
      const rotation = (await api.admin("POST", rotations, body)).json as Record<string, unknown>
      expect(rotation["url"]).toBe(`/r/${rotation["viewToken"] as string}`)
      await expectSameLink(api, rotations, rotation, "rotations")
      const putRotation = await api.admin("PUT", `${rotations}/${rotation["id"] as string}`, { ...body, name: "TV 2" })
      expect(putRotation.json).toEqual({ ...rotation, name: "TV 2" })
      const renewed = await api.admin("POST", `${rotations}/${rotation["id"] as string}/view-token`)
      expect(renewed.json["url"]).toBe(`/r/${renewed.json["viewToken"] as string}`)
      await expectSameLink(api, rotations, renewed.json, "rotations")
      expect((await api.fetch(rotation["url"] as string)).status).toBe(404)
    })

    it("a server with a base path answers links under it", async () => {
      const db = await backend.database()
      const server = await startServer(db.url, { extraArgs: ["--base-path", "/wall"] })
      try {
        const api = new Api(server.baseUrl)
        const account = await api.setup({ a: "number" })
        const created = await api.admin("POST", `/admin/accounts/${account.id}/dashboards`, { name: "W" })
        expect(created.json["url"]).toBe(`/wall/d/${created.json["viewToken"] as string}`)
        const listed = await api.admin("GET", `/admin/accounts/${account.id}/dashboards`)
        expect(listed.json["dashboards"][0]["url"]).toBe(created.json["url"])
        const page = await api.fetch(`/d/${created.json["viewToken"] as string}`)
        expect(page.status).toBe(200)
      } finally {
        await server.stop()
        await db.drop()
      }
    })
  })

  describe(suiteName("share links after migrating a database of the previous schema", backend), () => {
    const drops: Array<() => Promise<void>> = []
    afterAll(async () => {
      for (const drop of drops) await drop()
    })

    it("existing views answer viewToken null until a new token; their old links keep working", async () => {
      const db = await backend.database()
      drops.push(db.drop)
      // The views are made, then the schema is put back as the previous version left it: only digests are stored.
      let server = await startServer(db.url)
      let api = new Api(server.baseUrl)
      const account = await api.setup({ a: "number" })
      const dashboards = `/admin/accounts/${account.id}/dashboards`
      const rotations = `/admin/accounts/${account.id}/rotations`
      const dashboard = (await api.admin("POST", dashboards, { name: "Old" })).json as Record<string, unknown>
      const rotation = (
        await api.admin("POST", rotations, { name: "Old TV", dashboardIds: [dashboard["id"]], intervalSeconds: 10 })
      ).json as Record<string, unknown>
      expect((await server.stop()).code).toBe(0)
      await schemaBefore(backend, db.url)

      server = await startServer(db.url)
      try {
        api = new Api(server.baseUrl)
        const unknownLink = { viewToken: null, url: null }
        await expectSameLink(api, dashboards, { ...dashboard, ...unknownLink }, "dashboards")
        await expectSameLink(api, rotations, { ...rotation, ...unknownLink }, "rotations")
        const put = await api.admin("PUT", `${dashboards}/${dashboard["id"] as string}`, { name: "Old 2", tiles: [] })
        expect(put.json).toEqual({ ...dashboard, name: "Old 2", tiles: [], ...unknownLink })
        // The links handed out before the upgrade keep opening their pages.
        expect((await api.fetch(dashboard["url"] as string)).status).toBe(200)
        expect((await api.fetch(rotation["url"] as string)).status).toBe(200)

        // A new token: shown from then on, in every answer; the old link stops.
        const rotated = await api.admin("POST", `${dashboards}/${dashboard["id"] as string}/view-token`)
        expect(rotated.status).toBe(201)
        expect(rotated.json["url"]).toBe(`/d/${rotated.json["viewToken"] as string}`)
        await expectSameLink(api, dashboards, rotated.json, "dashboards")
        expect((await api.fetch(dashboard["url"] as string)).status).toBe(404)
        expect((await api.fetch(rotated.json["url"] as string)).status).toBe(200)
        const renewed = await api.admin("POST", `${rotations}/${rotation["id"] as string}/view-token`)
        await expectSameLink(api, rotations, renewed.json, "rotations")
        expect(renewed.json["url"]).toBe(`/r/${renewed.json["viewToken"] as string}`)
      } finally {
        await server.stop()
      }
    })
  })
}
