import { spawn } from "node:child_process"
import { get } from "node:http"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
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
import { childEnv, cli, root, type Server, startServer, stop, tempDir, workerPids } from "./support.js"
import { binArgs } from "./support/bin.js"

/**
 * `dashstream serve --workers 2` on SQLite ("Several cores"): two worker processes write one file and serve
 * one port. What the contract promises per server holds across them: a subscriber on either worker gets every push
 * stored by either, once, in order; deltas stay exact; the rate limit and a revocation are the server's; one worker
 * runs the daily decimation pass; a killed worker is replaced; SIGTERM answers the requests in flight and exits 0.
 * Which worker served a request is read from the request log lines (`worker=N`).
 */

const timeout = 180_000
const env = { ...serverEnv, DASHSTREAM_LOG_LEVEL: "info" }
const range = (n: number) => Array.from({ length: n }, (_, i) => i)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The workers that logged a request line matching `pattern` (`GET /api/v2/<key>/...` is logged redacted). */
const workersLogging = (server: Server, pattern: RegExp): Set<string> => {
  const found = new Set<string>()
  for (const line of server.stderr().split("\n")) {
    if (!pattern.test(line)) continue
    const worker = /\bworker=(\d+)/.exec(line)?.[1]
    if (worker !== undefined) found.add(worker)
  }
  return found
}

/** `GET url` on a connection of its own (a new connection may go to another worker); resolves with the status. */
const freshGet = (url: string): Promise<number> =>
  new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode ?? 0))
    }).on("error", reject)
  })

/**
 * Pushes `{"delta":1}` to the number stream `streamName` `count` times, 10 at a time (so through both workers), and
 * checks that every push was answered 200 and that each of `streams` received the totals 1 to `count`, once, in order.
 */
const deltasReachEvery = async (
  server: Server,
  key: string,
  streamName: string,
  count: number,
  streams: Iterable<SseStream>
) => {
  const replies = await pool(
    10,
    range(count).map(() => () => push(server.url, key, streamName, { delta: 1 }))
  )
  expect(replies.filter((r) => r.status !== 200)).toEqual([])
  for (const stream of streams) {
    await stream.until(`${count} entries`, () => entriesOf(stream.events).length >= count, 20_000)
    expect(entriesOf(stream.events).map((e) => (e.point as { number: number }).number)).toEqual(
      range(count).map((i) => i + 1)
    )
  }
}

const waitFor = async (what: string, predicate: () => boolean, ms = 30_000) => {
  const until = Date.now() + ms
  while (!predicate()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await sleep(50)
  }
}

describe("serve --workers 2 on SQLite", { timeout }, () => {
  const dir = tempDir()
  const db = `sqlite:${join(dir.path, "workers.db")}`
  let server: Server
  const streams: Array<SseStream> = []

  beforeAll(async () => {
    server = await startServer(["--db", db, "--workers", "2", "--log-requests"], env, 120_000)
  }, timeout)

  afterAll(async () => {
    for (const stream of streams) stream.close()
    await stop(server, "SIGTERM", 20_000).catch(() => server.child.kill("SIGKILL"))
    dir.remove()
  }, timeout)

  const test = (title: string, body: () => Promise<void>) =>
    it(title, async () => {
      try {
        await body()
      } catch (error) {
        if (error instanceof Error) error.message += `\n--- server stderr:\n${stderrTail(server, 60)}`
        throw error
      }
    })

  test("one listening line; two workers; the daily decimation pass is scheduled by one of them", async () => {
    expect(server.stdout().match(/Dashstream listening on/g)).toHaveLength(1)
    expect([...workerPids(server.stderr()).keys()].sort()).toEqual(["1", "2"])
    await waitFor("the pass to be scheduled", () => server.stderr().includes("next decimation pass scheduled"))
    await sleep(500)
    const scheduled = server.stderr().match(/message="next decimation pass scheduled".*/g) ?? []
    expect(scheduled, server.stderr()).toHaveLength(1)
    expect(scheduled[0]).toMatch(/worker=1\b/)
  })

  test("subscribers on both workers get every delta pushed through both, once, in order; the total is exact", async () => {
    const key = await createAccount(server.url, { total: "number" })
    // Each event stream is a connection of its own; the primary hands connections to the workers in turn.
    for (let i = 0; i < 6; i++) {
      const stream = await openOk(server.url, eventsPath(key, "total", "?since=0"))
      streams.push(stream)
      await stream.until("the retry line", () => stream.retries.length > 0)
    }
    const pushes = 200
    const replies = await pool(
      25,
      range(pushes).map(() => () => push(server.url, key, "total", { delta: 1 }))
    )
    expect(replies.filter((r) => r.status !== 200)).toEqual([])
    const entries = await read(server.url, key, "total", 0)
    expect(entries.map((e) => e.point.number)).toEqual(range(pushes).map((i) => i + 1))
    expect(notStrictlyIncreasing(entries)).toBeUndefined()
    for (const stream of streams.slice(-6)) {
      await stream.until(`${pushes} entries`, () => entriesOf(stream.events).length >= pushes, 20_000)
      const received = entriesOf(stream.events)
      expect(received.map((e) => e.point)).toEqual(entries.map((e) => e.point))
      expect(received.map((e) => e.ts)).toEqual(entries.map((e) => e.ts))
    }
    expect(workersLogging(server, /GET \/api\/v2\/\S+\/datastream\/total\/events/)).toEqual(new Set(["1", "2"]))
    expect(workersLogging(server, /POST \/customSend 200/)).toEqual(new Set(["1", "2"]))
  })

  test("GET /metrics covers both workers: every push of the server is counted in one scrape", async () => {
    const key = await createAccount(server.url, { counted: "number" })
    const metric = async () => {
      const text = (await send("GET", `${server.url}/metrics`)).body as string
      const line = /^dashstream_points_stored_total (\d+)/m.exec(text)
      return Number(line?.[1] ?? NaN)
    }
    const before = await metric()
    const replies = await pool(
      10,
      range(40).map((i) => () => push(server.url, key, "counted", i))
    )
    expect(replies.every((r) => r.status === 200)).toBe(true)
    expect(await metric()).toBe(before + 40)
  })

  test("a key revoked through one worker is refused by every worker at once", async () => {
    const headers = { authorization: `Bearer ${adminToken}` }
    const account = await send("POST", `${server.url}/admin/accounts`, {}, { headers })
    const { id, accessKey } = account.body as { id: string; accessKey: string }
    await send("POST", `${server.url}/admin/accounts/${id}/widgets`, { streamName: "s", type: "number" }, { headers })
    // Both workers look the key up and keep it in their account cache (1 second).
    const warm = await pool(
      10,
      range(20).map((i) => () => push(server.url, accessKey, "s", i))
    )
    expect(warm.every((r) => r.status === 200)).toBe(true)
    const revoked = await send("POST", `${server.url}/admin/accounts/${id}/access-keys?revokeOthers=true`, undefined, {
      headers
    })
    expect(revoked.status).toBe(201)
    const after = await pool(
      10,
      range(20).map((i) => () => push(server.url, accessKey, "s", i))
    )
    expect(after.map((r) => r.status)).toEqual(range(20).map(() => 403))
    expect(workersLogging(server, /POST \/customSend 403/)).toEqual(new Set(["1", "2"]))
  })

  test("a widget created through one worker is written at once by every worker that remembered it absent", async () => {
    const headers = { authorization: `Bearer ${adminToken}` }
    const account = await send("POST", `${server.url}/admin/accounts`, {}, { headers })
    const { id, accessKey } = account.body as { id: string; accessKey: string }
    const write = async (i: number) => {
      const response = await fetch(`${server.url}/write?p=${accessKey}&precision=s`, {
        method: "POST",
        body: `made value=${i} ${1_700_000_000 + i}`
      })
      await response.arrayBuffer()
      return { status: response.status, skipped: response.headers.get("x-dashstream-skipped") }
    }
    // Both workers skip the undeclared stream and remember it absent (1 second).
    const before = await pool(
      10,
      range(20).map((i) => () => write(i))
    )
    expect(before).toEqual(range(20).map(() => ({ status: 204, skipped: "1" })))
    expect(workersLogging(server, /POST \/write\S* 204/)).toEqual(new Set(["1", "2"]))
    const created = await send(
      "POST",
      `${server.url}/admin/accounts/${id}/widgets`,
      { streamName: "made.value", type: "line-graph" },
      { headers }
    )
    expect(created.status).toBe(201)
    const after = await pool(
      10,
      range(20).map((i) => () => write(100 + i))
    )
    expect(after).toEqual(range(20).map(() => ({ status: 204, skipped: "0" })))
    expect(await read(server.url, accessKey, "made.value", 0)).toHaveLength(20)
  })

  test("a worker killed with SIGKILL is logged and replaced; pushes and live updates go on", async () => {
    const key = await createAccount(server.url, { after: "number" })
    const pid = workerPids(server.stderr()).get("2")!
    process.kill(pid, "SIGKILL")
    await waitFor("the replacement", () => workerPids(server.stderr()).has("3"))
    expect(server.stderr()).toMatch(/worker 2 exited unexpectedly \(signal SIGKILL\); starting a replacement/)
    const listening = new Set<SseStream>()
    for (let i = 0; i < 4; i++) {
      const stream = await openOk(server.url, eventsPath(key, "after", "?since=0"))
      streams.push(stream)
      listening.add(stream)
    }
    // The replacement takes connections once it listens.
    await waitFor("a request served by worker 3", () => {
      void freshGet(`${server.url}/healthz`)
      return workersLogging(server, /GET \/healthz/).has("3")
    })
    await deltasReachEvery(server, key, "after", 50, listening)
  })
})

describe("serve --workers 2: the rate limit is the server's", { timeout }, () => {
  const dir = tempDir()
  let server: Server

  beforeAll(async () => {
    const db = `sqlite:${join(dir.path, "rate.db")}`
    server = await startServer(["--db", db, "--workers", "2", "--rate-limit", "10", "--log-requests"], env, 120_000)
  }, timeout)

  afterAll(async () => {
    await stop(server, "SIGTERM", 20_000).catch(() => server.child.kill("SIGKILL"))
    dir.remove()
  }, timeout)

  it("a burst through both workers gets at most the burst of 10 plus what refills meanwhile", async () => {
    const key = await createAccount(server.url, { r: "number" })
    const started = performance.now()
    const replies = await Promise.all(range(60).map((i) => push(server.url, key, "r", i)))
    const seconds = (performance.now() - started) / 1000
    const ok = replies.filter((r) => r.status === 200).length
    const limited = replies.filter((r) => r.status === 429).length
    expect(ok + limited).toBe(60)
    expect(ok).toBeGreaterThanOrEqual(10)
    // One process per worker would allow 10 each.
    expect(ok, `${ok} allowed in ${seconds.toFixed(2)} s`).toBeLessThanOrEqual(10 + Math.floor(10 * seconds) + 1)
    expect(workersLogging(server, /POST \/customSend (200|429)/)).toEqual(new Set(["1", "2"]))
  })
})

describe("serve --workers 2: shutdown", { timeout }, () => {
  it("SIGTERM under load: pushes in flight are answered and stored, event streams end, every process exits 0", async () => {
    const dir = tempDir()
    const db = `sqlite:${join(dir.path, "shutdown.db")}`
    const server = await startServer(["--db", db, "--workers", "2"], env, 120_000)
    let second: Server | undefined
    try {
      const key = await createAccount(server.url, { n: "number" })
      const stream = await openOk(server.url, eventsPath(key, "n"))
      await stream.until("the retry line", () => stream.retries.length > 0)
      const acknowledged: Array<number> = []
      const failures: Array<string> = []
      let running = true
      let counter = 0
      const loop = async () => {
        while (running) {
          const value = counter++
          try {
            const reply = await push(server.url, key, "n", value, 20_000)
            if (reply.status === 200) acknowledged.push(value)
            else failures.push(`${reply.status} ${JSON.stringify(reply.body)}`)
          } catch {
            // Refused once the server stopped accepting: not an answer, not acknowledged.
            await sleep(20)
          }
        }
      }
      const loops = range(20).map(loop)
      await waitFor("some acknowledged pushes", () => acknowledged.length >= 50)
      const pids = [...workerPids(server.stderr()).values()]
      const exit = await stop(server, "SIGTERM", 20_000)
      running = false
      await Promise.all(loops)
      expect(exit.code, stderrTail(server)).toBe(0)
      expect(
        failures.filter((f) => !f.startsWith("503")),
        "answers other than 200 or a shutdown 503"
      ).toEqual([])
      expect(stream.state()).toBe("ended")
      for (const pid of pids) expect(() => process.kill(pid, 0), `worker ${pid} still running`).toThrow()
      second = await startServer(["--db", db, "--workers", "1"], env, 120_000)
      const stored = new Set((await read(second.url, key, "n", 0)).map((e) => e.point.number as number))
      expect(acknowledged.filter((v) => !stored.has(v))).toEqual([])
    } finally {
      if (second !== undefined) await stop(second).catch(() => second!.child.kill("SIGKILL"))
      if (server.child.exitCode === null) server.child.kill("SIGKILL")
      dir.remove()
    }
  })
})

describe("serve --workers 2: SIGTERM during startup", { timeout }, () => {
  // A signal while the primary and its workers are still starting: the server exits 0 and leaves no worker behind.
  // (The race fixed last session, a send to a worker whose channel had just closed failing with EPIPE and crashing
  // the primary, did not reproduce here with that fix removed, in 9 runs with the bundled command: this guards
  // shutdown during startup in general, not that race.)
  const moments = [
    { name: "as the first worker starts", line: /message="worker 1 started"/ },
    { name: "as the second worker starts", line: /message="worker 2 started"/ },
    { name: "as the server listens", line: /listening on/ }
  ]
  for (const { name, line } of moments) {
    it(`SIGTERM ${name}: every process exits 0 and no worker is left`, async () => {
      const dir = tempDir()
      try {
        for (let run = 0; run < 2; run++) {
          const child = spawn(
            process.execPath,
            [
              ...binArgs,
              "serve",
              "--port",
              "0",
              "--workers",
              "2",
              "--db",
              `sqlite:${join(dir.path, `startup-${run}.db`)}`
            ],
            { cwd: root, env: childEnv(env) }
          )
          let output = ""
          const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
          const seen = new Promise<void>((resolve) => {
            const onData = (chunk: Buffer) => {
              output += chunk.toString("utf8")
              if (line.test(output)) resolve()
            }
            child.stdout.on("data", onData)
            child.stderr.on("data", onData)
          })
          await Promise.race([seen, exited])
          child.kill("SIGTERM")
          const code = await exited
          expect(code, output.slice(-3000)).toBe(0)
          const pids = [...workerPids(output).values()]
          await waitFor("the workers to exit", () => pids.every((pid) => !isRunning(pid)), 10_000)
        }
      } finally {
        dir.remove()
      }
    })
  }
})

const isRunning = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe("serve --workers: the flag", { timeout: 60_000 }, () => {
  it("anything but a whole number from 1 to 1024 is a usage error (exit 2), from the flag or DASHSTREAM_WORKERS", async () => {
    for (const bad of ["0", "two", "1.5", "-3"]) {
      const result = await cli(["serve", "--workers", bad, "--port", "0", "--db", "sqlite::memory:"])
      expect(result.code, result.stderr).toBe(2)
      expect(result.stderr).toMatch(/^dashstream: --workers must be a whole number of processes from 1 to 1024/)
    }
    const fromEnv = await cli(["serve", "--port", "0", "--db", "sqlite::memory:"], { DASHSTREAM_WORKERS: "zero" })
    expect(fromEnv.code).toBe(2)
    expect(fromEnv.stderr).toMatch(/^dashstream: DASHSTREAM_WORKERS must be a whole number/)
  })
})

describe("serve --workers 2 on PostgreSQL", { timeout }, () => {
  it("subscribers on both workers get every delta pushed through both (LISTEN/NOTIFY), once, in order", async () => {
    const { openTestDatabase } = await import("@dashstream/storage-postgres/testing")
    const database = await openTestDatabase()
    const server = await startServer(["--db", database.url, "--workers", "2", "--log-requests"], env, 120_000)
    const opened: Array<SseStream> = []
    try {
      const key = await createAccount(server.url, { total: "number" })
      for (let i = 0; i < 4; i++) {
        const stream = await openOk(server.url, eventsPath(key, "total", "?since=0"))
        opened.push(stream)
        await stream.until("the retry line", () => stream.retries.length > 0)
      }
      await deltasReachEvery(server, key, "total", 60, opened)
      expect(workersLogging(server, /POST \/customSend 200/)).toEqual(new Set(["1", "2"]))
      expect((await stop(server, "SIGTERM", 20_000)).code).toBe(0)
    } finally {
      for (const stream of opened) stream.close()
      if (server.child.exitCode === null) server.child.kill("SIGKILL")
      await database.close()
    }
  })
})
