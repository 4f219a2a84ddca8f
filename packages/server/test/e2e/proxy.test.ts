/**
 * Behind a reverse proxy (docs/api.md section 16), through a real nginx run with the README's server block (see
 * `nginx.ts`: only its ports are changed) in front of `dashstream serve --base-path /dashboards --trust-proxy
 * 127.0.0.1`: the README's quick start, the root paths answering 404, the view URLs, a live event stream that
 * delivers within 1 s and resumes after `nginx -s reload`, the console cookie's `Secure` and `Path`, and the forwarded
 * headers (spoofing from an untrusted peer and through the proxy, throttling and the request log per client).
 * Clients other than nginx connect from other loopback addresses (127.0.0.2 and up), so the server tells them apart.
 */
import { spawnSync } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { freePort } from "@dashstream/storage-postgres/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { binArgs } from "../support/bin.js"
import { Api, backends, defaultAdminToken, repoRoot, runCli, suiteName, useServer } from "./harness.js"
import { type Nginx, readmeBasePath, requestFrom, serverBlock, startNginx } from "./nginx.js"
import { entriesOf, openEvents } from "./sse.js"

const basePath = readmeBasePath

/** The README's quick start block, as quickstart.test.ts reads it. */
const quickstart = (): string => {
  const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
  const block = /<!-- quickstart:begin -->\n```sh\n([\s\S]*?)```\n<!-- quickstart:end -->/.exec(readme)
  if (block === null) throw new Error("README.md has no quick start block between the quickstart markers")
  return block[1]!
}

const signIn = (url: string, token: string, from = "127.0.0.1", headers: Record<string, string> = {}) =>
  requestFrom(from, `${url}/console/session`, "POST", headers, { token })

for (const backend of backends) {
  describe(suiteName(`behind nginx with the README's block, under ${basePath}`, backend), () => {
    const ctx = useServer(backend, {
      extraArgs: ["--base-path", basePath, "--trust-proxy", "127.0.0.1", "--log-requests"]
    })
    let nginx: Nginx
    /** nginx's URL of Dashstream (`http://127.0.0.1:<port>/dashboards`), and the one whose block says HTTPS. */
    let proxied: string
    let proxiedHttps: string
    let origin: string

    beforeAll(async () => {
      const [port, httpsPort] = [await freePort(), await freePort()]
      nginx = await startNginx(
        [serverBlock(port, ctx.server.port), serverBlock(httpsPort, ctx.server.port, "https")],
        [port, httpsPort]
      )
      proxied = `http://127.0.0.1:${port}${basePath}`
      proxiedHttps = `http://127.0.0.1:${httpsPort}${basePath}`
      origin = `http://127.0.0.1:${ctx.server.port}`
    }, 60_000)
    afterAll(async () => {
      await nginx?.stop()
    })

    it("prints its URL with the base path; every path outside it answers 404, directly and through nginx", async () => {
      expect(ctx.server.baseUrl).toBe(`${origin}${basePath}`)
      for (const base of [origin, `http://127.0.0.1:${new URL(proxied).port}`]) {
        for (const [method, path] of [
          ["POST", "/customSend"],
          ["GET", "/healthz"],
          ["GET", "/console"],
          ["GET", "/api/v2/k/datastream/s"]
        ] as const) {
          const r = await requestFrom("127.0.0.1", `${base}${path}`, method, {}, method === "POST" ? {} : undefined)
          // Dashstream's JSON 404 directly; nginx's own 404 page for paths outside its location.
          expect(r.status, `${base}${path}`).toBe(404)
        }
      }
      for (const path of ["/healthz", "/readyz", "/metrics", "/docs", "/openapi.json", "/console"]) {
        const r = await requestFrom("127.0.0.1", `${proxied}${path}`, "GET")
        expect(r.status, `${path}: ${r.text.slice(0, 200)}`).toBe(200)
      }
      const doc = JSON.parse((await requestFrom("127.0.0.1", `${proxied}/openapi.json`, "GET")).text)
      expect(doc.servers).toEqual([{ url: basePath }])
    })

    it("runs the README's quick start through nginx", () => {
      const dir = mkdtempSync(join(tmpdir(), "dashstream-proxy-qs-"))
      try {
        // `pnpm -s dashstream ...` as the README writes it, run as the installed command.
        const bin = join(dir, "bin")
        mkdirSync(bin)
        writeFileSync(
          join(bin, "pnpm"),
          `#!/bin/sh\n[ "$1" = -s ] && shift\n[ "$1" = dashstream ] && shift\nexec ${JSON.stringify(process.execPath)} ${binArgs.map((a) => JSON.stringify(a)).join(" ")} "$@"\n`
        )
        chmodSync(join(bin, "pnpm"), 0o755)
        const script = quickstart()
        expect(script).toMatch(/^BASE=http:\/\/127\.0\.0\.1:8080$/m)
        const run = spawnSync("bash", ["-euo", "pipefail", "-c", script.replace(/^BASE=.*$/m, `BASE=${proxied}`)], {
          cwd: repoRoot,
          encoding: "utf8",
          env: { ...process.env, PATH: `${bin}:${process.env["PATH"]}`, DASHSTREAM_DB: ctx.db.url },
          timeout: 120_000
        })
        expect(run.stderr).not.toMatch(/error/i)
        expect(run.status, run.stderr).toBe(0)
        expect(run.stdout.match(/\{"message":"Success!"\}/g)?.length).toBe(4)
        expect(run.stdout).toMatch(/"data":\[\{"ts":\d+(\.\d+)?,"point":\{"number":105,"prefix":"\$"\}\}\]/)
        expect(run.stdout).toContain(
          '"data":[{"ts":1700000000,"point":{"number":3}},{"ts":1700000060,"point":{"number":7}}]'
        )
        expect(run.stdout).toContain('"data":[{"ts":1700000060,"point":{"number":7}}]')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }, 180_000)

    it("the other pushers work under the base path through nginx: line protocol, InfluxDB probes, Smashing", async () => {
      const account = await ctx.api.setup({ "cpu.load{host=web1}": "number", welcome: "label" })
      const write = await requestFrom(
        "127.0.0.1",
        `${proxied}/write?db=telegraf&precision=s&p=${encodeURIComponent(account.accessKey)}`,
        "POST",
        { "content-type": "text/plain" },
        undefined,
        "cpu,host=web1 load=0.75 1700000000\n"
      )
      expect(write.status, write.text).toBe(204)
      const v2 = await requestFrom(
        "127.0.0.1",
        `${proxied}/api/v2/write?org=o&bucket=b&precision=s`,
        "POST",
        { authorization: `Token ${account.accessKey}`, "content-type": "text/plain" },
        undefined,
        "cpu,host=web1 load=0.5 1700000060\n"
      )
      expect(v2.status, v2.text).toBe(204)
      expect((await requestFrom("127.0.0.1", `${proxied}/ping`, "GET")).status).toBe(204)
      expect((await requestFrom("127.0.0.1", `${proxied}/query?q=CREATE+DATABASE+telegraf`, "POST")).status).toBe(200)
      const smashing = await requestFrom(
        "127.0.0.1",
        `${proxied}/widgets/welcome`,
        "POST",
        {},
        {
          auth_token: account.accessKey,
          text: "Hello through nginx"
        }
      )
      expect(smashing.status, smashing.text).toBe(204)
      const proxiedApi = new Api(proxied, defaultAdminToken)
      expect((await proxiedApi.entries(account.accessKey, "cpu.load{host=web1}")).map((e) => e.point)).toEqual([
        { number: 0.75 },
        { number: 0.5 }
      ])
      expect(await proxiedApi.latest(account.accessKey, "welcome")).toEqual({ label: "Hello through nginx" })
    })

    it("a live event stream delivers within 1 s through nginx, and resumes after nginx is reloaded", async () => {
      const api = ctx.api
      const account = await api.setup({ temperature: "line-graph" })
      const proxiedApi = new Api(proxied, defaultAdminToken)
      const eventsPath = `/api/v2/${account.accessKey}/datastream/temperature/events`
      // As a browser asks: compressed if possible (the README's block must not compress event streams).
      const gzip = { "accept-encoding": "gzip" }
      const stream = await openEvents(proxied, eventsPath, gzip)
      expect(stream.status).toBe(200)
      expect(String(stream.headers["content-type"])).toMatch(/^text\/event-stream/)
      // Bound: 1 s from push to event, the contract's budget for a live update through the proxy.
      const deliver = async (s: typeof stream, n: number, count: number) => {
        const t0 = performance.now()
        const r = await proxiedApi.pushPoint(account.accessKey, "temperature", { number: n })
        expect(r.status, r.text).toBe(200)
        await s.until(`entry ${n}`, () => entriesOf(s.events).length === count, 1_000)
        return performance.now() - t0
      }
      console.info(`event through nginx after ${(await deliver(stream, 1, 1)).toFixed(1)} ms`)
      await deliver(stream, 2, 2)

      // The reload: a new worker answers new requests; the old one ends open streams after worker_shutdown_timeout
      // (2 s in the test's nginx.conf). A browser reconnects with Last-Event-ID; so does this client.
      await nginx.reload()
      await stream.until("the old worker to end the stream", () => stream.state() !== "open", 10_000)
      const lastId = stream.lastId()!
      expect(entriesOf(stream.events).map((e) => (e.point as { number: number }).number)).toEqual([1, 2])
      // Pushed while no stream is open: the resumed stream sends it first (docs/api.md section 10).
      expect((await proxiedApi.pushPoint(account.accessKey, "temperature", { number: 3 })).status).toBe(200)
      const resumed = await openEvents(proxied, eventsPath, { ...gzip, "last-event-id": lastId })
      try {
        expect(resumed.status).toBe(200)
        await resumed.until("the missed entry", () => entriesOf(resumed.events).length === 1, 5_000)
        await deliver(resumed, 4, 2)
        expect(entriesOf(resumed.events).map((e) => (e.point as { number: number }).number)).toEqual([3, 4])
      } finally {
        resumed.close()
        stream.close()
      }
    }, 60_000)

    it("the console cookie is Secure only when nginx says HTTPS, and its Path is the base path", async () => {
      const plain = await signIn(proxied, defaultAdminToken)
      expect(plain.status, plain.text).toBe(204)
      const plainCookie = String(plain.headers["set-cookie"])
      expect(plainCookie).toContain(`; Path=${basePath};`)
      expect(plainCookie).not.toContain("Secure")
      const https = await signIn(proxiedHttps, defaultAdminToken)
      expect(https.status, https.text).toBe(204)
      expect(String(https.headers["set-cookie"])).toMatch(/; Secure/)
      // Straight to Dashstream, a client's own X-Forwarded-Proto is not believed.
      const direct = await signIn(`${origin}${basePath}`, defaultAdminToken, "127.0.0.2", {
        "x-forwarded-proto": "https"
      })
      expect(direct.status).toBe(204)
      expect(String(direct.headers["set-cookie"])).not.toContain("Secure")
    })

    it("view URLs carry the base path (admin API and `dashboards create`), and open the page through nginx", async () => {
      const api = ctx.api
      const account = await api.setup({ revenue: "number" })
      const created = await api.admin("POST", `/admin/accounts/${account.id}/dashboards`, { name: "ops" })
      expect(created.status, created.text).toBe(201)
      expect(created.json.url).toMatch(new RegExp(`^${basePath}/d/[A-Za-z0-9_-]+$`))
      const page = await requestFrom("127.0.0.1", `http://127.0.0.1:${new URL(proxied).port}${created.json.url}`, "GET")
      expect(page.status).toBe(200)
      expect(page.text).toContain('src="../assets/')
      const cli = await runCli(
        ["dashboards", "create", "--access-key", account.accessKey, "--name", "cli", "--db", ctx.db.url],
        { DASHSTREAM_BASE_PATH: basePath }
      )
      expect(cli.code, cli.stderr).toBe(0)
      expect(cli.stdout).toMatch(new RegExp(`^${basePath}/d/dv_[A-Za-z0-9_-]+$`, "m"))
    })
  })

  describe(
    suiteName("forwarded headers through nginx (one process: sign-in throttling is per process)", backend),
    () => {
      const ctx = useServer(backend, {
        extraArgs: ["--base-path", basePath, "--trust-proxy", "127.0.0.1", "--log-requests", "--workers", "1"]
      })
      let nginx: Nginx
      let proxied: string
      let direct: string

      beforeAll(async () => {
        const port = await freePort()
        nginx = await startNginx([serverBlock(port, ctx.server.port)], [port])
        proxied = `http://127.0.0.1:${port}${basePath}`
        direct = ctx.server.baseUrl
      }, 60_000)
      afterAll(async () => {
        await nginx?.stop()
      })

      /** The client addresses the request log gave the sign-ins. */
      const loggedSignIns = () =>
        [...ctx.server.output().matchAll(/POST \/console\/session (\d{3}) [\d.]+ms from ([^\s"]+)/g)].map(
          (m) => `${m[1]} ${m[2]}`
        )
      const sixWrong = async (url: string, from: string, headers: Record<string, string>) => {
        const statuses: Array<number> = []
        for (let i = 0; i < 6; i++) statuses.push((await signIn(url, "wrong", from, headers)).status)
        return statuses
      }

      it("through the trusted proxy two clients are throttled separately and logged with their own addresses", async () => {
        // Client 127.0.0.2 forges the other client's address: nginx appends the real one, which is what counts.
        expect(await sixWrong(proxied, "127.0.0.2", { "x-forwarded-for": "127.0.0.3" })).toEqual([
          401, 401, 401, 401, 401, 429
        ])
        expect((await signIn(proxied, "wrong", "127.0.0.3")).status).toBe(401)
        await new Promise((r) => setTimeout(r, 200))
        const logged = loggedSignIns()
        expect(logged.filter((l) => l.endsWith(" 127.0.0.2"))).toEqual([
          "401 127.0.0.2",
          "401 127.0.0.2",
          "401 127.0.0.2",
          "401 127.0.0.2",
          "401 127.0.0.2",
          "429 127.0.0.2"
        ])
        expect(logged.filter((l) => l.endsWith(" 127.0.0.3"))).toEqual(["401 127.0.0.3"])
        expect(logged.some((l) => l.endsWith(" 127.0.0.1"))).toBe(false)
      })

      it("from a peer that is not trusted, a spoofed X-Forwarded-For is ignored by the throttle and the log", async () => {
        expect(await sixWrong(direct, "127.0.0.4", { "x-forwarded-for": "127.0.0.5" })).toEqual([
          401, 401, 401, 401, 401, 429
        ])
        // Another forged address does not get the peer out of its throttle.
        expect((await signIn(direct, "wrong", "127.0.0.4", { "x-forwarded-for": "127.0.0.6" })).status).toBe(429)
        await new Promise((r) => setTimeout(r, 200))
        const logged = loggedSignIns()
        expect(logged.filter((l) => l.endsWith(" 127.0.0.4"))).toHaveLength(7)
        expect(logged.some((l) => / 127\.0\.0\.[56]$/.test(l))).toBe(false)
      })
    }
  )
}
