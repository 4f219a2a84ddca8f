import { assert, describe, it } from "@effect/vitest"
import { entriesOf, eventsPath, openEvents, openOk } from "../../server/test/e2e/sse.js"
import { admin, json, push, read, setupAccount, startServer } from "./support/server.js"

/**
 * The live lane's bounds (docs/api.md section 10), on the in-process server with small settings: the heartbeat, the
 * slow-client cut-off and resuming after it without loss, the per-key limit of open event streams, and the observer
 * that metrics use.
 */
describe("live event streams: bounds of the live lane", () => {
  it("sends a `: ping` comment after the heartbeat interval without an event", async () => {
    const server = await startServer({ live: { heartbeatMs: 100 } })
    try {
      const { accessKey } = await setupAccount(server, [["s", "number"]])
      const stream = await openOk(server.url, eventsPath(accessKey, "s"))
      await stream.until("a ping", () => stream.comments.includes("ping"), 3_000)
      assert.deepStrictEqual(stream.events, [])
      stream.close()
    } finally {
      await server.close()
    }
  })

  it("a client that stops reading is cut off past the unsent-bytes bound, then resumes with Last-Event-ID and loses nothing", async () => {
    const server = await startServer({ live: { maxUnsentBytes: 64 * 1024 } })
    try {
      const { accessKey } = await setupAccount(server, [["s", "text-feed"]])
      const stream = await openOk(server.url, eventsPath(accessKey, "s", "?since=0"))
      await stream.until("the retry line", () => stream.retries.length > 0)
      stream.pause()
      // ~24 MiB: more than the loopback socket buffers of both ends can hold, so the server's own buffer grows.
      const msg = "x".repeat(60_000)
      for (let i = 0; i < 400; i++) {
        const r = await push(server, { accessKey, streamName: "s", point: { title: `t${i}`, msg } })
        assert.strictEqual(r.status, 200)
      }
      stream.resume()
      await stream.until("the cut-off", () => stream.state() !== "open", 20_000)
      assert.strictEqual(stream.state(), "aborted")
      const got = entriesOf(stream.events)
      assert.isBelow(got.length, 400)
      const again = await openOk(server.url, eventsPath(accessKey, "s"), { "last-event-id": stream.lastId()! })
      await again.until("the rest", () => got.length + again.events.length >= 400, 20_000)
      const all = [...got, ...entriesOf(again.events)].map((e) => (e.point as { title: string }).title)
      assert.deepStrictEqual(
        all,
        Array.from({ length: 400 }, (_, i) => `t${i}`)
      )
      again.close()
    } finally {
      await server.close()
    }
  }, 60_000)

  for (const kind of ["dashboard", "rotation"] as const)
    it(`a ${kind} stream whose client stops reading during the snapshot is cut off once the events held behind it pass the bound`, async () => {
      const server = await startServer({ live: { maxUnsentBytes: 64 * 1024 } })
      try {
        const { id, accessKey } = await setupAccount(server, [
          ["a", "text-feed"],
          ["b", "text-feed"]
        ])
        // b: 1,000 entries of ~12 KB, a snapshot member larger than the loopback buffers hold.
        const msg = "x".repeat(12_000)
        for (let batch = 0; batch < 13; batch++) {
          const points = Array.from({ length: 80 }, (_, i) => ({ title: `b${batch * 80 + i}`, msg }))
          assert.strictEqual((await push(server, { accessKey, streamName: "b", point: points })).status, 200)
        }
        let url: string
        if (kind === "dashboard") {
          const created = await admin(server, "POST", `/admin/accounts/${id}/dashboards`, {
            name: "d",
            tiles: [
              { streamName: "a", x: 0, y: 0, w: 12, h: 1 },
              { streamName: "b", x: 0, y: 1, w: 12, h: 1 }
            ]
          })
          assert.strictEqual(created.status, 201)
          url = created.json.url
        } else {
          // A rotation of two dashboards, one stream each: its one stream holds the same bound (docs/api.md section 15).
          const ids: Array<string> = []
          for (const streamName of ["a", "b"]) {
            const made = await admin(server, "POST", `/admin/accounts/${id}/dashboards`, {
              name: streamName,
              tiles: [{ streamName, x: 0, y: 0, w: 12, h: 1 }]
            })
            assert.strictEqual(made.status, 201)
            ids.push(made.json.id)
          }
          const created = await admin(server, "POST", `/admin/accounts/${id}/rotations`, {
            name: "r",
            dashboardIds: ids,
            intervalSeconds: 5
          })
          assert.strictEqual(created.status, 201)
          url = created.json.url
        }
        const stream = await openOk(server.url, `${url}/events`)
        stream.pause()
        await new Promise((resolve) => setTimeout(resolve, 500))
        // a's member is out; b's waits for the client. What a sends now waits behind the snapshot, up to the bound.
        for (let i = 0; i < 10; i++) {
          const r = await push(server, { accessKey, streamName: "a", point: { title: `a${i}`, msg } })
          assert.strictEqual(r.status, 200)
        }
        stream.resume()
        await stream.until("the cut-off", () => stream.state() !== "open", 20_000)
        assert.strictEqual(stream.state(), "aborted")
      } finally {
        await server.close()
      }
    }, 60_000)

  it("at most maxStreamsPerKey open event streams per access key: one more answers 429 rate_limited", async () => {
    const server = await startServer({ live: { maxStreamsPerKey: 3 } })
    try {
      const { accessKey } = await setupAccount(server, [
        ["a", "number"],
        ["b", "number"]
      ])
      const other = await setupAccount(server, [["a", "number"]])
      const open = await Promise.all([
        openOk(server.url, eventsPath(accessKey, "a")),
        openOk(server.url, eventsPath(accessKey, "a")),
        openOk(server.url, eventsPath(accessKey, "b"))
      ])
      const refused = await openEvents(server.url, eventsPath(accessKey, "b"))
      assert.strictEqual(refused.status, 429)
      assert.strictEqual(JSON.parse(refused.errorBody).error.code, "rate_limited")
      assert.isDefined(refused.headers["retry-after"])
      // Another key is not affected.
      ;(await openOk(server.url, eventsPath(other.accessKey, "a"))).close()
      // A closed stream frees its place.
      open[0]!.close()
      let status = 0
      for (let i = 0; i < 100 && status !== 200; i++) {
        const s = await openEvents(server.url, eventsPath(accessKey, "b"))
        status = s.status
        if (status === 200) s.close()
        else await new Promise((r) => setTimeout(r, 20))
      }
      assert.strictEqual(status, 200)
      for (const s of open) s.close()
    } finally {
      await server.close()
    }
  })

  it("tells the observer when event streams open and close and how many events were sent", async () => {
    const counts = { opened: 0, closed: 0, sent: 0 }
    const server = await startServer({
      eventStreams: {
        opened: () => void counts.opened++,
        closed: () => void counts.closed++,
        sent: (n) => void (counts.sent += n)
      }
    })
    try {
      const { accessKey } = await setupAccount(server, [["s", "number"]])
      assert.strictEqual((await push(server, { accessKey, streamName: "s", point: 1 })).status, 200)
      const stream = await openOk(server.url, eventsPath(accessKey, "s"))
      await stream.until("the latest entry", () => stream.events.length === 1)
      assert.strictEqual((await push(server, { accessKey, streamName: "s", point: 2 })).status, 200)
      await stream.until("the new entry", () => stream.events.length === 2)
      assert.deepStrictEqual({ opened: counts.opened, sent: counts.sent }, { opened: 1, sent: 2 })
      stream.close()
      for (let i = 0; i < 100 && counts.closed === 0; i++) await new Promise((r) => setTimeout(r, 10))
      assert.strictEqual(counts.closed, 1)
      // Errors answered before the stream starts are not open streams.
      assert.strictEqual((await openEvents(server.url, eventsPath("nope", "s"))).status, 403)
      assert.strictEqual(counts.opened, 1)
      const body = await json(await read(server, accessKey, "s"))
      assert.strictEqual(body.status, 200)
    } finally {
      await server.close()
    }
  })
})
