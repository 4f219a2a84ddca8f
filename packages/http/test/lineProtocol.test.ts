import type { IncomingMessage } from "node:http"
import { gzipSync } from "node:zlib"
import { assert, describe, it } from "@effect/vitest"
import { type AccountId, StorageUnavailable } from "@dashstream/core"
import { Effect, Logger, LogLevel } from "effect"
import { gunzipBounded } from "../src/internal/gunzip.js"
import { v1AccessKey, v2AccessKey } from "../src/internal/lineProtocolRoutes.js"
import { makeRouteTable } from "../src/internal/routeTable.js"
import { makeSkippedLog } from "../src/internal/skippedLog.js"
import { setupAccount, startServer, type TestServer } from "./support/server.js"

/** The pieces of the InfluxDB routes (docs/api.md section 13.1) that need no server: matching, credentials, gzip, skip log. */

const request = (url: string, authorization?: string): IncomingMessage =>
  ({ url, headers: authorization === undefined ? {} : { authorization } }) as unknown as IncomingMessage

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`

describe("InfluxDB routes", () => {
  it("match /write and /api/v2/write (POST, trailing slash and query allowed), /ping and /query", () => {
    const routes = makeRouteTable(false)
    const template = (method: string, url: string) => {
      const route = routes.match(method, url)
      return route?.lane === "ingest" ? route.ingest!.template : undefined
    }
    const influxProbe = (method: string, url: string) => {
      const route = routes.match(method, url)
      return route?.lane === "probe" ? route.path.slice(1) : undefined
    }
    assert.strictEqual(template("POST", "/write"), "/write")
    assert.strictEqual(template("POST", "/write/?db=x"), "/write")
    assert.strictEqual(template("POST", "/write?db=x&precision=s"), "/write")
    assert.strictEqual(template("POST", "/api/v2/write?org=o&bucket=b"), "/api/v2/write")
    for (const [method, url] of [
      ["GET", "/write"],
      ["POST", "/writes"],
      ["POST", "/write/x"],
      ["POST", "/api/v2/writes"],
      ["POST", "/api/v2/write/x"]
    ] as const) {
      assert.isUndefined(template(method, url), `${method} ${url}`)
    }
    assert.strictEqual(influxProbe("GET", "/ping"), "ping")
    assert.strictEqual(influxProbe("HEAD", "/ping?verbose=true"), "ping")
    assert.strictEqual(influxProbe("GET", "/query?q=x"), "query")
    assert.strictEqual(influxProbe("POST", "/query"), "query")
    assert.isUndefined(influxProbe("POST", "/ping"))
    assert.isUndefined(influxProbe("DELETE", "/query"))
    assert.isUndefined(influxProbe("GET", "/pings"))
  })

  it("find the access key where each API version puts it", () => {
    assert.strictEqual(v1AccessKey(request("/write?u=me&p=ds_key")), "ds_key")
    assert.strictEqual(v1AccessKey(request("/write?p=ds%2Bkey")), "ds+key")
    assert.strictEqual(v1AccessKey(request("/write", basic("anyone", "ds_key:with:colons"))), "ds_key:with:colons")
    assert.strictEqual(v1AccessKey(request("/write", "Token ds_key")), "ds_key")
    assert.strictEqual(v1AccessKey(request("/write", "token  ds_key ")), "ds_key")
    // The query's p comes first; a Bearer token is not a 1.x credential.
    assert.strictEqual(v1AccessKey(request("/write?p=ds_query", "Token ds_header")), "ds_query")
    assert.isUndefined(v1AccessKey(request("/write", "Bearer ds_key")))
    assert.isUndefined(v1AccessKey(request("/write?p=")))
    assert.isUndefined(v1AccessKey(request("/write", "Basic bm9jb2xvbg==")))
    assert.strictEqual(v2AccessKey(request("/api/v2/write", "Token ds_key")), "ds_key")
    assert.strictEqual(v2AccessKey(request("/api/v2/write", "Bearer ds_key")), "ds_key")
    assert.isUndefined(v2AccessKey(request("/api/v2/write?p=ds_key")))
    assert.isUndefined(v2AccessKey(request("/api/v2/write", basic("u", "ds_key"))))
    assert.isUndefined(v2AccessKey(request("/api/v2/write", "Tokends_key")))
  })
})

describe("gunzipBounded", () => {
  const limit = 1024 * 1024

  it("inflates a body up to the limit, several members included", () => {
    const text = "m v=1\n".repeat(1000)
    assert.strictEqual((gunzipBounded(gzipSync(text), limit) as Buffer).toString(), text)
    const exact = Buffer.alloc(limit, 0x61)
    assert.strictEqual((gunzipBounded(gzipSync(exact), limit) as Buffer).length, limit)
    const two = Buffer.concat([gzipSync("a v=1\n"), gzipSync("b v=2\n")])
    assert.strictEqual((gunzipBounded(two, limit) as Buffer).toString(), "a v=1\nb v=2\n")
  })

  it("refuses a body that inflates past the limit, whatever its trailer says", () => {
    const over = gzipSync(Buffer.alloc(limit + 1))
    assert.strictEqual(gunzipBounded(over, limit), "too large")
    const bomb = gzipSync(Buffer.alloc(64 * limit))
    bomb.writeUInt32LE(10, bomb.length - 4)
    assert.strictEqual(gunzipBounded(bomb, limit), "too large")
  })

  it("says corrupt for what is not gzip", () => {
    assert.strictEqual(gunzipBounded(Buffer.from("m v=1"), limit), "corrupt")
    assert.strictEqual(gunzipBounded(gzipSync("m v=1").subarray(0, 12), limit), "corrupt")
    assert.strictEqual(gunzipBounded(Buffer.alloc(0), limit), "corrupt")
  })

  it("says corrupt, not too large, whatever the last four bytes of a body that is not gzip say", () => {
    // Each body ends in four bytes that, read as a gzip trailer's size, name far more than the limit.
    const body = "cpu,host=web1 usage_idle=97.5 1700000000000000000\n"
    const zipped = gzipSync(body)
    const cases = {
      plain: Buffer.from(body),
      "truncated (its checksum last)": zipped.subarray(0, zipped.length - 4),
      "trailing garbage": Buffer.concat([zipped, Buffer.from("garbage!")]),
      "a second member cut short": Buffer.concat([zipped, zipped.subarray(0, 10), Buffer.from("zzzz")])
    }
    for (const [name, bytes] of Object.entries(cases)) {
      assert.isAbove(bytes.readUInt32LE(bytes.length - 4), limit, name)
      assert.strictEqual(gunzipBounded(bytes, limit), "corrupt", name)
    }
    // Zero padding after the last member is not data (gzip(1) reads it too).
    assert.strictEqual((gunzipBounded(Buffer.concat([zipped, Buffer.alloc(8)]), limit) as Buffer).toString(), body)
  })
})

describe("makeSkippedLog", () => {
  const one = "0b7c1f52-6a3e-4c55-9d1e-2f8a4b6c9e01" as AccountId
  const other = "5d2e8a10-3f4b-4c6d-8e9f-a0b1c2d3e4f5" as AccountId
  const of = (accountId: AccountId, ...names: Array<string>) => ({ accountId, names })

  /** The messages `effects` log, at which level. */
  const logged = (effects: ReadonlyArray<Effect.Effect<void> | undefined>) => {
    const lines: Array<[LogLevel.LogLevel, string]> = []
    const logger = Logger.make(({ logLevel, message }) => void lines.push([logLevel, String(message)]))
    for (const effect of effects) {
      if (effect !== undefined)
        Effect.runSync(effect.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger))))
    }
    return lines
  }

  it.effect("logs each skipped stream name at most once a minute per account, only the names not logged lately", () =>
    Effect.sync(() => {
      const log = makeSkippedLog()
      assert.isDefined(log("/write", of(one, "a.x", "b.y")))
      assert.isUndefined(log("/write", of(one, "b.y", "a.x")))
      assert.isDefined(log("/api/v2/write", of(one, "a.x", "c.z")))
      assert.isUndefined(log("/write", of(one, "c.z")))
      assert.isUndefined(log("/write", of(one)))
      // Another account sending the same names is logged on its own.
      assert.isDefined(log("/write", of(other, "a.x")))
      assert.isUndefined(log("/write", of(other, "a.x")))
    })
  )

  it.effect("names the account by its id in each line, and only that account's fresh names", () =>
    Effect.sync(() => {
      const log = makeSkippedLog()
      const lines = logged([log("/write", of(one, "a.x", "b.y")), log("/write", of(other, "b.y", "c.z"))])
      assert.strictEqual(lines.length, 2)
      assert.include(lines[0]![1], `not widgets of account ${one} `)
      assert.include(lines[0]![1], '"a.x", "b.y"')
      assert.include(lines[1]![1], `not widgets of account ${other} `)
      assert.include(lines[1]![1], '"b.y", "c.z"')
      assert.notInclude(lines[1]![1], one)
    })
  )

  it.effect("logs at the info level, the default, and a name again once a minute has passed", () =>
    Effect.sync(() => {
      let clock = 1_000
      const log = makeSkippedLog(() => clock)
      const lines = logged([log("/write", of(one, "cpu.usage_idle{host=web1}"))])
      assert.strictEqual(lines.length, 1)
      assert.strictEqual(lines[0]![0], LogLevel.Info)
      assert.include(lines[0]![1], '"cpu.usage_idle{host=web1}"')
      clock += 59_999
      assert.isUndefined(log("/write", of(one, "cpu.usage_idle{host=web1}")))
      clock += 1
      assert.isDefined(log("/write", of(one, "cpu.usage_idle{host=web1}")))
    })
  )
})

describe("InfluxDB writes on a server: rate limit, storage down, a bug", () => {
  const write = (server: TestServer, path: string, key: string, body: string) =>
    fetch(`${server.url}${path}`, { method: "POST", headers: { authorization: `Token ${key}` }, body })

  it("answer 429 with Retry-After (a request counts once), 503 and 500 in each API's shape", async () => {
    const server = await startServer({ rateLimit: 2 })
    try {
      const { accessKey } = await setupAccount(server, [["m.v", "number"]])
      // One request of many lines and fields counts once against --rate-limit.
      const many = Array.from({ length: 100 }, (_, i) => `m v=${i},w=${i}`).join("\n")
      assert.strictEqual((await write(server, "/write", accessKey, many)).status, 204)
      assert.strictEqual((await write(server, "/api/v2/write", accessKey, many)).status, 204)
      for (const [path, body] of [
        ["/write", { error: "too many requests for this access key; retry in 1 s" }],
        ["/api/v2/write", { code: "too many requests", message: "too many requests for this access key; retry in 1 s" }]
      ] as const) {
        const res = await write(server, path, accessKey, "m v=1")
        assert.deepStrictEqual([res.status, await res.json()], [429, body])
        assert.strictEqual(res.headers.get("retry-after"), "1")
      }
    } finally {
      await server.close()
    }
    const down = await startServer()
    try {
      const { accessKey } = await setupAccount(down, [["m.v", "number"]])
      down.faults.write = new StorageUnavailable({ cause: new Error(`connect ECONNREFUSED ${accessKey}`) })
      const unavailable = "storage is unavailable; nothing was stored, retry later"
      const v1 = await write(down, "/write", accessKey, "m v=1")
      assert.deepStrictEqual([v1.status, await v1.json()], [503, { error: unavailable }])
      const v2 = await write(down, "/api/v2/write", accessKey, "m v=1")
      assert.deepStrictEqual([v2.status, await v2.json()], [503, { code: "unavailable", message: unavailable }])
      down.faults.write = undefined
      down.faults.writeDefect = new Error(`boom ${accessKey}`)
      const bug = await write(down, "/api/v2/write", accessKey, "m v=1")
      assert.deepStrictEqual(
        [bug.status, await bug.json()],
        [500, { code: "internal error", message: "internal server error" }]
      )
      down.faults.writeDefect = undefined
      assert.strictEqual((await write(down, "/write", accessKey, "m v=2")).status, 204)
      // The access key never reaches the log, though the causes logged quote it.
      assert.notInclude(down.logs.join("\n"), accessKey)
    } finally {
      await down.close()
    }
  })
})
