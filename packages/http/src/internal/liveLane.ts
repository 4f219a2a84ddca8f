import type { IncomingMessage, ServerResponse } from "node:http"
import {
  type AccountStore,
  type ChangeFeed,
  follow,
  type Follower,
  type Following,
  formatTs,
  type LiveSink,
  type Micros,
  type StreamStore
} from "@dashstream/core"
import { Cause, Effect, Exit, Option, Runtime } from "effect"
import { errorReply, internalReply, RateLimited, rateLimited, replyOf } from "../HttpErrors.js"
import type { EventStreamObserver, LiveOptions } from "../HttpConfig.js"
import { causeText } from "./causeText.js"
import type { RateLimiter } from "./rateLimiter.js"
import { redactPath, requestLine } from "./redact.js"
import { writeErrorReply } from "./replies.js"

/**
 * The live lane: `GET /api/v2/<KEY>/datastream/<STREAM>/events` (contract section 10), served straight from Node's
 * request listener like the push lane, because an event stream is a long-lived response written a piece at a time,
 * whose socket buffer must be watched (a slow client) and which must be ended on shutdown. What is sent, and the
 * backlog-then-live hand-over, are core's (`Follow.ts`); this file only writes Server-Sent Events and bounds them.
 */

/** The defaults of {@link LiveOptions} (contract section 10). */
export const defaultLiveOptions: LiveOptions = {
  heartbeatMs: 15_000,
  retryMs: 2_000,
  maxUnsentBytes: 1024 * 1024,
  maxStreamsPerKey: 100
}

/** True for the requests this lane serves: a GET of a stream's `/events` path (other methods go to the `HttpApi`). */
export const isEvents = (method: string | undefined, url: string | undefined): boolean => {
  if (method !== "GET" || url === undefined || !url.startsWith("/api/v2/")) return false
  const q = url.indexOf("?")
  const path = q === -1 ? url : url.slice(0, q)
  if (!path.endsWith("/events")) return false
  const segments = path.split("/")
  // ["", "api", "v2", KEY, "datastream", STREAM, "events"]
  return segments.length === 7 && segments[4] === "datastream" && segments[5] !== ""
}

/** One open event stream. */
interface Connection {
  readonly res: ServerResponse
  readonly key: string
  /** `performance.now()` of the last write (an event or a ping), for the heartbeat. */
  lastWrite: number
  /** Sending live changes (nothing paces the sends): the slow-client bound applies. */
  live: boolean
  closed: boolean
  follower: Follower | undefined
}

/** What the live lane needs from the server. */
export interface LiveLaneOptions {
  readonly limiter: RateLimiter | undefined
  readonly logRequests: boolean
  readonly options: LiveOptions
  readonly observer: EventStreamObserver | undefined
}

/** The live lane: its request listener, and what the server's shutdown and metrics need. */
export interface LiveLane {
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void
  /** Ends every open event stream (a clean end of the response) and refuses new ones (503): for shutdown. */
  readonly closeAll: () => void
  /** The number of open event streams. */
  readonly open: () => number
}

const eventStreamHeaders = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
  "x-accel-buffering": "no",
  connection: "keep-alive"
} as const

// A `data:` field ends at a line break, so a payload holding one is sent as several `data:` lines (SSE joins them
// with "\n" again). Stored JSON never holds a raw line break; this keeps the framing right whatever it holds.
const dataLines = (data: string): string =>
  data.includes("\n") || data.includes("\r") ? data.split(/\r\n|\r|\n/).join("\ndata: ") : data

/** `event: entry` (contract section 10): `id` is the entry's `ts` printed as a read body prints it. */
export const entryEvent = (ts: Micros, data: string): string =>
  `event: entry\nid: ${formatTs(ts)}\ndata: ${dataLines(data)}\n\n`

/** `event: clear` with the clear's own id. */
export const clearEvent = (id: Micros): string => `event: clear\nid: ${formatTs(id)}\ndata: {}\n\n`

const deletedEvent = "event: deleted\ndata: {}\n\n"
const ping = ": ping\n\n"

const tooManyStreams = (max: number) =>
  new RateLimited({ message: `at most ${max} open event streams per access key; close one and retry`, retryAfter: 1 })

/**
 * The live lane's request listener, following streams on `runtime`. Errors (403, 404, 400 `invalid_since`, 429) are
 * answered as JSON before the stream starts; then 200 `text/event-stream` with a `retry:` line at once, the events of
 * core's subscription, `: ping` after `heartbeatMs` without a write, and a disconnect once more than
 * `maxUnsentBytes` wait in the socket's buffer while live (the backlog is paced by the socket's `drain` instead).
 */
export const makeLiveLane = (
  runtime: Runtime.Runtime<AccountStore | StreamStore | ChangeFeed>,
  lane: LiveLaneOptions
): LiveLane => {
  const { limiter, logRequests, observer } = lane
  const { heartbeatMs, retryMs, maxUnsentBytes, maxStreamsPerKey } = lane.options
  const runCallback = Runtime.runCallback(runtime)
  const runFork = Runtime.runFork(runtime)
  const connections = new Set<Connection>()
  // Open (and opening) event streams per access key.
  const perKey = new Map<string, number>()
  let closing = false
  const retryLine = `retry: ${retryMs}\n\n`

  const release = (key: string) => {
    const n = (perKey.get(key) ?? 1) - 1
    if (n <= 0) perKey.delete(key)
    else perKey.set(key, n)
  }

  const log = (req: IncomingMessage, status: number, start: number) => {
    if (logRequests) {
      runFork(Effect.logInfo(requestLine(req.method ?? "GET", req.url ?? "/", status, performance.now() - start)))
    }
  }

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

  const write = (conn: Connection, text: string): void => {
    if (conn.closed) return
    conn.res.write(text)
    conn.lastWrite = performance.now()
    observer?.sent(1)
    if (conn.live && conn.res.writableLength > maxUnsentBytes) {
      // A slow reader: cut it off rather than hold more for it; it resumes with Last-Event-ID and loses nothing.
      runFork(
        Effect.logDebug(
          `event stream of ${redactPath(conn.res.req.url ?? "/")} closed: more than ${maxUnsentBytes} bytes unsent`
        )
      )
      conn.follower?.close()
      conn.res.destroy()
    }
  }

  let heartbeat: NodeJS.Timeout | undefined
  const beat = () => {
    const now = performance.now()
    for (const conn of connections) {
      if (now - conn.lastWrite >= heartbeatMs && conn.res.writableLength === 0) {
        conn.res.write(ping)
        conn.lastWrite = now
      }
    }
  }
  const startHeartbeat = () => {
    if (heartbeat !== undefined) return
    heartbeat = setInterval(beat, Math.max(20, Math.min(1000, heartbeatMs / 4)))
    heartbeat.unref()
  }
  const stopHeartbeat = () => {
    clearInterval(heartbeat)
    heartbeat = undefined
  }

  const sinkOf = (conn: Connection): LiveSink => ({
    entry: (ts, data) => write(conn, entryEvent(ts, data)),
    clear: (id) => write(conn, clearEvent(id)),
    deleted: () => {
      write(conn, deletedEvent)
      conn.res.end()
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
    writable: Effect.async<void>((resume) => {
      const res = conn.res
      if (conn.closed || res.destroyed || !res.writableNeedDrain) return resume(Effect.void)
      const done = () => {
        res.off("drain", done)
        res.off("close", done)
        resume(Effect.void)
      }
      res.on("drain", done)
      res.on("close", done)
    }),
    live: (isLive) => {
      conn.live = isLive
    }
  })

  const start = (req: IncomingMessage, res: ServerResponse, key: string, following: Following, t0: number) => {
    if (closing || res.destroyed || req.destroyed) {
      release(key)
      if (closing) writeErrorReply(res, errorReply(503, "unavailable", "the server is shutting down; retry"))
      return
    }
    res.writeHead(200, eventStreamHeaders)
    res.write(retryLine)
    const conn: Connection = { res, key, lastWrite: performance.now(), live: false, closed: false, follower: undefined }
    connections.add(conn)
    observer?.opened()
    startHeartbeat()
    res.on("close", () => forget(conn))
    log(req, 200, t0)
    runCallback(following.start(sinkOf(conn)), {
      onExit: (exit) => {
        if (Exit.isSuccess(exit)) {
          if (conn.closed) exit.value.close()
          else conn.follower = exit.value
          return
        }
        if (conn.closed) return
        runFork(
          Effect.logWarning(
            `event stream of ${redactPath(req.url ?? "/")} closed: its backlog could not be read\n` +
              causeText(exit.cause, key)
          )
        )
        res.destroy()
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
    let key: string
    let streamName: string
    try {
      key = decodeURIComponent(segments[3]!)
      streamName = decodeURIComponent(segments[5]!)
    } catch {
      return refuse(errorReply(404, "not_found", `no route matches ${redactPath(url)}`))
    }
    const query = new URLSearchParams(q === -1 ? "" : url.slice(q + 1))
    const header = req.headers["last-event-id"]
    if (limiter !== undefined) {
      const wait = limiter.take(key)
      if (wait > 0) return refuse(replyOf(rateLimited(wait)) ?? internalReply)
    }
    const open = perKey.get(key) ?? 0
    if (open >= maxStreamsPerKey) return refuse(replyOf(tooManyStreams(maxStreamsPerKey)) ?? internalReply)
    perKey.set(key, open + 1)
    const params = {
      since: query.get("since") ?? undefined,
      lastEventId: typeof header === "string" ? header : undefined
    }
    runCallback(follow(key, streamName, params), {
      onExit: (exit) => {
        if (Exit.isSuccess(exit)) return start(req, res, key, exit.value, t0)
        release(key)
        const failure = Cause.failureOption(exit.cause)
        const reply = (Option.isSome(failure) ? replyOf(failure.value) : undefined) ?? internalReply
        if (reply.status === 500) {
          runFork(Effect.logError(`internal error answering GET ${redactPath(url)}\n${causeText(exit.cause, key)}`))
        }
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
        conn.res.end(() => socket?.end())
      }
    },
    open: () => connections.size
  }
}
