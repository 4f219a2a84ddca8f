/**
 * docs/api.md section 7 (admin API: accounts, access keys, widgets), section 2 (stream names and per-account
 * isolation) and section 1 (health and OpenAPI endpoints).
 */
import { createHash } from "node:crypto"
import { existsSync, readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { backends, expectAnyError, expectError, expectSuccess, suiteName, useServer, widgetTypes } from "./harness.js"

for (const backend of backends) {
  describe(suiteName("admin API", backend), () => {
    const ctx = useServer(backend)

    describe("accounts and access keys", () => {
      it("POST /admin/accounts: 201 {id, name, accessKey}; keys are distinct and long", async () => {
        const { api } = ctx
        const a = await api.admin("POST", "/admin/accounts", { name: "Acme" })
        expect(a.status, a.text).toBe(201)
        expect(Object.keys(a.json).sort()).toEqual(["accessKey", "id", "name"])
        expect(a.json.name).toBe("Acme")
        const b = await api.admin("POST", "/admin/accounts", {})
        expect(b.status, b.text).toBe(201)
        expect(a.json.id).not.toEqual(b.json.id)
        expect(a.json.accessKey).not.toEqual(b.json.accessKey)
        // At least 128 bits: 22 base64url or 32 hex characters.
        for (const key of [a.json.accessKey, b.json.accessKey]) expect(String(key).length).toBeGreaterThanOrEqual(22)
        api.keys.push(a.json.accessKey, b.json.accessKey)
      })

      it("a new access key works next to the old one; revokeOthers=true revokes the old ones", async () => {
        const { api } = ctx
        const account = await api.setup({ s: "number" })
        const k1 = account.accessKey
        const r2 = await api.admin("POST", `/admin/accounts/${account.id}/access-keys`)
        expect(r2.status, r2.text).toBe(201)
        expect(Object.keys(r2.json)).toEqual(["accessKey"])
        const k2 = r2.json.accessKey as string
        api.keys.push(k2)
        expect(k2).not.toBe(k1)
        expectSuccess(await api.pushPoint(k1, "s", 1))
        expectSuccess(await api.pushPoint(k2, "s", 2))
        expect(await api.points(k1, "s")).toEqual([{ number: 1 }, { number: 2 }])
        expect(await api.points(k2, "s")).toEqual([{ number: 1 }, { number: 2 }])

        const r3 = await api.admin("POST", `/admin/accounts/${account.id}/access-keys?revokeOthers=true`)
        expect(r3.status, r3.text).toBe(201)
        const k3 = r3.json.accessKey as string
        api.keys.push(k3)
        for (const old of [k1, k2]) {
          expectError(await api.pushPoint(old, "s", 9), 403, "forbidden")
          expectError(await api.read(old, "s", "?since=0"), 403, "forbidden")
        }
        expectSuccess(await api.pushPoint(k3, "s", 3))
        expect(await api.points(k3, "s")).toEqual([{ number: 1 }, { number: 2 }, { number: 3 }])
      })

      it("access keys are stored only as a SHA-256 digest (SQLite file contents), and never listed", async () => {
        const { api, db } = ctx
        const account = await api.setup({ s: "number" })
        const rotated = await api.admin("POST", `/admin/accounts/${account.id}/access-keys`)
        expect(rotated.status).toBe(201)
        api.keys.push(rotated.json.accessKey)
        const list = await api.admin("GET", `/admin/accounts/${account.id}/widgets`)
        for (const key of [account.accessKey, rotated.json.accessKey as string]) {
          expect(list.text).not.toContain(key)
        }
        if (!db.url.startsWith("sqlite:")) return
        const file = db.url.slice("sqlite:".length)
        const contents = Buffer.concat(
          [file, `${file}-wal`, `${file}-journal`].filter((f) => existsSync(f)).map((f) => readFileSync(f))
        )
        for (const key of [account.accessKey, rotated.json.accessKey as string]) {
          expect(contents.includes(Buffer.from(key)), "plaintext key in the database file").toBe(false)
          const digest = createHash("sha256").update(key).digest()
          const forms = ["hex", "base64", "base64url"].map((e) => Buffer.from(digest.toString(e as BufferEncoding)))
          forms.push(digest)
          expect(
            forms.some((f) => contents.includes(f)),
            "SHA-256 digest of the key in the database file"
          ).toBe(true)
        }
      })

      it("an unknown account id is a 404", async () => {
        const { api } = ctx
        expectAnyError(await api.admin("POST", "/admin/accounts/does-not-exist/access-keys"), 404)
        expectAnyError(await api.admin("GET", "/admin/accounts/does-not-exist/widgets"), 404)
        expectAnyError(
          await api.admin("POST", "/admin/accounts/does-not-exist/widgets", { streamName: "s", type: "number" }),
          404
        )
      })
    })

    describe("widgets", () => {
      it("every widget type can be declared; GET lists them with streamName, type, createdAt", async () => {
        const { api } = ctx
        const account = await api.createAccount()
        for (const type of widgetTypes) {
          const r = await api.admin("POST", `/admin/accounts/${account.id}/widgets`, { streamName: `w-${type}`, type })
          expect(r.status, r.text).toBe(201)
          expect(r.json).toMatchObject({ streamName: `w-${type}`, type })
        }
        const list = await api.admin("GET", `/admin/accounts/${account.id}/widgets`)
        expect(list.status, list.text).toBe(200)
        expect(Object.keys(list.json)).toEqual(["widgets"])
        const widgets = list.json.widgets as Array<Record<string, unknown>>
        expect(widgets.map((w) => [w["streamName"], w["type"]]).sort()).toEqual(
          widgetTypes.map((t) => [`w-${t}`, t]).sort()
        )
        for (const w of widgets) {
          // docs/api.md section 14 adds each widget's latest entry (null: nothing pushed yet).
          expect(Object.keys(w).sort()).toEqual(["createdAt", "latest", "streamName", "type"])
          expect(w["createdAt"]).toBeTruthy()
          expect(w["latest"]).toBeNull()
        }
      })

      it("an unknown widget type is a 400", async () => {
        const { api } = ctx
        const account = await api.createAccount()
        for (const type of ["gauge", "Number", "", 5]) {
          expectAnyError(
            await api.admin("POST", `/admin/accounts/${account.id}/widgets`, { streamName: "s", type }),
            400
          )
        }
        expectAnyError(await api.admin("POST", `/admin/accounts/${account.id}/widgets`, { type: "number" }), 400)
        const list = await api.admin("GET", `/admin/accounts/${account.id}/widgets`)
        expect(list.json.widgets).toEqual([])
      })

      it("stream names: 1 to 255 characters, no control characters, no slash", async () => {
        const { api } = ctx
        const account = await api.createAccount()
        for (const streamName of ["", "a".repeat(256), "a/b", "/", "tab\there", "nl\nx", "nul\u0000", "del\u007f"]) {
          const r = await api.admin("POST", `/admin/accounts/${account.id}/widgets`, { streamName, type: "number" })
          expect(r.status, `${JSON.stringify(streamName)}: ${r.text}`).toBe(400)
          expectAnyError(r, 400)
        }
        const long = "é".repeat(255)
        for (const streamName of ["x", long, "with space", "ünï ✓ 🎉"]) {
          await api.createWidget(account.id, streamName, "number")
          expectSuccess(await api.pushPoint(account.accessKey, streamName, 7))
          expect(await api.latest(account.accessKey, streamName)).toEqual({ number: 7 })
        }
      })

      it("stream names: well-formed Unicode without C1 controls, 255 code points", async () => {
        const { api } = ctx
        const account = await api.createAccount()
        for (const streamName of [
          "x\ud800y",
          "x\udc00",
          "\ud83d",
          "nel\u0085",
          "c1\u0080",
          "c1\u009f",
          "🎉".repeat(256),
          "🎉".repeat(200) + "a".repeat(56)
        ]) {
          const r = await api.admin("POST", `/admin/accounts/${account.id}/widgets`, { streamName, type: "number" })
          expectError(r, 400, "invalid_request", "streamName")
        }
        expect((await api.admin("GET", `/admin/accounts/${account.id}/widgets`)).json.widgets).toEqual([])
        // 255 characters of two UTF-16 units each, and the characters next to the forbidden ranges, are fine.
        for (const streamName of [
          "🎉".repeat(255),
          "🎉".repeat(200) + "a".repeat(55),
          "nbsp\u00a0",
          "tilde~",
          "x\ufffdy"
        ]) {
          await api.createWidget(account.id, streamName, "number")
          expectSuccess(await api.pushPoint(account.accessKey, streamName, 7))
          expect(await api.latest(account.accessKey, streamName)).toEqual({ number: 7 })
        }
        // A lone surrogate never reaches the widget whose name has U+FFFD in its place (its UTF-8 replacement).
        expectError(await api.pushPoint(account.accessKey, "x\ud800y", 8), 404, "stream_not_found")
        expect(await api.latest(account.accessKey, "x\ufffdy")).toEqual({ number: 7 })
      })

      it("409 conflict for a taken name; the same name in another account is fine", async () => {
        const { api } = ctx
        const a = await api.setup({ revenue: "number" })
        const b = await api.createAccount()
        expectError(
          await api.admin("POST", `/admin/accounts/${a.id}/widgets`, { streamName: "revenue", type: "number" }),
          409,
          "conflict"
        )
        await api.createWidget(b.id, "revenue", "dial")
        expectSuccess(await api.pushPoint(a.accessKey, "revenue", 1))
        expectSuccess(await api.pushPoint(b.accessKey, "revenue", 2))
        expect(await api.points(a.accessKey, "revenue")).toEqual([{ number: 1 }])
        expect(await api.points(b.accessKey, "revenue")).toEqual([{ number: 2 }])
      })

      it("DELETE: 204, the stream is gone with its data; a re-created widget starts empty", async () => {
        const { api } = ctx
        const a = await api.setup({ "my stream": "text-feed", keep: "text-feed" })
        const b = await api.setup({ "my stream": "text-feed" })
        for (const key of [a.accessKey, b.accessKey]) {
          expectSuccess(await api.pushPoint(key, "my stream", { title: "T", msg: "M" }))
        }
        expectSuccess(await api.pushPoint(a.accessKey, "keep", { title: "T", msg: "M" }))
        const del = await api.admin("DELETE", `/admin/accounts/${a.id}/widgets/my%20stream`)
        expect(del.status, del.text).toBe(204)
        expect(del.text).toBe("")
        expectError(await api.read(a.accessKey, "my stream", "?since=0"), 404, "stream_not_found")
        expectError(await api.pushPoint(a.accessKey, "my stream", { title: "T", msg: "M" }), 404, "stream_not_found")
        const list = await api.admin("GET", `/admin/accounts/${a.id}/widgets`)
        expect(list.json.widgets.map((w: { streamName: string }) => w.streamName)).toEqual(["keep"])
        // Other streams and other accounts keep their data.
        expect(await api.entries(a.accessKey, "keep")).toHaveLength(1)
        expect(await api.entries(b.accessKey, "my stream")).toHaveLength(1)
        // Re-created (even with another type): no old data.
        await api.createWidget(a.id, "my stream", "number")
        expect(await api.entries(a.accessKey, "my stream")).toEqual([])
        expectSuccess(await api.pushPoint(a.accessKey, "my stream", { delta: 1 }))
        expect(await api.points(a.accessKey, "my stream")).toEqual([{ number: 1 }])
        // Deleting what is not there is a 404.
        expectAnyError(await api.admin("DELETE", `/admin/accounts/${a.id}/widgets/nope`), 404)
      })
    })

    describe("health and documentation", () => {
      it("GET /healthz and /readyz are 200", async () => {
        const { api } = ctx
        expect((await api.fetch("/healthz")).status).toBe(200)
        expect((await api.fetch("/readyz")).status).toBe(200)
      })

      it("GET /openapi.json describes the API; /docs serves the interactive docs", async () => {
        const { api } = ctx
        const doc = await api.fetch("/openapi.json")
        expect(doc.status).toBe(200)
        expect(typeof doc.json?.openapi).toBe("string")
        const paths = Object.keys(doc.json.paths ?? {})
        expect(paths.some((p) => p.startsWith("/customSend"))).toBe(true)
        expect(paths.some((p) => p.startsWith("/api/v2/"))).toBe(true)
        const docs = await api.fetch("/docs")
        expect(docs.status).toBe(200)
        expect(docs.headers.get("content-type") ?? "").toMatch(/text\/html/)
      })
    })
  })
}
