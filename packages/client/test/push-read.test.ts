import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Dashstream, DashstreamError, type Entry } from "../src/index.js"
import { account, readRaw, type Served, serve, tempDatabase } from "./support/server.js"

const widgets = {
  revenue: "number",
  visits: "sparkline",
  board: "leaderboard",
  todo: "list",
  scores: "table",
  places: "world-map",
  status: "label"
} as const

let server: Served
let db: ReturnType<typeof tempDatabase>
let key: string
let ds: Dashstream<typeof widgets>

beforeAll(async () => {
  db = tempDatabase()
  server = await serve(db.file)
  key = (await account(server.url, widgets)).accessKey
  ds = new Dashstream({ baseUrl: server.url, accessKey: key, widgets })
})

afterAll(async () => {
  await server?.stop()
  db?.remove()
})

const all = async <T>(iterable: AsyncIterable<T>): Promise<Array<T>> => {
  const out: Array<T> = []
  for await (const x of iterable) out.push(x)
  return out
}

describe("push", () => {
  it("stores a number, then a delta, with prefix carried over", async () => {
    await ds.push("revenue", { number: 42, prefix: "$" })
    await ds.push("revenue", { delta: 8 })
    const latest = await ds.latest("revenue")
    expect(latest?.point).toEqual({ number: 50, prefix: "$" })
    expect(typeof latest?.ts).toBe("number")
    expect(await readRaw(server.url, key, "revenue")).toHaveLength(2)
  })

  it("stores leaderboard items, list items and table rows as the whole resulting collection", async () => {
    await ds.push("board", { leaderboard: [{ name: "Ann", value: 3 }] })
    await ds.push("board", { leaderboardItem: { name: "Bob", value: 9 } })
    expect((await ds.latest("board"))?.point).toEqual({
      leaderboard: [
        { name: "Bob", value: 9 },
        { name: "Ann", value: 3 }
      ]
    })
    await ds.push("todo", { list: [{ listItem: "a" }] })
    await ds.push("todo", { listItem: "b" })
    expect((await ds.latest("todo"))?.point).toEqual({ list: [{ listItem: "b" }, { listItem: "a" }] })
    await ds.push("scores", { table: [["Name", "Score"]] })
    await ds.push("scores", { tableRow: ["Ann", 12] })
    expect((await ds.latest("scores"))?.point).toEqual({
      table: [
        ["Name", "Score"],
        ["Ann", "12"]
      ]
    })
  })

  it("stores an array push as one entry per element", async () => {
    await ds.push("visits", [
      { number: 1, timestamp: 1_700_000_000 },
      { number: 2, timestamp: 1_700_000_060.5 }
    ])
    expect(await all(ds.read("visits"))).toEqual([
      { ts: 1_700_000_000, point: { number: 1 } },
      { ts: 1_700_000_060.5, point: { number: 2 } }
    ])
  })

  it("pushMany sends one multi-stream request, all or nothing", async () => {
    await ds.pushMany([
      { streamName: "status", point: { label: "one" } },
      { streamName: "revenue", point: { number: 7 } },
      { streamName: "status", point: { label: "two" } }
    ])
    expect((await ds.latest("status"))?.point).toEqual({ label: "two" })
    expect((await ds.latest("revenue"))?.point).toEqual({ number: 7 })
    const before = await readRaw(server.url, key, "status")
    const error = await ds
      .pushMany([
        { streamName: "status", point: { label: "three" } },
        { streamName: "places", point: { latitude: 200, longitude: 0 } }
      ])
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DashstreamError)
    expect(error).toMatchObject({ status: 400, code: "invalid_point" })
    expect((error as DashstreamError).path).toMatch(/^streams\[1\]\.point\.latitude/)
    expect(await readRaw(server.url, key, "status")).toEqual(before)
  })
})

describe("clear", () => {
  it("sends the clear command to the types that take it and an empty point to the others", async () => {
    await ds.push("places", { latitude: 1, longitude: 2, color: "blue" })
    await ds.push("board", { leaderboard: [{ name: "Ann", value: 1 }] })
    await ds.clear("places")
    await ds.clear("board")
    expect(await readRaw(server.url, key, "places")).toEqual([])
    expect(await readRaw(server.url, key, "board")).toEqual([])
    expect(await ds.latest("board")).toBeUndefined()
  })

  it("without widget types, falls back to an empty point on unsupported_command", async () => {
    const untyped = new Dashstream({ baseUrl: server.url, accessKey: key })
    await untyped.push("todo", { listItem: "x" })
    await untyped.push("visits", 5)
    await untyped.clear("todo")
    await untyped.clear("visits")
    expect(await readRaw(server.url, key, "todo")).toEqual([])
    expect(await readRaw(server.url, key, "visits")).toEqual([])
  })
})

describe("read", () => {
  it("pages with since and limit: every entry once, in order, also entries pushed while paging", async () => {
    await ds.clear("visits")
    const points = Array.from({ length: 25 }, (_, i) => ({ number: i, timestamp: 1_600_000_000 + i * 0.000001 }))
    await ds.push("visits", points)
    const requested: Array<string> = []
    const counting = new Dashstream({
      baseUrl: server.url,
      accessKey: key,
      widgets,
      fetch: (input, init) => {
        requested.push(String(input))
        return fetch(input, init)
      }
    })
    const seen: Array<Entry> = []
    for await (const entry of counting.read("visits", { limit: 10 })) {
      seen.push(entry)
      // A server-assigned ts is later than every timestamped one: it comes after them, once.
      if (seen.length === 5) await ds.push("visits", { number: 99 })
    }
    expect(seen.map((e) => e.point)).toEqual([...points.map((p) => ({ number: p.number })), { number: 99 }])
    expect(new Set(seen.map((e) => e.ts)).size).toBe(26)
    expect(requested).toHaveLength(3)
    expect(requested[0]).toContain("?since=0&limit=10")
    expect(requested[1]).toContain(`?since=1600000000.000009&limit=10`)
  })

  it("starts after since", async () => {
    const entries = await all(ds.read("visits", { since: 1_600_000_000.000019, limit: 3 }))
    expect(entries.map((e) => e.point)).toEqual([20, 21, 22, 23, 24, 99].map((n) => ({ number: n })))
  })

  it("latest is undefined on an empty stream", async () => {
    await ds.clear("places")
    expect(await ds.latest("places")).toBeUndefined()
    expect(await all(ds.read("places"))).toEqual([])
  })
})

describe("typed errors", () => {
  it("403 forbidden for an unknown access key, on push and read", async () => {
    const stranger = new Dashstream({ baseUrl: server.url, accessKey: "no-such-key" })
    await expect(stranger.push("revenue", 1)).rejects.toMatchObject({ status: 403, code: "forbidden" })
    await expect(stranger.latest("revenue")).rejects.toMatchObject({ status: 403, code: "forbidden" })
  })

  it("404 stream_not_found", async () => {
    const untyped = new Dashstream({ baseUrl: server.url, accessKey: key })
    const error = await untyped.push("nope", 1).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DashstreamError)
    expect(error).toMatchObject({ status: 404, code: "stream_not_found", path: "streamName" })
    await expect(untyped.latest("nope")).rejects.toMatchObject({ status: 404, code: "stream_not_found" })
  })

  it("400 invalid_point with the path into the point", async () => {
    const untyped = new Dashstream({ baseUrl: server.url, accessKey: key })
    const error = await untyped
      .push("board", {
        leaderboard: [
          { name: "a", value: 1 },
          { name: "b", value: "x" }
        ]
      })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ status: 400, code: "invalid_point", path: "point.leaderboard[1].value" })
    expect((error as Error).message).not.toBe("")
  })

  it("400 invalid_since on a negative since", async () => {
    await expect(ds.latest("revenue").then(() => ds.read("revenue", { since: -1 }).next())).rejects.toMatchObject({
      status: 400,
      code: "invalid_since"
    })
  })
})
