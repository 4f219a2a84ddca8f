/**
 * docs/api.md section 13.1, InfluxDB line protocol, against the real `dashstream serve` on every backend: retried
 * batches, skipped fields, credentials, precision and encodings as each API version answers them, a gzip bomb, and the
 * bodies of core's `influxDbCases` (escapes, line ends, odd bytes) sent to the server and to a running InfluxDB 1.6
 * (`influxd`, installed by the global setup when missing): both must store the same fields under the same names, or
 * both refuse them, except for the table's deliberate differences.
 */
import { gzipSync } from "node:zlib"
import { isStreamName } from "@dashstream/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Influx, startInflux } from "../../../../bench/push/influx.js"
import { influxDbCases } from "../../../core/test/influxDbCases.js"
import { parseExposition, valueOf } from "../../../http/test/support/exposition.js"
import { type Account, backends, expectUnchanged, suiteName, testWorkers, useServer } from "./harness.js"
import { gzipBomb, influxOutcome, lineProtocolAccount, post, T0, treeRss } from "./lineprotocolSupport.js"

for (const backend of backends) {
  describe(suiteName("InfluxDB line protocol (docs/api.md section 13.1)", backend), () => {
    // No --log-skipped: skipped names are logged by default.
    const ctx = useServer(backend)

    const setup = (prefix: string): Promise<Account> => lineProtocolAccount(ctx.api, prefix)
    const points = (account: Account, stream: string) => ctx.api.entries(account.accessKey, stream)

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

    it("counts skipped field values in X-Dashstream-Skipped and on /metrics, and logs skipped names once per account", async () => {
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
      expect(lines[0]).toContain(`not widgets of account ${account.id} `)
      // Per account: another account skipping the same names within the minute is logged too, naming its own id.
      const other = await setup("skip")
      await post(ctx.server.baseUrl, `/write?p=${other.accessKey}`, body)
      await expect
        .poll(() =>
          ctx.server
            .output()
            .split("\n")
            .filter((line) => line.includes(`account ${other.id} `))
        )
        .toEqual([expect.stringContaining("skip.unknown_a{host=web1}")])
      expect(ctx.server.output()).not.toContain(account.accessKey)
      expect(ctx.server.output()).not.toContain(other.accessKey)
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
