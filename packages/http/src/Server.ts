import type { Duplex } from "node:stream"
import { createServer, type IncomingMessage, type Server as NodeServer, type ServerResponse } from "node:http"
import {
  type AccountStore,
  AlertStore,
  type ChangeFeed,
  type DashboardStore,
  makeRuleWatch,
  type SessionStore,
  type StreamStore
} from "@dashstream/core"
import { Console, Effect, Layer, Runtime, type Scope } from "effect"
import { errorBodyText, errorReply } from "./HttpErrors.js"
import type { HandlerConfig, HttpConfig } from "./HttpConfig.js"
import { makeApiLane } from "./internal/apiLane.js"
import { type CorsRoute, makeCors } from "./internal/cors.js"
import { defaultLiveOptions, makeLiveLane } from "./internal/liveLane.js"
import { makePageLane } from "./internal/pageLane.js"
import { makeIngestLane } from "./internal/ingestLane.js"
import { answerInfluxProbe } from "./internal/lineProtocolRoutes.js"
import { latestRead, makeReadLane } from "./internal/readLane.js"
import { type Lane, makeRouteTable, type Route, type RouteTable } from "./internal/routeTable.js"
import { makeRateLimiter } from "./internal/rateLimiter.js"
import { laneLogs } from "./internal/laneKit.js"
import { holdSecret } from "./internal/redact.js"
import { refuseDeclaredLength, routeNotFound, writeErrorReply } from "./internal/replies.js"
import { trustForwarded } from "./internal/clientInfo.js"
import { Metrics } from "./Metrics.js"
import { pathUnder } from "./ReverseProxy.js"
import type { WritePressure } from "./internal/readHandlers.js"

/** {@link HttpConfig.requestTimeoutMs} when absent: 30 s to receive a whole request. */
const defaultRequestTimeoutMs = 30_000

/**
 * The options of the Node server bounding how long a request may take to arrive (see
 * {@link HttpConfig.requestTimeoutMs}): Node's `requestTimeout` times a request from its first byte until its body
 * has arrived, then stops (an answer may go on for hours), and `headersTimeout` may not exceed it. Node looks for
 * late requests every `connectionsCheckingInterval` (30 s by default, which would double a 30 s bound): every half
 * second here, sooner for a shorter bound.
 */
const timeoutOptions = (requestTimeoutMs: number) => ({
  requestTimeout: requestTimeoutMs,
  headersTimeout: requestTimeoutMs,
  connectionsCheckingInterval: Math.min(500, Math.max(50, Math.floor(requestTimeoutMs / 4)))
})

/** How long a shutdown waits for in-flight requests before it closes their connections. */
const gracefulMs = 10_000
/** While shutting down, how often connections that finished their request are closed. */
const idleSweepMs = 50

const formatHost = (host: string) => (host.includes(":") ? `[${host}]` : host)

const listen = (server: NodeServer, config: HttpConfig) =>
  Effect.async<number, Error>((resume) => {
    const onError = (error: Error) => resume(Effect.fail(error))
    server.once("error", onError)
    server.listen({ host: config.host, port: config.port }, () => {
      server.off("error", onError)
      const address = server.address()
      resume(Effect.succeed(typeof address === "object" && address !== null ? address.port : config.port))
    })
  })

/**
 * Stops accepting, lets in-flight requests finish (closing each keep-alive connection as soon as it is idle), and
 * after {@link gracefulMs} closes whatever is left.
 */
const close = (server: NodeServer) =>
  Effect.async<void>((resume) => {
    if (!server.listening) return resume(Effect.void)
    const sweep = setInterval(() => server.closeIdleConnections(), idleSweepMs)
    const force = setTimeout(() => server.closeAllConnections(), gracefulMs)
    server.close(() => {
      clearInterval(sweep)
      clearTimeout(force)
      resume(Effect.void)
    })
    server.closeIdleConnections()
  })

/**
 * The routes a web page on another origin may call when `corsOrigins` allows it (see `internal/cors.ts`): the routes
 * of the table marked `cors` (their endpoints' `Cors` annotation: the push protocols, the export read and the event
 * streams). Never the
 * admin API, the console or the dashboard pages.
 */
const corsRoutes = (table: RouteTable): ReadonlyArray<CorsRoute> =>
  table.routes.filter((route) => route.cors === true).map((route) => ({ template: route.path, methods: route.methods }))

/** The storage ports Dashstream's HTTP interface reads and writes. */
export type Stores = AccountStore | StreamStore | ChangeFeed | DashboardStore | SessionStore | AlertStore

/** Dashstream's HTTP interface as Node request listeners, for a server of your own (see {@link handler}). */
export interface Handler {
  /**
   * Answers one request: every route of the contract (push, export, live updates, admin, dashboards, health,
   * metrics, OpenAPI). A path Dashstream does not serve gets its 404 JSON error.
   */
  readonly handle: (req: IncomingMessage, res: ServerResponse) => void
  /**
   * For the server's `clientError` event: answers a request Node's HTTP parser rejected (a body longer than its
   * `Content-Length`) with a 400 JSON error, as docs/api.md section 5 asks, and one the server's request timeout ended
   * with a 408 `request_timeout`; then closes the connection.
   */
  readonly clientError: (error: Error & { readonly code?: string }, socket: Duplex) => void
  /**
   * Ends every open live event stream. They never end by themselves, so a server waiting for its requests to finish
   * would wait for them: call this before closing it. Also done when the scope closes.
   */
  readonly endEventStreams: () => void
}

/**
 * Dashstream's HTTP interface (docs/api.md sections 1, 5, 6, 7, 10-12) without a server of its own: mount
 * {@link Handler.handle} in yours, for every path or for the ones you choose, and provide Dashstream's storage
 * layers (for example `@dashstream/storage-sqlite`'s `layer`). {@link layer} is this handler in a Node server of its
 * own.
 *
 * Several lanes share the handler, and one route table (`internal/routeTable.ts`, derived from the `HttpApi`
 * definition and its `Lane` annotations) says which lane answers each route: the pushes (`POST /customSend[/]` and the other push protocols of `internal/ingestRoutes.ts`: the InfluxDB
 * writes among them) are answered by a direct ingest lane (see `internal/ingestLane.ts`), InfluxDB's `/ping` and
 * `/query` by a fixed answer (`internal/lineProtocolRoutes.ts`), the latest-entry read
 * `GET /api/v2/<KEY>/datastream/<STREAM>` (no query) by a direct read lane (see `internal/readLane.ts`),
 * `GET .../datastream/<STREAM>/events`, `/d/<viewToken>/events` and `/r/<viewToken>/events` by the live lane of
 * Server-Sent Events (see `internal/liveLane.ts`; ended first on shutdown), the dashboard and rotation pages, their
 * files and the console page (when the admin API is on) by the page lane (`internal/pageLane.ts`), every other
 * request (and every request no route serves: 404, or 405 with `Allow`) by the `HttpApi` (see `internal/apiLane.ts`).
 */
export const handler = (config: HandlerConfig): Effect.Effect<Handler, never, Stores | Scope.Scope> =>
  Effect.gen(function* () {
    const limiter =
      config.rateLimit === undefined ? undefined : (config.rateLimiter ?? makeRateLimiter(config.rateLimit))
    const maxBodyBytes = config.limits.maxBodyBytes
    const metrics = config.metrics ?? new Metrics()
    // Pushes in flight, counted by the ingest lane; streamed reads yield the event loop to them.
    const pressure: WritePressure = { inFlight: 0 }
    const consoleOn = config.adminToken !== undefined
    // The admin token has no shape of its own: every log line of the process redacts it while this handler runs.
    yield* holdSecret(config.adminToken)
    const routes = makeRouteTable(consoleOn)
    const apiLane = yield* makeApiLane(config, routes, limiter, metrics, pressure)
    const runtime = yield* Effect.runtime<Stores>()
    const ingestLane = makeIngestLane(runtime, {
      limits: config.limits,
      limiter,
      logRequests: config.logRequests,
      logSkipped: config.logSkipped,
      metrics,
      pressure
    })
    // The firing alert rules of a page's tiles (docs/api.md section 11.5), from any process: watched while pages are open.
    const alerts = yield* AlertStore
    const firing = { read: alerts.firingRules, watch: yield* makeRuleWatch() }
    const liveLane = makeLiveLane(runtime, {
      limiter,
      firing,
      slots: config.eventStreamSlots,
      logRequests: config.logRequests,
      options: { ...defaultLiveOptions, ...config.live },
      observer: config.eventStreams ?? {
        opened: () => metrics.eventStreamOpened(),
        closed: () => metrics.eventStreamClosed(),
        sent: (n) => metrics.eventsSent(n)
      }
    })
    const readLane = makeReadLane(runtime, { limiter, logRequests: config.logRequests, metrics })
    const pageLane = makePageLane(runtime, {
      logRequests: config.logRequests,
      frameAncestors: config.frameAncestors,
      console: config.console
    })
    const runFork = Runtime.runFork(runtime)
    const logs = laneLogs(runFork, config.logRequests)
    const cors = makeCors(config.corsOrigins ?? [], corsRoutes(routes))
    const basePath = config.basePath ?? ""
    const trustProxy = config.trustProxy
    /** A request outside the base path: 404, counted and logged as a path Dashstream does not serve. */
    const outside = (req: IncomingMessage, res: ServerResponse) => {
      metrics.track(req, res, () => undefined)
      writeErrorReply(res, routeNotFound(req.url ?? "/"))
      logs.request(req, req.method ?? "?", req.url ?? "/", 404, performance.now())
    }
    const onRequest = (req: IncomingMessage, res: ServerResponse) => {
      // Once, before any lane looks at the request (docs/api.md section 16): who the client is behind a trusted proxy,
      // and the path under the base path, which every lane, route table and log line sees from here on.
      if (trustProxy !== undefined) trustForwarded(req, trustProxy)
      if (basePath !== "") {
        const path = pathUnder(req.url ?? "/", basePath)
        if (path === undefined) return outside(req, res)
        req.url = path
      }
      const url = req.url ?? "/"
      if (cors !== undefined && req.headers.origin !== undefined) {
        // A preflight is answered here; any other request from an allowed origin goes on with the CORS headers set.
        const template = routes.template(url)
        if (cors.handle(req, res, template)) {
          logs.request(req, "OPTIONS", url, 204, performance.now())
          return metrics.request(template!, "OPTIONS", 204, 0)
        }
      }
      const route = routes.match(req.method, url)
      if (route === undefined) return api(req, res)
      lanes[route.lane](req, res, route)
    }
    /** The `HttpApi` lane: counted when its answer ends, a declared body over the limit refused before it is read. */
    const api = (req: IncomingMessage, res: ServerResponse) => {
      metrics.track(req, res, routes.template)
      const refusal = refuseDeclaredLength(req, maxBodyBytes)
      if (refusal === undefined) {
        if (req.method !== "GET" && (req.url?.startsWith("/admin/") || req.url?.startsWith("/console/"))) {
          treatBodyAsJson(req)
          // A dashboard or widget changed here reaches this process's open dashboard streams at once.
          if (req.url.startsWith("/admin/")) res.once("finish", liveLane.dashboardsChanged)
        }
        return apiLane(req, res)
      }
      writeErrorReply(res, refusal)
      logs.request(req, req.method ?? "?", req.url ?? "/", 413, performance.now())
    }
    // Each lane's answer to a request of one of its routes. The ingest and read lanes count their own requests, more
    // cheaply; every other request is counted when its answer ends.
    const lanes: Record<Lane, (req: IncomingMessage, res: ServerResponse, route: Route) => void> = {
      ingest: (req, res, route) => ingestLane(req, res, route.ingest!),
      // Only the plainest GETs (see `latestRead`); the rest of the route (a query, an escape, HEAD) is the HttpApi's.
      read: (req, res) => {
        const read = latestRead(req.method, req.url)
        if (read === undefined) return api(req, res)
        readLane(req, res, read)
      },
      probe: (req, res, route) => {
        metrics.track(req, res, routes.template)
        answerInfluxProbe(req, res, route.path === "/ping" ? "ping" : "query")
        logs.request(req, req.method!, req.url!, res.statusCode, performance.now())
      },
      live: (req, res) => {
        metrics.track(req, res, routes.template)
        liveLane.handle(req, res)
      },
      page: (req, res, route) => {
        metrics.track(req, res, routes.template)
        pageLane(req, res, route.path)
      },
      api
    }
    yield* Effect.addFinalizer(() => Effect.sync(liveLane.closeAll))
    return { handle: onRequest, clientError: answerClientError, endEventStreams: liveLane.closeAll }
  })

/**
 * Serves Dashstream's HTTP interface (docs/api.md sections 1, 5, 6, 7) while the layer's scope is open: the
 * {@link handler} in a Node server of its own. Once bound it writes one line to stdout:
 * `Dashstream listening on http://HOST:PORT[/BASE-PATH]` (the real port), or tells `config.onListening` instead.
 * Closing the scope ends the live event streams, stops accepting, lets in-flight requests finish, then releases the
 * port; the storage layers it needs are released after it. A failure to listen (port taken, bad host) is a defect.
 */
export const layer = (config: HttpConfig): Layer.Layer<never, never, Stores> =>
  Layer.scopedDiscard(
    Effect.gen(function* () {
      const { handle, clientError, endEventStreams } = yield* handler(config)
      const runFork = Runtime.runFork(yield* Effect.runtime<never>())
      const server = yield* Effect.acquireRelease(
        Effect.sync(() => createServer(timeoutOptions(config.requestTimeoutMs ?? defaultRequestTimeoutMs), handle)),
        // Event streams never finish by themselves: end them first, so shutdown waits only for ordinary requests.
        (server) => Effect.zipRight(Effect.sync(endEventStreams), close(server))
      )
      const port = yield* Effect.orDie(listen(server, config))
      // Errors after binding (e.g. EMFILE on accept) are logged; unhandled they would end the process.
      server.on("error", (error) => runFork(Effect.logError(`HTTP server error: ${error.message}`)))
      server.on("clientError", clientError)
      const url = `http://${formatHost(config.host)}:${port}${config.basePath ?? ""}`
      if (config.onListening !== undefined) config.onListening(url)
      else yield* Console.log(`Dashstream listening on ${url}`)
    })
  )

/**
 * An error answer written to the socket itself, for a request no handler answers, with `Connection: close` (the
 * connection is closed after it).
 */
const closingReply = (status: number, reason: string, code: string, message: string): string => {
  const body = errorBodyText(errorReply(status, code, message))
  return (
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\nconnection: close\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
  )
}

const framingErrorReply = closingReply(
  400,
  "Bad Request",
  "invalid_request",
  "the request breaks HTTP framing (for example a body longer than its Content-Length)"
)

const requestTimeoutReply = closingReply(
  408,
  "Request Timeout",
  "request_timeout",
  "the request did not arrive in time (serve --request-timeout); send it again"
)

/**
 * Answers what Node's HTTP parser refused on a connection, then closes it: a request that breaks framing (docs/api.md
 * section 5: a body longer than its `Content-Length`, as the original Node client sends for non-ASCII text) with a
 * 400, one that did not arrive within the request timeout (Node's `ERR_HTTP_REQUEST_TIMEOUT`) with a 408; each with
 * a JSON error body. Node's default is a bare 400 or 408 with no body, on which the original Node client's callback
 * never fires. When the answer of a request on the connection has begun, the connection is only closed (another
 * status line would corrupt it). Nothing is stored: a refused request never completes.
 */
const answerClientError = (error: Error & { readonly code?: string }, socket: Duplex): void => {
  if (error.code === "ECONNRESET" || !socket.writable || answerBegun(socket)) return void socket.destroy()
  socket.end(error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? requestTimeoutReply : framingErrorReply)
}

/**
 * True when the answer on `socket` has sent its headers: Node's own default answer to a client error checks the
 * same field, the response it attaches to the socket while it is written.
 */
const answerBegun = (socket: Duplex): boolean =>
  (socket as { readonly _httpMessage?: { readonly headersSent?: boolean } })._httpMessage?.headersSent === true

/**
 * Admin and console bodies are JSON whatever their `Content-Type` says, as push bodies are (docs/api.md section 1):
 * `curl -d '{...}'` labels JSON `application/x-www-form-urlencoded`, and HttpApi would otherwise decode it as a form
 * and drop the fields (or, for a sign-in, take an HTML form's fields).
 */
const treatBodyAsJson = (req: IncomingMessage): void => {
  const type = req.headers["content-type"]
  if (type === undefined || !/^application\/(.+\+)?json\b/i.test(type)) req.headers["content-type"] = "application/json"
}
