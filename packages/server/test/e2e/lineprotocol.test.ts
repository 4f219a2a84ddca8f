/**
 * docs/api.md section 13.1, InfluxDB line protocol, against the real `dashstream serve` on every backend, with real,
 * unmodified clients: the `influx` npm package (1.x `POST /write`), `@influxdata/influxdb-client` (2.x
 * `POST /api/v2/write`, gzip), Debian's InfluxDB 1.x command-line client (`influx -execute 'INSERT ...'` and
 * `-import`) and Debian's `python3-influxdb` (installed by the suite's global setup when missing). What they write is
 * read back through the export API and seen on a live event stream. What the server answers and refuses, and the
 * bodies it reads as InfluxDB does: lineprotocol.answers.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { InfluxDB as InfluxV2, Point, setLogger } from "@influxdata/influxdb-client"
import { InfluxDB as InfluxV1 } from "influx"
import { describe, expect, it } from "vitest"
import { debianPython, influxCliPath } from "../support/influxClientsSetup.js"
import { type Account, backends, suiteName, useServer } from "./harness.js"
import { lineProtocolAccount, run, T0 } from "./lineprotocolSupport.js"
import { entriesOf, openEvents } from "./sse.js"

// The 2.x client logs every failed write to the console; the tests look at the errors themselves.
setLogger({ error: () => {}, warn: () => {} })

for (const backend of backends) {
  describe(suiteName("InfluxDB line protocol (docs/api.md section 13.1)", backend), () => {
    // No --log-skipped: skipped names are logged by default.
    const ctx = useServer(backend)

    const setup = (prefix: string): Promise<Account> => lineProtocolAccount(ctx.api, prefix)
    const points = (account: Account, stream: string) => ctx.api.entries(account.accessKey, stream)

    it("the influx npm package (1.x /write): ping, CREATE DATABASE, points with tags and precision, errors", async () => {
      const account = await setup("npm1")
      const url = new URL(ctx.server.baseUrl)
      const influx = new InfluxV1({
        host: url.hostname,
        port: Number(url.port),
        database: "telegraf",
        username: "anyone",
        password: account.accessKey
      })
      const [pong] = await influx.ping(5_000)
      expect(pong?.online).toBe(true)
      expect(pong?.version).toBe("1.8.10")
      await influx.createDatabase("telegraf")
      await influx.writePoints(
        [
          {
            measurement: "npm1",
            tags: { host: "web1", cpu: "cpu0" },
            fields: { usage_idle: 97.5, usage_user: 1 },
            timestamp: T0
          },
          { measurement: "npm1", fields: { load: 3 }, timestamp: T0 + 1 },
          { measurement: "npm1", tags: { host: "web1" }, fields: { status: "up" } },
          { measurement: "npm1", tags: { host: "web1", cpu: "cpu0" }, fields: { usage_idle: 90 }, timestamp: T0 + 2 }
        ],
        { precision: "s" }
      )
      expect(await points(account, "npm1.usage_idle{cpu=cpu0,host=web1}")).toEqual([
        { ts: T0, point: { number: 97.5 } },
        { ts: T0 + 2, point: { number: 90 } }
      ])
      expect(await points(account, "npm1.load")).toEqual([{ ts: T0 + 1, point: { number: 3 } }])
      expect((await points(account, "npm1.status{host=web1}")).map((e) => e.point)).toEqual([{ label: "up" }])

      const refused = await influx
        .writePoints([{ measurement: "npm1", fields: { load: "high" }, timestamp: T0 }], { precision: "s" })
        .then(
          () => undefined,
          (e: Error) => e
        )
      expect(refused?.message).toMatch(/400 Bad Request.*line 1: field \\"load\\" is a string.*number widget/)
      const wrongKey = new InfluxV1({ host: url.hostname, port: Number(url.port), database: "x", password: "nope" })
      const unauthorized = await wrongKey.writePoints([{ measurement: "npm1", fields: { load: 1 } }]).then(
        () => undefined,
        (e: Error) => e
      )
      expect(unauthorized?.message).toMatch(/401 Unauthorized.*the access key is missing or unknown/)
    })

    it("@influxdata/influxdb-client (2.x /api/v2/write) with gzip: every precision, booleans, label and text feed", async () => {
      const account = await setup("npm2")
      // A recording proxy in front of the server shows what the client really sends.
      const seen: Array<{ url: string; encoding: string | undefined; authorization: string | undefined }> = []
      const proxy = createServer((req, res) => {
        seen.push({
          url: req.url ?? "",
          encoding: req.headers["content-encoding"],
          authorization: req.headers.authorization?.split(" ")[0]
        })
        const target = new URL(ctx.server.baseUrl)
        const upstream = httpRequest(
          { host: target.hostname, port: Number(target.port), method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(res)
          }
        )
        req.pipe(upstream)
      })
      await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve))
      try {
        const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`
        const client = new InfluxV2({ url, token: account.accessKey })
        const options = { gzipThreshold: 0, maxRetries: 0, flushInterval: 0 }
        for (const [precision, ts] of [
          ["s", `${T0}`],
          ["ms", `${T0}001`],
          ["us", `${T0}002003`],
          ["ns", `${T0}003004999`]
        ] as const) {
          const writer = client.getWriteApi("org", "bucket", precision, options)
          writer.writePoint(
            new Point("npm2").tag("host", "web1").tag("cpu", "cpu0").floatField("usage_idle", 1.5).timestamp(ts)
          )
          await writer.close()
        }
        const writer = client.getWriteApi("org", "bucket", "s", options)
        writer.writePoints([
          new Point("npm2").booleanField("load", true).timestamp(`${T0 + 10}`),
          new Point("npm2").tag("host", "web1").stringField("status", 'deployed "v2"').timestamp(""),
          new Point("npm2").intField("deploy", 42).timestamp(""),
          new Point("npm2").tag("region", "eu").floatField("skipped", 1).timestamp("")
        ])
        await writer.close()
        expect(await points(account, "npm2.usage_idle{cpu=cpu0,host=web1}")).toEqual([
          { ts: T0, point: { number: 1.5 } },
          { ts: Number(`${T0}.001`), point: { number: 1.5 } },
          { ts: Number(`${T0}.002003`), point: { number: 1.5 } },
          { ts: Number(`${T0}.003004`), point: { number: 1.5 } }
        ])
        expect(await points(account, "npm2.load")).toEqual([{ ts: T0 + 10, point: { number: 1 } }])
        expect((await points(account, "npm2.status{host=web1}")).map((e) => e.point)).toEqual([
          { label: 'deployed "v2"' }
        ])
        expect((await points(account, "npm2.deploy")).map((e) => e.point)).toEqual([{ title: "deploy", msg: "42" }])
        expect(seen.length).toBe(5)
        for (const request of seen) {
          expect(request.url).toMatch(/^\/api\/v2\/write\?org=org&bucket=bucket&precision=(s|ms|us|ns)$/)
          expect(request.encoding).toBe("gzip")
          expect(request.authorization).toBe("Token")
        }

        // Errors in the 2.x shape reach the client as an HttpError it understands.
        const bad = client.getWriteApi("org", "bucket", "s", options)
        bad.writePoint(new Point("npm2").tag("host", "web1").tag("cpu", "cpu0").stringField("usage_idle", "x"))
        const error = (await bad.close().then(
          () => undefined,
          (e: unknown) => e
        )) as { statusCode?: number; json?: unknown } | undefined
        expect(error?.statusCode).toBe(400)
        expect(error?.json).toEqual({
          code: "invalid",
          message:
            'line 1: field "usage_idle" is a string, but stream "npm2.usage_idle{cpu=cpu0,host=web1}" is a ' +
            "line-graph widget, which takes numbers"
        })
        const stranger = new InfluxV2({ url, token: "nope" }).getWriteApi("org", "bucket", "s", options)
        stranger.writePoint(new Point("npm2").floatField("load", 1))
        const denied = (await stranger.close().then(
          () => undefined,
          (e: unknown) => e
        )) as { statusCode?: number; json?: unknown } | undefined
        expect(denied?.statusCode).toBe(401)
        expect(denied?.json).toEqual({ code: "unauthorized", message: "the access key is missing or unknown" })
      } finally {
        proxy.close()
      }
    })

    it("Debian's influx CLI: -execute 'INSERT ...' and -import", async () => {
      const account = await setup("cli")
      const url = new URL(ctx.server.baseUrl)
      const cli = (...args: Array<string>) =>
        run(influxCliPath, [
          "-host",
          url.hostname,
          "-port",
          url.port,
          "-username",
          "any",
          "-password",
          account.accessKey,
          ...args
        ])
      const insert = await cli(
        "-database",
        "telegraf",
        "-precision",
        "s",
        "-execute",
        `INSERT cli,host=web1,cpu=cpu0 usage_idle=12.5 ${T0}`
      )
      expect(insert, JSON.stringify(insert)).toMatchObject({ code: 0, stderr: "" })
      expect(insert.stdout).not.toContain("ERR")
      const dir = mkdtempSync(join(tmpdir(), "dashstream-influx-import-"))
      try {
        const file = join(dir, "import.txt")
        writeFileSync(
          file,
          [
            "# DDL",
            "CREATE DATABASE telegraf",
            "",
            "# DML",
            "# CONTEXT-DATABASE: telegraf",
            `cli,host=web1,cpu=cpu0 usage_idle=13.5 ${T0 + 1}`,
            `cli,cpu=cpu0,host=web1 usage_idle=14.5 ${T0 + 2}`,
            `cli load=2i ${T0 + 2}`,
            `cli,host=other usage_idle=1 ${T0 + 2}`,
            ""
          ].join("\n")
        )
        const imported = await cli("-import", "-path", file, "-precision", "s")
        expect(imported.code, JSON.stringify(imported)).toBe(0)
        expect(imported.stdout + imported.stderr).toMatch(/Processed 4 inserts/)
        expect(imported.stdout + imported.stderr).toMatch(/Failed 0 inserts/)
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
      expect(await points(account, "cli.usage_idle{cpu=cpu0,host=web1}")).toEqual([
        { ts: T0, point: { number: 12.5 } },
        { ts: T0 + 1, point: { number: 13.5 } },
        { ts: T0 + 2, point: { number: 14.5 } }
      ])
      expect(await points(account, "cli.load")).toEqual([{ ts: T0 + 2, point: { number: 2 } }])
      const refused = await cli("-database", "telegraf", "-execute", 'INSERT cli load="high"')
      expect(refused.stdout + refused.stderr).toContain(
        'ERR: {"error":"line 1: field \\"load\\" is a string, but stream \\"cli.load\\" is a number widget, which takes numbers"}'
      )
    })

    it("Debian's python3-influxdb: ping, write_points in seconds, errors as InfluxDBClientError", async () => {
      const account = await setup("py")
      const url = new URL(ctx.server.baseUrl)
      const script = `
import json, sys
from influxdb import InfluxDBClient
from influxdb.exceptions import InfluxDBClientError
client = InfluxDBClient(${JSON.stringify(url.hostname)}, ${url.port}, "any", sys.argv[1], "telegraf")
out = {"ping": client.ping()}
client.create_database("telegraf")
out["written"] = client.write_points([
  {"measurement": "py", "tags": {"host": "web1", "cpu": "cpu0"}, "time": ${T0}, "fields": {"usage_idle": 50.25}},
  {"measurement": "py", "time": ${T0}, "fields": {"load": 7}},
], time_precision="s")
try:
  client.write_points([{"measurement": "py", "fields": {"load": "x"}}])
except InfluxDBClientError as e:
  out["error"] = [e.code, json.loads(e.content)]
try:
  InfluxDBClient(${JSON.stringify(url.hostname)}, ${url.port}, "any", "nope", "telegraf").write_points([{"measurement": "py", "fields": {"load": 1}}])
except InfluxDBClientError as e:
  out["denied"] = [e.code, json.loads(e.content)]
print(json.dumps(out))
`
      const result = await run(debianPython, ["-c", script, account.accessKey])
      expect(result.code, result.stderr).toBe(0)
      expect(JSON.parse(result.stdout)).toEqual({
        ping: "1.8.10",
        written: true,
        error: [
          400,
          { error: 'line 1: field "load" is a string, but stream "py.load" is a number widget, which takes numbers' }
        ],
        denied: [401, { error: "the access key is missing or unknown" }]
      })
      expect(await points(account, "py.usage_idle{cpu=cpu0,host=web1}")).toEqual([{ ts: T0, point: { number: 50.25 } }])
      expect(await points(account, "py.load")).toEqual([{ ts: T0, point: { number: 7 } }])
    })

    it("what a client writes is seen on a live event stream", async () => {
      const account = await setup("live")
      const stream = "live.usage_idle{cpu=cpu0,host=web1}"
      const events = await openEvents(
        ctx.server.baseUrl,
        `/api/v2/${encodeURIComponent(account.accessKey)}/datastream/${encodeURIComponent(stream)}/events`
      )
      try {
        expect(events.status).toBe(200)
        const writer = new InfluxV2({ url: ctx.server.baseUrl, token: account.accessKey }).getWriteApi("o", "b", "s", {
          maxRetries: 0
        })
        writer.writePoint(
          new Point("live")
            .tag("cpu", "cpu0")
            .tag("host", "web1")
            .floatField("usage_idle", 77)
            .timestamp(`${T0 + 5}`)
        )
        await writer.close()
        await events.until("the written entry", () => entriesOf(events.events).length > 0)
        expect(entriesOf(events.events).map(({ ts, point }) => ({ ts, point }))).toEqual([
          { ts: T0 + 5, point: { number: 77 } }
        ])
      } finally {
        events.close()
      }
    })
  })
}
