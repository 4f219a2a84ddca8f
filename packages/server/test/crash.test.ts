import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAccount, notStrictlyIncreasing, push, read, requestTimeoutMs, serverEnv, stderrTail } from "./load.js"
import { type Server, startServer, stop, tempDir, workerPids } from "./support.js"

/**
 * Crash safety (issue "Ingest and read performance"; docs/api.md section 5: "A 200 means the data is durably stored").
 * Fifty keep-alive connections push distinct points as fast as the server answers; after about three seconds the
 * server is killed with SIGKILL, mid-load. Every push answered 200 before that must be there once `serve` is
 * started again on the same database. Pushes that failed or got no answer are unknown: they may or may not be
 * stored, but nothing stored may be something that was never sent, and nothing may be stored twice.
 *
 * Run on SQLite (a temporary file) and PostgreSQL (a fresh database; a missing PostgreSQL fails the suite:
 * openTestDatabase throws), and on SQLite with `serve --workers 2`, where one worker is killed mid-load first (the
 * server goes on) and then the whole server, primary and workers.
 */

/** Real processes on a busy two-core machine: generous limits. */
const timeout = 180_000

const connections = 50
const loadMs = 3_000
/** The load goes on past `loadMs` (up to `maxLoadMs`) until at least this many pushes were answered 200. */
const minimumAcked = 100
const maxLoadMs = 30_000
/** Per push: a push in flight when the server dies fails at once (reset), so this only bounds a hang. */
const pushTimeoutMs = 20_000

/** Ten streams, half number (`{number: n}`), half xy-graph (`{x: n, y: 1}`): every push is its own entry. */
const streams = Array.from({ length: 10 }, (_, i) => ({
  name: `crash-${i}`,
  type: i % 2 === 0 ? "number" : "xy-graph"
}))
const pointOf = (type: string, value: number) => (type === "number" ? { number: value } : { x: value, y: 1 })
const valueOf = (type: string, point: { number?: number; x?: number }) => (type === "number" ? point.number : point.x)

/** A database for one suite, as a `--db` URL. */
interface TestDatabase {
  readonly url: string
  readonly cleanup: () => Promise<void>
}

/**
 * `workers` above 1 runs `serve --workers N`: mid-load one worker is killed (the server goes on with a replacement,
 * under the same load), and then the whole server, primary and workers, at once.
 */
const suite = (name: string, makeDatabase: () => Promise<TestDatabase>, workers = 1) =>
  describe(name, { timeout }, () => {
    let database: TestDatabase | undefined
    const servers: Array<Server> = []
    beforeAll(async () => {
      database = await makeDatabase()
    }, timeout)
    afterAll(async () => {
      await Promise.allSettled(
        servers.map((server) =>
          server.child.exitCode !== null || server.child.signalCode !== null
            ? undefined
            : stop(server).catch(() => server.child.kill("SIGKILL"))
        )
      )
      await database?.cleanup()
    }, timeout)

    it("every push answered 200 before a SIGKILL under load is stored after a restart", async () => {
      const db = database!.url
      const env = workers > 1 ? { ...serverEnv, DASHSTREAM_LOG_LEVEL: "info" } : serverEnv
      const first = await startServer(["--db", db, "--workers", String(workers)], env, 120_000)
      servers.push(first)
      const key = await createAccount(
        first.url,
        Object.fromEntries(streams.map((stream) => [stream.name, stream.type]))
      )

      // The load: `connections` loops, each one push at a time, every point a distinct counter value.
      let running = true
      let counter = 0
      const acknowledged = new Map<string, Array<number>>(streams.map((stream) => [stream.name, []]))
      const otherAnswers: Array<{ status: number; body: unknown }> = []
      let unknown = 0
      const loop = async () => {
        while (running) {
          const value = counter++
          const stream = streams[value % streams.length]!
          try {
            const reply = await push(first.url, key, stream.name, pointOf(stream.type, value), pushTimeoutMs)
            // An answer that arrives after the kill was still written by the server before it died.
            if (reply.status === 200) acknowledged.get(stream.name)!.push(value)
            else otherAnswers.push(reply)
          } catch {
            unknown++
          }
        }
      }
      const loadStarted = Date.now()
      const loops = Array.from({ length: connections }, loop)
      const ackedSoFar = () => [...acknowledged.values()].reduce((n, values) => n + values.length, 0)
      // About three seconds; longer (bounded) if the machine is so busy that few pushes were answered by then.
      await new Promise((wait) => setTimeout(wait, loadMs))
      while (ackedSoFar() < minimumAcked && Date.now() - loadStarted < maxLoadMs) {
        await new Promise((wait) => setTimeout(wait, 100))
      }
      let killedWorker = ""
      const pids = workerPids(first.stderr())
      if (workers > 1) {
        // One worker first: its pushes in flight get no answer; the others and its replacement go on.
        const [id, pid] = [...pids.entries()][0]!
        process.kill(pid, "SIGKILL")
        killedWorker = `worker ${id} killed at ${ackedSoFar()} acknowledged; `
        const ackedAtKill = ackedSoFar()
        const until = Date.now() + maxLoadMs
        while (
          (!first.stderr().includes(`worker ${id} exited unexpectedly`) || ackedSoFar() < ackedAtKill + minimumAcked) &&
          Date.now() < until
        ) {
          await new Promise((wait) => setTimeout(wait, 100))
        }
        expect(first.stderr()).toContain(`worker ${id} exited unexpectedly (signal SIGKILL)`)
        expect(ackedSoFar(), "pushes acknowledged after a worker was killed").toBeGreaterThan(ackedAtKill)
      }
      // The whole server at once: the primary and every worker.
      first.child.kill("SIGKILL")
      for (const pid of workerPids(first.stderr()).values()) {
        try {
          process.kill(pid, "SIGKILL")
        } catch {
          // already gone (the killed worker)
        }
      }
      running = false
      const killedAfter = Date.now() - loadStarted
      await Promise.all(loops)
      const exit = await first.exited
      expect(exit.signal, "the server was still running when it was killed").toBe("SIGKILL")

      const acked = ackedSoFar()
      // A 500 or 503 under plain load is a bug (docs/api.md section 5); so is any other refusal of a valid push.
      expect(otherAnswers, stderrTail(first)).toEqual([])
      // The load must have been real for the check to mean anything.
      expect(acked).toBeGreaterThanOrEqual(minimumAcked)

      const second = await startServer(["--db", db, "--workers", String(workers)], serverEnv, 120_000)
      servers.push(second)
      let stored = 0
      const missing: Array<string> = []
      for (const stream of streams) {
        const entries = await read(second.url, key, stream.name, 0)
        stored += entries.length
        expect(notStrictlyIncreasing(entries)).toBeUndefined()
        const values = entries.map((entry) => valueOf(stream.type, entry.point))
        const present = new Set(values)
        // Nothing twice, and nothing that was never sent (to this stream).
        expect(present.size, `${stream.name}: a value stored twice`).toBe(values.length)
        const foreign = values.filter(
          (v) => typeof v !== "number" || v < 0 || v >= counter || streams[v % streams.length]!.name !== stream.name
        )
        expect(foreign, `${stream.name}: values never sent to it`).toEqual([])
        for (const value of acknowledged.get(stream.name)!) {
          if (!present.has(value)) missing.push(`${stream.name}:${value}`)
        }
      }
      expect(missing, `acknowledged pushes lost after the SIGKILL (${missing.length} of ${acked})`).toEqual([])
      expect(stored).toBeGreaterThanOrEqual(acked)

      // The restarted server takes new pushes and serves them.
      for (const stream of streams) {
        const value = counter + streams.indexOf(stream)
        const reply = await push(second.url, key, stream.name, pointOf(stream.type, value), requestTimeoutMs)
        expect(reply).toEqual({ status: 200, body: { message: "Success!" } })
        const latest = await read(second.url, key, stream.name)
        expect(latest.map((entry) => valueOf(stream.type, entry.point))).toEqual([value])
      }
      expect((await stop(second)).code).toBe(0)

      console.info(
        `${name}: ${killedWorker}killed after ${killedAfter} ms; ${counter} pushes sent, ${acked} answered 200, ` +
          `${unknown} without answer, ${stored} stored (${stored - acked} unacknowledged but stored)`
      )
    })
  })

suite("crash safety, SQLite", async () => {
  const dir = tempDir()
  return { url: `sqlite:${join(dir.path, "crash.db")}`, cleanup: async () => dir.remove() }
})

suite(
  "crash safety, SQLite, serve --workers 2",
  async () => {
    const dir = tempDir()
    return { url: `sqlite:${join(dir.path, "crash.db")}`, cleanup: async () => dir.remove() }
  },
  2
)

suite("crash safety, PostgreSQL", async () => {
  const { openTestDatabase } = await import("@dashstream/storage-postgres/testing")
  const database = await openTestDatabase()
  return { url: database.url, cleanup: database.close }
})
