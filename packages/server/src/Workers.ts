import cluster, { type Worker } from "node:cluster"
import { createServer } from "node:net"
import { Console, Effect, Redacted, Runtime } from "effect"
import { adminSetting, type DatabaseConfig, type ServeConfig } from "./Config.js"
import { CommandFailed, type UsageError } from "./Errors.js"
import { Hub } from "./internal/cluster/Hub.js"
import { isMessage, type FromWorker } from "./internal/cluster/protocol.js"
import { join } from "./internal/cluster/WorkerRole.js"
import * as Demo from "./Demo.js"
import { firstStartHint } from "./FirstStartHint.js"
import * as Serve from "./Serve.js"

/**
 * `dashstream serve --workers N` with N above 1 (docs/api.md section 8): a `node:cluster` primary and N worker
 * processes, every worker serving HTTP on the same port (the primary accepts the connections and hands them to the
 * workers in turn).
 *
 * The primary serves no request and opens no database. It checks the port is free and forks the workers; the first
 * to load brings the schema up to date, the others open the database once it has. It prints one
 * `Dashstream listening on ...` line once
 * every worker listens (then the console line and the first-start hint, if the database is empty; on a first run it
 * makes the admin token and gives it to every worker), and holds what the contract makes per
 * server (see `internal/cluster/Hub.ts`): the rate limit's token buckets, the count of open event streams per key,
 * the live-update sequence of a shared SQLite file, the fan-out of admin changes to the workers' account caches,
 * the gathering of every worker's metrics for `GET /metrics`. One worker (the first, or its replacement) runs the
 * daily decimation pass.
 *
 * Each worker is the one-process server (`Serve.serve`) with those pieces wired to the primary: on SQLite it opens
 * the file itself, with its own group commit, and waits for a write lock another worker holds on its event loop
 * (503 after 5 s, as the busy timeout would); on PostgreSQL it has its own pool and its own `LISTEN` connection.
 *
 * A worker that exits unexpectedly is logged and replaced; five unexpected exits within 30 seconds stop the server
 * (exit 1), and so does a worker that exits before the server first listened. SIGINT or SIGTERM: the primary sends
 * SIGTERM to every worker (each ends its event streams, answers its requests in flight, flushes its group commits
 * and closes the database, as the one-process server does) and exits 0 once all have exited 0.
 */
export const run = (db: DatabaseConfig, config: ServeConfig): Effect.Effect<void, CommandFailed | UsageError> =>
  cluster.isPrimary ? primary(db, config) : worker(db, config)

const worker = (db: DatabaseConfig, config: ServeConfig): Effect.Effect<void, CommandFailed | UsageError> =>
  Effect.gen(function* () {
    // Loaded while the primary answers (and another worker migrates).
    void import("@dashstream/http")
    const { role, migrate } = yield* join(db.database, config.workers, config.rateLimit)
    if (migrate) yield* Serve.migrate(db).pipe(Effect.tap(() => Effect.sync(role.migrated)))
    yield* Serve.serve(db, config, role)
  }).pipe(Effect.annotateLogs("worker", String(cluster.worker?.id ?? "?")))

/** Unexpected worker exits tolerated within {@link crashWindowMs} before the server stops. */
const maxCrashes = 5
const crashWindowMs = 30_000

const primary = (db: DatabaseConfig, config: ServeConfig): Effect.Effect<void, CommandFailed | UsageError> =>
  Effect.gen(function* () {
    yield* Serve.logStartWarnings(config)
    if (config.port !== 0) {
      yield* probePort(config).pipe(
        Effect.catchAllCause((cause) => Serve.bindFailure(cause, config)),
        Effect.mapError((error) =>
          error instanceof CommandFailed
            ? error
            : new CommandFailed({ message: `could not listen on ${config.host}:${config.port}: ${error.message}` })
        )
      )
    }
    const runtime = yield* Effect.runtime<never>()
    const log = (effect: Effect.Effect<void>) => Runtime.runFork(runtime)(effect)
    const admin = adminSetting(config)
    // Made once here and given to every worker (in `welcome`): the server has one token, whichever worker answers.
    const adminToken =
      admin._tag === "FirstRun"
        ? Serve.newAdminToken()
        : admin._tag === "Token"
          ? Redacted.value(admin.token)
          : undefined
    const supervisor = new Supervisor(config, log, admin._tag === "FirstRun" ? adminToken : undefined)
    yield* Effect.addFinalizer(() => Effect.sync(() => supervisor.hub.close()))
    supervisor.start()
    const url = yield* Effect.promise(() => supervisor.listening).pipe(
      Effect.flatMap((outcome) =>
        typeof outcome === "string"
          ? Effect.succeed(outcome)
          : Effect.fail(new CommandFailed({ message: outcome.error }))
      ),
      Effect.onError(() => Effect.promise(() => supervisor.stop()))
    )
    yield* Console.log(`Dashstream listening on ${url}`)
    const line = Serve.consoleLine(url, admin, adminToken)
    if (line !== undefined) yield* Console.log(line)
    if (supervisor.demo !== undefined) {
      yield* Console.log(Demo.demoLine(Serve.shownBase(url), supervisor.demo.viewToken, supervisor.demo.renewed))
    }
    yield* Effect.logInfo(`serving with ${config.workers} worker processes`)
    if (supervisor.hint !== undefined) {
      yield* Console.log(firstStartHint({ db, admin, adminToken, url, demo: supervisor.hint.demo }))
    }
    const failure = yield* Effect.promise(() => supervisor.failed).pipe(
      Effect.onInterrupt(() =>
        Effect.zipRight(
          Effect.logInfo("shutting down: stopping the workers (each answers its requests in flight)"),
          Effect.flatMap(
            Effect.promise(() => supervisor.stop()),
            (bad) => (bad.length === 0 ? Effect.logInfo("stopped") : Effect.logWarning(`stopped; ${bad.join("; ")}`))
          )
        )
      )
    )
    yield* Effect.promise(() => supervisor.stop())
    return yield* new CommandFailed({ message: failure })
  }).pipe(Effect.scoped)

/** Fails with the listen error when `host:port` cannot be bound (port taken, no permission, not an address here). */
const probePort = (config: ServeConfig): Effect.Effect<void, Error> =>
  Effect.async<void, Error>((resume) => {
    const server = createServer()
    server.once("error", (error) => resume(Effect.fail(error)))
    server.listen({ host: config.host, port: config.port, exclusive: true }, () =>
      server.close(() => resume(Effect.void))
    )
  })

/** The callback of a send to a worker: a failure means the worker is exiting (see `Supervisor`'s `send`). */
const ignoreSendError = (): void => {}

/** How a worker ended. */
const exitText = (code: number | null, signal: string | null) =>
  signal !== null ? `signal ${signal}` : `code ${code ?? "?"}`

/**
 * The primary's bookkeeping of the worker processes: forks them, relays their messages to the {@link Hub}, replaces
 * those that die, stops them all on shutdown.
 */
class Supervisor {
  readonly hub: Hub
  /** A worker found the database empty (`demo`: but for the demo's account): the first-start hint is printed. */
  hint: { readonly demo: boolean } | undefined = undefined
  /** The demo dashboard's view token a worker made (`serve --demo`), printed as a link after the console line. */
  demo: { readonly viewToken: string; readonly renewed: boolean } | undefined = undefined
  /** Resolves with the server's URL once every worker listens, or with the error that stopped the start. */
  readonly listening: Promise<string | { readonly error: string }>
  /** Resolves with a message when the workers keep dying (the server stops). */
  readonly failed: Promise<string>
  private resolveListening: (outcome: string | { readonly error: string }) => void = () => {}
  private resolveFailed: (message: string) => void = () => {}
  private readonly live = new Map<number, Worker>()
  private readonly listeningWorkers = new Set<number>()
  private readonly hellos: Array<number> = []
  private migrating: number | undefined = undefined
  private url: string | undefined = undefined
  private isMigrated = false
  private started = false
  private stopping: Promise<ReadonlyArray<string>> | undefined = undefined
  private decimating: number | undefined = undefined
  private crashes: Array<number> = []
  private readonly badExits: Array<string> = []

  constructor(
    private readonly config: ServeConfig,
    private readonly log: (effect: Effect.Effect<void>) => void,
    adminToken: string | undefined
  ) {
    this.hub = new Hub({
      adminToken,
      send: (id, message) => {
        const w = this.live.get(id)
        // A worker can close its channel between the check and the write (it is exiting: shutdown, or it died):
        // the write then fails with EPIPE, which without a callback is an 'error' event that would crash the
        // primary. Its exit is what handles a worker that is gone (see `exited`), so the failed send is dropped.
        if (w !== undefined && w.isConnected()) w.send(message, ignoreSendError)
      },
      rateLimit: config.rateLimit,
      now: () => performance.now()
    })
    this.listening = new Promise((resolve) => (this.resolveListening = resolve))
    this.failed = new Promise((resolve) => (this.resolveFailed = resolve))
  }

  /** Forks the workers; each says `hello` once loaded (answered `welcome`). */
  start(): void {
    for (let i = 0; i < this.config.workers; i++) this.fork()
  }

  /**
   * Stops every worker with SIGTERM and resolves once all have exited, with what went wrong (workers that exited
   * with another code than 0). Idempotent.
   */
  stop(): Promise<ReadonlyArray<string>> {
    if (this.stopping !== undefined) return this.stopping
    this.stopping = new Promise((resolve) => {
      const check = () => {
        if (this.live.size === 0) resolve(this.badExits)
      }
      cluster.on("exit", check)
      for (const w of this.live.values()) w.process.kill("SIGTERM")
      check()
    })
    this.resolveListening({ error: "the server stopped before it listened" })
    return this.stopping
  }

  private fork(): void {
    this.watch(cluster.fork())
  }

  private watch(w: Worker): void {
    this.live.set(w.id, w)
    this.hub.added(w.id)
    if (this.decimating === undefined) this.decimating = w.id
    this.log(Effect.logInfo(`worker ${w.id} started`).pipe(Effect.annotateLogs("pid", String(w.process.pid))))
    w.on("message", (message: unknown) => this.onMessage(w, message))
    w.on("exit", (code, signal) => this.exited(w, code, signal))
  }

  private onMessage(w: Worker, message: unknown): void {
    if (!isMessage(message)) return
    this.receive(w.id, message as FromWorker)
  }

  private receive(id: number, message: FromWorker): void {
    switch (message.ds) {
      case "hello":
        if (this.isMigrated) return this.welcome(id, false)
        if (this.migrating === undefined) {
          // The first worker loaded brings the schema up to date; the others wait for it.
          this.migrating = id
          return this.welcome(id, true)
        }
        return void this.hellos.push(id)
      case "migrated":
        this.isMigrated = true
        for (const waiting of this.hellos.splice(0)) this.welcome(waiting, false)
        return
      case "listening":
        this.url ??= message.url
        this.listeningWorkers.add(id)
        if (!this.started && this.listeningWorkers.size >= this.config.workers) {
          this.started = true
          this.resolveListening(this.url)
        }
        return
      case "hint":
        this.hint ??= { demo: message.demo }
        return
      case "demo":
        this.demo ??= { viewToken: message.viewToken, renewed: message.renewed }
        return
      default:
        return this.hub.receive(id, message)
    }
  }

  private welcome(id: number, migrate: boolean): void {
    this.hub.ready(id, id === this.decimating, migrate, this.started)
  }

  private exited(w: Worker, code: number | null, signal: string | null): void {
    this.live.delete(w.id)
    this.listeningWorkers.delete(w.id)
    const hello = this.hellos.indexOf(w.id)
    if (hello !== -1) this.hellos.splice(hello, 1)
    this.hub.removed(w.id)
    const how = exitText(code, signal)
    if (this.stopping !== undefined) {
      if (code !== 0 && signal !== "SIGTERM") this.badExits.push(`worker ${w.id} exited with ${how}`)
      return
    }
    if (!this.started) {
      this.resolveListening({ error: `worker ${w.id} exited with ${how} before the server listened` })
      return
    }
    this.log(
      Effect.logWarning(`worker ${w.id} exited unexpectedly (${how}); starting a replacement`).pipe(
        Effect.annotateLogs("pid", String(w.process.pid))
      )
    )
    const now = Date.now()
    this.crashes = [...this.crashes.filter((t) => now - t < crashWindowMs), now]
    if (this.crashes.length >= maxCrashes) {
      this.resolveFailed(`${maxCrashes} workers exited unexpectedly within ${crashWindowMs / 1000} seconds; stopping`)
      return
    }
    if (this.decimating === w.id) this.decimating = undefined
    this.fork()
  }
}
