/**
 * docs/api.md section 14, server side: console sessions (sign-in, the cookie on the admin API, sign-out), the admin API
 * additions (accounts list, widgets' latest entries, pushing a point), first run (a token made for the run and printed
 * once) and `--no-admin`. Run against every backend, and by the e2e-sqlite-workers project against `serve --workers
 * 2`, where each request below opens its own connection so that they are spread over the workers.
 */
import { describe, expect, it } from "vitest"
import {
  Api,
  backends,
  defaultAdminToken,
  expectError,
  expectSuccess,
  nodeRequest,
  type Reply,
  type RunningServer,
  startServer,
  suiteName,
  useServer
} from "./harness.js"
import { entriesOf, eventsPath, openOk } from "./sse.js"

/** A reply of {@link call}: as the harness's `Reply`, plus the `Set-Cookie` header (node keeps it apart). */
type CallReply = Reply & { readonly setCookie: string | undefined }

/** One request on a connection of its own (with `serve --workers 2`, the connections go to the workers in turn). */
const call = async (
  server: RunningServer,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: unknown
): Promise<CallReply> => {
  const raw = await nodeRequest(server.baseUrl, {
    method,
    path,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) })
  })
  let json: unknown = undefined
  try {
    json = JSON.parse(raw.text)
  } catch {
    json = undefined
  }
  const replyHeaders = new Headers()
  for (const [name, value] of Object.entries(raw.headers)) {
    if (typeof value === "string") replyHeaders.set(name, value)
  }
  const setCookie = raw.headers["set-cookie"]
  return { status: raw.status, headers: replyHeaders, text: raw.text, json, setCookie: setCookie?.[0] }
}

/** Signs in with `token`; the cookie (`dashstream_session=...`) on success. */
const signIn = async (server: RunningServer, token: string) => {
  const reply = await call(server, "POST", "/console/session", {}, { token })
  return { reply, setCookie: reply.setCookie, cookie: reply.setCookie?.split(";")[0] }
}

const consoleHeader = { "x-dashstream-console": "1" }

/** Many requests, each on its own connection: every worker of the server answers some. */
const everywhere = async (server: RunningServer, method: string, path: string, headers: Record<string, string>) => {
  const statuses: Array<number> = []
  for (let i = 0; i < 8; i++) statuses.push((await call(server, method, path, headers)).status)
  return statuses
}

const consoleLinePattern = /^Console: http:\/\/127\.0\.0\.1:(\d+)\/console#token=([A-Za-z0-9_-]+)$/m

for (const backend of backends) {
  describe(suiteName("console sessions", backend), () => {
    const ctx = useServer(backend, { extraArgs: ["--log-requests"] })

    it("sign-in sets an HttpOnly, SameSite=Strict cookie that every process accepts on the admin API", async () => {
      const { server } = ctx
      const { reply, setCookie, cookie } = await signIn(server, defaultAdminToken)
      expect(reply.status, reply.text).toBe(204)
      const attributes = setCookie!.split(";").map((a) => a.trim())
      expect(attributes).toEqual(expect.arrayContaining(["Path=/", "HttpOnly", "SameSite=Strict"]))
      expect(setCookie).not.toContain(defaultAdminToken)
      expect(await everywhere(server, "GET", "/admin/accounts", { cookie: cookie! })).toEqual(Array(8).fill(200))
      expect(await everywhere(server, "GET", "/console/session", { cookie: cookie! })).toEqual(Array(8).fill(200))
      const created = await call(
        server,
        "POST",
        "/admin/accounts",
        { cookie: cookie!, ...consoleHeader },
        { name: "c" }
      )
      expect(created.status, created.text).toBe(201)
    })

    it("a wrong token, a tampered cookie, a change without the console header, a cross-site form post: refused, nothing changed", async () => {
      const { server, api } = ctx
      const wrong = await signIn(server, `${defaultAdminToken}x`)
      expect(wrong.reply.status).toBe(401)
      expect(wrong.setCookie).toBeUndefined()
      const { cookie } = await signIn(server, defaultAdminToken)
      const count = async () => (await api.admin("GET", "/admin/accounts")).json.accounts.length as number
      const before = await count()
      const tampered = cookie!.replace(/.$/, (c) => (c === "A" ? "B" : "A"))
      for (const status of await everywhere(server, "GET", "/admin/accounts", { cookie: tampered })) {
        expect(status).toBe(401)
      }
      const tamperedChange = await call(server, "POST", "/admin/accounts", { cookie: tampered, ...consoleHeader }, {})
      expectError(tamperedChange, 401, "unauthorized")
      const noHeader = await call(server, "POST", "/admin/accounts", { cookie: cookie! }, { name: "csrf" })
      expectError(noHeader, 403, "forbidden")
      const form = await call(
        server,
        "POST",
        "/admin/accounts",
        {
          cookie: cookie!,
          "content-type": "application/x-www-form-urlencoded",
          origin: "https://attacker.example"
        },
        "name=csrf"
      )
      expectError(form, 403, "forbidden")
      const account = await api.setup({ s: "number" })
      const pointNoHeader = await call(
        server,
        "POST",
        `/admin/accounts/${account.id}/widgets/s/points`,
        { cookie: cookie! },
        42
      )
      expect(pointNoHeader.status).toBe(403)
      const deleteNoHeader = await call(server, "DELETE", `/admin/accounts/${account.id}/widgets/s`, {
        cookie: cookie!
      })
      expect(deleteNoHeader.status).toBe(403)
      expect(await count()).toBe(before + 1)
      expect(await api.points(account.accessKey, "s")).toEqual([])
    })

    it("sign-out: the session's cookie is refused from then on by every process, also replayed", async () => {
      const { server } = ctx
      const { cookie } = await signIn(server, defaultAdminToken)
      const { cookie: other } = await signIn(server, defaultAdminToken)
      expect(await everywhere(server, "GET", "/admin/accounts", { cookie: cookie! })).toEqual(Array(8).fill(200))
      const out = await call(server, "DELETE", "/console/session", { cookie: cookie!, ...consoleHeader })
      expect(out.status, out.text).toBe(204)
      expect(out.setCookie).toMatch(/^dashstream_session=;.*Max-Age=0/)
      expect(await everywhere(server, "GET", "/admin/accounts", { cookie: cookie! })).toEqual(Array(8).fill(401))
      expect(await everywhere(server, "GET", "/console/session", { cookie: cookie! })).toEqual(Array(8).fill(401))
      expect(await everywhere(server, "GET", "/admin/accounts", { cookie: other! })).toEqual(Array(8).fill(200))
    })

    it("GET /admin/accounts, widgets with their latest entry, and a point pushed through the admin API reaches live subscribers", async () => {
      const { server, api } = ctx
      const { cookie } = await signIn(server, defaultAdminToken)
      const account = await api.setup({ n: "number", t: "table" })
      const listed = await call(server, "GET", "/admin/accounts", { cookie: cookie! })
      const mine = (listed.json.accounts as Array<any>).find((a) => a.id === account.id)
      expect(Object.keys(mine).sort()).toEqual(["createdAt", "id", "name"])
      expect(listed.text).not.toContain(account.accessKey)
      const events = await openOk(server.baseUrl, eventsPath(account.accessKey, "n"))
      try {
        const pushed = await call(
          server,
          "POST",
          `/admin/accounts/${account.id}/widgets/n/points`,
          { cookie: cookie!, ...consoleHeader },
          { number: 7, suffix: " kg" }
        )
        expectSuccess(pushed)
        await events.until("the pushed entry", () => entriesOf(events.events).length === 1)
        expect(entriesOf(events.events)[0]!.point).toEqual({ number: 7, suffix: " kg" })
      } finally {
        events.close()
      }
      const delta = await api.admin("POST", `/admin/accounts/${account.id}/widgets/n/points`, { delta: 3 })
      expect(delta.status, delta.text).toBe(200)
      expect(await api.latest(account.accessKey, "n")).toEqual({ number: 10, suffix: " kg" })
      const bad = await api.admin("POST", `/admin/accounts/${account.id}/widgets/t/points`, {
        table: [["a"], ["b", "c"]]
      })
      expectError(bad, 400, "invalid_point", "point.table[1]")
      const widgets = await call(server, "GET", `/admin/accounts/${account.id}/widgets`, { cookie: cookie! })
      const byName = Object.fromEntries((widgets.json.widgets as Array<any>).map((w) => [w.streamName, w.latest]))
      const read = await api.read(account.accessKey, "n")
      expect(byName).toEqual({ n: read.json.data[0], t: null })
    })

    it("neither the admin token nor a session cookie appears in a log line or a /metrics label", async () => {
      const { server, api } = ctx
      const { cookie } = await signIn(server, defaultAdminToken)
      await signIn(server, "a-wrong-token-never-logged")
      await call(server, "GET", "/admin/accounts", { cookie: cookie! })
      await call(server, "POST", "/admin/accounts", { cookie: cookie! }, {})
      await call(server, "DELETE", "/console/session", { cookie: cookie!, ...consoleHeader })
      const metrics = await api.fetch("/metrics")
      expect(metrics.status).toBe(200)
      const value = cookie!.slice("dashstream_session=".length)
      expect(server.output()).toContain("/console/session")
      for (const secret of [defaultAdminToken, "a-wrong-token-never-logged", value, value.split(".")[0]!]) {
        expect(server.output()).not.toContain(secret)
        expect(metrics.text).not.toContain(secret)
      }
    })
  })

  describe(suiteName("console first run", backend), () => {
    it("without a configured token on loopback: a token made for the run, printed once as the Console link; a restart makes another", async () => {
      const db = await backend.database()
      try {
        let server = await startServer(db.url, { adminToken: null })
        let oldToken: string
        let cookie: string
        try {
          await waitFor(() => consoleLinePattern.test(server.stdout()))
          const lines = server
            .stdout()
            .split("\n")
            .filter((l) => l.startsWith("Console:"))
          expect(lines).toHaveLength(1)
          const [, port, token] = consoleLinePattern.exec(server.stdout())!
          expect(Number(port)).toBe(server.port)
          // At least 128 bits.
          expect(token!.length).toBeGreaterThanOrEqual(22)
          oldToken = token!
          const api = new Api(server.baseUrl, token!)
          expect((await api.admin("GET", "/admin/accounts")).status).toBe(200)
          const signedIn = await signIn(server, token!)
          expect(signedIn.reply.status).toBe(204)
          cookie = signedIn.cookie!
          expect(await everywhere(server, "GET", "/admin/accounts", { cookie })).toEqual(Array(8).fill(200))
          // The token reached stdout once, and nothing else.
          expect(server.output().split(token!).length - 1).toBe(1)
        } finally {
          await server.stop()
        }
        server = await startServer(db.url, { adminToken: null })
        try {
          await waitFor(() => consoleLinePattern.test(server.stdout()))
          const token = consoleLinePattern.exec(server.stdout())![2]!
          expect(token).not.toBe(oldToken)
          expect(await everywhere(server, "GET", "/admin/accounts", { cookie })).toEqual(Array(8).fill(401))
          expect((await new Api(server.baseUrl, oldToken).admin("GET", "/admin/accounts")).status).toBe(401)
          expect((await new Api(server.baseUrl, token).admin("GET", "/admin/accounts")).status).toBe(200)
        } finally {
          await server.stop()
        }
      } finally {
        await db.drop()
      }
    }, 240_000)

    it("--no-admin, or DASHSTREAM_ADMIN=off, keeps the admin API and the console off (404), token or not", async () => {
      const db = await backend.database()
      try {
        for (const options of [
          { extraArgs: ["--no-admin"] },
          { adminToken: null, env: { DASHSTREAM_ADMIN: "off" } },
          { adminToken: null, extraArgs: ["--no-admin"] }
        ]) {
          const server = await startServer(db.url, options)
          try {
            expect(server.stdout()).not.toMatch(/^Console:/m)
            for (const [method, path] of [
              ["GET", "/admin/accounts"],
              ["GET", "/console"],
              ["POST", "/console/session"],
              ["DELETE", "/console/session"]
            ] as const) {
              const reply = await call(
                server,
                method,
                path,
                { authorization: `Bearer ${defaultAdminToken}` },
                method === "POST" ? { token: defaultAdminToken } : undefined
              )
              expect([JSON.stringify(options), method, path, reply.status]).toEqual([
                JSON.stringify(options),
                method,
                path,
                404
              ])
            }
          } finally {
            await server.stop()
          }
        }
      } finally {
        await db.drop()
      }
    }, 240_000)
  })

  if (backend.name === "postgres") {
    describe(suiteName("console sessions across two server processes on one database", backend), () => {
      it("a session works on both; a sign-out on one is refused by the other too, also replayed", async () => {
        const db = await backend.database()
        try {
          const a = await startServer(db.url)
          const b = await startServer(db.url)
          try {
            const { cookie } = await signIn(a, defaultAdminToken)
            expect((await call(b, "GET", "/admin/accounts", { cookie: cookie! })).status).toBe(200)
            const created = await call(b, "POST", "/admin/accounts", { cookie: cookie!, ...consoleHeader }, {})
            expect(created.status).toBe(201)
            const out = await call(a, "DELETE", "/console/session", { cookie: cookie!, ...consoleHeader })
            expect(out.status).toBe(204)
            expect((await call(a, "GET", "/admin/accounts", { cookie: cookie! })).status).toBe(401)
            // Refused by the other process at once: it trusts no "signed in" answer (docs/api.md section 14).
            expect((await call(b, "GET", "/admin/accounts", { cookie: cookie! })).status).toBe(401)
            expect(await everywhere(b, "GET", "/admin/accounts", { cookie: cookie! })).toEqual(Array(8).fill(401))
            const change = await call(b, "POST", "/admin/accounts", { cookie: cookie!, ...consoleHeader }, {})
            expect(change.status).toBe(401)
          } finally {
            await Promise.all([a.stop(), b.stop()])
          }
        } finally {
          await db.drop()
        }
      }, 240_000)
    })
  }
}

/** Polls `check` every 50 ms until it holds; fails after `timeoutMs`. */
const waitFor = async (check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
