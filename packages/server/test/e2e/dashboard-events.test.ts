/**
 * A dashboard's event stream (`/d/<viewToken>/events`, docs/api.md sections 10, 11 and 14) end to end on every backend:
 * the memory a client that never reads can hold on the server.
 */
import { readFileSync } from "node:fs"
import { connect, type Socket } from "node:net"
import { describe, expect, it } from "vitest"
import { type Api, backends, expectSuccess, suiteName, useServer } from "./harness.js"
import { openOk } from "./sse.js"

/** Resident memory (bytes) of process `pid` and all its descendants (`serve --workers` has child processes). */
const treeRss = (pid: number): number => {
  let rss = 0
  const visit = (p: number) => {
    let status: string
    try {
      status = readFileSync(`/proc/${p}/status`, "utf8")
    } catch {
      return
    }
    rss += Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0) * 1024
    let children = ""
    try {
      children = readFileSync(`/proc/${p}/task/${p}/children`, "utf8")
    } catch {
      return
    }
    for (const c of children.trim().split(/\s+/)) if (c !== "") visit(Number(c))
  }
  visit(pid)
  return rss
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A dashboard of the given stream names (one row each); returns its view path `/d/<token>`. */
const dashboardOf = async (api: Api, accountId: string, streams: ReadonlyArray<string>): Promise<string> => {
  const r = await api.admin("POST", `/admin/accounts/${accountId}/dashboards`, {
    name: "d",
    tiles: streams.map((streamName, i) => ({ streamName, x: 0, y: i, w: 12, h: 1 }))
  })
  expect(r.status, r.text).toBe(201)
  return r.json.url as string
}

/**
 * Opens `path` on a raw socket that sends the request and then never reads: what the server sends stays in the
 * kernel's buffers until they are full, then in the server's.
 */
const neverReading = (port: number, path: string): Promise<Socket> =>
  new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => {
      socket.pause()
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n`)
      resolve(socket)
    })
    socket.pause()
    socket.on("error", () => {})
    socket.once("error", reject)
  })

for (const backend of backends) {
  describe(suiteName("dashboard event streams", backend), () => {
    const ctx = useServer(backend)

    it("a fresh snapshot names the tiles whose widget was deleted in its deleted member", async () => {
      const { api, server } = ctx
      const account = await api.setup({ kept: "number", gone: "label" })
      expectSuccess(await api.pushPoint(account.accessKey, "kept", 5))
      expectSuccess(await api.pushPoint(account.accessKey, "gone", { label: "bye" }))
      const view = await dashboardOf(api, account.id, ["kept", "gone"])
      const deleted = await api.admin("DELETE", `/admin/accounts/${account.id}/widgets/gone`)
      expect(deleted.status, deleted.text).toBe(204)
      const stream = await openOk(server.baseUrl, `${view}/events`)
      await stream.until("the snapshot", () => stream.events.length > 0)
      expect(stream.events[0]!.event).toBe("snapshot")
      const snapshot = JSON.parse(stream.events[0]!.data) as { tiles: Record<string, unknown>; deleted: unknown }
      expect(Object.keys(snapshot.tiles)).toEqual(["kept"])
      expect(snapshot.deleted).toEqual(["gone"])
      stream.close()
    })

    it("a layout change reaches an open stream within 2 s: layout, a snapshot of only the new tiles, and no entry of a removed tile after it", async () => {
      const { api, server } = ctx
      const account = await api.setup({ a: "number", b: "label", c: "sparkline" })
      expectSuccess(await api.pushPoint(account.accessKey, "a", 1))
      expectSuccess(await api.pushPoint(account.accessKey, "b", { label: "x" }))
      expectSuccess(await api.pushPoint(account.accessKey, "c", 5))
      const created = await api.admin("POST", `/admin/accounts/${account.id}/dashboards`, {
        name: "before",
        tiles: [
          { streamName: "a", x: 0, y: 0, w: 6, h: 1 },
          { streamName: "b", x: 6, y: 0, w: 6, h: 1 }
        ]
      })
      expect(created.status, created.text).toBe(201)
      const stream = await openOk(server.baseUrl, `${created.json.url as string}/events`)
      await stream.until("the snapshot", () => stream.events.length > 0)
      expect(Object.keys(JSON.parse(stream.events[0]!.data).tiles)).toEqual(["a", "b"])

      const tiles = [
        { streamName: "a", title: "A", x: 0, y: 0, w: 12, h: 1 },
        { streamName: "c", x: 0, y: 1, w: 12, h: 2 }
      ]
      const changedAt = performance.now()
      const put = await api.admin("PUT", `/admin/accounts/${account.id}/dashboards/${created.json.id as string}`, {
        name: "after",
        tiles
      })
      expect(put.status, put.text).toBe(200)
      await stream.until("the layout event", () => stream.events.some((e) => e.event === "layout"), 5_000)
      expect(performance.now() - changedAt).toBeLessThan(2_000)
      const at = stream.events.findIndex((e) => e.event === "layout")
      expect(JSON.parse(stream.events[at]!.data)).toEqual({
        name: "after",
        tiles: [
          { ...tiles[0], type: "number" },
          { ...tiles[1], type: "sparkline" }
        ]
      })
      await stream.until("the snapshot of the new tile", () => stream.events.length > at + 1)
      expect(stream.events[at + 1]!.event).toBe("snapshot")
      const snapshot = JSON.parse(stream.events[at + 1]!.data) as { tiles: Record<string, Array<{ point: unknown }>> }
      expect(snapshot).toEqual({
        tiles: { c: [expect.objectContaining({ point: { number: 5 } })] },
        deleted: [],
        firing: {},
        now: expect.any(Number)
      })

      // The removed tile's stream is not sent any more; the kept and the added ones are.
      expectSuccess(await api.pushPoint(account.accessKey, "b", { label: "secret" }))
      expectSuccess(await api.pushPoint(account.accessKey, "a", 2))
      expectSuccess(await api.pushPoint(account.accessKey, "c", 6))
      const names = () => stream.events.slice(at + 2).map((e) => JSON.parse(e.data).streamName as string)
      await stream.until("the entries of a and c", () => names().includes("a") && names().includes("c"))
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(names().sort()).toEqual(["a", "c"])
      expect(stream.events.slice(at + 2).every((e) => e.event === "entry")).toBe(true)
      stream.close()
    })

    it("a page that reconnects after a layout change it missed gets event: layout before its snapshot", async () => {
      const { api, server } = ctx
      const account = await api.setup({ a: "number", b: "number" })
      const created = await api.admin("POST", `/admin/accounts/${account.id}/dashboards`, {
        name: "one",
        tiles: [{ streamName: "a", x: 0, y: 0, w: 12, h: 1 }]
      })
      expect(created.status, created.text).toBe(201)
      // The page names the layout it shows in its event stream's path.
      const page = await api.fetch(created.json.url as string)
      const relative = JSON.parse(`"${/"eventsPath":"([^"]+)"/.exec(page.text)![1]!}"`) as string
      // Relative to the page (docs/api.md section 16): `../d/<token>/events?layout=...` from `/d/<token>`.
      expect(relative).toMatch(/^\.\.\/d\/[^/]+\/events\?layout=[\w-]+$/)
      const resolved = new URL(relative, `${server.baseUrl}${created.json.url as string}`)
      const eventsPath = `${resolved.pathname}${resolved.search}`
      expect(eventsPath).toMatch(/^\/d\/[^/]+\/events\?layout=[\w-]+$/)
      const first = await openOk(server.baseUrl, eventsPath)
      await first.until("the snapshot", () => first.events.length > 0)
      expect(first.events.map((e) => e.event)).toEqual(["snapshot"])
      first.close()

      const tiles = [{ streamName: "b", x: 0, y: 0, w: 12, h: 1 }]
      const put = await api.admin("PUT", `/admin/accounts/${account.id}/dashboards/${created.json.id as string}`, {
        name: "two",
        tiles
      })
      expect(put.status, put.text).toBe(200)
      const again = await openOk(server.baseUrl, eventsPath)
      await again.until("the layout and the snapshot", () => again.events.length >= 2)
      expect(again.events.map((e) => e.event)).toEqual(["layout", "snapshot"])
      expect(JSON.parse(again.events[0]!.data)).toEqual({ name: "two", tiles: [{ ...tiles[0], type: "number" }] })
      expect(JSON.parse(again.events[1]!.data)).toEqual({
        tiles: { b: [] },
        deleted: [],
        firing: {},
        now: expect.any(Number)
      })
      again.close()
    })

    it("a client that never reads holds a bounded amount of server memory, whatever the snapshot's size", async () => {
      const { api, server } = ctx
      const account = await api.setup({ f1: "text-feed", f2: "text-feed" })
      // Two text feeds of 1,000 entries of ~6 KB: a snapshot of ~12 MB, more than the kernel buffers of a connection.
      const msg = "m".repeat(6_000)
      for (const stream of ["f1", "f2"]) {
        for (let batch = 0; batch < 10; batch++) {
          const points = Array.from({ length: 100 }, (_, i) => ({ title: `${stream}-${batch * 100 + i}`, msg }))
          expectSuccess(await api.pushPoint(account.accessKey, stream, points))
        }
      }
      const view = await dashboardOf(api, account.id, ["f1", "f2"])
      const eventsPath = `${view}/events`

      // A client that reads gets the whole snapshot.
      const reader = await openOk(server.baseUrl, eventsPath)
      await reader.until("the snapshot", () => reader.events.some((e) => e.event === "snapshot"), 30_000)
      const snapshot = JSON.parse(reader.events.find((e) => e.event === "snapshot")!.data) as {
        tiles: Record<string, Array<{ point: { title: string } }>>
      }
      expect(Object.keys(snapshot.tiles).sort()).toEqual(["f1", "f2"])
      for (const stream of ["f1", "f2"]) {
        expect(snapshot.tiles[stream]!.map((e) => e.point.title)).toEqual(
          Array.from({ length: 1000 }, (_, i) => `${stream}-${i}`)
        )
      }
      reader.close()

      await sleep(1_000)
      const before = treeRss(server.pid)
      const sockets: Array<Socket> = []
      try {
        for (let i = 0; i < 30; i++) sockets.push(await neverReading(server.port, eventsPath))
        // Let the server do what it does with them (before the fix: buffer each whole snapshot).
        await sleep(4_000)
        const grown = treeRss(server.pid) - before
        // A few MiB per client at most (30 clients; ~12 MB snapshots each).
        expect(grown, `server memory grew by ${Math.round(grown / 2 ** 20)} MiB`).toBeLessThan(90 * 2 ** 20)
        // The server still answers.
        expect((await api.fetch("/healthz")).status).toBe(200)
      } finally {
        for (const s of sockets) s.destroy()
      }
    }, 120_000)
  })
}
