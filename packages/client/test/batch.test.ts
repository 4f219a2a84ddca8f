import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { Dashstream, DashstreamError, OutcomeUnknownError } from "../src/index.js"
import { type Proxy, startProxy } from "./support/proxy.js"
import { account, readRaw, type Served, serve, tempDatabase } from "./support/server.js"

const widgets = { todo: "list", total: "number", places: "usa-map", series: "sparkline" } as const

let server: Served
let db: ReturnType<typeof tempDatabase>
let key: string
let proxy: Proxy

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
  proxy.heads.length = 0
})

/** A batching client through the proxy (which records every request). */
const batching = (batch: { maxDelayMs?: number; maxStreams?: number }) =>
  new Dashstream({ baseUrl: proxy.url, accessKey: key, widgets, batch, retry: { baseDelayMs: 20 } })
const posts = () => proxy.requests.filter((r) => r.startsWith("POST")).length

describe("batching", () => {
  it("gathers pushes into multi-stream requests of at most maxStreams, in order", async () => {
    const ds = batching({ maxDelayMs: 50, maxStreams: 10 })
    await ds.push("todo", { list: [] })
    proxy.requests.length = 0
    const pushes = Array.from({ length: 25 }, (_, i) =>
      i % 5 === 4 ? ds.push("total", { number: i }) : ds.push("todo", { listItem: `item ${i}` })
    )
    await Promise.all(pushes)
    expect(posts()).toBe(3)
    const list = (await ds.latest("todo"))!.point.list.map((i) => i.listItem)
    const expected = Array.from({ length: 25 }, (_, i) => i)
      .filter((i) => i % 5 !== 4)
      .map((i) => `item ${i}`)
      .reverse()
    expect(list).toEqual(expected)
    expect((await readRaw(server.url, key, "total")).map((e) => e.point.number)).toEqual([4, 9, 14, 19, 24])
  })

  it("waits at most maxDelayMs for a batch", async () => {
    const ds = batching({ maxDelayMs: 100 })
    const started = Date.now()
    await ds.push("total", 1)
    const elapsed = Date.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(90)
    expect(elapsed).toBeLessThan(2_000)
    expect(posts()).toBe(1)
  })

  it("a bad point fails alone; the others in its batch are stored", async () => {
    const ds = batching({ maxDelayMs: 50 })
    await ds.clear("places")
    proxy.requests.length = 0
    const results = await Promise.allSettled([
      ds.push("places", { latitude: 1, longitude: 1 }),
      ds.push("places", { latitude: 100, longitude: 1 }),
      ds.push("places", { latitude: 2, longitude: 2 })
    ])
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"])
    const error = (results[1] as PromiseRejectedResult).reason
    expect(error).toBeInstanceOf(DashstreamError)
    expect(error).toMatchObject({ status: 400, code: "invalid_point" })
    expect((error as DashstreamError).path).toMatch(/^point\.latitude/)
    expect((await readRaw(server.url, key, "places")).map((e) => e.point.latitude)).toEqual([1, 2])
    expect(posts()).toBe(2)
  })

  it("an unknown stream fails alone too", async () => {
    const untyped = new Dashstream({ baseUrl: server.url, accessKey: key, batch: { maxDelayMs: 20 } })
    const results = await Promise.allSettled([untyped.push("total", 5), untyped.push("ghost", 1)])
    expect(results[0].status).toBe("fulfilled")
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "stream_not_found", path: "streamName" })
  })

  it("after an ambiguous failure, non-idempotent pushes are reported and idempotent ones resent", async () => {
    const ds = batching({ maxDelayMs: 50 })
    await ds.push("total", 100)
    proxy.requests.length = 0
    proxy.fail("reset")
    const results = await Promise.allSettled([
      ds.push("total", { delta: 1 }),
      ds.push("series", { number: 7, timestamp: 1_700_000_000 })
    ])
    expect(results[0].status).toBe("rejected")
    expect((results[0] as PromiseRejectedResult).reason).toBeInstanceOf(OutcomeUnknownError)
    expect((results[0] as PromiseRejectedResult).reason.streams).toEqual(["total"])
    expect(results[1].status).toBe("fulfilled")
    expect(posts()).toBe(2)
    // The batch reached the server before the reset: the delta is stored once, the timestamped point once.
    expect((await ds.latest("total"))?.point.number).toBe(101)
    expect((await readRaw(server.url, key, "series")).filter((e) => e.ts === 1_700_000_000)).toHaveLength(1)
  })

  it("close() flushes what waits and refuses further pushes", async () => {
    const ds = batching({ maxDelayMs: 60_000 })
    const before = (await readRaw(server.url, key, "total")).length
    const pending = [ds.push("total", 1), ds.push("total", 2)]
    await new Promise((r) => setTimeout(r, 50))
    expect(posts()).toBe(0)
    await ds.close()
    await Promise.all(pending)
    expect(posts()).toBe(1)
    expect(proxy.heads[0]).toContain("POST /customSend")
    expect(await readRaw(server.url, key, "total")).toHaveLength(before + 2)
    await expect(ds.push("total", 3)).rejects.toThrow(/closed/)
  })
})
