import { type AddressInfo, createServer } from "node:net"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Dashstream, DashstreamError, NetworkError, OutcomeUnknownError } from "../src/index.js"
import { type Proxy, startProxy } from "./support/proxy.js"
import { account, readRaw, type Served, serve, tempDatabase } from "./support/server.js"

const widgets = {
  total: "number",
  series: "sparkline",
  board: "leaderboard",
  todo: "list",
  scores: "table",
  status: "label"
} as const

let server: Served
let db: ReturnType<typeof tempDatabase>
let key: string
let proxy: Proxy

/** A loopback port nothing listens on. */
const freePort = async (): Promise<number> => {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r))
  const port = (s.address() as AddressInfo).port
  await new Promise((r) => s.close(r))
  return port
}

const fast = { retries: 3, baseDelayMs: 20, maxDelayMs: 100 }

beforeAll(async () => {
  db = tempDatabase()
  server = await serve(db.file)
  key = (await account(server.url, widgets)).accessKey
  proxy = await startProxy(server.port)
})

afterAll(async () => {
  await proxy?.close()
  await server?.stop()
  db?.remove()
})

beforeEach(() => {
  proxy.requests.length = 0
})

const viaProxy = (timeoutMs = 5_000) =>
  new Dashstream({ baseUrl: proxy.url, accessKey: key, widgets, retry: fast, timeoutMs })
const posts = () => proxy.requests.filter((r) => r.startsWith("POST")).length

describe("ambiguous failures: the request reached the server, the answer was lost", () => {
  it("a delta is not retried after a connection reset: OutcomeUnknownError, stored exactly once", async () => {
    const ds = viaProxy()
    await ds.push("total", { number: 10 })
    proxy.requests.length = 0
    proxy.fail("reset")
    const error = await ds.push("total", { delta: 5 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OutcomeUnknownError)
    expect(error).toMatchObject({ kind: "outcome_unknown", streams: ["total"] })
    expect(posts()).toBe(1)
    const stored = await readRaw(server.url, key, "total")
    expect(stored.map((e) => e.point.number)).toEqual([10, 15])
  })

  it("leaderboardItem, listItem, tableRow and points without timestamp are not retried either", async () => {
    const ds = viaProxy()
    await ds.push("scores", { table: [["Name", "Score"]] })
    const cases = [
      ["board", { leaderboardItem: { name: "Ann", value: 1 } }],
      ["todo", { listItem: "a" }],
      ["scores", { tableRow: ["Ann", 1] }],
      ["status", { label: "up" }],
      ["series", 7],
      ["series", [{ number: 1 }]]
    ] as const
    for (const [stream, point] of cases) {
      const before = (await readRaw(server.url, key, stream)).length
      proxy.requests.length = 0
      proxy.fail("reset")
      await expect(ds.push(stream, point as never), `${stream} ${JSON.stringify(point)}`).rejects.toBeInstanceOf(
        OutcomeUnknownError
      )
      expect(posts()).toBe(1)
      // The array of one element without timestamp is rejected by the server (400) and stores nothing.
      const expected = Array.isArray(point) ? before : before + 1
      expect((await readRaw(server.url, key, stream)).length, stream).toBe(expected)
    }
  })

  it("a timestamped point is retried after resets and stored once", async () => {
    const ds = viaProxy()
    const before = (await readRaw(server.url, key, "total")).length
    proxy.fail("reset", 2)
    await ds.push("total", { number: 99, timestamp: 1_700_000_000 })
    expect(posts()).toBe(3)
    const stored = await readRaw(server.url, key, "total")
    expect(stored).toHaveLength(before + 1)
    expect(stored.filter((e) => e.ts === 1_700_000_000)).toEqual([{ ts: 1_700_000_000, point: { number: 99 } }])
  })

  it("a timestamped array is retried; pushMany is retried only if every part is safe", async () => {
    const ds = viaProxy()
    proxy.fail("reset")
    await ds.push("series", [
      { number: 1, timestamp: 1_500_000_000 },
      { number: 2, timestamp: 1_500_000_001 }
    ])
    expect(posts()).toBe(2)
    proxy.requests.length = 0
    proxy.fail("reset")
    await ds.pushMany([
      { streamName: "series", point: { number: 3, timestamp: 1_500_000_002 } },
      { streamName: "series", command: "clear" }
    ])
    expect(posts()).toBe(2)
    proxy.requests.length = 0
    proxy.fail("reset")
    const error = await ds
      .pushMany([
        { streamName: "series", point: { number: 3, timestamp: 1_500_000_002 } },
        { streamName: "total", point: { delta: 1 } }
      ])
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(OutcomeUnknownError)
    expect((error as OutcomeUnknownError).streams).toEqual(["series", "total"])
    expect(posts()).toBe(1)
  })

  it("a timeout is ambiguous too: a delta is reported, a timestamped point retried", async () => {
    const ds = viaProxy(300)
    const before = await ds.latest("total")
    proxy.fail("hold")
    const started = Date.now()
    await expect(ds.push("total", { delta: 1 })).rejects.toBeInstanceOf(OutcomeUnknownError)
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    expect(posts()).toBe(1)
    expect((await ds.latest("total"))?.point.number).toBe(before!.point.number + 1)
    proxy.requests.length = 0
    proxy.fail("hold")
    await ds.push("total", { number: 5, timestamp: 1_700_000_100 })
    expect(posts()).toBe(2)
  })

  it("a gateway's 502 after forwarding is ambiguous", async () => {
    const ds = viaProxy()
    const before = (await readRaw(server.url, key, "status")).length
    proxy.fail("bad-gateway")
    await expect(ds.push("status", { label: "x" })).rejects.toBeInstanceOf(OutcomeUnknownError)
    expect(posts()).toBe(1)
    expect(await readRaw(server.url, key, "status")).toHaveLength(before + 1)
    proxy.requests.length = 0
    proxy.fail("bad-gateway")
    await ds.push("total", { number: 6, timestamp: 1_700_000_200 })
    expect(posts()).toBe(2)
  })

  it("reads are always retried", async () => {
    const ds = viaProxy()
    proxy.fail("reset", 2)
    expect((await ds.latest("total"))?.point).toBeDefined()
    expect(proxy.requests.filter((r) => r.startsWith("GET"))).toHaveLength(3)
  })

  it("gives up with NetworkError when retries run out on a safe push", async () => {
    const ds = viaProxy()
    proxy.fail("reset", 4)
    const error = await ds.push("total", { number: 1, timestamp: 1_700_000_300 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NetworkError)
    expect((error as NetworkError).attempts).toBe(4)
    expect(posts()).toBe(4)
  })
})

describe("failures that stored nothing are retried for every push", () => {
  it("503 unavailable: a delta is retried after Retry-After and stored once", async () => {
    const ds = viaProxy()
    const before = (await ds.latest("total"))!.point.number
    proxy.requests.length = 0
    proxy.fail("unavailable")
    const started = Date.now()
    await ds.push("total", { delta: 3 })
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000)
    expect(posts()).toBe(2)
    expect((await ds.latest("total"))?.point.number).toBe(before + 3)
  })

  it("connection refused (nothing sent): a delta is retried until the server is back", async () => {
    const ds = new Dashstream({
      baseUrl: server.url,
      accessKey: key,
      widgets,
      retry: { retries: 50, baseDelayMs: 20, maxDelayMs: 100 }
    })
    const before = (await ds.latest("total"))!.point.number
    const port = server.port
    await server.stop()
    // Let the client's pooled keep-alive connection see the server's close: a push written on a connection that the
    // server closes at that very moment is ambiguous (it may have been read), and is rightly not retried.
    await new Promise((r) => setTimeout(r, 200))
    const pushed = ds.push("total", { delta: 2 }).then(
      () => undefined,
      (e: unknown) => e
    )
    await new Promise((r) => setTimeout(r, 300))
    server = await serve(db.file, [], port)
    expect(await pushed).toBeUndefined()
    expect((await ds.latest("total"))?.point.number).toBe(before + 2)
    await proxy.close()
    proxy = await startProxy(server.port)
  })

  it("without a server at all, a delta fails with NetworkError (not sent), not OutcomeUnknownError", async () => {
    const port = await freePort()
    const ds = new Dashstream({
      baseUrl: `http://127.0.0.1:${port}`,
      accessKey: key,
      retry: { retries: 2, baseDelayMs: 1 }
    })
    const error = await ds.push("total", { delta: 1 }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(NetworkError)
    expect((error as NetworkError).attempts).toBe(3)
  })
})

describe("429 rate_limited", () => {
  let limited: Served
  let limitedDb: ReturnType<typeof tempDatabase>
  let limitedKey: string

  beforeAll(async () => {
    limitedDb = tempDatabase()
    limited = await serve(limitedDb.file, ["--rate-limit", "1"])
    limitedKey = (await account(limited.url, { total: "number" })).accessKey
  })

  afterAll(async () => {
    await limited?.stop()
    limitedDb?.remove()
  })

  it("retries after Retry-After, also a delta (a 429 stores nothing), and stores it once", async () => {
    const statuses: Array<number> = []
    const ds = new Dashstream({
      baseUrl: limited.url,
      accessKey: limitedKey,
      widgets: { total: "number" },
      retry: { baseDelayMs: 10 },
      fetch: async (input, init) => {
        const res = await fetch(input, init)
        statuses.push(res.status)
        return res
      }
    })
    await ds.push("total", { number: 1 })
    const started = Date.now()
    await ds.push("total", { delta: 1 })
    const elapsed = Date.now() - started
    expect(statuses).toEqual([200, 429, 200])
    expect(elapsed).toBeGreaterThanOrEqual(1_000)
    await new Promise((r) => setTimeout(r, 1_100))
    expect((await readRaw(limited.url, limitedKey, "total")).map((e) => e.point.number)).toEqual([1, 2])
  })

  it("without retries, throws DashstreamError rate_limited with retryAfter", async () => {
    await new Promise((r) => setTimeout(r, 1_100))
    const ds = new Dashstream({ baseUrl: limited.url, accessKey: limitedKey, retry: false })
    await ds.push("total", 1)
    const error = await ds.push("total", 2).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DashstreamError)
    expect(error).toMatchObject({ status: 429, code: "rate_limited" })
    expect((error as DashstreamError).retryAfter).toBeGreaterThanOrEqual(1)
  })

  it("does not wait for a Retry-After longer than maxRetryAfterMs", async () => {
    await new Promise((r) => setTimeout(r, 1_100))
    const ds = new Dashstream({ baseUrl: limited.url, accessKey: limitedKey, retry: { maxRetryAfterMs: 500 } })
    await ds.push("total", 1)
    const started = Date.now()
    await expect(ds.push("total", 2)).rejects.toMatchObject({ code: "rate_limited" })
    expect(Date.now() - started).toBeLessThan(500)
  })
})
