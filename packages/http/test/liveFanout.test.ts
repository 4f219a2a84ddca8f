import { assert, describe, it } from "@effect/vitest"
import { connect } from "node:net"
import { entriesOf, eventsPath, openOk } from "../../server/test/e2e/sse.js"
import { eventBytes, joinedBytes } from "../src/internal/sseEvents.js"
import { admin, push, setupAccount, startServer } from "./support/server.js"

/**
 * Fan-out of the live lane (docs/api.md section 10): each event is serialised once and what one turn brings a
 * connection is written at once, framed as the response's transfer encoding needs: HTTP/1.1 chunks, or the bare
 * bytes for an HTTP/1.0 client (a proxy such as nginx speaks HTTP/1.0 to its upstream by default).
 */
describe("live event streams: fan-out", () => {
  it("frames an event as one HTTP/1.1 chunk of its UTF-8 bytes, and several as one", () => {
    const one = eventBytes("data: é\n\n")
    assert.strictEqual(one.raw.toString("utf8"), "data: é\n\n")
    assert.strictEqual(one.chunk.toString("utf8"), "a\r\ndata: é\n\n\r\n")
    const two = eventBytes("data: 2\n\n")
    const joined = joinedBytes([one, two], one.raw.length + two.raw.length, true)
    assert.strictEqual(joined.toString("utf8"), "13\r\ndata: é\n\ndata: 2\n\n\r\n")
    assert.strictEqual(joinedBytes([one, two], 19, false).toString("utf8"), "data: é\n\ndata: 2\n\n")
  })

  it("sends the entries of one write to every subscriber once and in order, over HTTP/1.1 and HTTP/1.0", async () => {
    const server = await startServer()
    try {
      const { accessKey } = await setupAccount(server, [["s", "text-feed"]])
      const path = eventsPath(accessKey, "s")
      const streams = await Promise.all([openOk(server.url, path), openOk(server.url, path)])
      // An HTTP/1.0 request: the response is not chunked, the events are its bare bytes until the server ends it.
      const socket = connect(Number(new URL(server.url).port), "127.0.0.1")
      let raw = ""
      socket.setEncoding("utf8")
      socket.on("data", (d: string) => (raw += d))
      socket.write(`GET ${path} HTTP/1.0\r\nHost: localhost\r\n\r\n`)
      for (const stream of streams) await stream.until("the retry line", () => stream.retries.length > 0)
      const until = Date.now() + 5_000
      while (!raw.includes("retry:") && Date.now() < until) await new Promise((r) => setTimeout(r, 10))
      // One write of 50 entries (published at once), then one more.
      const titles = Array.from({ length: 51 }, (_, i) => `t${i}`)
      const point = titles.slice(0, 50).map((title) => ({ title, msg: "é" }))
      assert.strictEqual((await push(server, { accessKey, streamName: "s", point })).status, 200)
      assert.strictEqual(
        (await push(server, { accessKey, streamName: "s", point: { title: "t50", msg: "é" } })).status,
        200
      )
      const expected = titles
      for (const stream of streams) {
        await stream.until("every entry", () => entriesOf(stream.events).length >= expected.length)
        const entries = entriesOf(stream.events)
        assert.deepStrictEqual(
          entries.map((e) => (e.point as { title: string }).title),
          expected
        )
        const ids = entries.map((e) => e.id)
        assert.deepStrictEqual([...ids].sort(), ids)
        assert.strictEqual(new Set(ids).size, ids.length)
      }
      const rawUntil = Date.now() + 5_000
      const count = () => raw.split("event: entry\n").length - 1
      while (count() < expected.length && Date.now() < rawUntil) await new Promise((r) => setTimeout(r, 10))
      const [head, body] = raw.split("\r\n\r\n", 2) as [string, string]
      assert.match(head, /^HTTP\/1\.1 200/)
      assert.notMatch(head, /transfer-encoding/i)
      const values = [...raw.matchAll(/data: \{"ts":[0-9.]+,"point":\{"title":"(t\d+)"/g)].map((m) => m[1])
      assert.deepStrictEqual(values, expected)
      // Nothing but events: no chunk sizes between them.
      assert.match(body, /^retry: \d+\n\n(event: entry\nid: [0-9.]+\ndata: [^\n]+\n\n)+$/)
      socket.destroy()
      for (const stream of streams) stream.close()
    } finally {
      await server.close()
    }
  })

  it("sends a dashboard's events to each of its pages once and in order", async () => {
    const server = await startServer()
    try {
      const { id, accessKey } = await setupAccount(server, [
        ["a", "text-feed"],
        ["b", "text-feed"]
      ])
      const created = await admin(server, "POST", `/admin/accounts/${id}/dashboards`, {
        name: "d",
        tiles: [
          { streamName: "a", x: 0, y: 0, w: 6, h: 1 },
          { streamName: "b", x: 6, y: 0, w: 6, h: 1 }
        ]
      })
      assert.strictEqual(created.status, 201)
      const pages = await Promise.all([1, 2, 3].map(() => openOk(server.url, `${created.json.url}/events`)))
      for (const page of pages) await page.until("the snapshot", () => page.events.some((e) => e.event === "snapshot"))
      for (let i = 0; i < 10; i++) {
        const streamName = i % 2 === 0 ? "a" : "b"
        const point = [`${i}`, `${i + 100}`].map((title) => ({ title, msg: "m" }))
        assert.strictEqual((await push(server, { accessKey, streamName, point })).status, 200)
      }
      const expected = Array.from({ length: 10 }, (_, i) => [
        [i % 2 === 0 ? "a" : "b", `${i}`],
        [i % 2 === 0 ? "a" : "b", `${i + 100}`]
      ]).flat()
      for (const page of pages) {
        await page.until("every entry", () => page.events.filter((e) => e.event === "entry").length >= 20)
        const got = page.events
          .filter((e) => e.event === "entry")
          .map((e) => JSON.parse(e.data) as { streamName: string; point: { title: string } })
          .map((e) => [e.streamName, e.point.title])
        assert.deepStrictEqual(got, expected)
        page.close()
      }
    } finally {
      await server.close()
    }
  })
})
