import { StorageError, StorageUnavailable } from "@dashstream/core"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { latestRead } from "../src/internal/readLane.js"
import { parseExposition, valueOf } from "./support/exposition.js"
import { push, setupAccount, startServer, type TestServer } from "./support/server.js"

// The direct lane of latest-entry reads must answer exactly as the export read of the HttpApi lane does.
// A URL ending in `?` has an empty query: the same read, but the direct lane leaves it to the HttpApi lane. So every
// case is asked both ways and the two answers are compared, status, headers and body.

const answer = async (url: string) => {
  const res = await fetch(url)
  const headers: Record<string, string> = {}
  for (const name of ["content-type", "content-length", "cache-control", "retry-after", "transfer-encoding"]) {
    const value = res.headers.get(name)
    if (value !== null) headers[name] = value
  }
  return { status: res.status, headers, body: await res.text() }
}

describe("latest-entry reads on the direct lane", () => {
  let server: TestServer
  let key: string

  beforeAll(async () => {
    server = await startServer({ logRequests: true })
    key = (
      await setupAccount(server, [
        ["n", "number"],
        ["empty", "number"],
        ["feed", "text-feed"]
      ])
    ).accessKey
    for (const body of [
      { accessKey: key, streamName: "n", point: { number: 1, timestamp: 1_700_000_000 } },
      { accessKey: key, streamName: "n", point: { number: 2, timestamp: 1_700_000_000.25 } },
      { accessKey: key, streamName: "feed", point: { title: "t", msg: "<b>é</b> \u2028" } }
    ]) {
      assert.strictEqual((await push(server, body)).status, 200)
    }
  })
  afterAll(() => server.close())

  it("takes only plain GETs of /api/v2/<KEY>/datastream/<STREAM>, without a query or an escape", () => {
    assert.deepStrictEqual(latestRead("GET", "/api/v2/k/datastream/s"), { accessKey: "k", streamName: "s" })
    assert.deepStrictEqual(latestRead("GET", "/api/v2/k/datastream/s/"), { accessKey: "k", streamName: "s" })
    for (const [method, url] of [
      ["HEAD", "/api/v2/k/datastream/s"],
      ["POST", "/api/v2/k/datastream/s"],
      ["GET", "/api/v2/k/datastream/s?since=0"],
      ["GET", "/api/v2/k/datastream/s?"],
      ["GET", "/api/v2/k/datastream/s;x"],
      ["GET", "/api/v2/k/datastream/s#x"],
      ["GET", "/api/v2/k/datastream/my%20stream"],
      ["GET", "/api/v2/k/datastream/s/events"],
      ["GET", "/api/v2/k/datastream/s//"],
      ["GET", "/api/v2/k/datastream/"],
      ["GET", "/api/v2//datastream/s"],
      ["GET", "/api/v2/k/datastream"],
      ["GET", "/API/v2/k/datastream/s"],
      ["GET", "/api/v2/k/Datastream/s"],
      ["GET", `/api/v2/k/datastream/${"s".repeat(4097)}`],
      ["GET", "http://host/api/v2/k/datastream/s"]
    ] as const) {
      assert.isUndefined(latestRead(method, url), `${method} ${url}`)
    }
  })

  it("answers as the HttpApi lane does: 200 with an entry, empty, 404, 403, a trailing slash", async () => {
    for (const path of [
      `/api/v2/${key}/datastream/n`,
      `/api/v2/${key}/datastream/feed`,
      `/api/v2/${key}/datastream/empty`,
      `/api/v2/${key}/datastream/n/`,
      `/api/v2/${key}/datastream/ghost`,
      `/api/v2/ds_not_a_key/datastream/n`
    ]) {
      const direct = await answer(`${server.url}${path}`)
      const api = await answer(`${server.url}${path}?`)
      assert.deepStrictEqual(direct, api, path)
    }
    const latest = await answer(`${server.url}/api/v2/${key}/datastream/n`)
    assert.strictEqual(latest.body, '{"message":"Success!","data":[{"ts":1700000000.25,"point":{"number":2}}]}')
    assert.strictEqual(latest.headers["cache-control"], "no-store")
    assert.strictEqual(latest.headers["content-length"], String(Buffer.byteLength(latest.body)))
  })

  it("answers storage failures as the HttpApi lane does (503, 500 logged without the key)", async () => {
    for (const fault of [
      new StorageUnavailable({ cause: new Error("pool exhausted") }),
      new StorageError({ cause: new Error(`SQLITE_ERROR near ${"SELECT"}`) })
    ]) {
      server.faults.read = fault
      const direct = await answer(`${server.url}/api/v2/${key}/datastream/n`)
      const api = await answer(`${server.url}/api/v2/${key}/datastream/n?`)
      server.faults.read = undefined
      assert.deepStrictEqual(direct, api)
    }
    assert.strictEqual(
      server.logs.filter((line) => line.includes("internal error answering GET /api/v2/<redacted>/datastream/n"))
        .length,
      2
    )
    // The 503 in one line, with the cause under the StorageUnavailable and no stack.
    assert.deepStrictEqual(
      server.logs.filter((line) => line.includes("answered 503")),
      ["WARN GET /api/v2/:accessKey/datastream/:streamName answered 503 unavailable: pool exhausted"]
    )
    for (const line of server.logs) assert.notInclude(line, key)
  })

  it("logs each read once, with the key redacted, and counts it under the route template", async () => {
    const route = "/api/v2/:accessKey/datastream/:streamName"
    const counts = async () => {
      const metrics = parseExposition(await (await fetch(`${server.url}/metrics`)).text())
      return [200, 404].map((status) =>
        valueOf(metrics, "dashstream_http_requests_total", { route, method: "GET", status: String(status) })
      )
    }
    const before = await counts()
    const logged = server.logs.length
    const path = `/api/v2/${key}/datastream/n`
    for (let i = 0; i < 3; i++) assert.strictEqual((await fetch(`${server.url}${path}`)).status, 200)
    assert.strictEqual((await fetch(`${server.url}/api/v2/${key}/datastream/ghost`)).status, 404)
    const lines = server.logs.slice(logged).filter((line) => line.includes("/datastream/"))
    assert.strictEqual(lines.length, 4)
    assert.isTrue(lines.every((line) => line.includes("GET /api/v2/<redacted>/datastream/")))
    const after = await counts()
    assert.deepStrictEqual([after[0]! - before[0]!, after[1]! - before[1]!], [3, 1])
  })
})

describe("latest-entry reads on the direct lane, rate limited", () => {
  it("spends the key's budget like any read and answers 429 with Retry-After", async () => {
    const server = await startServer({ rateLimit: 2 })
    try {
      const { accessKey } = await setupAccount(server, [["n", "number"]])
      const path = `${server.url}/api/v2/${accessKey}/datastream/n`
      const statuses = []
      for (let i = 0; i < 3; i++) statuses.push((await answer(path)).status)
      const limited = await answer(path)
      assert.deepStrictEqual(statuses, [200, 200, 429])
      assert.strictEqual(limited.status, 429)
      assert.strictEqual(limited.headers["retry-after"], "1")
      assert.strictEqual(JSON.parse(limited.body).error.code, "rate_limited")
    } finally {
      await server.close()
    }
  })
})
