import { openTestDatabase, type TestDatabase } from "@dashstream/storage-postgres/testing"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { entriesOf, eventsPath, openOk, type SseStream } from "./e2e/sse.js"
import {
  adminToken,
  createAccount,
  notStrictlyIncreasing,
  pool,
  push,
  read,
  send,
  serverEnv,
  stderrTail
} from "./load.js"
import { type Server, startServer, stop } from "./support.js"

/**
 * Live updates across server processes (docs/api.md section 10, issue "Live updates"): three `dashstream serve` on one
 * PostgreSQL database; a subscriber of one process sees every push stored by the others, once, in `ts` order, within
 * the contract's second; and when the processes' listening connections are killed with `pg_terminate_backend` while
 * pushes go on, each reconnects and its subscribers catch up from the database: nothing is missing.
 *
 * A missing PostgreSQL fails the suite (`openTestDatabase` throws): it is never skipped.
 */

const timeout = 180_000
const processes = 3
const range = (n: number) => Array.from({ length: n }, (_, i) => i)

describe("live event streams across three serve processes on one PostgreSQL database", { timeout }, () => {
  let database: TestDatabase | undefined
  const servers: Array<Server> = []
  let urls: Array<string> = []
  const streams: Array<SseStream> = []

  beforeAll(async () => {
    database = await openTestDatabase()
    const db = database.url
    const started = await Promise.allSettled(range(processes).map(() => startServer(["--db", db], serverEnv, 120_000)))
    for (const result of started) if (result.status === "fulfilled") servers.push(result.value)
    const failed = started.find((result) => result.status === "rejected")
    if (failed !== undefined) throw failed.reason
    urls = servers.map((server) => server.url)
  }, timeout)

  afterAll(async () => {
    for (const s of streams) s.close()
    await Promise.allSettled(servers.map((server) => stop(server).catch(() => server.child.kill("SIGKILL"))))
    await database?.close()
  }, timeout)

  const test = (title: string, body: () => Promise<void>) =>
    it(title, async () => {
      try {
        await body()
      } catch (error) {
        const logs = servers.map((server, i) => `--- server ${i} stderr:\n${stderrTail(server)}`).join("\n")
        if (error instanceof Error) error.message += `\n${logs}`
        throw error
      }
    })

  test("a subscriber on A sees 300 pushes made on B and C: in ts order, none missing, none twice, each within 1 s", async () => {
    const key = await createAccount(urls[0]!, { total: "number" })
    const stream = await openOk(urls[0]!, eventsPath(key, "total", "?since=0"))
    streams.push(stream)
    await stream.until("the retry line", () => stream.retries.length > 0)
    const acknowledged = new Map<number, number>()
    const arrived = new Map<number, number>()
    let seen = 0
    const watch = setInterval(() => {
      for (; seen < stream.events.length; seen++) arrived.set(seen, performance.now())
    }, 5)
    try {
      const replies = await pool(
        20,
        range(300).map((i) => async () => {
          const reply = await push(urls[1 + (i % 2)]!, key, "total", { delta: 1 })
          acknowledged.set(i, performance.now())
          return reply
        })
      )
      for (const reply of replies) expect(reply.status).toBe(200)
      await stream.until("300 entries", () => stream.events.length >= 300, 30_000)
    } finally {
      clearInterval(watch)
    }
    const got = entriesOf(stream.events).map((e) => ({ ts: e.ts, point: e.point }))
    expect(notStrictlyIncreasing(got)).toBeUndefined()
    expect(got).toEqual(await read(urls[2]!, key, "total", 0))
    expect(got.map((e) => (e.point as { number: number }).number)).toEqual(range(300).map((i) => i + 1))
    // Entry k (the k-th delta stored) was acknowledged no later than the k-th acknowledgement: it arrived within 1 s
    // of it (plus the 5 ms polling of this test).
    const acks = [...acknowledged.values()].sort((a, b) => a - b)
    const late = range(300).filter((k) => arrived.get(k)! - acks[k]! > 1_000 + 5)
    expect(late).toEqual([])
  })

  test("listening connections killed with pg_terminate_backend while pushes go on: after recovery nothing is missing", async () => {
    const key = await createAccount(urls[0]!, { spark: "sparkline" })
    const subscribers = await Promise.all(urls.map((url) => openOk(url, eventsPath(key, "spark", "?since=0"))))
    streams.push(...subscribers)
    for (const s of subscribers) await s.until("the retry line", () => s.retries.length > 0)
    const client = new pg.Client({ connectionString: database!.url })
    await client.connect()
    const listeners =
      "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name LIKE '%-listener'"
    let killed = 0
    try {
      const replies = await pool(
        5,
        range(200).map((i) => async () => {
          if (i === 60 || i === 130) {
            // The second kill waits until every process has listened again, so that each is killed twice.
            if (i === 130)
              await vi.waitFor(
                async () => expect((await client.query(listeners)).rows.length).toBeGreaterThanOrEqual(processes),
                { timeout: 15_000, interval: 50 }
              )
            const result = await client.query(
              `SELECT pg_terminate_backend(pid) FROM (${listeners}) AS l WHERE pid <> pg_backend_pid()`
            )
            killed += result.rowCount ?? 0
          }
          return push(urls[i % processes]!, key, "spark", { number: i })
        })
      )
      for (const reply of replies) expect(reply.status).toBe(200)
    } finally {
      await client.end()
    }
    // Each of the three processes had its listening connection killed, twice.
    expect(killed).toBeGreaterThanOrEqual(2 * processes)
    const stored = await read(urls[0]!, key, "spark", 0)
    expect(stored.length).toBe(200)
    for (const s of subscribers) {
      await s.until("every entry", () => entriesOf(s.events).length >= 200, 30_000)
      const got = entriesOf(s.events).map((e) => ({ ts: e.ts, point: e.point }))
      expect(notStrictlyIncreasing(got)).toBeUndefined()
      expect(got).toEqual(stored)
    }
  })

  test("a dashboard's layout changed on B reaches its event stream open on A within 2 s and re-scopes it", async () => {
    const headers = { authorization: `Bearer ${adminToken}` }
    const account = await send("POST", `${urls[0]}/admin/accounts`, { name: "layout" }, { headers })
    const { id, accessKey } = account.body as { id: string; accessKey: string }
    for (const [streamName, type] of [
      ["kept", "number"],
      ["removed", "number"],
      ["added", "label"]
    ]) {
      expect(
        (await send("POST", `${urls[0]}/admin/accounts/${id}/widgets`, { streamName, type }, { headers })).status
      ).toBe(201)
    }
    const tile = (streamName: string, y: number) => ({ streamName, x: 0, y, w: 12, h: 1 })
    const created = await send(
      "POST",
      `${urls[0]}/admin/accounts/${id}/dashboards`,
      { name: "wall", tiles: [tile("kept", 0), tile("removed", 1)] },
      { headers }
    )
    expect(created.status).toBe(201)
    const dashboard = created.body as { id: string; url: string }
    const stream = await openOk(urls[0]!, `${dashboard.url}/events`)
    streams.push(stream)
    await stream.until("the snapshot", () => stream.events.length > 0)
    const changedAt = performance.now()
    const put = await fetch(`${urls[1]}/admin/accounts/${id}/dashboards/${dashboard.id}`, {
      method: "PUT",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ name: "wall 2", tiles: [tile("kept", 0), tile("added", 1)] })
    })
    expect(put.status).toBe(200)
    await stream.until("the layout event", () => stream.events.some((e) => e.event === "layout"), 5_000)
    expect(performance.now() - changedAt).toBeLessThan(2_000)
    const at = stream.events.findIndex((e) => e.event === "layout")
    expect(JSON.parse(stream.events[at]!.data).name).toBe("wall 2")
    await stream.until("the snapshot of the added tile", () => stream.events.length > at + 1)
    expect(JSON.parse(stream.events[at + 1]!.data)).toEqual({
      tiles: { added: [] },
      deleted: [],
      firing: {},
      now: expect.any(Number)
    })
    expect((await push(urls[2]!, accessKey, "removed", 1)).status).toBe(200)
    expect((await push(urls[2]!, accessKey, "kept", 2)).status).toBe(200)
    await stream.until("the kept stream's entry", () => stream.events.length > at + 2)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(stream.events.slice(at + 2).map((e) => JSON.parse(e.data).streamName)).toEqual(["kept"])
  })
})
