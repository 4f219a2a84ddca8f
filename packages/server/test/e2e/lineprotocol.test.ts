/**
 * docs/api.md section 13.1, InfluxDB line protocol, against the real `dashstream serve` on every backend, with real,
 * unmodified clients: the `influx` npm package (1.x `POST /write`), `@influxdata/influxdb-client` (2.x
 * `POST /api/v2/write`, gzip), Debian's InfluxDB 1.x command-line client (`influx -execute 'INSERT ...'` and
 * `-import`) and Debian's `python3-influxdb` (installed by the suite's global setup when missing). What they write is
 * read back through the export API and seen on a live event stream. The bodies of core's `influxDbCases` (escapes, line
 * ends, odd bytes) go to the server and to a running InfluxDB 1.6 (`influxd`, also installed by the global setup), and
 * both must store the same fields under the same names, or both refuse them, except for the table's deliberate
 * differences.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, request as httpRequest } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createGzip, gzipSync } from "node:zlib"
import { InfluxDB as InfluxV2, Point, setLogger } from "@influxdata/influxdb-client"
import { InfluxDB as InfluxV1 } from "influx"
import { isStreamName } from "@dashstream/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Influx, startInflux } from "../../../../bench/push/influx.js"
import { influxDbCases } from "../../../core/test/influxDbCases.js"
import { parseExposition, valueOf } from "../../../http/test/support/exposition.js"
import { debianPython, influxCliPath } from "../support/influxClientsSetup.js"
import { type Account, backends, expectUnchanged, suiteName, testWorkers, useServer } from "./harness.js"
import { entriesOf, openEvents } from "./sse.js"

/** Runs a program to completion; its exit code, stdout and stderr. */
const run = (
  file: string,
  args: ReadonlyArray<string>,
  input?: string
): Promise<{ code: number | null; stdout: string; stderr: string }> =>
  new Promise((resolve) => {
    const child = execFile(file, args, { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
    if (input !== undefined) child.stdin?.end(input)
  })

/** The resident memory of a process and all its descendants, in bytes (Linux `/proc`). */
const treeRss = (pid: number): number => {
  let rss = 0
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8")
    rss += Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024
    for (const child of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)) {
      if (child !== "") rss += treeRss(Number(child))
    }
  } catch {
    // The process ended meanwhile.
  }
  return rss
}

/** `bytes` of zeros, gzipped as a stream (never held inflated in this process): a gzip bomb of that size. */
const gzipBomb = (bytes: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const gzip = createGzip({ level: 9 })
    const out: Array<Buffer> = []
    gzip.on("data", (d: Buffer) => out.push(d))
    gzip.on("end", () => resolve(Buffer.concat(out)))
    gzip.on("error", reject)
    const chunk = Buffer.alloc(1024 * 1024)
    let left = bytes
    const write = () => {
      while (left > 0) {
        left -= chunk.length
        if (!gzip.write(chunk)) return void gzip.once("drain", write)
      }
      gzip.end()
    }
    write()
  })

/** POSTs a raw body with node:http (exact headers, bytes as given); status, headers and text of the answer. */
const post = (
  baseUrl: string,
  path: string,
  body: string | Buffer,
  headers: Readonly<Record<string, string>> = {}
): Promise<{ status: number; headers: Record<string, string | Array<string> | undefined>; text: string }> =>
  new Promise((resolve, reject) => {
    const url = new URL(baseUrl)
    const req = httpRequest(
      { host: url.hostname, port: Number(url.port), method: "POST", path, headers, agent: false },
      (res) => {
        const parts: Array<Buffer> = []
        res.on("data", (d: Buffer) => parts.push(d))
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(parts).toString() })
        )
      }
    )
    req.on("error", reject)
    req.end(body)
  })

const T0 = 1_700_000_000

/** An InfluxQL query's first result's series (none: `[]`). */
const influxQuery = async (
  influx: Influx,
  db: string,
  q: string
): Promise<Array<{ name?: string; values: Array<Array<string>> }>> => {
  const r = await fetch(`${influx.url}/query?db=${db}&q=${encodeURIComponent(q)}`, { method: "POST" })
  expect(r.status, q).toBe(200)
  const json = (await r.json()) as {
    results: Array<{ series?: Array<{ name?: string; values: Array<Array<string>> }> }>
  }
  return json.results[0]!.series ?? []
}

/**
 * What InfluxDB does with a body written to a fresh database (`POST /write?precision=s`): `"refused"` or the streams of
 * the fields it stored, `<measurement>.<field key>{<tag key>=<tag value>,...}`, read back with `SHOW FIELD KEYS` and
 * `SHOW TAG VALUES` (a measurement's one series); `measurements` is what `SHOW MEASUREMENTS` lists.
 */
const influxOutcome = async (
  influx: Influx,
  db: string,
  body: string
): Promise<{ outcome: Array<string> | "refused"; measurements: Array<string> }> => {
  await influxQuery(influx, "", `CREATE DATABASE "${db}"`)
  const r = await fetch(`${influx.url}/write?db=${db}&precision=s`, { method: "POST", body })
  expect([204, 400], await r.text()).toContain(r.status)
  const measurements = (await influxQuery(influx, db, "SHOW MEASUREMENTS")).flatMap((m) => m.values.map((v) => v[0]!))
  if (r.status === 400) return { outcome: "refused", measurements }
  const tags = await influxQuery(influx, db, "SHOW TAG VALUES WITH KEY =~ /.*/")
  const streams: Array<string> = []
  for (const m of await influxQuery(influx, db, "SHOW FIELD KEYS")) {
    const pairs = (tags.find((t) => t.name === m.name)?.values ?? []).map(([k, v]) => `${k}=${v}`).sort()
    for (const [field] of m.values)
      streams.push(`${m.name}.${field}${pairs.length === 0 ? "" : `{${pairs.join(",")}}`}`)
  }
  return { outcome: streams, measurements }
}

// The 2.x client logs every failed write to the console; the tests look at the errors themselves.
setLogger({ error: () => {}, warn: () => {} })

for (const backend of backends) {
  describe(suiteName("InfluxDB line protocol (docs/api.md section 13.1)", backend), () => {
    // No --log-skipped: skipped names are logged by default.
    const ctx = useServer(backend)

    /** An account with line protocol streams of every writable kind. */
    const setup = (prefix: string): Promise<Account> =>
      ctx.api.setup({
        [`${prefix}.usage_idle{cpu=cpu0,host=web1}`]: "line-graph",
        [`${prefix}.load`]: "number",
        [`${prefix}.status{host=web1}`]: "label",
        [`${prefix}.deploy`]: "text-feed",
        [`${prefix}.board`]: "leaderboard"
      })
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

    it("a retried batch with timestamps stores nothing twice; one bad line stores nothing", async () => {
      const account = await setup("retry")
      const stream = "retry.usage_idle{cpu=cpu0,host=web1}"
      const body = Array.from(
        { length: 50 },
        (_, i) => `retry,host=web1,cpu=cpu0 usage_idle=${i},load=${i} ${T0 + i}`
      ).join("\n")
      const headers = { authorization: `Token ${account.accessKey}` }
      for (let attempt = 0; attempt < 3; attempt++) {
        const r = await post(ctx.server.baseUrl, "/api/v2/write?precision=s", body, headers)
        expect(r.status, r.text).toBe(204)
        // The load fields carry the tags: stream retry.load{cpu=cpu0,host=web1} is not declared.
        expect(r.headers["x-dashstream-skipped"]).toBe("50")
      }
      const stored = await points(account, stream)
      expect(stored).toEqual(Array.from({ length: 50 }, (_, i) => ({ ts: T0 + i, point: { number: i } })))

      const bad = `retry,host=web1,cpu=cpu0 usage_idle=100 ${T0 + 100}\n# a comment\n\nretry,host=web1,cpu=cpu0 usage_idle=1.2.3 ${T0 + 101}\nretry load=1`
      for (const [path, shape] of [
        ["/write?precision=s", { error: expect.stringMatching(/^line 4: invalid number "1\.2\.3"/) }],
        ["/api/v2/write?precision=s", { code: "invalid", message: expect.stringMatching(/^line 4: invalid number/) }]
      ] as const) {
        const r = await expectUnchanged(ctx.api, account.accessKey, [stream, "retry.load"], () =>
          post(ctx.server.baseUrl, path, bad, headers)
        )
        expect(r.status, r.text).toBe(400)
        expect(r.headers["content-type"]).toBe("application/json")
        expect(JSON.parse(r.text)).toEqual(shape)
      }
      // A field refused by its widget type (a leaderboard) also stores nothing of the body.
      const refused = await expectUnchanged(ctx.api, account.accessKey, [stream], () =>
        post(
          ctx.server.baseUrl,
          "/write",
          `retry,host=web1,cpu=cpu0 usage_idle=5 ${T0 + 200}000000000\nretry board=1`,
          headers
        )
      )
      expect(refused.status).toBe(400)
      expect(JSON.parse(refused.text).error).toMatch(/^line 2: stream "retry\.board" is a leaderboard widget/)
    })

    it("counts skipped field values in X-Dashstream-Skipped and on /metrics, and logs each skipped name once", async () => {
      const account = await setup("skip")
      const scrape = async () => parseExposition((await ctx.api.fetch("/metrics")).text)
      const before = await scrape()
      const body = `skip,host=web1 unknown_a=1,unknown_b=2\nskip load=1,also_unknown=3i ${T0}\nskip unknown_a=4`
      const r = await post(ctx.server.baseUrl, `/write?db=x&rp=y&consistency=any&p=${account.accessKey}`, body)
      expect(r.status, r.text).toBe(204)
      expect(r.text).toBe("")
      expect(r.headers["x-dashstream-skipped"]).toBe("4")
      expect(r.headers["x-influxdb-version"]).toBe("1.8.10")
      const none = await post(ctx.server.baseUrl, "/write", `skip load=2 ${T0 + 1}000000000`, {
        authorization: `Token ${account.accessKey}`
      })
      expect(none.headers["x-dashstream-skipped"]).toBe("0")
      const after = await scrape()
      expect(
        valueOf(after, "dashstream_ingest_skipped_total") - valueOf(before, "dashstream_ingest_skipped_total")
      ).toBe(4)
      // Logged by default: the names, each once (the second write within the minute logs nothing new).
      await post(ctx.server.baseUrl, `/write?p=${account.accessKey}`, body)
      await expect.poll(() => ctx.server.output()).toContain("skip.also_unknown")
      const lines = ctx.server
        .output()
        .split("\n")
        .filter((line) => line.includes("skip.unknown_a{host=web1}"))
      // Once per process (serve --workers N: each worker logs what it skipped).
      expect(lines.length).toBeGreaterThanOrEqual(1)
      expect(lines.length).toBeLessThanOrEqual(testWorkers)
      expect(lines[0]).toContain("skip.unknown_b{host=web1}")
      expect(ctx.server.output()).not.toContain(account.accessKey)
    })

    it("answers credentials, precision and encodings as each API version does", async () => {
      const account = await setup("auth")
      const key = account.accessKey
      const base = ctx.server.baseUrl
      const line = `auth load=1 ${T0}`
      const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`
      // 1.x: p, Basic (any user), Token; 2.x: Token, Bearer.
      for (const [path, headers] of [
        [`/write?u=x&p=${encodeURIComponent(key)}&precision=s`, {}],
        ["/write?precision=s", { authorization: basic("whoever", key) }],
        ["/write/?precision=s", { authorization: `Token ${key}` }],
        ["/api/v2/write?precision=s&org=&bucket=", { authorization: `Token ${key}` }],
        ["/api/v2/write?precision=s", { authorization: `Bearer ${key}` }]
      ] as const) {
        const r = await post(base, path, line, headers)
        expect(r.status, `${path}: ${r.text}`).toBe(204)
      }
      for (const [path, headers] of [
        ["/write", {}],
        ["/write?p=wrong", {}],
        ["/write", { authorization: basic("x", "wrong") }],
        ["/write", { authorization: `Bearer ${key}` }]
      ] as const) {
        const r = await post(base, path, line, headers)
        expect([r.status, JSON.parse(r.text)], path).toEqual([401, { error: "the access key is missing or unknown" }])
      }
      for (const headers of [{}, { authorization: "Token wrong" }, { authorization: basic("x", key) }]) {
        const r = await post(base, "/api/v2/write", line, headers)
        expect([r.status, JSON.parse(r.text)]).toEqual([
          401,
          { code: "unauthorized", message: "the access key is missing or unknown" }
        ])
      }
      const h = { authorization: `Token ${key}` }
      expect(JSON.parse((await post(base, "/write?precision=d", line, h)).text)).toEqual({
        error: 'precision "d" is not one of n, ns, u, us, ms, s, m or h'
      })
      const v2h = await post(base, "/api/v2/write?precision=h", line, h)
      expect([v2h.status, JSON.parse(v2h.text)]).toEqual([
        400,
        { code: "invalid", message: 'precision "h" is not one of ns, us, ms or s' }
      ])
      // 1.x hours and minutes; a timestamp before 1970 or after 2106 is 400.
      expect((await post(base, "/write?precision=h", `auth load=5 ${Math.floor(T0 / 3600)}`, h)).status).toBe(204)
      expect((await post(base, "/write?precision=m", `auth load=6 ${Math.floor(T0 / 60)}`, h)).status).toBe(204)
      expect(JSON.parse((await post(base, "/write?precision=s", "auth load=1 -1", h)).text).error).toMatch(
        /^line 1: timestamp -1 is before 1970/
      )
      expect((await post(base, "/write?precision=s", "auth load=1 4294967296", h)).status).toBe(400)
      const stored = (await points(account, "auth.load")).map((e) => e.ts)
      expect(stored).toContain(Math.floor(T0 / 3600) * 3600)
      expect(stored).toContain(Math.floor(T0 / 60) * 60)
      // gzip (also from curl --data-binary @file.gz), an unknown encoding, corrupt gzip.
      const zipped = await post(base, "/write?precision=s", gzipSync(`auth load=8 ${T0 + 8}`), {
        ...h,
        "content-encoding": "gzip"
      })
      expect(zipped.status, zipped.text).toBe(204)
      expect(await points(account, "auth.load")).toContainEqual({ ts: T0 + 8, point: { number: 8 } })
      const brotli = await post(base, "/api/v2/write", line, { ...h, "content-encoding": "br" })
      expect([brotli.status, JSON.parse(brotli.text).code]).toEqual([400, "invalid"])
      const corrupt = await post(base, "/write", Buffer.from("not gzip at all"), { ...h, "content-encoding": "gzip" })
      expect([corrupt.status, JSON.parse(corrupt.text)]).toEqual([
        400,
        { error: "the request body is not valid gzip data" }
      ])
      // What is not gzip is 400 whatever its last four bytes say as a gzip trailer's size (here more than 10 MiB):
      // a truncated body, text, gzip followed by garbage. Telegraf would split a batch answered 413 and retry.
      const gzipped = gzipSync(`auth load=9 ${T0 + 9}000000000\n`)
      for (const body of [
        gzipped.subarray(0, gzipped.length - 4),
        Buffer.from(`auth load=9 ${T0 + 9}000000000\n`),
        Buffer.concat([gzipped, Buffer.from("garbage!")])
      ]) {
        expect(body.readUInt32LE(body.length - 4)).toBeGreaterThan(10 * 1024 * 1024)
        const gz = { ...h, "content-encoding": "gzip" }
        const v1 = await post(base, "/write?precision=ns", body, gz)
        expect([v1.status, JSON.parse(v1.text)]).toEqual([400, { error: "the request body is not valid gzip data" }])
        const v2 = await post(base, "/api/v2/write?precision=ns", body, gz)
        expect([v2.status, JSON.parse(v2.text)]).toEqual([
          400,
          { code: "invalid", message: "the request body is not valid gzip data" }
        ])
      }
      expect(await points(account, "auth.load")).not.toContainEqual({ ts: T0 + 9, point: { number: 9 } })
      // /ping and /query need no credentials.
      const ping = await ctx.api.fetch("/ping")
      expect([ping.status, ping.headers.get("x-influxdb-version"), ping.text]).toEqual([204, "1.8.10", ""])
      expect((await ctx.api.fetch("/ping", { method: "HEAD" })).status).toBe(204)
      for (const method of ["GET", "POST"]) {
        const q = await ctx.api.fetch("/query?q=CREATE+DATABASE+%22telegraf%22", { method })
        expect([q.status, q.json]).toEqual([200, { results: [{ statement_id: 0 }] }])
      }
    })

    describe("bodies read as InfluxDB 1.x reads them (core's influxDbCases), beside a running InfluxDB 1.6", () => {
      let influx: Influx | undefined
      beforeAll(async () => {
        influx = await startInflux()
      }, 60_000)
      afterAll(async () => {
        await influx?.stop()
      })

      it("each body is refused by both, or stored by both under the same names (but for the deliberate differences)", async () => {
        for (const [k, c] of influxDbCases.entries()) {
          const label = JSON.stringify(c.body)
          const fromInflux = await influxOutcome(influx!, `cases${k}`, c.body)
          // Sorted: InfluxDB lists a measurement's fields by key.
          const sorted = (o: ReadonlyArray<string> | "refused") => (o === "refused" ? o : [...o].sort())
          if (c.influxdbIndexName === undefined) {
            expect(sorted(fromInflux.outcome), label).toEqual(sorted(c.influxdb))
          } else {
            // InfluxDB lists the measurement under another name, with no field: the table says what its parser read.
            expect([fromInflux.outcome, fromInflux.measurements], label).toEqual([[], [c.influxdbIndexName]])
          }
          const expected = c.dashstream ?? c.influxdb
          const declared = expected === "refused" ? [] : expected.filter(isStreamName)
          const account = await ctx.api.setup(Object.fromEntries(declared.map((s) => [s, "number"])))
          const r = await post(ctx.server.baseUrl, "/write?precision=s", c.body, {
            authorization: `Token ${account.accessKey}`
          })
          if (expected === "refused") {
            expect([r.status, JSON.parse(r.text).error], label).toEqual([400, expect.stringMatching(/^line \d+: /)])
            continue
          }
          expect([r.status, r.headers["x-dashstream-skipped"]], `${label}: ${r.text}`).toEqual([
            204,
            String(expected.length - declared.length)
          ])
          for (const stream of declared) expect((await points(account, stream)).length, `${label}: ${stream}`).toBe(1)
        }
      })
    })

    it("a gzip bomb is 413 without the server inflating it", async () => {
      const account = await setup("bomb")
      const headers = { authorization: `Token ${account.accessKey}`, "content-encoding": "gzip" }
      // 512 MiB of zeros in about half a MiB; the same with its trailer saying 100 bytes, so only the bounded
      // inflater stops it.
      const bomb = await gzipBomb(512 * 1024 * 1024)
      const lying = Buffer.from(bomb)
      lying.writeUInt32LE(100, lying.length - 4)
      const pids = ctx.server.pid
      const before = treeRss(pids)
      let peak = before
      const sampler = setInterval(() => (peak = Math.max(peak, treeRss(pids))), 5)
      try {
        for (const [path, body, shape] of [
          ["/write", bomb, { error: expect.stringContaining("larger than 10485760 bytes after decompression") }],
          [
            "/api/v2/write",
            lying,
            { code: "request too large", message: expect.stringContaining("after decompression") }
          ],
          ["/write", lying, { error: expect.stringContaining("after decompression") }]
        ] as const) {
          const r = await post(ctx.server.baseUrl, path, body, headers)
          expect(r.status, r.text).toBe(413)
          expect(JSON.parse(r.text)).toEqual(shape)
        }
      } finally {
        clearInterval(sampler)
      }
      // At most the 10 MiB limit of inflated text, and slack for the process's own churn: never the 512 MiB.
      expect(peak - before).toBeLessThan(40 * 1024 * 1024)
      // A body of 10 MiB after decompression is still read (it has too many lines to be stored, but it is parsed).
      const big = gzipSync(`${"# padding to the limit\n".repeat(455_000)}bomb load=1 ${T0}\n`)
      const accepted = await post(ctx.server.baseUrl, "/write", big, headers)
      expect(accepted.status, accepted.text).toBe(204)
    })
  })
}
