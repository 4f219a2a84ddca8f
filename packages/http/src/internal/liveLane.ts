import type { IncomingMessage, ServerResponse } from "node:http"
import {
  type AccountStore,
  type ChangeFeed,
  type DashboardFollower,
  type DashboardLayout,
  type DashboardNotFound,
  type DashboardSink,
  type DashboardStore,
  Dashboards,
  type FiringSource,
  follow,
  followDashboard,
  type FollowParams,
  type Following,
  type LiveSink,
  type RotationNotFound,
  Rotations,
  type StorageFailure,
  type StreamStore
} from "@dashstream/core"
import { Cause, Effect, Exit, Option, Runtime } from "effect"
import { errorReply, RateLimited } from "../HttpErrors.js"
import type { EventStreamObserver, LiveOptions } from "../HttpConfig.js"
import { causeText } from "./causeText.js"
import { decodePathSegment, laneLogs, replyOfError, takeToken } from "./laneKit.js"
import type { RateLimiter } from "./rateLimiter.js"
import { redactPath } from "./redact.js"
import { routeNotFound, writeErrorReply } from "./replies.js"
import { clearEvent, dataLines, deletedEvent, eventBytes, eventStreamHeaders, ping } from "./sseEvents.js"
import { makeSseWriter, type SseTarget } from "./sseWriter.js"
import { localStreamSlots, type StreamSlots, whenSlot } from "./streamSlots.js"

/**
 * The live lane: `GET /api/v2/<KEY>/datastream/<STREAM>/events` (docs/api.md section 10), served straight from Node's
 * request listener like the push lane, because an event stream is a long-lived response written a piece at a time,
 * whose socket buffer must be watched (a slow client) and which must be ended on shutdown. What is sent, and the
 * backlog-then-live hand-over, are core's (`Follow.ts`); this file only writes Server-Sent Events and bounds them,
 * through `sseWriter.ts` (each event serialised once, one write per connection per event-loop turn).
 */

/** The defaults of {@link LiveOptions} (docs/api.md section 10). */
export const defaultLiveOptions: LiveOptions = {
  heartbeatMs: 15_000,
  retryMs: 2_000,
  maxUnsentBytes: 1024 * 1024,
  maxStreamsPerKey: 100
}

/** A view token and what it opens: a dashboard (`/d/`, docs/api.md section 11) or a rotation (`/r/`, section 15). */
interface View {
  readonly kind: "d" | "r"
  readonly token: string
}

/**
 * The layout a view token's event stream follows now (see `followDashboard`): a dashboard's, or a rotation's (the
 * union of its dashboards' tiles). Fails with the `...NotFound` of its kind for an unknown or rotated token.
 */
const resolveLayout = (
  view: View
): Effect.Effect<
  DashboardLayout,
  DashboardNotFound | RotationNotFound | StorageFailure,
  AccountStore | DashboardStore
> =>
  view.kind === "d"
    ? Effect.map(Dashboards.resolveView(view.token), Dashboards.dashboardLayout)
    : Effect.map(Rotations.resolveRotationView(view.token), Rotations.rotationLayout)

/** The event that tells a view's open streams its layout changed: `layout` (section 14) or `rotation` (section 15). */
const layoutEvent = (view: View) => (view.kind === "d" ? "layout" : "rotation")

/** One open event stream (what `sseWriter.ts` keeps of it, and the lane's own). */
interface Connection extends SseTarget {
  /** The access key (or view token) it counts against. */
  readonly key: string
  /** A dashboard's or rotation's stream: its view token is checked again from time to time (a rotated token ends it). */
  readonly view: View | undefined
  /** Sending live changes (nothing paces the sends): the slow-client bound applies. */
  live: boolean
  /** A dashboard's snapshot event is being written (a piece at a time): no `: ping` may come between its pieces. */
  inSnapshot: boolean
  closed: boolean
  follower: { readonly close: () => void } | undefined
  /** A dashboard's subscription, which follows its layout changes. */
  dashboard: DashboardFollower | undefined
}

/** What the live lane needs from the server. */
export interface LiveLaneOptions {
  readonly limiter: RateLimiter | undefined
  /** Where open event streams are counted per access key or view token; in this process when undefined. */
  readonly slots?: StreamSlots | undefined
  readonly logRequests: boolean
  readonly options: LiveOptions
  readonly observer: EventStreamObserver | undefined
  /** The firing alert rules of a page's tiles (docs/api.md section 11.5); none shown when undefined. */
  readonly firing?: FiringSource | undefined
}

/**
 * A view token's dashboard is looked up this often (milliseconds) while its event streams are open, in whatever
 * process or server changed it: a rotated token or deleted dashboard ends them, a changed layout reaches them (within 2
 * seconds, docs/api.md section 14).
 */
const revalidateMs = 1_000

/** The live lane: its request listener, and what the server's shutdown and metrics need. */
export interface LiveLane {
  /**
   * Answers a GET the route table (`routeTable.ts`) gave to an event stream: `/api/v2/:accessKey/datastream/
   * :streamName/events` (docs/api.md section 10), `/d/:viewToken/events` (section 11) or `/r/:viewToken/events` (15).
   */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void
  /** Ends every open event stream (a clean end of the response) and refuses new ones (503): for shutdown. */
  readonly closeAll: () => void
  /** The number of open event streams. */
  readonly open: () => number
  /**
   * Looks up the dashboards of the open event streams now rather than at the next round (a second at most): called
   * after this process changed a dashboard or a widget, so that a layout change re-scopes its streams at once.
   */
  readonly dashboardsChanged: () => void
}

const tooManyStreams = (max: number) =>
  new RateLimited({ message: `at most ${max} open event streams per access key; close one and retry`, retryAfter: 1 })

/**
 * The live lane's request listener, following streams on `runtime`. Errors (403, 404, 400 `invalid_since`, 429) are
 * answered as JSON before the stream starts; then 200 `text/event-stream` with a `retry:` line at once, the events of
 * core's subscription, `: ping` after `heartbeatMs` without a write, and a disconnect once more than
 * `maxUnsentBytes` wait in the socket's buffer while live (the backlog is paced by the socket's `drain` instead).
 */
export const makeLiveLane = (
  runtime: Runtime.Runtime<AccountStore | StreamStore | ChangeFeed | DashboardStore>,
  lane: LiveLaneOptions
): LiveLane => {
  const { limiter, logRequests, observer } = lane
  const { heartbeatMs, retryMs, maxUnsentBytes, maxStreamsPerKey } = lane.options
  const runCallback = Runtime.runCallback(runtime)
  const runFork = Runtime.runFork(runtime)
  const connections = new Set<Connection>()
  // Open (and opening) event streams per access key.
  const slots = lane.slots ?? localStreamSlots()
  let closing = false
  const retryLine = `retry: ${retryMs}\n\n`

  const release = (key: string) => slots.release(key)

  const logs = laneLogs(runFork, logRequests)
  const log = (req: IncomingMessage, status: number, start: number) =>
    logs.request(req, req.method ?? "GET", req.url ?? "/", status, start)

  // The one place a connection is let go: on the response's `close` (client gone, ended, destroyed).
  const forget = (conn: Connection) => {
    if (conn.closed) return
    conn.closed = true
    connections.delete(conn)
    release(conn.key)
    conn.follower?.close()
    observer?.closed()
    if (connections.size === 0) stopHeartbeat()
  }

  const { write, flush, end, entryBytes, plainBytes } = makeSseWriter(maxUnsentBytes, observer, (conn) =>
    cutOff(conn as Connection)
  )

  // A slow reader: cut it off rather than hold more for it; it resumes with Last-Event-ID and loses nothing (a
  // dashboard's page reconnects and gets a fresh snapshot).
  const cutOff = (conn: Connection): void => {
    runFork(
      Effect.logDebug(
        `event stream of ${redactPath(conn.res.req.url ?? "/")} closed: more than ${maxUnsentBytes} bytes unsent`
      )
    )
    conn.follower?.close()
    conn.queue = []
    conn.queued = 0
    conn.res.destroy()
  }

  let heartbeat: NodeJS.Timeout | undefined
  let lastRevalidation = performance.now()
  const beat = () => {
    const now = performance.now()
    for (const conn of connections) {
      if (
        now - conn.lastWrite >= heartbeatMs &&
        conn.res.writableLength === 0 &&
        conn.queue.length === 0 &&
        !conn.inSnapshot
      ) {
        conn.res.write(ping)
        conn.lastWrite = now
      }
    }
    if (now - lastRevalidation >= revalidateMs) {
      lastRevalidation = now
      revalidate()
    }
  }

  // Views being looked up (one lookup at a time per view token, however slow the storage), by `kind/token`, each with
  // whether it must be looked up again when that lookup ends (asked for while it ran: it may have read the dashboard or
  // rotation before a change).
  const revalidating = new Map<string, boolean>()
  const viewKey = (view: View) => `${view.kind}/${view.token}`

  // Looks up the dashboard or rotation of each open view token, as changed by this process or any other on the same
  // database: its layout goes to its event streams (core re-scopes them when it changed); a token that no longer
  // names one (rotated, or deleted) ends them, and the page then reconnects, gets 404 and says so.
  const revalidate = () => {
    const views = new Map<string, View>()
    for (const conn of connections) if (conn.view !== undefined) views.set(viewKey(conn.view), conn.view)
    for (const [key, view] of views) {
      if (revalidating.has(key)) {
        revalidating.set(key, true)
        continue
      }
      lookUp(view)
    }
  }

  const lookUp = (view: View): void => {
    const key = viewKey(view)
    const mine = (conn: Connection) => conn.view !== undefined && viewKey(conn.view) === key
    revalidating.set(key, false)
    runCallback(resolveLayout(view), {
      onExit: (exit) => {
        const again = revalidating.get(key) === true
        revalidating.delete(key)
        // Asked for again while it ran: the next lookup's answer supersedes this one.
        if (again) return lookUp(view)
        if (Exit.isSuccess(exit)) {
          for (const conn of connections) if (mine(conn)) conn.dashboard?.relayout(exit.value)
          return
        }
        const failure = Cause.failureOption(exit.cause)
        if (
          Option.isNone(failure) ||
          (failure.value._tag !== "DashboardNotFound" && failure.value._tag !== "RotationNotFound")
        )
          return
        for (const conn of [...connections]) if (mine(conn)) end(conn)
      }
    })
  }

  const startHeartbeat = () => {
    if (heartbeat !== undefined) return
    heartbeat = setInterval(beat, Math.max(20, Math.min(1000, heartbeatMs / 4, revalidateMs / 4)))
    heartbeat.unref()
  }
  const stopHeartbeat = () => {
    clearInterval(heartbeat)
    heartbeat = undefined
  }

  // Completes once the connection's buffer has drained (or the connection is gone): what paces a backlog or snapshot.
  // What waits for the end of the turn is written first, so that it counts.
  const writableOf = (conn: Connection): Effect.Effect<void> =>
    Effect.async<void>((resume) => {
      flush(conn)
      const res = conn.res
      const socket = res.socket
      if (conn.closed || res.destroyed || socket === null || !(res.writableNeedDrain || socket.writableNeedDrain))
        return resume(Effect.void)
      const done = () => {
        socket.off("drain", done)
        res.off("close", done)
        resume(Effect.void)
      }
      socket.on("drain", done)
      res.on("close", done)
    })

  const sinkOf = (conn: Connection): LiveSink => ({
    entry: (ts, data) => write(conn, entryBytes(ts, data)),
    clear: (id) => write(conn, eventBytes(clearEvent(id))),
    deleted: () => {
      write(conn, eventBytes(deletedEvent))
      end(conn)
    },
    failed: (error) => {
      runFork(
        Effect.logWarning(
          `event stream of ${redactPath(conn.res.req.url ?? "/")} closed: catching up from the storage failed ` +
            `(${error._tag}); the client reconnects and resumes`
        )
      )
      conn.res.destroy()
    },
    writable: writableOf(conn),
    live: (isLive) => {
      conn.live = isLive
    }
  })

  /**
   * Sends the 200 and the `retry:` line and registers the connection (or answers 503 when shutting down); `undefined`
   * when the client is gone already. The caller starts what feeds it.
   */
  const open = (
    req: IncomingMessage,
    res: ServerResponse,
    key: string,
    view: View | undefined,
    t0: number
  ): Connection | undefined => {
    if (closing || res.destroyed || req.destroyed) {
      release(key)
      if (closing) writeErrorReply(res, errorReply(503, "unavailable", "the server is shutting down; retry"))
      return undefined
    }
    res.writeHead(200, eventStreamHeaders)
    res.write(retryLine)
    const conn: Connection = {
      res,
      key,
      view,
      lastWrite: performance.now(),
      live: false,
      inSnapshot: false,
      closed: false,
      chunked: res.chunkedEncoding,
      queue: [],
      queued: 0,
      follower: undefined,
      dashboard: undefined
    }
    connections.add(conn)
    observer?.opened()
    startHeartbeat()
    res.on("close", () => forget(conn))
    log(req, 200, t0)
    return conn
  }

  // Runs what feeds an open connection; a failure to read its backlog closes the connection (the client resumes).
  const feed = (
    conn: Connection,
    key: string,
    started: Effect.Effect<{ readonly close: () => void }, StorageFailure>
  ) =>
    runCallback(started, {
      onExit: (exit) => {
        if (Exit.isSuccess(exit)) {
          if (conn.closed) exit.value.close()
          else conn.follower = exit.value
          return
        }
        if (conn.closed) return
        runFork(
          Effect.logWarning(
            `event stream of ${redactPath(conn.res.req.url ?? "/")} closed: its backlog could not be read\n` +
              causeText(exit.cause, key)
          )
        )
        conn.res.destroy()
      }
    })

  const start = (req: IncomingMessage, res: ServerResponse, key: string, following: Following, t0: number) => {
    const conn = open(req, res, key, undefined, t0)
    if (conn !== undefined) feed(conn, key, following.start(sinkOf(conn)))
  }

  const dashboardSinkOf = (conn: Connection, layoutEventName: "layout" | "rotation"): DashboardSink => ({
    // One event written a piece at a time, as core reads it (paced by `writable`): counted once, when it ends.
    snapshot: (part, last) => {
      if (conn.closed) return
      flush(conn)
      const head = conn.inSnapshot ? "" : "event: snapshot\ndata: "
      conn.inSnapshot = !last
      conn.res.write(last ? `${head}${dataLines(part)}\n\n` : head + dataLines(part))
      conn.lastWrite = performance.now()
      if (last) observer?.sent(1)
    },
    entry: (data) => write(conn, plainBytes("entry", data)),
    clear: (data) => write(conn, plainBytes("clear", data)),
    deleted: (data) => write(conn, plainBytes("deleted", data)),
    layout: (data) => write(conn, plainBytes(layoutEventName, data)),
    alerts: (data) => write(conn, plainBytes("alerts", data)),
    failed: (error) => {
      runFork(
        Effect.logWarning(
          `event stream of ${redactPath(conn.res.req.url ?? "/")} closed: catching up from the storage failed ` +
            `(${error._tag}); the page reconnects`
        )
      )
      conn.res.destroy()
    },
    overflowed: () => cutOff(conn),
    writable: writableOf(conn),
    live: (isLive) => {
      conn.live = isLive
    }
  })

  // `GET /d/<viewToken>/events[?layout=<version>]` (docs/api.md section 11): the dashboard's snapshot, then its tiles'
  // events; `layout` names the layout the page shows (section 14: `event: layout` first when it changed since).
  // `GET /r/<viewToken>/events` (section 15): `event: rotation` first, then the same for the union of its dashboards'
  // tiles, each stream followed once.
  const handleView = (req: IncomingMessage, res: ServerResponse, view: View, shown: string | undefined, t0: number) =>
    whenSlot(slots.take(view.token, maxStreamsPerKey), (taken) => {
      if (!taken) {
        writeErrorReply(res, replyOfError(tooManyStreams(maxStreamsPerKey)))
        return log(req, 429, t0)
      }
      if (req.destroyed) return release(view.token)
      resolveView(req, res, view, shown, t0)
    })

  const resolveView = (
    req: IncomingMessage,
    res: ServerResponse,
    view: View,
    shown: string | undefined,
    t0: number
  ) => {
    const token = view.token
    runCallback(resolveLayout(view), {
      onExit: (exit) => {
        if (Exit.isFailure(exit)) {
          release(token)
          const reply = logs.replyOfCause("GET", req.url ?? "/", exit.cause, token)
          writeErrorReply(res, reply)
          return log(req, reply.status, t0)
        }
        const conn = open(req, res, token, view, t0)
        if (conn === undefined) return
        const sink = dashboardSinkOf(conn, layoutEvent(view))
        // A rotation's stream always starts with the rotation and its dashboards' tiles.
        if (view.kind === "r") sink.layout(exit.value.data)
        const follower = followDashboard(exit.value, runtime, sink, {
          maxHeldBytes: maxUnsentBytes,
          shown,
          firing: lane.firing
        })
        conn.follower = follower
        conn.dashboard = follower
      }
    })
  }

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const t0 = logRequests ? performance.now() : 0
    req.on("error", () => {})
    const refuse = (reply: ReturnType<typeof errorReply>) => {
      writeErrorReply(res, reply)
      log(req, reply.status, t0)
    }
    if (closing) return refuse(errorReply(503, "unavailable", "the server is shutting down; retry"))
    const url = req.url ?? "/"
    const q = url.indexOf("?")
    const segments = (q === -1 ? url : url.slice(0, q)).split("/")
    if (segments[1] === "d" || segments[1] === "r") {
      const token = decodePathSegment(segments[2]!)
      if (token === undefined) return refuse(routeNotFound(url))
      const shown =
        q === -1 || segments[1] === "r" ? undefined : (new URLSearchParams(url.slice(q + 1)).get("layout") ?? undefined)
      return handleView(req, res, { kind: segments[1], token }, shown, t0)
    }
    const key = decodePathSegment(segments[3]!)
    const streamName = decodePathSegment(segments[5]!)
    if (key === undefined || streamName === undefined) return refuse(routeNotFound(url))
    const query = new URLSearchParams(q === -1 ? "" : url.slice(q + 1))
    const header = req.headers["last-event-id"]
    const params = {
      since: query.get("since") ?? undefined,
      lastEventId: typeof header === "string" ? header : undefined
    }
    const slot = () =>
      whenSlot(slots.take(key, maxStreamsPerKey), (taken) => {
        if (!taken) return refuse(replyOfError(tooManyStreams(maxStreamsPerKey)))
        if (req.destroyed) return release(key)
        resolve(req, res, key, streamName, params, t0, refuse)
      })
    takeToken(limiter, key, (refusal) => (refusal === undefined ? slot() : refuse(replyOfError(refusal))))
  }

  const resolve = (
    req: IncomingMessage,
    res: ServerResponse,
    key: string,
    streamName: string,
    params: FollowParams,
    t0: number,
    refuse: (reply: ReturnType<typeof errorReply>) => void
  ) => {
    const url = req.url ?? "/"
    runCallback(follow(key, streamName, params), {
      onExit: (exit) => {
        if (Exit.isSuccess(exit)) return start(req, res, key, exit.value, t0)
        release(key)
        const reply = logs.replyOfCause("GET", url, exit.cause, key)
        refuse(reply)
      }
    })
  }

  return {
    handle,
    closeAll: () => {
      closing = true
      for (const conn of [...connections]) {
        conn.follower?.close()
        // End the response, then the connection: a keep-alive socket left idle after it would outlive the server.
        const socket = conn.res.socket
        flush(conn)
        conn.res.end(() => socket?.end())
      }
    },
    open: () => connections.size,
    dashboardsChanged: () => {
      if (connections.size === 0) return
      lastRevalidation = performance.now()
      revalidate()
    }
  }
}
