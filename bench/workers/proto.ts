/**
 * Prototype servers for the `serve --workers N` study (run by `bench/workers/run.ts`, not part of the
 * product). One node:cluster primary forks N workers that all serve HTTP on one port (the primary hands out the
 * connections round-robin). Every worker serves `POST /customSend` the way the product's push lane does
 * (`packages/http/src/internal/ingestLane.ts`): raw body, `JSON.parse`, then the real `UseCases.push` (shape check,
 * authentication through the real SQLite account store behind the real 1-second account cache, point decoding),
 * run with `Runtime.runCallback`. Designs:
 *
 * - `a`: each worker opens the SQLite file itself with the real adapter (`@dashstream/storage-sqlite`: group
 *   commit, `synchronous=NORMAL` inside the group, WAL `fsync` on the thread pool before answering). Writers of
 *   different workers are serialised by SQLite's write lock; a worker that finds it taken sleeps in SQLite's busy
 *   handler (better-sqlite3 is built with `HAVE_USLEEP`: sleeps of 1, 2, 5, 10, 15, 20, 25, 25, 25, 50, 50, 100 ms,
 *   up to the 5 s busy timeout), blocking its event loop. Every `BEGIN IMMEDIATE` is timed to count those waits.
 * - `b`: workers decode and authenticate (their own read connection, their own account cache) and send the decoded
 *   `StreamWrite`s to the primary over the cluster IPC channel, batched per event-loop turn; the primary is the
 *   only writer and runs them through the real adapter's stream store (same group commit and WAL sync), answering
 *   each call over IPC once durable.
 * - `ceiling`: workers parse the JSON and answer 200 without storing anything (what N processes can do on this
 *   machine at all).
 *
 * Usage: node --import tsx bench/workers/proto.ts --design a|b|ceiling --workers N --db FILE --port P --control P2
 * The control port (loopback) answers `GET /info` (access key, pids), `GET /stats`, `POST /reset`.
 */
import cluster, { type Worker } from "node:cluster"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { createRequire } from "node:module"
import { parseArgs } from "node:util"
import {
  AccountStore,
  defaultLimits,
  InvalidPoint,
  type Micros,
  StorageUnavailable,
  StreamNotFound,
  StreamStore,
  type StreamWrite,
  UseCases,
  withAccountCache,
  withEffectForms,
  type WriteObserver
} from "@dashstream/core"
import { make as makeSqlite, layer as sqliteLayer } from "@dashstream/storage-sqlite"
import { Cause, Context, Effect, Exit, Layer, ManagedRuntime, Option, Runtime, Scope } from "effect"

const { values } = parseArgs({
  options: {
    design: { type: "string" },
    workers: { type: "string", default: "1" },
    db: { type: "string" },
    port: { type: "string" },
    control: { type: "string" }
  }
})
const design = values.design as "a" | "b" | "ceiling"
if (design !== "a" && design !== "b" && design !== "ceiling") throw new Error("--design a|b|ceiling")
const filename = values.db!
const workerCount = Number(values.workers)

/** What a process counts for the report; the primary sums its workers' and its own. */
interface Stats {
  /** `BEGIN IMMEDIATE` statements run (design a: by the workers). */
  begins: number
  /** Of those, the ones that took over 0.5 ms: they slept in SQLite's busy handler (an uncontended one takes µs). */
  busyWaits: number
  /** Milliseconds spent in those slow `BEGIN IMMEDIATE`s, each blocking its worker's event loop. */
  busyMs: number
  /** The longest one, milliseconds. */
  busyMaxMs: number
  /** `BEGIN IMMEDIATE`s that failed (busy timeout expired or another error). */
  beginFailures: number
  /** Group commits and the calls in them (mean group size = calls / groups). */
  groups: number
  calls: number
  /** IPC messages sent to the writer and the calls they carried (design b). */
  ipcMessages: number
  ipcCalls: number
}

const emptyStats = (): Stats => ({
  begins: 0,
  busyWaits: 0,
  busyMs: 0,
  busyMaxMs: 0,
  beginFailures: 0,
  groups: 0,
  calls: 0,
  ipcMessages: 0,
  ipcCalls: 0
})
let stats = emptyStats()

const sumStats = (all: ReadonlyArray<Stats>): Stats => {
  const total = emptyStats()
  for (const s of all) {
    for (const key of Object.keys(total) as Array<keyof Stats>) {
      total[key] = key === "busyMaxMs" ? Math.max(total[key], s[key]) : total[key] + s[key]
    }
  }
  return total
}

const observer: WriteObserver = {
  groupCommitted: (calls) => {
    stats.groups++
    stats.calls += calls
  }
}

/**
 * Times every `BEGIN IMMEDIATE` of every better-sqlite3 connection of this process (the group commit prepares one
 * per connection). Patches the same module instance the adapter loads (resolved from its package).
 */
const instrumentBegin = (): void => {
  const require = createRequire(import.meta.resolve("@dashstream/storage-sqlite"))
  const Database = require("better-sqlite3") as { prototype: { prepare: (source: string) => unknown } }
  const prepare = Database.prototype.prepare
  Database.prototype.prepare = function (this: unknown, source: string) {
    const statement = prepare.call(this, source) as { run: (...args: Array<unknown>) => unknown }
    if (source !== "BEGIN IMMEDIATE") return statement
    const run = statement.run
    statement.run = function (this: unknown, ...args: Array<unknown>) {
      const start = performance.now()
      let ok = false
      try {
        const result = run.apply(this, args)
        ok = true
        return result
      } finally {
        const ms = performance.now() - start
        stats.begins++
        if (!ok) stats.beginFailures++
        if (ms > 0.5) {
          stats.busyWaits++
          stats.busyMs += ms
          if (ms > stats.busyMaxMs) stats.busyMaxMs = ms
        }
      }
    }
    return statement
  }
}

// ---- IPC messages ----
interface WriteCall {
  readonly id: number
  readonly writes: ReadonlyArray<StreamWrite>
  readonly now: Micros
}
interface CallError {
  readonly tag: string
  readonly message: string
  readonly path?: string
}
type ToWriter =
  { readonly t: "w"; readonly calls: ReadonlyArray<WriteCall> } | { readonly t: "stats"; readonly s: Stats }
type ToWorker =
  | { readonly t: "r"; readonly replies: ReadonlyArray<readonly [number, CallError | null]> }
  | { readonly t: "stats?" }
  | { readonly t: "reset" }
  | { readonly t: "stop" }

const errorOf = (cause: Cause.Cause<unknown>): CallError => {
  const failure = Cause.failureOption(cause)
  if (Option.isNone(failure)) return { tag: "Defect", message: Cause.pretty(cause) }
  const e = failure.value as { _tag?: string; message?: string; path?: string }
  return {
    tag: e._tag ?? "Unknown",
    message: e.message ?? String(e),
    ...(e.path === undefined ? {} : { path: e.path })
  }
}

const rebuild = (e: CallError) =>
  e.tag === "InvalidPoint"
    ? new InvalidPoint({ message: e.message, path: e.path ?? "point" })
    : e.tag === "StreamNotFound"
      ? new StreamNotFound({ message: e.message, path: e.path ?? "streamName" })
      : new StorageUnavailable({ cause: new Error(`${e.tag}: ${e.message}`) })

// ---- the push lane of a worker (what the product's ingest lane does for /customSend, without rate limit, metrics and logging) ----
const successText = '{"message":"Success!"}'
const successHeaders = { "content-type": "application/json", "content-length": String(successText.length) }

const statusOf = (tag: string): number =>
  tag === "Forbidden"
    ? 403
    : tag === "StreamNotFound"
      ? 404
      : tag === "PayloadTooLarge"
        ? 413
        : tag === "StorageUnavailable"
          ? 503
          : tag.startsWith("Invalid") || tag === "UnsupportedCommand"
            ? 400
            : 500

const answer = (res: ServerResponse, status: number, body: string): void => {
  if (res.headersSent || res.destroyed) return
  if (status === 200) {
    res.writeHead(200, successHeaders)
    res.end(successText)
    return
  }
  res.writeHead(status, { "content-type": "application/json" })
  res.end(body)
}

const readBody = (req: IncomingMessage, done: (text: string) => void): void => {
  const chunks: Array<Buffer> = []
  req.on("error", () => {})
  req.on("data", (c: Buffer) => chunks.push(c))
  req.on("end", () => done(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")))
}

const makeHandler = (runtime: Runtime.Runtime<AccountStore | StreamStore> | undefined) => {
  const runCallback = runtime === undefined ? undefined : Runtime.runCallback(runtime)
  return (req: IncomingMessage, res: ServerResponse): void => {
    if (req.method === "GET" && req.url === "/healthz") return answer(res, 200, "")
    if (req.method !== "POST" || !req.url?.startsWith("/customSend")) {
      res.writeHead(404).end()
      return
    }
    readBody(req, (text) => {
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        return answer(res, 400, '{"message":"invalid_json"}')
      }
      if (runCallback === undefined) return answer(res, 200, "")
      runCallback(UseCases.push(body, defaultLimits), {
        onExit: (exit) => {
          if (Exit.isSuccess(exit)) return answer(res, 200, "")
          const e = errorOf(exit.cause)
          answer(res, statusOf(e.tag), JSON.stringify({ message: e.message }))
        }
      })
    })
  }
}

// ---- design b: the StreamStore a worker sees, forwarding writes to the primary ----
const ipcStreamStore = (): Context.Tag.Service<StreamStore> => {
  const waiting = new Map<number, (error: ReturnType<typeof rebuild> | undefined) => void>()
  let nextId = 0
  let outbox: Array<WriteCall> = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    const calls = outbox
    outbox = []
    stats.ipcMessages++
    stats.ipcCalls += calls.length
    process.send!({ t: "w", calls } satisfies ToWriter)
  }
  process.on("message", (m: ToWorker) => {
    if (m.t !== "r") return
    for (const [id, error] of m.replies) {
      const resume = waiting.get(id)
      waiting.delete(id)
      resume?.(error === null ? undefined : rebuild(error))
    }
  })
  const notHere = Effect.die(new Error("not part of the design b prototype (push path only)"))
  return withEffectForms({
    writeDirect: (writes, now, done) => {
      const id = nextId++
      waiting.set(id, done)
      outbox.push({ id, writes, now })
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
      return undefined
    },
    readDirect: () => {
      throw new Error("not part of the design b prototype (push path only)")
    },
    readPage: () => notHere,
    readLive: () => notHere,
    readRange: () => notHere,
    ping: Effect.void
  })
}

const runWorker = async (): Promise<void> => {
  let managed: ManagedRuntime.ManagedRuntime<AccountStore | StreamStore, unknown> | undefined
  if (design === "a") {
    instrumentBegin()
    managed = ManagedRuntime.make(withAccountCache(sqliteLayer({ filename }, observer)))
  } else if (design === "b") {
    // Its own connection for the account store's reads (the stream store it opens is never written through).
    const storeLayer = Layer.scopedContext(
      Effect.map(makeSqlite({ filename }), (stores) =>
        Context.make(AccountStore, stores.accountStore).pipe(Context.add(StreamStore, ipcStreamStore()))
      )
    )
    managed = ManagedRuntime.make(withAccountCache(storeLayer))
  }
  const runtime = managed === undefined ? undefined : await managed.runtime()
  const server = createServer({ keepAliveTimeout: 30_000 }, makeHandler(runtime))
  process.on("message", (m: ToWorker) => {
    if (m.t === "stats?") process.send!({ t: "stats", s: stats } satisfies ToWriter)
    else if (m.t === "reset") stats = emptyStats()
    else if (m.t === "stop") {
      server.close()
      server.closeAllConnections()
      void (managed?.dispose() ?? Promise.resolve()).then(() => process.exit(0))
    }
  })
  server.listen(Number(values.port), "127.0.0.1")
}

// ---- primary ----
const runPrimary = async (): Promise<void> => {
  const scope = Effect.runSync(Scope.make())
  let accessKey = ""
  let writer: Context.Tag.Service<StreamStore> | undefined
  if (design !== "ceiling") {
    const stores = await Effect.runPromise(Scope.extend(makeSqlite({ filename }, observer), scope))
    const setup = Effect.gen(function* () {
      const account = yield* UseCases.createAccount("bench")
      for (const name of [...Array.from({ length: 100 }, (_, k) => `s${k}`), "hot"]) {
        yield* UseCases.createWidget(account.id, name, "number")
      }
      return account.accessKey
    })
    accessKey = await Effect.runPromise(Effect.provideService(setup, AccountStore, stores.accountStore))
    if (design === "b") writer = stores.streamStore
    else await Effect.runPromise(Scope.close(scope, Exit.void))
  }

  const workers: Array<Worker> = []
  const replyQueues = new Map<Worker, Array<readonly [number, CallError | null]>>()
  const sendReplies = (worker: Worker) => {
    const replies = replyQueues.get(worker)!
    replyQueues.set(worker, [])
    if (worker.isConnected()) worker.send({ t: "r", replies } satisfies ToWorker)
  }
  const pendingStats: Array<(s: Stats) => void> = []

  for (let i = 0; i < workerCount; i++) {
    const worker = cluster.fork()
    workers.push(worker)
    replyQueues.set(worker, [])
    worker.on("message", (m: ToWriter) => {
      if (m.t === "stats") pendingStats.shift()?.(m.s)
      else if (m.t === "w" && writer !== undefined) {
        for (const call of m.calls) {
          Effect.runCallback(writer.write(call.writes, call.now), {
            onExit: (exit) => {
              const queue = replyQueues.get(worker)!
              queue.push([call.id, Exit.isSuccess(exit) ? null : errorOf(exit.cause)])
              if (queue.length === 1) setImmediate(() => sendReplies(worker))
            }
          })
        }
      }
    })
    // One at a time: each worker opens the file (and checks its migrations) before the next starts.
    await new Promise<void>((resolve, reject) => {
      worker.once("listening", () => resolve())
      worker.once("exit", (code) => reject(new Error(`worker exited with ${code}`)))
    })
  }

  const collect = async (): Promise<Stats> => {
    const own = stats
    const theirs = await Promise.all(
      workers.map(
        (w) =>
          new Promise<Stats>((resolve) => {
            pendingStats.push(resolve)
            w.send({ t: "stats?" } satisfies ToWorker)
          })
      )
    )
    return sumStats([own, ...theirs])
  }

  const control = createServer((req, res) => {
    if (req.url === "/info") {
      res.end(JSON.stringify({ accessKey, pids: [process.pid, ...workers.map((w) => w.process.pid)] }))
    } else if (req.url === "/stats") {
      void collect().then((s) => res.end(JSON.stringify(s)))
    } else if (req.url === "/reset") {
      stats = emptyStats()
      for (const w of workers) w.send({ t: "reset" } satisfies ToWorker)
      res.end("{}")
    } else res.writeHead(404).end()
  })
  control.listen(Number(values.control), "127.0.0.1")

  process.once("SIGTERM", () => {
    control.close()
    setTimeout(() => process.exit(1), 8000).unref()
    const exits = workers.map((w) => new Promise((resolve) => (w.isDead() ? resolve(0) : w.once("exit", resolve))))
    for (const w of workers) w.send({ t: "stop" } satisfies ToWorker)
    void Promise.all(exits)
      .then(() => (design === "b" ? Effect.runPromise(Scope.close(scope, Exit.void)) : undefined))
      .then(() => process.exit(0))
  })
}

if (cluster.isPrimary) await runPrimary()
else await runWorker()
