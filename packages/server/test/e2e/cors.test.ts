/**
 * `serve --cors-origin` (repeatable; `DASHSTREAM_CORS_ORIGIN`): web pages of the allowed origins may push
 * (`/customSend`, Smashing's `/widgets/<stream>`), read exports and follow event streams; preflights are answered and
 * `Last-Event-ID` is an allowed request header. Never on admin, console or dashboard page paths; not for other
 * origins; nothing at all without the setting.
 */
import { describe, expect, it } from "vitest"
import { type Api, backends, expectSuccess, suiteName, useServer } from "./harness.js"

const app = "https://app.example"
const dev = "http://localhost:3000"

/** A preflight as a browser sends it before a cross-origin request with a JSON body or extra headers. */
const preflight = (api: Api, path: string, origin: string, method = "POST", headers = "content-type") =>
  api.fetch(path, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers }
  })

/** The status and headers of a GET (an event stream is cut off once its headers arrive). */
const head = async (api: Api, path: string, headers: Record<string, string>) => {
  const controller = new AbortController()
  const res = await fetch(api.baseUrl + path, { headers, signal: controller.signal })
  controller.abort()
  return { status: res.status, headers: res.headers }
}

for (const backend of backends) {
  describe(suiteName("CORS for listed origins", backend), () => {
    const ctx = useServer(backend, { extraArgs: ["--cors-origin", app, "--cors-origin", dev] })

    it("answers preflights of the push, Smashing, export read and event stream routes", async () => {
      const { api } = ctx
      for (const [path, method] of [
        ["/customSend", "POST"],
        ["/customSend/", "POST"],
        ["/widgets/some%20stream", "POST"],
        ["/api/v2/ds_key/datastream/s", "GET"],
        ["/api/v2/ds_key/datastream/s/events", "GET"],
        ["/d/some-token/events", "GET"]
      ] as const) {
        for (const origin of [app, dev]) {
          const r = await preflight(api, path, origin, method, "content-type,last-event-id")
          expect(r.status, `${path} ${r.text}`).toBe(204)
          expect(r.headers.get("access-control-allow-origin")).toBe(origin)
          expect(r.headers.get("vary")).toMatch(/Origin/)
          expect(r.headers.get("access-control-allow-methods")?.split(", ")).toContain(method)
          const allowed = (r.headers.get("access-control-allow-headers") ?? "").toLowerCase().split(", ")
          expect(allowed).toEqual(expect.arrayContaining(["content-type", "last-event-id", "authorization"]))
          expect(r.headers.get("access-control-allow-credentials")).toBeNull()
        }
      }
    })

    it("sets the CORS headers on pushes, Smashing pushes, reads and event streams from an allowed origin", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number" })
      const push = await api.push({ accessKey, streamName: "n", point: 1 }, { headers: { origin: app } })
      expectSuccess(push)
      expect(push.headers.get("access-control-allow-origin")).toBe(app)
      expect(push.headers.get("access-control-expose-headers")).toMatch(/Retry-After/)
      // An error answer carries them too, so the page can read it.
      const refused = await api.push(
        { accessKey: "ds_nobody", streamName: "n", point: 1 },
        { headers: { origin: app } }
      )
      expect(refused.status).toBe(403)
      expect(refused.headers.get("access-control-allow-origin")).toBe(app)
      const smashing = await api.pushRaw(JSON.stringify({ auth_token: accessKey, current: 2 }), {
        path: "/widgets/n",
        headers: { origin: dev }
      })
      expect(smashing.status).toBe(204)
      expect(smashing.headers.get("access-control-allow-origin")).toBe(dev)
      for (const query of ["", "?since=0"]) {
        const read = await api.fetch(`/api/v2/${accessKey}/datastream/n${query}`, { headers: { origin: app } })
        expect(read.status).toBe(200)
        expect(read.headers.get("access-control-allow-origin")).toBe(app)
      }
      const events = await head(api, `/api/v2/${accessKey}/datastream/n/events`, { origin: app, "last-event-id": "0" })
      expect(events.status).toBe(200)
      expect(events.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(events.headers.get("access-control-allow-origin")).toBe(app)
    })

    it("sets nothing for an origin not listed, and does not answer its preflights", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number" })
      const push = await api.push(
        { accessKey, streamName: "n", point: 1 },
        { headers: { origin: "https://evil.example" } }
      )
      expectSuccess(push)
      expect(push.headers.get("access-control-allow-origin")).toBeNull()
      const r = await preflight(api, "/customSend", "https://evil.example")
      expect(r.status).not.toBe(204)
      expect(r.headers.get("access-control-allow-origin")).toBeNull()
    })

    it("never applies to admin, console or dashboard page paths", async () => {
      const { api } = ctx
      for (const path of [
        "/admin/accounts",
        "/console",
        "/console/session",
        "/d/some-token",
        "/openapi.json",
        "/metrics"
      ]) {
        const r = await preflight(api, path, app, "POST", "authorization")
        expect(r.status, path).not.toBe(204)
        expect(r.headers.get("access-control-allow-origin"), path).toBeNull()
      }
      const list = await api.fetch("/admin/accounts", {
        headers: { origin: app, authorization: `Bearer ${api.adminToken}` }
      })
      expect(list.headers.get("access-control-allow-origin")).toBeNull()
    })
  })

  describe(suiteName("CORS for any origin (DASHSTREAM_CORS_ORIGIN=*)", backend), () => {
    const ctx = useServer(backend, { env: { DASHSTREAM_CORS_ORIGIN: "*" } })

    it("allows every origin with *, without Vary", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number" })
      const r = await preflight(api, "/customSend", "https://anywhere.example")
      expect(r.status).toBe(204)
      expect(r.headers.get("access-control-allow-origin")).toBe("*")
      const push = await api.push(
        { accessKey, streamName: "n", point: 1 },
        { headers: { origin: "https://x.example" } }
      )
      expectSuccess(push)
      expect(push.headers.get("access-control-allow-origin")).toBe("*")
      expect(push.headers.get("vary")).toBeNull()
    })
  })

  describe(suiteName("no CORS by default", backend), () => {
    const ctx = useServer(backend)

    it("sets no CORS header and answers no preflight", async () => {
      const { api } = ctx
      const { accessKey } = await api.setup({ n: "number" })
      const push = await api.push({ accessKey, streamName: "n", point: 1 }, { headers: { origin: app } })
      expectSuccess(push)
      expect(push.headers.get("access-control-allow-origin")).toBeNull()
      const r = await preflight(api, "/customSend", app)
      expect(r.status).toBe(405)
      expect(r.headers.get("access-control-allow-origin")).toBeNull()
    })
  })
}
