import type { AccountCache, AccountStore, SessionCache, SessionStore } from "@dashstream/core"
import type { MetricsSnapshot, OtherProcesses, RateLimiter, StreamSlots } from "@dashstream/http"
import { Effect } from "effect"
import { type Database, type SharedFile, sharesFile } from "../../Storage.js"
import type { FromPrimary } from "./protocol.js"
import {
  ClusterRelay,
  clusterStreamSlots,
  forget,
  LeasedRateLimiter,
  otherWorkersMetrics,
  WorkerLink
} from "./WorkerSide.js"

/**
 * What `serve` does differently in a worker of `serve --workers N` (see `Serve.serve`): every piece of state the
 * contract makes per server goes through the primary.
 */
export interface WorkerRole {
  /**
   * This worker runs the daily decimation pass (one per server), gives the first-start hint and keeps the demo
   * (`serve --demo`).
   */
  readonly decimate: boolean
  /** The server already listened when this worker joined: it replaces a worker that exited. */
  readonly replacement: boolean
  /** How the SQLite file is opened (shared with the other workers); `undefined` on PostgreSQL. */
  readonly shared: SharedFile | undefined
  /** The server's per-key rate limit (`--rate-limit`), `undefined` when off. */
  readonly rateLimiter: RateLimiter | undefined
  /** The server's count of open event streams per key. */
  readonly eventStreamSlots: StreamSlots
  /** Tells the primary the HTTP server is bound; the primary prints one listening line for the server. */
  readonly listening: (url: string) => void
  /**
   * Tells the primary the database is empty (`demo`: but for the demo's account): it prints the first-start hint after
   * the listening line.
   */
  readonly hint: (demo: boolean) => void
  /** Gives the primary the demo dashboard's new view token, printed as a link after the console line (`Demo.demoLine`). */
  readonly demo: (viewToken: string, renewed: boolean) => void
  /** The other workers' metrics, for `GET /metrics`. */
  readonly otherMetrics: OtherProcesses
  /** Tells the primary the schema is up to date (the worker welcomed with `migrate`). */
  readonly migrated: () => void
  /** Where this worker's metrics come from when another worker serves a scrape. */
  readonly serveSnapshots: (source: () => Promise<MetricsSnapshot>) => void
  /**
   * The account store the HTTP interface uses: `cache`'s, telling the other workers to forget a revoked key or a
   * created or deleted widget before the admin call is answered; and this worker forgets what the others tell it to.
   */
  readonly accountStore: (cache: AccountCache) => AccountStore["Type"]
  /**
   * The session store the HTTP interface uses: `cache`'s, telling the other workers of a console sign-out before it
   * is answered (so the session is refused by every worker at once); and this worker learns of the others'.
   */
  readonly sessionStore: (cache: SessionCache) => SessionStore["Type"]
  /** The admin token the primary generated for this run (first run, docs/api.md section 14); `undefined` otherwise. */
  readonly adminToken: string | undefined
}

/** The longest a group commit waits for the write lock another worker holds before answering 503 (milliseconds). */
export const lockWaitMs = 5_000

/** What {@link join} gives: the role, and whether the worker is to bring the schema up to date first. */
export interface Joined {
  readonly role: WorkerRole
  readonly migrate: boolean
}

/**
 * Joins the server as a worker: says `hello` to the primary and waits for its `welcome`, then returns this worker's
 * {@link WorkerRole}, and `migrate` when it is to bring the schema up to date before opening the database (then
 * calling `role.migrated`). `workers` and `rateLimit` are the server's settings.
 */
export const join = (database: Database, workers: number, rateLimit: number | null): Effect.Effect<Joined> =>
  Effect.promise(
    () =>
      new Promise<Joined>((resolve) => {
        const link = new WorkerLink()
        let relay: ClusterRelay | undefined
        let cache: AccountCache | undefined
        let sessionCache: SessionCache | undefined
        let snapshots: (() => Promise<MetricsSnapshot>) | undefined
        const onMessage = (message: FromPrimary) => {
          if (relay?.receive(message) === true) return
          switch (message.ds) {
            case "welcome": {
              relay = new ClusterRelay(link, message.followed)
              return resolve({
                role: role(message.decimate, message.replacement === true, relay, message.adminToken),
                migrate: message.migrate
              })
            }
            case "forget":
              forget({ accounts: cache, sessions: sessionCache }, message.what)
              return link.send({ ds: "reply", id: message.id })
            case "metricsGet":
              if (snapshots === undefined) return link.send({ ds: "reply", id: message.id })
              return void snapshots().then(
                (value) => link.send({ ds: "reply", id: message.id, value }),
                () => link.send({ ds: "reply", id: message.id })
              )
            default:
              return
          }
        }
        const invalidate = (what: Parameters<typeof forget>[1]) =>
          Effect.promise(() => link.request<void>((id) => ({ ds: "invalidate", id, what })))
        const role = (
          decimate: boolean,
          replacement: boolean,
          relay: ClusterRelay,
          adminToken: string | undefined
        ): WorkerRole => ({
          decimate,
          replacement,
          adminToken,
          shared: sharesFile(database) ? { relay, lockWait: { _tag: "eventLoop", maxWaitMs: lockWaitMs } } : undefined,
          rateLimiter: rateLimit === null ? undefined : new LeasedRateLimiter(link, rateLimit, workers),
          eventStreamSlots: clusterStreamSlots(link),
          listening: (url) => link.send({ ds: "listening", url }),
          hint: (demo) => link.send({ ds: "hint", demo }),
          demo: (viewToken, renewed) => link.send({ ds: "demo", viewToken, renewed }),
          migrated: () => link.send({ ds: "migrated" }),
          otherMetrics: otherWorkersMetrics(link),
          serveSnapshots: (source) => {
            snapshots = source
          },
          accountStore: (accountCache) => {
            cache = accountCache
            const store = accountCache.store
            return {
              ...store,
              addAccessKey: (id, key, createdAt, revokeOthers) =>
                Effect.tap(store.addAccessKey(id, key, createdAt, revokeOthers), () =>
                  revokeOthers ? invalidate({ keys: true }) : Effect.void
                ),
              // The others may remember the name as absent (a line protocol push skipped it): created, it is written
              // at once by every worker, as by this one.
              createWidget: (id, streamName, type, createdAt) =>
                Effect.tap(store.createWidget(id, streamName, type, createdAt), () =>
                  invalidate({ widget: [id, streamName] })
                ),
              deleteWidget: (id, streamName) =>
                Effect.tap(store.deleteWidget(id, streamName), () => invalidate({ widget: [id, streamName] }))
            }
          },
          sessionStore: (cache) => {
            sessionCache = cache
            return {
              ...cache.store,
              endSession: (id, expiresAt, now) =>
                Effect.tap(cache.store.endSession(id, expiresAt, now), () => invalidate({ session: id }))
            }
          }
        })
        link.onMessage(onMessage)
        link.send({ ds: "hello" })
      })
  )
