import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Dashstream, DashstreamError, type FollowEvent, type StoredNumber } from "../src/index.js"
import { type Proxy, startProxy } from "./support/proxy.js"
import { account, deleteWidget, type Served, serve, tempDatabase } from "./support/server.js"

let server: Served
let db: ReturnType<typeof tempDatabase>
let accountId: string
let key: string
let proxy: Proxy

const widgets = {
  a: "sparkline",
  b: "sparkline",
  c: "sparkline",
  d: "number",
  e: "sparkline",
  f: "sparkline",
  g: "sparkline"
} as const

beforeAll(async () => {
  db = tempDatabase()
  server = await serve(db.file)
  const created = await account(server.url, widgets)
  accountId = created.id
  key = created.accessKey
  proxy = await startProxy(server.port)
})

afterAll(async () => {
  await proxy?.close()
  await server?.stop()
  db?.remove()
})

const client = (baseUrl = server.url) => new Dashstream({ baseUrl, accessKey: key, widgets })

/** Collects a follow's events in the background; `until` waits for a condition on them. */
const collect = <P>(iterator: AsyncIterator<FollowEvent<P>>) => {
  const events: Array<FollowEvent<P>> = []
  let ended = false
  let failure: unknown
  const done = (async () => {
    try {
      for (;;) {
        const next = await iterator.next()
        if (next.done === true) break
        events.push(next.value)
      }
    } catch (e) {
      failure = e
    }
    ended = true
  })()
  const until = async (what: string, predicate: () => boolean, timeoutMs = 10_000) => {
    const start = Date.now()
    while (!predicate()) {
      if (failure !== undefined) throw failure
      if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(events)}`)
      await new Promise((r) => setTimeout(r, 10))
    }
  }
  return { events, done, until, ended: () => ended, failure: () => failure }
}

const numbers = (events: ReadonlyArray<FollowEvent<StoredNumber>>) =>
  events.flatMap((e) => (e.type === "entry" ? [e.point.number] : []))

describe("follow", () => {
  it("replays from since, then delivers new entries, clears, and ends when the widget is deleted", async () => {
    const ds = client()
    await ds.push("a", 1)
    await ds.push("a", 2)
    const follow = ds.follow("a", { since: 0 })
    const c = collect(follow)
    await c.until("backlog", () => c.events.length === 2)
    await ds.push("a", 3)
    await c.until("live entry", () => c.events.length === 3)
    await ds.clear("a")
    await ds.push("a", 4)
    await c.until("clear and entry", () => c.events.length === 5)
    expect(c.events.map((e) => e.type)).toEqual(["entry", "entry", "entry", "clear", "entry"])
    expect(numbers(c.events)).toEqual([1, 2, 3, 4])
    for (const e of c.events) if (e.type === "entry") expect(e.id).toBe(String(e.ts))
    expect(follow.lastEventId).toBe(c.events[4]!.id)
    await deleteWidget(server.url, accountId, "a")
    await c.done
    expect(c.ended()).toBe(true)
    expect(c.failure()).toBeUndefined()
  })

  it("without since, starts with the latest entry", async () => {
    const ds = client()
    await ds.push("d", { number: 1 })
    await ds.push("d", { number: 2, prefix: "$" })
    const follow = ds.follow("d")
    const first = await follow.next()
    expect(first.value).toMatchObject({ type: "entry", point: { number: 2, prefix: "$" } })
    await follow.return()
  })

  it("resumes with Last-Event-ID after the connection drops: nothing missing, nothing repeated", async () => {
    const ds = client()
    const viaProxy = client(proxy.url)
    proxy.heads.length = 0
    const follow = viaProxy.follow("b", { since: 0, reconnectDelayMs: 50 })
    const c = collect(follow)
    for (let i = 0; i < 5; i++) await ds.push("b", i)
    await c.until("first five", () => c.events.length === 5)
    const lastBeforeDrop = follow.lastEventId
    proxy.dropAll()
    // Pushed while the follower is disconnected (or reconnecting): each must arrive once.
    for (let i = 5; i < 10; i++) await ds.push("b", i)
    await c.until("all ten", () => c.events.length >= 10)
    for (let i = 10; i < 15; i++) await ds.push("b", i)
    await c.until("all fifteen", () => c.events.length >= 15)
    await new Promise((r) => setTimeout(r, 200))
    expect(numbers(c.events)).toEqual(Array.from({ length: 15 }, (_, i) => i))
    const gets = proxy.heads.filter((h) => h.startsWith("GET"))
    expect(gets.length).toBeGreaterThanOrEqual(2)
    expect(gets[0]).toContain("since=0")
    expect(gets[0]!.toLowerCase()).not.toContain("last-event-id")
    expect(gets[1]!.toLowerCase()).toContain(`last-event-id: ${lastBeforeDrop}`)
    await follow.return()
  })

  it("without since, a connection dropped before its first event reconnects from the latest entry, not the start", async () => {
    const ds = client()
    for (let i = 0; i < 5; i++) await ds.push("g", i)
    proxy.heads.length = 0
    proxy.fail("cut-after-retry")
    const follow = client(proxy.url).follow("g", { reconnectDelayMs: 50 })
    try {
      const c = collect(follow)
      await c.until("the latest entry", () => c.events.length >= 1)
      await ds.push("g", 5)
      await c.until("the new entry", () => c.events.length >= 2)
      await new Promise((r) => setTimeout(r, 200))
      expect(numbers(c.events)).toEqual([4, 5])
      const gets = proxy.heads.filter((h) => h.startsWith("GET"))
      expect(gets.length).toBe(2)
      for (const get of gets) {
        expect(get.split("\r\n")[0]).not.toContain("since=")
        expect(get.toLowerCase()).not.toContain("last-event-id")
      }
    } finally {
      await follow.return()
    }
  })

  it("resumes after the server restarts on the same database", async () => {
    const ds = client()
    // Followed through the proxy (same port across the restart), so that the event stream's connection, which the
    // stopping server ends, is not the pooled connection the pushes use (an in-process server that stopped leaves it
    // open and unserved; a real process exits and closes it).
    const follow = client(proxy.url).follow("c", { since: 0, reconnectDelayMs: 50, maxAttempts: 100 })
    const c = collect(follow)
    for (let i = 0; i < 3; i++) await ds.push("c", i)
    await c.until("first three", () => c.events.length === 3)
    const port = server.port
    proxy.heads.length = 0
    await server.stop()
    server = await serve(db.file, [], port)
    for (let i = 3; i < 6; i++) await ds.push("c", i)
    await c.until("all six", () => c.events.length >= 6)
    await new Promise((r) => setTimeout(r, 200))
    expect(numbers(c.events)).toEqual([0, 1, 2, 3, 4, 5])
    expect(proxy.heads.some((h) => h.toLowerCase().includes(`last-event-id: ${c.events[2]!.id}`))).toBe(true)
    await follow.return()
  })

  it("return() closes the connection at once, also while a next() is pending", async () => {
    const viaProxy = client(proxy.url)
    const follow = viaProxy.follow("e", { since: 0 })
    const pending = follow.next()
    const start = Date.now()
    while (proxy.open("/events") === 0) {
      if (Date.now() - start > 5_000) throw new Error("the follow never connected")
      await new Promise((r) => setTimeout(r, 10))
    }
    await new Promise((r) => setTimeout(r, 100))
    await follow.return()
    expect(await pending).toEqual({ done: true, value: undefined })
    while (proxy.open("/events") > 0) {
      if (Date.now() - start > 5_000) throw new Error("the connection stayed open")
      await new Promise((r) => setTimeout(r, 10))
    }
    expect(await follow.next()).toEqual({ done: true, value: undefined })
  })

  it("break in a for-await loop closes the connection", async () => {
    const ds = client()
    await ds.push("f", 1)
    const viaProxy = client(proxy.url)
    for await (const event of viaProxy.follow("f")) {
      expect(event.type).toBe("entry")
      break
    }
    const start = Date.now()
    while (proxy.open("/events") > 0) {
      if (Date.now() - start > 5_000) throw new Error("the connection stayed open")
      await new Promise((r) => setTimeout(r, 10))
    }
  })

  it("an abort signal ends the iteration with its reason", async () => {
    const controller = new AbortController()
    const follow = client().follow("f", { signal: controller.signal })
    await follow.next()
    const pending = follow.next()
    controller.abort(new Error("enough"))
    await expect(pending).rejects.toThrow("enough")
  })

  it("throws typed errors decided before the stream starts (404, 403, 400)", async () => {
    const untyped = new Dashstream({ baseUrl: server.url, accessKey: key })
    await expect(untyped.follow("nope").next()).rejects.toMatchObject({ status: 404, code: "stream_not_found" })
    const stranger = new Dashstream({ baseUrl: server.url, accessKey: "wrong" })
    const error = await stranger
      .follow("b")
      .next()
      .catch((e: unknown) => e)
    expect(error).toBeInstanceOf(DashstreamError)
    expect(error).toMatchObject({ status: 403, code: "forbidden" })
    await expect(client().follow("b", { since: -1 }).next()).rejects.toMatchObject({ code: "invalid_since" })
  })
})
