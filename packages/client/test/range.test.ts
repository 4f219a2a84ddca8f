import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Dashstream, DashstreamError, type Entry, type StoredNumber } from "../src/index.js"
import { account, readRaw, type Served, serve, tempDatabase } from "./support/server.js"

/** `Dashstream.range` against the real server on loopback (README, "Range reads"). */

const widgets = { temperature: "line-graph", empty: "line-graph", status: "label" } as const

let server: Served
let db: ReturnType<typeof tempDatabase>
let key: string
let ds: Dashstream<typeof widgets>
const requested: Array<string> = []

// 40 entries one second apart from t0; the value zig-zags so each bucket has distinct extremes.
const t0 = 1_700_000_000
const values = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? i : -i))

beforeAll(async () => {
  db = tempDatabase()
  server = await serve(db.file)
  key = (await account(server.url, widgets)).accessKey
  ds = new Dashstream({
    baseUrl: server.url,
    accessKey: key,
    widgets,
    fetch: (input, init) => {
      requested.push(String(input).replace(/^.*\?/, "?"))
      return fetch(input, init)
    }
  })
  await ds.push(
    "temperature",
    values.map((number, i) => ({ number, timestamp: t0 + i }))
  )
  for (const label of ["a", "b", "c"]) await ds.push("status", { label })
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

/** The requests `run` makes, as their query strings. */
const queriesOf = async (run: () => Promise<unknown>): Promise<Array<string>> => {
  requested.length = 0
  await run()
  return [...requested]
}

describe("range without points", () => {
  it("pages through the window with since and to: every entry once, ascending, typed as read's", async () => {
    let entries: Array<Entry<StoredNumber>> = []
    const queries = await queriesOf(async () => {
      entries = await all(ds.range("temperature", { from: t0 + 5, to: t0 + 14, limit: 4 }))
    })
    expect(entries.map((e) => e.ts)).toEqual(Array.from({ length: 10 }, (_, i) => t0 + 5 + i))
    expect(entries.map((e) => e.point.number)).toEqual(values.slice(5, 15))
    expect(queries).toEqual([
      `?from=${t0 + 5}&to=${t0 + 14}&limit=4`,
      `?since=${t0 + 8}&to=${t0 + 14}&limit=4`,
      `?since=${t0 + 12}&to=${t0 + 14}&limit=4`
    ])
  })

  it("reads the whole stream without bounds, and after since up to to", async () => {
    expect(await all(ds.range("temperature"))).toEqual(await all(ds.read("temperature", { since: 0 })))
    const after = await all(ds.range("temperature", { since: t0 + 37.5 }))
    expect(after.map((e) => e.ts)).toEqual([t0 + 38, t0 + 39])
    const upTo = await all(ds.range("temperature", { since: t0 + 1, to: t0 + 3 }))
    expect(upTo.map((e) => e.ts)).toEqual([t0 + 2, t0 + 3])
    expect(await all(ds.range("temperature", { to: t0 - 1 }))).toEqual([])
    expect(await all(ds.range("empty", { from: 0 }))).toEqual([])
  })

  it("accepts fractional seconds to the microsecond", async () => {
    const entries = await all(ds.range("temperature", { from: t0 + 0.000001, to: t0 + 1.5 }))
    expect(entries.map((e) => e.ts)).toEqual([t0 + 1])
  })
})

describe("range with points", () => {
  it("is one request of stored entries, at most 4 a bucket, keeping each bucket's extremes", async () => {
    const stored = await readRaw(server.url, key, "temperature")
    let entries: Array<Entry<StoredNumber>> = []
    const queries = await queriesOf(async () => {
      entries = await all(ds.range("temperature", { from: t0, to: t0 + 39, points: 4 }))
    })
    expect(queries).toEqual([`?from=${t0}&to=${t0 + 39}&points=4`])
    expect(entries.length).toBeLessThanOrEqual(16)
    expect(entries.length).toBeLessThan(stored.length)
    for (const entry of entries) expect(stored).toContainEqual(entry)
    expect(entries.map((e) => e.ts)).toEqual([...entries.map((e) => e.ts)].sort((a, b) => a - b))
    const numbers = entries.map((e) => e.point.number)
    expect(Math.min(...numbers)).toBe(Math.min(...values))
    expect(Math.max(...numbers)).toBe(Math.max(...values))
    expect(entries[0]?.ts).toBe(t0)
    expect(entries.at(-1)?.ts).toBe(t0 + 39)
  })

  it("keeps the last entry of a bucket for other widget types", async () => {
    const stored = await readRaw(server.url, key, "status")
    const [first, , last] = stored.map((e) => e.ts) as [number, number, number]
    // A window twice as long as the entries' span: all three fall in its first bucket, which keeps the last.
    const entries = await all(ds.range("status", { from: first, to: first + 2 * (last - first) + 1, points: 2 }))
    expect(entries).toEqual([stored[2]])
    const unbounded = await all(ds.range("status", { points: 2 }))
    expect(unbounded).toHaveLength(2)
    expect(unbounded[1]).toEqual(stored[2])
  })
})

describe("range errors", () => {
  const refusal = (options: Parameters<typeof ds.range>[1]) =>
    all(ds.range("temperature", options)).then(
      () => undefined,
      (error: unknown) => error
    )

  it("400 invalid_request with path naming the parameter, decided by the server", async () => {
    for (const [options, path] of [
      [{ from: t0 + 2, to: t0 + 1 }, "to"],
      [{ from: -1 }, "from"],
      [{ to: Number.NaN }, "to"],
      [{ points: 1 }, "points"],
      [{ points: 2.5 }, "points"],
      [{ points: 10, limit: 5 }, "limit"],
      [{ since: t0, from: t0 }, "since"],
      [{ from: t0, limit: 0 }, "limit"]
    ] as const) {
      const error = await refusal(options)
      expect(error, JSON.stringify(options)).toBeInstanceOf(DashstreamError)
      expect(error).toMatchObject({ status: 400, code: "invalid_request", path })
    }
  })

  it("404 stream_not_found and 403 forbidden as for read", async () => {
    const untyped = new Dashstream({ baseUrl: server.url, accessKey: key })
    await expect(all(untyped.range("nope", { from: 0 }))).rejects.toMatchObject({
      status: 404,
      code: "stream_not_found"
    })
    const stranger = new Dashstream({ baseUrl: server.url, accessKey: "no-such-key" })
    await expect(all(stranger.range("temperature", { from: 0 }))).rejects.toMatchObject({
      status: 403,
      code: "forbidden"
    })
  })
})

describe("the OpenAPI document", () => {
  it("describes the range options the client sends, with their bounds", async () => {
    const spec = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, { get?: { parameters: Array<{ name: string; description?: string }> } }>
    }
    const read = Object.entries(spec.paths).find(([path]) => path.endsWith("/datastream/{streamName}"))?.[1]
    const described = new Map(read?.get?.parameters.map((p) => [p.name, p.description ?? ""]))
    expect(described.get("from")).toMatch(/UNIX seconds, 0 to 4294967295/)
    expect(described.get("to")).toMatch(/UNIX seconds, 0 to 4294967295/)
    expect(described.get("points")).toMatch(/^2\.\.10000: /)
    expect(described.get("limit")).toMatch(/^1\.\.100000: .*Not with points/)
  })
})
