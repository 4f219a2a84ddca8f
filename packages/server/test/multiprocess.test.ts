import type { TestDatabase } from "@dashstream/storage-postgres/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createAccount,
  type Entry,
  notStrictlyIncreasing,
  pool,
  push,
  read,
  type Reply,
  send,
  serverEnv,
  stderrTail,
  tally
} from "./load.js"
import { type Server, startServer, stop } from "./support.js"

/**
 * Several `dashstream serve` processes on ONE PostgreSQL database (issue "PostgreSQL storage and running several
 * servers on one database"): what docs/api.md sections 3 and 5 promise for one process must hold when the requests are
 * spread over three. Deltas and list items are never lost, server-assigned `ts` stay strictly increasing per stream
 * (so a `since` cursor polled against any process misses and repeats nothing), and multi-stream pushes that touch
 * the same streams in opposite orders never deadlock.
 *
 * A missing PostgreSQL fails the suite (openTestDatabase throws), here as in CI.
 */

/** Real processes on a busy two-core machine: generous limits. */
const timeout = 180_000

const processes = 3

/** A push that got no answer at all becomes status -1, so one failure does not hide the others. */
const settle = (reply: Promise<Reply>): Promise<Reply> =>
  reply.catch((error: unknown) => ({
    status: -1,
    // fetch's own message ("fetch failed") says nothing; its cause says what happened (reset, refused, timeout).
    body:
      error instanceof Error && error.cause !== undefined ? `${String(error)}: ${String(error.cause)}` : String(error)
  }))

const failures = (replies: ReadonlyArray<Reply>) =>
  replies
    .map((reply, index) => ({ index, ...reply }))
    .filter((reply) => reply.status !== 200 || JSON.stringify(reply.body) !== JSON.stringify({ message: "Success!" }))

const range = (n: number) => Array.from({ length: n }, (_, i) => i)

describe("three serve processes on one PostgreSQL database", { timeout }, () => {
  let database: TestDatabase | undefined
  const servers: Array<Server> = []
  let urls: Array<string> = []

  beforeAll(async () => {
    const { openTestDatabase } = await import("@dashstream/storage-postgres/testing")
    database = await openTestDatabase()
    const db = database.url
    // All three at once, as replicas of one deployment start: each migrates first, on the same fresh database.
    const started = await Promise.allSettled(range(processes).map(() => startServer(["--db", db], serverEnv, 120_000)))
    for (const result of started) if (result.status === "fulfilled") servers.push(result.value)
    const failed = started.find((result) => result.status === "rejected")
    if (failed !== undefined) throw failed.reason
    urls = servers.map((server) => server.url)
  }, timeout)

  afterAll(async () => {
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

  test("the three processes answer on their own ports and share the database", async () => {
    expect(new Set(urls).size).toBe(processes)
    for (const url of urls) expect((await send("GET", `${url}/readyz`)).status).toBe(200)
    // An account created through one process is known to the others.
    const key = await createAccount(urls[0]!, { shared: "number" })
    expect((await push(urls[1]!, key, "shared", 7)).status).toBe(200)
    expect((await read(urls[2]!, key, "shared")).map((entry) => entry.point)).toEqual([{ number: 7 }])
  })

  test("600 concurrent deltas of +1 spread over the processes: exactly 600, one entry each", async () => {
    const key = await createAccount(urls[0]!, { total: "number" })
    const started = Date.now()
    const replies = await pool(
      100,
      range(600).map((i) => () => settle(push(urls[i % processes]!, key, "total", { delta: 1 })))
    )
    const elapsed = Date.now() - started
    expect(failures(replies)).toEqual([])
    for (const url of urls) {
      expect((await read(url, key, "total")).map((entry) => entry.point)).toEqual([{ number: 600 }])
    }
    const all = await read(urls[1]!, key, "total", 0)
    expect(all.length).toBe(600)
    expect(notStrictlyIncreasing(all)).toBeUndefined()
    expect(new Set(all.map((entry) => entry.ts)).size).toBe(600)
    // Each delta adds to the latest (highest ts) entry and becomes the latest: read in ts order, 1, 2, ..., 600.
    expect(all.map((entry) => entry.point.number)).toEqual(range(600).map((i) => i + 1))
    console.info(`600 deltas over ${processes} processes, 100 in flight: ${elapsed} ms`)
  })

  test("300 concurrent listItem pushes spread over the processes: the latest list holds all 300", async () => {
    const key = await createAccount(urls[0]!, { todo: "list" })
    const started = Date.now()
    const replies = await pool(
      100,
      range(300).map((i) => () => settle(push(urls[i % processes]!, key, "todo", { listItem: `item-${i}` })))
    )
    const elapsed = Date.now() - started
    expect(failures(replies)).toEqual([])
    const latest = await read(urls[2]!, key, "todo")
    expect(latest.length).toBe(1)
    const items = (latest[0]!.point.list as Array<{ listItem: string }>).map((item) => item.listItem)
    expect(items.length).toBe(300)
    expect([...new Set(items)].sort()).toEqual(
      range(300)
        .map((i) => `item-${i}`)
        .sort()
    )
    // Every push stored the whole resulting list: one entry per push, each one item longer than the one before.
    const all = await read(urls[0]!, key, "todo", 0)
    expect(notStrictlyIncreasing(all)).toBeUndefined()
    expect(all.map((entry) => entry.point.list.length)).toEqual(range(300).map((i) => i + 1))
    console.info(`300 listItem pushes over ${processes} processes, 100 in flight: ${elapsed} ms`)
  })

  for (const inFlight of [1, 10]) {
    test(`cursor safety: 300 points pushed (${inFlight} in flight) over the processes while a reader polls since=<last ts> rotating over them`, async () => {
      const key = await createAccount(urls[0]!, { spark: "sparkline" })
      let writing = true
      const polled: Array<Entry> = []
      let polls = 0
      const reader = (async () => {
        let since = 0
        for (;;) {
          const finalRound = !writing
          const page = await read(urls[polls % processes]!, key, "spark", since)
          polls++
          polled.push(...page)
          if (page.length > 0) since = page[page.length - 1]!.ts
          if (finalRound) return
        }
      })()
      const started = Date.now()
      let replies: Array<Reply>
      try {
        replies = await pool(
          inFlight,
          range(300).map((i) => () => settle(push(urls[i % processes]!, key, "spark", { number: i })))
        )
      } finally {
        writing = false
      }
      await reader
      const elapsed = Date.now() - started
      expect(failures(replies)).toEqual([])

      // Everything the reader saw, in the order it saw it: each value once, ts strictly increasing throughout.
      expect(notStrictlyIncreasing(polled)).toBeUndefined()
      const counts = tally(polled.map((entry) => entry.point.number))
      const wrong = range(300)
        .map((i) => ({ value: i, seen: counts.get(String(i)) ?? 0 }))
        .filter(({ seen }) => seen !== 1)
      expect(wrong).toEqual([])
      expect(polled.length).toBe(300)
      // And the same as one read of everything.
      expect(await read(urls[1]!, key, "spark", 0)).toEqual(polled)
      console.info(`cursor, ${inFlight} in flight: 300 points in ${elapsed} ms, ${polls} polls`)
    })
  }

  test("100 concurrent multi-stream pushes touching A,B and B,A through different processes: all 200", async () => {
    const key = await createAccount(urls[0]!, { A: "number", B: "number" })
    const parts = (names: ReadonlyArray<string>) => names.map((streamName) => ({ streamName, point: { delta: 1 } }))
    const started = Date.now()
    const replies = await pool(
      100,
      range(100).map(
        (i) => () =>
          settle(
            send("POST", `${urls[i % processes]!}/customSend`, {
              accessKey: key,
              streams: parts(i % 2 === 0 ? ["A", "B"] : ["B", "A"])
            })
          )
      )
    )
    const elapsed = Date.now() - started
    expect(failures(replies)).toEqual([])
    // Each push was stored whole: both streams got all 100 deltas.
    for (const stream of ["A", "B"]) {
      expect((await read(urls[2]!, key, stream)).map((entry) => entry.point)).toEqual([{ number: 100 }])
      const all = await read(urls[1]!, key, stream, 0)
      expect(all.length).toBe(100)
      expect(notStrictlyIncreasing(all)).toBeUndefined()
    }
    console.info(`100 multi-stream pushes (A,B / B,A) over ${processes} processes: ${elapsed} ms`)
  })
})
