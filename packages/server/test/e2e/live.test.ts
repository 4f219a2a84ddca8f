/**
 * Live updates over Server-Sent Events (docs/api.md section 10), end to end on every backend: backlog then live,
 * resuming with `Last-Event-ID`, clears (seen and missed), replacement on an equal timestamp, widget deletion, errors
 * decided before the stream starts, ordering under concurrent pushes, and shutdown with open streams.
 */
import { describe, expect, it } from "vitest"
import { backends, expectError, expectSuccess, startServer, suiteName, useServer } from "./harness.js"
import { entriesOf, eventsPath, kindsOf, openEvents, openOk, type SseEvent } from "./sse.js"

/** The `ts` text of an entry event's data, exactly as the server printed it. */
const tsText = (e: SseEvent): string => /^\{"ts":([0-9.e+-]+),/.exec(e.data)![1]!

for (const backend of backends) {
  describe(suiteName("live event streams", backend), () => {
    const ctx = useServer(backend)

    it("answers 200 text/event-stream with no-store and X-Accel-Buffering: no, and a retry line at once", async () => {
      const { api, server } = ctx
      const { accessKey } = await api.setup({ s: "number" })
      const stream = await openOk(server.baseUrl, eventsPath(accessKey, "s"))
      await stream.until("the retry line", () => stream.retries.length > 0, 5_000)
      expect(stream.events).toEqual([])
      stream.close()
    })

    it("since=0: every stored entry in ascending ts, then each new one as it is stored; id is the ts as read prints it", async () => {
      const { api, server } = ctx
      const { accessKey } = await api.setup({ s: "sparkline" })
      for (const n of [1, 2, 3]) expectSuccess(await api.pushPoint(accessKey, "s", { number: n }))
      const stream = await openOk(server.baseUrl, eventsPath(accessKey, "s", "?since=0"))
      await stream.until("the backlog", () => stream.events.length === 3)
      expectSuccess(await api.pushPoint(accessKey, "s", { number: 4 }))
      await stream.until("the live entry", () => stream.events.length === 4)
      const read = await api.entries(accessKey, "s")
      expect(entriesOf(stream.events).map((e) => ({ ts: e.ts, point: e.point }))).toEqual(read)
      for (const e of stream.events) {
        expect(e.event).toBe("entry")
        expect(e.id).toBe(tsText(e))
      }
      stream.close()
    })

    it("since=T sends the entries after T; without since or Last-Event-ID, the latest entry then new ones", async () => {
      const { api, server } = ctx
      const { accessKey } = await api.setup({ s: "sparkline" })
      for (const n of [1, 2, 3]) expectSuccess(await api.pushPoint(accessKey, "s", { number: n }))
      const read = await api.entries(accessKey, "s")
      const since = await openOk(server.baseUrl, eventsPath(accessKey, "s", `?since=${read[0]!.ts}`))
      const latest = await openOk(server.baseUrl, eventsPath(accessKey, "s"))
      await since.until("two entries", () => since.events.length === 2)
      await latest.until("the latest entry", () => latest.events.length === 1)
      expect(entriesOf(since.events).map((e) => e.point)).toEqual([{ number: 2 }, { number: 3 }])
      expect(entriesOf(latest.events).map((e) => e.point)).toEqual([{ number: 3 }])
      expectSuccess(await api.pushPoint(accessKey, "s", { number: 4 }))
      await latest.until("the new entry", () => latest.events.length === 2)
      await since.until("the new entry", () => since.events.length === 3)
      expect(entriesOf(latest.events).map((e) => e.point)).toEqual([{ number: 3 }, { number: 4 }])
      since.close()
      latest.close()
    })

    it("resumes with Last-Event-ID after a disconnect: exactly the entries stored after that id", async () => {
      const { api, server } = ctx
      const { accessKey } = await api.setup({ s: "number" })
      const first = await openOk(server.baseUrl, eventsPath(accessKey, "s", "?since=0"))
      for (const n of [1, 2, 3]) expectSuccess(await api.pushPoint(accessKey, "s", { delta: n }))
      await first.until("three entries", () => first.events.length === 3)
      first.close()
      for (const n of [10, 20]) expectSuccess(await api.pushPoint(accessKey, "s", { delta: n }))
      // Last-Event-ID wins over since.
      const again = await openOk(server.baseUrl, eventsPath(accessKey, "s", "?since=0"), {
        "last-event-id": first.lastId()!
      })
      await again.until("two entries", () => again.events.length === 2)
      expect(entriesOf(again.events).map((e) => e.point)).toEqual([{ number: 16 }, { number: 36 }])
      expectSuccess(await api.pushPoint(accessKey, "s", { delta: 1 }))
      await again.until("the live entry", () => again.events.length === 3)
      const all = [...entriesOf(first.events), ...entriesOf(again.events)].map((e) => ({ ts: e.ts, point: e.point }))
      expect(all).toEqual(await api.entries(accessKey, "s"))
      again.close()
    })

    it("a clear while connected sends event clear with an id above every cleared ts; later entries follow", async () => {
      const { api, server } = ctx
      const { accessKey } = await api.setup({ s: "sparkline" })
      expectSuccess(await api.pushPoint(accessKey, "s", { number: 1 }))
      const stream = await openOk(server.baseUrl, eventsPath(accessKey, "s", "?since=0"))
      await stream.until("the entry", () => stream.events.length === 1)
      expectSuccess(await api.push({ accessKey, streamName: "s", command: "clear" }))
      await stream.until("the clear", () => stream.events.length === 2)
      expectSuccess(await api.pushPoint(accessKey, "s", { number: 2 }))
      await stream.until("the next entry", () => stream.events.length === 3)
      expect(kindsOf(stream.events)).toEqual(["entry", "clear", "entry"])
      const [entry, clear, next] = stream.events as [SseEvent, SseEvent, SseEvent]
      expect(clear.data).toBe("{}")
      expect(Number(clear.id)).toBeGreaterThan(Number(entry.id))
      expect(Number(next.id)).toBeGreaterThan(Number(clear.id))
      stream.close()
    })

    it("a clear missed while disconnected: resuming sends clear first, then the entries stored since", async () => {
      const { api, server } = ctx
      const { accessKey } = await api.setup({ s: "text-feed" })
      expectSuccess(await api.pushPoint(accessKey, "s", { title: "a", msg: "1" }))
      const first = await openOk(server.baseUrl, eventsPath(accessKey, "s", "?since=0"))
      await first.until("the entry", () => first.events.length === 1)
      first.close()
      expectSuccess(await api.push({ accessKey, streamName: "s", command: "clear" }))
      expectSuccess(await api.pushPoint(accessKey, "s", { title: "b", msg: "2" }))
      const again = await openOk(server.baseUrl, eventsPath(accessKey, "s"), { "last-event-id": first.lastId()! })
      await again.until("clear and entry", () => again.events.length === 2)
      expect(kindsOf(again.events)).toEqual(["clear", "entry"])
      expect(entriesOf(again.events).map((e) => e.point)).toEqual([{ title: "b", msg: "2" }])
      // Resuming from the clear's own id: nothing was missed.
      const third = await openOk(server.baseUrl, eventsPath(accessKey, "s"), { "last-event-id": again.events[0]!.id! })
      await third.until("the entry", () => third.events.length === 1)
      expect(kindsOf(third.events)).toEqual(["entry"])
      again.close()
      third.close()
    })

    it("an empty point clears a state widget: event clear", async () => {
      const { api, server } = ctx
      const { accessKey } = await api.setup({ s: "leaderboard" })
      expectSuccess(await api.pushPoint(accessKey, "s", { leaderboard: [{ name: "a", value: 1 }] }))
      const stream = await openOk(server.baseUrl, eventsPath(accessKey, "s"))
      await stream.until("the entry", () => stream.events.length === 1)
      expectSuccess(await api.pushPoint(accessKey, "s", { leaderboard: [] }))
      await stream.until("the clear", () => stream.events.length === 2)
      expect(kindsOf(stream.events)).toEqual(["entry", "clear"])
      stream.close()
    })

    it("a timestamped push replacing an entry (same ts) is sent again as entry with that ts", async () => {
      const { api, server } = ctx
      const { accessKey } = await api.setup({ s: "line-graph" })
      expectSuccess(await api.pushPoint(accessKey, "s", { number: 1, timestamp: 1_700_000_000 }))
      expectSuccess(await api.pushPoint(accessKey, "s", { number: 2, timestamp: 1_700_000_060 }))
      const stream = await openOk(server.baseUrl, eventsPath(accessKey, "s", "?since=0"))
      await stream.until("the backlog", () => stream.events.length === 2)
      expectSuccess(await api.pushPoint(accessKey, "s", { number: 5, timestamp: 1_700_000_000 }))
      await stream.until("the replacement", () => stream.events.length === 3)
      const third = stream.events[2]!
      expect(third.event).toBe("entry")
      expect(third.id).toBe("1700000000")
      expect(JSON.parse(third.data)).toEqual({ ts: 1_700_000_000, point: { number: 5 } })
      stream.close()
    })

    it("deleting the widget sends event deleted and ends the stream", async () => {
      const { api, server } = ctx
      const account = await api.setup({ s: "number" })
      const stream = await openOk(server.baseUrl, eventsPath(account.accessKey, "s"))
      await stream.until("the retry line", () => stream.retries.length > 0)
      const r = await api.admin("DELETE", `/admin/accounts/${encodeURIComponent(account.id)}/widgets/s`)
      expect(r.status).toBe(204)
      await stream.until("the end", () => stream.state() !== "open")
      expect(kindsOf(stream.events)).toEqual(["deleted"])
      expect(stream.events[0]!.data).toBe("{}")
      expect(stream.state()).toBe("ended")
    })

    it("errors are decided before the stream starts, as JSON error bodies: 403, 404, 400 invalid_since", async () => {
      const { api, server } = ctx
      const { accessKey } = await api.setup({ s: "number" })
      const reply = async (path: string, headers: Record<string, string> = {}) => {
        const s = await openEvents(server.baseUrl, path, headers)
        return {
          status: s.status,
          text: s.errorBody,
          json: JSON.parse(s.errorBody) as unknown,
          headers: new Headers(s.headers as Record<string, string>)
        }
      }
      expectError(await reply(eventsPath("ds_unknown", "s")), 403, "forbidden")
      expectError(await reply(eventsPath(accessKey, "missing")), 404, "stream_not_found")
      expectError(await reply(eventsPath(accessKey, "s", "?since=-1")), 400, "invalid_since")
      expectError(await reply(eventsPath(accessKey, "s", "?since=abc")), 400, "invalid_since")
      expectError(await reply(eventsPath(accessKey, "s"), { "last-event-id": "x" }), 400, "invalid_since")
      // Beyond the largest ts there is (2^32 - 1 seconds) a cursor would never deliver anything.
      expectError(await reply(eventsPath(accessKey, "s"), { "last-event-id": "1e20" }), 400, "invalid_since")
      expectError(await reply(eventsPath(accessKey, "s"), { "last-event-id": "4294967296" }), 400, "invalid_since")
      expectError(await reply(eventsPath(accessKey, "s", "?since=1e20")), 400, "invalid_since")
      const last = await openOk(server.baseUrl, eventsPath(accessKey, "s"), { "last-event-id": "4294967295" })
      last.close()
    })

    it("200 concurrent pushes arrive once each, in ascending ts, exactly as a since=0 read returns them", async () => {
      const { api, server } = ctx
      const { accessKey } = await api.setup({ s: "number" })
      const stream = await openOk(server.baseUrl, eventsPath(accessKey, "s", "?since=0"))
      await stream.until("the retry line", () => stream.retries.length > 0)
      const replies = await Promise.all(Array.from({ length: 200 }, () => api.pushPoint(accessKey, "s", { delta: 1 })))
      for (const r of replies) expectSuccess(r)
      await stream.until("200 entries", () => stream.events.length >= 200)
      const read = await api.entries(accessKey, "s")
      expect(entriesOf(stream.events).map((e) => ({ ts: e.ts, point: e.point }))).toEqual(read)
      expect(read.at(-1)!.point).toEqual({ number: 200 })
      stream.close()
    })
  })

  describe(suiteName("live event streams at shutdown", backend), () => {
    it("SIGTERM ends every open event stream cleanly and the server exits promptly", async () => {
      const db = await backend.database()
      try {
        const server = await startServer(db.url)
        const { Api } = await import("./harness.js")
        const api = new Api(server.baseUrl)
        const { accessKey } = await api.setup({ s: "number" })
        const streams = await Promise.all(
          [0, 1, 2].map(() => openOk(server.baseUrl, eventsPath(accessKey, "s", "?since=0")))
        )
        for (const s of streams) await s.until("the retry line", () => s.retries.length > 0)
        const started = performance.now()
        const exit = await server.stop(15_000)
        expect(exit.killed).toBe(false)
        expect(exit.code).toBe(0)
        // The graceful wait for ordinary requests is 10 s: event streams must not hold shutdown that long.
        expect(performance.now() - started).toBeLessThan(8_000)
        for (const s of streams) {
          await s.until("the end", () => s.state() !== "open")
          expect(s.state()).toBe("ended")
        }
      } finally {
        await db.drop()
      }
    }, 120_000)
  })
}
