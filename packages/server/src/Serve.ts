import { randomBytes } from "node:crypto"
import { consolePage } from "@dashstream/console-web"
import {
  AccountStore,
  defaultLimits,
  makeAccountCache,
  makeSessionCache,
  SessionStore,
  withAccountCache,
  withSessionCache
} from "@dashstream/core"
import type * as HttpModule from "@dashstream/http"
import { Cause, Console, Effect, Layer, Option, Redacted } from "effect"
import * as Alerts from "./Alerts.js"
import * as NotificationSender from "./NotificationSender.js"
import { type AdminSetting, adminSetting, type DatabaseConfig, type ServeConfig, startWarnings } from "./Config.js"
import * as Decimation from "./Decimation.js"
import * as Demo from "./Demo.js"
import { firstStartHint } from "./FirstStartHint.js"
import { CommandFailed, type UsageError } from "./Errors.js"
import type { WorkerRole } from "./internal/cluster/WorkerRole.js"
import * as Storage from "./Storage.js"

// Loaded by `serve` itself: the primary process of `serve --workers N` loads this module but serves no HTTP.
const loadHttp: Effect.Effect<typeof HttpModule> = Effect.promise(() => import("@dashstream/http"))

/**
 * `dashstream serve --workers 1` (docs/api.md section 8): migrates the schema, opens the storage, starts the HTTP
 * server, the daily decimation pass (docs/api.md section 9; at `config.decimateAt` UTC, under the storage's pass
 * lock, unless off) and the alert engine and deliverer (docs/api.md section 18, see `Alerts.ts`), and runs until
 * interrupted. On an empty database it prints how to create the first account and widget. `config.workers` is not
 * looked at: `serve --workers N` above 1 is `Workers.run`, whose workers each run {@link serve} (the command line
 * picks one or the other).
 *
 * Shutdown: `runMain` turns SIGINT/SIGTERM into an interruption of this effect. The scope then closes in reverse
 * order of acquisition: first the decimation schedule (a running pass stops between two batches), then the alert
 * engine and deliverer, then the HTTP server (it stops accepting connections, closes idle keep-alive connections and
 * waits for the requests in flight to be answered), then the storage (the SQLite file or PostgreSQL pool is closed).
 * The process then exits 0.
 */
export const run = (db: DatabaseConfig, config: ServeConfig): Effect.Effect<void, CommandFailed | UsageError> =>
  Effect.zipRight(Effect.zipRight(logStartWarnings(config), migrate(db)), serve(db, config, undefined))

/** Logs {@link startWarnings} of `config`, one line each: once per server, by its one process or its primary. */
export const logStartWarnings = (config: ServeConfig): Effect.Effect<void> =>
  Effect.forEach(startWarnings(config), (warning) => Effect.logWarning(warning), { discard: true })

/** Brings the schema up to date and logs it (`schema up to date`, with the migrations applied). */
export const migrate = (db: DatabaseConfig): Effect.Effect<void, CommandFailed | UsageError> =>
  Effect.flatMap(Storage.migrate(db.database), (applied) =>
    Effect.logInfo("schema up to date").pipe(
      Effect.annotateLogs({
        db: Storage.describe(db.database),
        applied: applied.length === 0 ? "none" : applied.join(",")
      })
    )
  )

/**
 * The server on a migrated database, until interrupted (see {@link run}). `role` is a `serve --workers N` worker's
 * part in the server (see `Workers.ts`), `undefined` for the one process of `--workers 1`.
 */
export const serve = (
  db: DatabaseConfig,
  config: ServeConfig,
  role: WorkerRole | undefined
): Effect.Effect<void, CommandFailed | UsageError> =>
  Effect.gen(function* () {
    const Http = yield* loadHttp
    yield* Effect.scoped(
      Effect.gen(function* () {
        // Finalizers run in reverse: this one, added first, runs last, once the storage is closed.
        yield* Effect.addFinalizer(() => Effect.logInfo("stopped"))
        // One registry for the whole process: the storage counts group commits into it, the pass its results. A
        // worker's `/metrics` adds the other workers' figures.
        const metrics = new Http.Metrics(role === undefined ? {} : { others: role.otherMetrics })
        role?.serveSnapshots(() => metrics.snapshot())
        const storage = yield* Layer.build(Storage.layer(db.database, metrics.writeObserver, role?.shared))
        const accounts = yield* Effect.provide(
          Effect.flatMap(AccountStore, (store) => store.countAccounts),
          storage
        ).pipe(
          Effect.mapError(
            (cause) => new CommandFailed({ message: `could not read the ${Storage.describe(db.database)}`, cause })
          )
        )
        const admin = adminSetting(config)
        const adminToken = yield* adminTokenOf(admin, role)
        // One process of the server keeps the demo: the one-process server, or the worker that runs the daily pass. A
        // worker that replaces one that exited keeps the demo's link as it is (the primary printed it already).
        const demo =
          config.demo && (role === undefined || role.decimate)
            ? yield* Effect.provide(Demo.prepare(role?.replacement !== true), storage)
            : undefined
        // The demo's own account does not count: the operator has none of theirs yet.
        const empty = accounts === 0 || (accounts === 1 && demo !== undefined && !demo.created)
        // A worker gives the hint and the demo's link to the primary before it listens: the primary prints them after
        // the listening line.
        if (role?.decimate === true) {
          if (empty) role.hint(demo !== undefined)
          if (demo?.viewToken !== undefined) role.demo(demo.viewToken, demo.renewed)
        }
        let url = ""
        yield* Layer.build(
          Http.layer({
            host: config.host,
            port: config.port,
            adminToken,
            console: consolePage,
            limits: defaultLimits,
            notificationSender: { send: NotificationSender.send },
            rateLimit: config.rateLimit ?? undefined,
            logRequests: config.logRequests,
            logSkipped: config.logSkipped,
            corsOrigins: config.corsOrigins,
            frameAncestors: config.frameAncestors,
            basePath: config.basePath,
            trustProxy: config.trustProxy ?? undefined,
            requestTimeoutMs: config.requestTimeout * 1000,
            metrics,
            rateLimiter: role?.rateLimiter,
            eventStreamSlots: role?.eventStreamSlots,
            onListening:
              role?.listening ??
              ((listening) => {
                url = listening
              })
          }).pipe(
            // Pushes and reads look up the access key and the widget on every request: serve those from memory for
            // a second (a revocation or deletion made by another server process takes effect within that second; by
            // another worker of this server, at once: it tells the others before answering). Console requests check
            // that their session was not signed out, likewise from memory (see `makeSessionCache`).
            Layer.provide(
              role === undefined
                ? withSessionCache(withAccountCache(Layer.succeedContext(storage)))
                : Layer.mergeAll(
                    Layer.succeedContext(storage),
                    Layer.effect(
                      AccountStore,
                      Effect.map(AccountStore, (store) => role.accountStore(makeAccountCache(store)))
                    ).pipe(Layer.provide(Layer.succeedContext(storage))),
                    Layer.effect(
                      SessionStore,
                      Effect.map(SessionStore, (store) => role.sessionStore(makeSessionCache(store)))
                    ).pipe(Layer.provide(Layer.succeedContext(storage)))
                  )
            )
          )
        ).pipe(Effect.catchAllCause((cause) => bindFailure(cause, config)))
        if (role === undefined) {
          yield* Console.log(`Dashstream listening on ${url}`)
          const line = consoleLine(url, admin, adminToken)
          if (line !== undefined) yield* Console.log(line)
          if (demo?.viewToken !== undefined)
            yield* Console.log(Demo.demoLine(shownBase(url), demo.viewToken, demo.renewed))
        }
        // Forked once the HTTP server is up, so interrupted before it and the storage are closed.
        if (demo !== undefined) yield* Effect.forkScoped(Demo.feed(demo).pipe(Effect.provide(storage)))
        if (role === undefined || role.decimate) {
          // Alerts run in one process of the server (see `Alerts.ts`), started once it listens.
          yield* Alerts.start(storage, metrics)
        }
        if (role !== undefined && !role.decimate) {
          // One worker of the server runs the daily pass (the primary picks it).
        } else if (config.decimateAt !== null) {
          // Forked after the storage was built, so interrupted (between two batches) before it is closed.
          yield* Effect.forkScoped(
            Decimation.daily(config.decimateAt, config.decimationPolicy, (result) =>
              metrics.decimationPass(result)
            ).pipe(Effect.provide(storage))
          )
        } else {
          yield* Effect.logInfo("daily decimation pass off (--decimate-at off)")
        }
        if (empty && role === undefined) {
          yield* Console.log(firstStartHint({ db, admin, adminToken, url, demo: demo !== undefined }))
        }
        return yield* Effect.never.pipe(
          Effect.onInterrupt(() =>
            Effect.logInfo("shutting down: answering the requests in flight, then closing the database")
          )
        )
      })
    )
  })

/**
 * A random admin token for a first run (docs/api.md section 14): 256 bits as 43 characters of base64url (safe in a URL
 * fragment). Lives as long as the run: a restart makes another, which ends every console session of the old one.
 */
export const newAdminToken = (): string => randomBytes(32).toString("base64url")

/**
 * The admin token this process serves with: the configured one, the first run's (made here for the one-process
 * server; a worker's comes from its primary, so that every worker of the server has the same), or none.
 */
const adminTokenOf = (admin: AdminSetting, role: WorkerRole | undefined): Effect.Effect<string | undefined> => {
  switch (admin._tag) {
    case "Off":
      return Effect.succeed(undefined)
    case "Token":
      return Effect.succeed(Redacted.value(admin.token))
    case "FirstRun":
      if (role === undefined) return Effect.sync(newAdminToken)
      return role.adminToken === undefined
        ? Effect.dieMessage("the primary sent no admin token for the first run")
        : Effect.succeed(role.adminToken)
  }
}

/**
 * The line `serve` prints after the listening line when the console is on (docs/api.md section 14): on a first run
 * `Console: http://127.0.0.1:<port>/console#token=<token>`, the link that signs in (the token is in the fragment,
 * which a browser never sends); with a configured token, the console's address alone. `url` is the listening URL
 * (`http://HOST:PORT`, then the base path if any, docs/api.md section 16); a wildcard host is shown as 127.0.0.1. `undefined` when the console is off.
 */
export const consoleLine = (url: string, admin: AdminSetting, token: string | undefined): string | undefined => {
  if (admin._tag === "Off" || token === undefined) return undefined
  const base = shownBase(url)
  return admin._tag === "FirstRun"
    ? `Console: ${base}/console#token=${token}`
    : `Console: ${base}/console (sign in with DASHSTREAM_ADMIN_TOKEN)`
}

/** The listening URL `url` as a link to open on this machine: a wildcard host (`0.0.0.0`, `[::]`) shown as 127.0.0.1. */
export const shownBase = (url: string): string => url.replace(/^http:\/\/(0\.0\.0\.0|\[::\])(?=:)/, "http://127.0.0.1")

const bindErrors: Record<string, (config: ServeConfig) => string> = {
  EADDRINUSE: (c) => `port ${c.port} on ${c.host} is already in use; stop the other server or pick another --port`,
  EACCES: (c) => `no permission to listen on port ${c.port}; use a port above 1023 or run with the needed privileges`,
  EADDRNOTAVAIL: (c) => `--host ${c.host} is not an address of this machine`,
  ENOTFOUND: (c) => `--host ${c.host} does not resolve to an address`
}

/** The `code` of the first node system error in an error's `cause` chain. */
const errorCode = (error: unknown): string | undefined => {
  for (let current = error, depth = 0; depth < 8 && typeof current === "object" && current !== null; depth++) {
    if ("code" in current && typeof current.code === "string" && current.code in bindErrors) return current.code
    current = "cause" in current ? current.cause : undefined
  }
  return undefined
}

/**
 * Turns a failure to bind the listening socket (whether the HTTP layer reports it as an error or a defect) into a
 * one-sentence {@link CommandFailed}; any other cause is passed on unchanged.
 */
export const bindFailure = <E>(cause: Cause.Cause<E>, config: ServeConfig): Effect.Effect<never, E | CommandFailed> => {
  const found = [...Cause.failures(cause), ...Cause.defects(cause)]
    .map((error) => ({ error, code: errorCode(error) }))
    .find((entry) => entry.code !== undefined)
  return Option.match(Option.fromNullable(found), {
    onNone: () => Effect.failCause(cause),
    onSome: ({ code, error }) => Effect.fail(new CommandFailed({ message: bindErrors[code!]!(config), cause: error }))
  })
}
