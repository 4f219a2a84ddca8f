import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer as createHttpsServer, request as httpsRequest } from "node:https"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import {
  AccountStore,
  AlertStore,
  ChangeFeed,
  DashboardStore,
  defaultLimits,
  SessionStore,
  StreamStore
} from "@dashstream/core"
import { MemoryStore } from "@dashstream/core/testing"
import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { handler } from "../src/index.js"
import { admin, json, startServer, testAdminToken } from "./support/server.js"

// The console page (docs/api.md section 14): served with its files, 404 when the admin API is off or no page is
// installed; the session cookie is Secure over HTTPS.

describe("the console when the admin API is off", () => {
  it("answers 404 on the console's paths and the admin API", async () => {
    const server = await startServer({ adminToken: undefined })
    try {
      for (const [method, path] of [
        ["GET", "/console"],
        ["GET", "/console/"],
        ["GET", "/console/assets/app.js"],
        ["POST", "/console/session"],
        ["GET", "/console/session"],
        ["DELETE", "/console/session"],
        ["GET", "/admin/accounts"]
      ] as const) {
        const res = await json(
          await fetch(`${server.url}${path}`, {
            method,
            headers: { "content-type": "application/json" },
            ...(method === "POST" ? { body: JSON.stringify({ token: testAdminToken }) } : {})
          })
        )
        assert.deepStrictEqual([method, path, res.status, res.body.error.code], [method, path, 404, "not_found"])
      }
      const spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> }
      assert.isFalse(Object.keys(spec.paths).some((p) => p.startsWith("/console")))
    } finally {
      await server.close()
    }
  })
})

describe("the console page", () => {
  it("is served from the page the server was given, with no-referrer, and its files", async () => {
    const script = Buffer.from("console.log('console page')")
    const server = await startServer({
      console: {
        html: () => "<!doctype html><title>Console</title>",
        headers: { "Content-Security-Policy": "default-src 'self'", "referrer-policy": "no-referrer" },
        assets: () => new Map([["/console/assets/app.0123abcd.js", { body: script, contentType: "text/javascript" }]])
      }
    })
    try {
      const page = await fetch(`${server.url}/console`)
      assert.strictEqual(page.status, 200)
      assert.strictEqual(await page.text(), "<!doctype html><title>Console</title>")
      assert.strictEqual(page.headers.get("content-type"), "text/html; charset=utf-8")
      assert.strictEqual(page.headers.get("referrer-policy"), "no-referrer")
      assert.strictEqual(page.headers.get("content-security-policy"), "default-src 'self'")
      assert.strictEqual(page.headers.get("cache-control"), "no-store")
      const file = await fetch(`${server.url}/console/assets/app.0123abcd.js`)
      assert.strictEqual(file.status, 200)
      assert.strictEqual(await file.text(), script.toString())
      assert.match(file.headers.get("cache-control")!, /immutable/)
      assert.strictEqual((await fetch(`${server.url}/console/assets/other.js`)).status, 404)
    } finally {
      await server.close()
    }
  })

  it("answers 404 while no page is installed, the admin API still on", async () => {
    const server = await startServer()
    try {
      const res = await json(await fetch(`${server.url}/console`))
      assert.deepStrictEqual([res.status, res.body.error.code], [404, "not_found"])
      assert.strictEqual((await admin(server, "GET", "/admin/accounts")).status, 200)
    } finally {
      await server.close()
    }
  })
})

describe("the session cookie over HTTPS", () => {
  it("is Secure when the request came over TLS", async () => {
    const dir = mkdtempSync(join(tmpdir(), "dashstream-tls-"))
    const scope = Effect.runSync(Scope.make())
    try {
      // A throwaway self-signed certificate for 127.0.0.1.
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-keyout",
          join(dir, "key.pem"),
          "-out",
          join(dir, "cert.pem"),
          "-days",
          "1",
          "-subj",
          "/CN=127.0.0.1"
        ],
        { stdio: "ignore" }
      )
      const stores = Layer.effectContext(
        Effect.map(MemoryStore.make, (s) =>
          Context.make(AccountStore, s.accountStore).pipe(
            Context.add(StreamStore, s.streamStore),
            Context.add(ChangeFeed, s.changeFeed),
            Context.add(DashboardStore, s.dashboardStore),
            Context.add(SessionStore, s.sessionStore),
            Context.add(AlertStore, s.alertStore)
          )
        )
      )
      const { handle } = await Effect.runPromise(
        handler({ adminToken: testAdminToken, limits: defaultLimits, rateLimit: undefined, logRequests: false }).pipe(
          Effect.provide(stores),
          Scope.extend(scope)
        )
      )
      const server = createHttpsServer(
        { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
        handle
      )
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      try {
        const { port } = server.address() as AddressInfo
        const answer = await new Promise<{ status: number; cookie: string }>((resolve, reject) => {
          const req = httpsRequest(
            {
              host: "127.0.0.1",
              port,
              path: "/console/session",
              method: "POST",
              rejectUnauthorized: false,
              headers: { "content-type": "application/json" }
            },
            (res) => {
              res.resume()
              res.on("end", () => resolve({ status: res.statusCode!, cookie: res.headers["set-cookie"]![0]! }))
            }
          )
          req.on("error", reject)
          req.end(JSON.stringify({ token: testAdminToken }))
        })
        assert.strictEqual(answer.status, 204)
        assert.include(
          answer.cookie.split(";").map((p) => p.trim()),
          "Secure"
        )
      } finally {
        server.closeAllConnections()
        await new Promise((resolve) => server.close(resolve))
      }
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
