/**
 * Several `dashstream serve` processes on one PostgreSQL database behind a real nginx, configured with the README's
 * `upstream dashstream` block and its server block (see `e2e/nginx.ts`: only addresses and ports are changed), as docs/api.md
 * section 16 describes: viewers spread over the three processes; one process is killed with SIGKILL while pushes go
 * on; the viewers it served reconnect through nginx, as `EventSource` does, with `Last-Event-ID`, reach another
 * process and resume (section 10), so that every viewer has received every stored entry once, in order; and every
 * push acknowledged before or after the kill is readable.
 *
 * A missing PostgreSQL or nginx fails the suite: it is never skipped.
 */
import { freePort, openTestDatabase, type TestDatabase } from "@dashstream/storage-postgres/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createAccount, push, read, serverEnv, stderrTail } from "./load.js"
import { type Server, startServer, stop } from "./support.js"
import { type Nginx, readmeBasePath, serverBlock, startNginx, upstreamBlock } from "./e2e/nginx.js"
import { entriesOf, eventsPath, openEvents, type SseStream } from "./e2e/sse.js"

const timeout = 240_000
const processes = 3
/** Viewers of the one stream, opened through nginx (round robin: about a third on each process). */
const viewerCount = 24
/** Pushes made one after another through nginx; the process is killed before push {@link killAt}. */
const pushCount = 240
const killAt = 80
/** The process killed. */
const victim = 1

const range = (n: number) => Array.from({ length: n }, (_, i) => i)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * One viewer: the event streams it opened in turn (the first with `?since=0`, each later one with the `Last-Event-ID`
 * of the entries received so far, as a browser's `EventSource` reconnects), and the loop that reopens a cut one.
 */
class Viewer {
  readonly streams: Array<SseStream> = []
  private stopped = false
  private loop: Promise<void> | undefined

  constructor(
    private readonly baseUrl: string,
    private readonly path: string
  ) {}

  /** Every entry received, over every connection, in order of arrival. */
  received(): Array<{ ts: number; point: unknown }> {
    return this.streams.flatMap((stream) => entriesOf(stream.events).map(({ ts, point }) => ({ ts, point })))
  }

  /** The id of the last entry received on any connection (what `EventSource` sends as `Last-Event-ID`). */
  lastId(): string | undefined {
    for (let i = this.streams.length - 1; i >= 0; i--) {
      const id = this.streams[i]!.lastId()
      if (id !== undefined) return id
    }
    return undefined
  }

  /** Opens the first connection; then keeps one open, reopening through nginx 100 ms after a cut until stopped. */
  async start(): Promise<void> {
    await this.open()
    this.loop = (async () => {
      while (!this.stopped) {
        const current = this.streams[this.streams.length - 1]!
        if (current.state() !== "open") {
          await sleep(100)
          if (!this.stopped) await this.open().catch(() => undefined)
        } else {
          await sleep(20)
        }
      }
    })()
  }

  private async open(): Promise<void> {
    const lastId = this.lastId()
    const stream = await openEvents(this.baseUrl, lastId === undefined ? `${this.path}?since=0` : this.path, {
      ...(lastId === undefined ? {} : { "last-event-id": lastId })
    })
    if (stream.status !== 200) {
      stream.close()
      throw new Error(`event stream answered ${stream.status}: ${stream.errorBody}`)
    }
    this.streams.push(stream)
    await stream.until("the retry line", () => stream.retries.length > 0 || stream.state() !== "open", 10_000)
  }

  /** Stops reopening and closes the open connection. */
  async stop(): Promise<void> {
    this.stopped = true
    await this.loop
    for (const stream of this.streams) stream.close()
  }
}

describe(
  "three serve processes on one PostgreSQL database behind nginx's upstream (the README's blocks)",
  {
    timeout
  },
  () => {
    let database: TestDatabase | undefined
    const servers: Array<Server> = []
    const viewers: Array<Viewer> = []
    let nginx: Nginx | undefined
    /** nginx's URL of Dashstream: `http://127.0.0.1:<port>/dashboards`. */
    let proxied = ""

    beforeAll(async () => {
      database = await openTestDatabase()
      const args = ["--db", database.url, "--base-path", readmeBasePath, "--trust-proxy", "127.0.0.1"]
      const started = await Promise.allSettled(range(processes).map(() => startServer(args, serverEnv, 120_000)))
      for (const result of started) if (result.status === "fulfilled") servers.push(result.value)
      const failed = started.find((result) => result.status === "rejected")
      if (failed !== undefined) throw failed.reason
      const port = await freePort()
      const ports = servers.map((server) => Number(new URL(server.url).port))
      nginx = await startNginx([upstreamBlock(ports), serverBlock(port, "dashstream")], [port])
      proxied = `http://127.0.0.1:${port}${readmeBasePath}`
    }, timeout)

    afterAll(async () => {
      await Promise.allSettled(viewers.map((viewer) => viewer.stop()))
      await nginx?.stop()
      await Promise.allSettled(
        servers.map((server) =>
          server.child.exitCode !== null || server.child.signalCode !== null
            ? undefined
            : stop(server).catch(() => server.child.kill("SIGKILL"))
        )
      )
      await database?.close()
    }, timeout)

    it("a process killed mid-stream: its viewers resume on another through nginx with nothing missing or repeated", async () => {
      try {
        const key = await createAccount(proxied, { spark: "sparkline" })
        for (const _ of range(viewerCount)) {
          const viewer = new Viewer(proxied, eventsPath(key, "spark"))
          viewers.push(viewer)
          await viewer.start()
        }
        // Explicit, increasing timestamps (whole seconds in the past): each push's entry is told apart by its ts.
        const base = Math.floor(Date.now() / 1000) - 10 * pushCount
        const acknowledged: Array<number> = []
        const refused: Array<string> = []
        for (const i of range(pushCount)) {
          if (i === killAt) servers[victim]!.child.kill("SIGKILL")
          const reply = await push(proxied, key, "spark", { number: i, timestamp: base + i }, 15_000).catch(
            (error: unknown) => ({ status: 0, body: String(error) })
          )
          if (reply.status === 200) acknowledged.push(base + i)
          else refused.push(`push ${i}: ${reply.status} ${JSON.stringify(reply.body)}`)
        }
        // At most the pushes in flight at the kill go unanswered (nginx answers 502 for a request the dead process had).
        expect(refused.length, refused.join("\n")).toBeLessThanOrEqual(2)
        const stored = (await read(proxied, key, "spark", 0)).map(({ ts, point }) => ({ ts, point }))
        const storedTs = new Set(stored.map((entry) => entry.ts))
        expect(acknowledged.filter((ts) => !storedTs.has(ts))).toEqual([])
        expect(stored.length).toBeGreaterThanOrEqual(acknowledged.length)

        for (const [n, viewer] of viewers.entries()) {
          const done = Date.now() + 30_000
          while (viewer.received().length < stored.length && Date.now() < done) await sleep(50)
          expect(viewer.received(), `viewer ${n} (${viewer.streams.length} connections)`).toEqual(stored)
        }
        // The viewers were spread: some were cut by the kill and reconnected, the others kept their one connection.
        const reconnected = viewers.filter((viewer) => viewer.streams.length > 1).length
        expect(reconnected).toBeGreaterThanOrEqual(viewerCount / processes - 3)
        expect(reconnected).toBeLessThanOrEqual(viewerCount / processes + 3)
      } catch (error) {
        const logs = servers.map((server, i) => `--- server ${i} stderr:\n${stderrTail(server)}`).join("\n")
        if (error instanceof Error)
          error.message += `\n${logs}\n--- nginx error log:\n${nginx?.errorLog().slice(-3000)}`
        throw error
      }
    })
  }
)
