import type { AnyIngestRoute } from "./ingestLane.js"
import { ingestRoutes } from "./ingestRoutes.js"
import { decodePathSegment } from "./laneKit.js"

/**
 * Every route Dashstream serves, as data (issue 27): one table, from which the server dispatches each request to its
 * lane, tells 404 `not_found` from 405 `method_not_allowed` (with `Allow`), labels request metrics, and applies CORS;
 * the OpenAPI document (`Api.ts`) is checked against it (`packages/http/test/routeTable.test.ts`: every documented
 * route is in the document and every path of the document is here).
 *
 * A new route is an entry here, plus its handler in its lane (and, when documented, its description in `Api.ts`).
 */

/**
 * Who answers a route. `ingest`: the push protocols (`ingestLane.ts`, counted there); `read`: the latest-entry read
 * (`readLane.ts`, counted there; it takes only the plainest GETs and leaves every other request of its route to the
 * `api` lane); `probe`: InfluxDB's fixed `/ping` and `/query` answers; `live`: Server-Sent Events (`liveLane.ts`);
 * `page`: the dashboard, rotation and console pages and their files (`pageLane.ts`); `api`: the `HttpApi`
 * (`apiLane.ts`), which also answers every request no route serves (404, or 405 with `Allow`).
 */
export type Lane = "ingest" | "read" | "probe" | "live" | "page" | "api"

/** One route of the table. */
export interface Route {
  /**
   * The path pattern: literal segments and `:name` parameters (a non-empty segment that percent-decodes; a malformed
   * escape such as `%ZZ` matches no route, 404). One trailing slash and the query are ignored. It is the route
   * template that labels metrics and names the route in logs, never the URL (which may carry a key); in the OpenAPI
   * document the same path with `{name}` parameters.
   */
  readonly path: string
  /** The methods served, HEAD not listed: HEAD is served wherever GET is, except on event streams (lane `live`). */
  readonly methods: ReadonlyArray<string>
  readonly lane: Lane
  /** Described in the OpenAPI document (`GET /openapi.json`, `Api.ts`). */
  readonly documented: boolean
  /** Served only with the admin API on (`serve --admin-token`); otherwise no route (404). */
  readonly admin?: boolean
  /** `serve --cors-origin` applies (see `cors.ts`): never on admin, console or page routes. */
  readonly cors?: boolean
  /** The push protocol's entry (lane `ingest`): how its body is read and parsed, how it answers. */
  readonly ingest?: AnyIngestRoute
}

const get = (path: string, lane: Lane, more: Partial<Route> = {}): Route => ({
  path,
  methods: ["GET"],
  lane,
  documented: true,
  ...more
})

const admin = (path: string, ...methods: ReadonlyArray<string>): Route => ({
  path,
  methods,
  lane: "api",
  documented: true,
  admin: true
})

/** The table (the order matters only for dispatch, where two routes could serve one request: none do today). */
export const routes: ReadonlyArray<Route> = [
  // Push protocols (contract sections 1, 13.1, 13.2).
  ...ingestRoutes.map((route): Route => ({
    path: route.template,
    methods: [route.method],
    lane: "ingest",
    documented: true,
    cors: route.cors,
    ingest: route
  })),
  // InfluxDB's probes (contract 13.1).
  get("/ping", "probe"),
  { path: "/query", methods: ["GET", "POST"], lane: "probe", documented: true },
  // Export read and live updates (contract sections 6, 10).
  get("/api/v2/:accessKey/datastream/:streamName", "read", { cors: true }),
  get("/api/v2/:accessKey/datastream/:streamName/events", "live", { cors: true }),
  // Dashboards and rotations (contract sections 11, 15).
  get("/d/:viewToken", "page"),
  get("/d/:viewToken/events", "live", { cors: true }),
  get("/r/:viewToken", "page"),
  get("/r/:viewToken/events", "live", { cors: true }),
  get("/assets/:file", "page"),
  get("/favicon.ico", "page", { documented: false }),
  // Health, metrics, documentation.
  get("/healthz", "api"),
  get("/readyz", "api"),
  get("/metrics", "api"),
  get("/openapi.json", "api", { documented: false }),
  get("/docs", "api", { documented: false }),
  // The admin API (contract section 7 and on).
  admin("/admin/accounts", "GET", "POST"),
  admin("/admin/accounts/:id/access-keys", "POST"),
  admin("/admin/accounts/:id/widgets", "GET", "POST"),
  admin("/admin/accounts/:id/widgets/:stream", "DELETE"),
  admin("/admin/accounts/:id/widgets/:stream/points", "POST"),
  admin("/admin/accounts/:id/dashboards", "GET", "POST"),
  admin("/admin/accounts/:id/dashboards/:dashboardId", "GET", "PUT", "DELETE"),
  admin("/admin/accounts/:id/dashboards/:dashboardId/view-token", "POST"),
  admin("/admin/accounts/:id/rotations", "GET", "POST"),
  admin("/admin/accounts/:id/rotations/:rotationId", "GET", "PUT", "DELETE"),
  admin("/admin/accounts/:id/rotations/:rotationId/view-token", "POST"),
  // The console (contract section 14).
  get("/console", "page", { admin: true }),
  get("/console/assets/:file", "page", { admin: true }),
  admin("/console/session", "GET", "POST", "DELETE")
]

/** The methods a route answers: its own, plus HEAD wherever GET is, except on event streams. */
export const methodsOf = (route: Route): ReadonlyArray<string> =>
  route.methods.includes("GET") && route.lane !== "live" && !route.methods.includes("HEAD")
    ? [...route.methods, "HEAD"]
    : route.methods

/** The routes served with or without the admin API, matched against requests (see {@link makeRouteTable}). */
export interface RouteTable {
  /** The routes, in table order. */
  readonly routes: ReadonlyArray<Route>
  /**
   * The route serving `method` on `url` (the request target, query included), or `undefined` when none does (then
   * the `api` lane answers: 404, or 405 when {@link allowed} knows the path).
   */
  readonly match: (method: string | undefined, url: string) => Route | undefined
  /**
   * The methods allowed on `url`'s path, sorted (for `Allow`), or `undefined` when no route has that path (also when
   * a parameter segment holds a malformed percent escape: 404, not 405).
   */
  readonly allowed: (url: string) => ReadonlyArray<string> | undefined
  /**
   * The route template `url`'s path matches (`/api/v2/:accessKey/datastream/:streamName`), whatever the method, for
   * labelling metrics without the URL's access key or stream name; `undefined` when no route has that path.
   */
  readonly template: (url: string) => string | undefined
}

interface Compiled {
  readonly route: Route
  readonly segments: ReadonlyArray<string>
  readonly methods: ReadonlySet<string>
}

/** Where `url`'s path ends: before the query, and before one trailing slash (`/d/x/?a` ends after `/d/x`). */
const pathEnd = (url: string): number => {
  let end = url.indexOf("?")
  if (end === -1) end = url.length
  return end > 1 && url.charCodeAt(end - 1) === 47 ? end - 1 : end
}

/** Where the path segment starting at `from` ends (its `/`, or `end`). */
const segmentEnd = (url: string, from: number, end: number): number => {
  const slash = url.indexOf("/", from)
  return slash === -1 || slash > end ? end : slash
}

/**
 * True when `url`'s path (up to `end`) has `pattern`'s segments: literals equal, parameters non-empty and
 * percent-decodable (the router matches no route through a malformed escape such as `%ZZ`). Allocates nothing on the
 * common path: the push and read lanes' requests go through here.
 */
const matches = (pattern: ReadonlyArray<string>, url: string, end: number): boolean => {
  if (url.charCodeAt(0) !== 47) return false
  let from = 1
  for (let i = 1; i < pattern.length; i++) {
    if (from > end) return false
    const to = segmentEnd(url, from, end)
    const p = pattern[i]!
    if (p.charCodeAt(0) === 58) {
      if (to === from) return false
      const percent = url.indexOf("%", from)
      if (percent !== -1 && percent < to && decodePathSegment(url.slice(from, to)) === undefined) return false
    } else if (to - from !== p.length || !url.startsWith(p, from)) return false
    from = to + 1
  }
  return from === end + 1
}

/**
 * The table of {@link routes} served with the admin API on (`adminOn`: the admin and console routes included) or off.
 * Routes are looked up by their first path segment (a literal in every route), then matched segment by segment.
 */
export const makeRouteTable = (adminOn: boolean, table: ReadonlyArray<Route> = routes): RouteTable => {
  const served = table.filter((route) => adminOn || route.admin !== true)
  const byFirst = new Map<string, Array<Compiled>>()
  for (const route of served) {
    const segments = route.path.split("/")
    const first = segments[1]!
    if (first.startsWith(":")) throw new Error(`route ${route.path}: the first segment must be literal`)
    const list = byFirst.get(first) ?? []
    list.push({ route, segments, methods: new Set(methodsOf(route)) })
    byFirst.set(first, list)
  }
  const none: ReadonlyArray<Compiled> = []
  /** The routes whose first segment is `url`'s. */
  const candidates = (url: string, end: number): ReadonlyArray<Compiled> =>
    byFirst.get(url.slice(1, segmentEnd(url, 1, end))) ?? none
  return {
    routes: served,
    match: (method, url) => {
      if (method === undefined) return undefined
      const end = pathEnd(url)
      for (const c of candidates(url, end)) if (c.methods.has(method) && matches(c.segments, url, end)) return c.route
      return undefined
    },
    allowed: (url) => {
      const end = pathEnd(url)
      const methods = new Set<string>()
      for (const c of candidates(url, end)) if (matches(c.segments, url, end)) for (const m of c.methods) methods.add(m)
      return methods.size === 0 ? undefined : [...methods].sort()
    },
    template: (url) => {
      const end = pathEnd(url)
      for (const c of candidates(url, end)) if (matches(c.segments, url, end)) return c.route.path
      return undefined
    }
  }
}
