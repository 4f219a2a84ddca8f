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

/** The path's segments: the query and one trailing slash dropped (`/d/x/?a` is `["", "d", "x"]`). */
const segmentsOf = (url: string): ReadonlyArray<string> => {
  const q = url.indexOf("?")
  let path = q === -1 ? url : url.slice(0, q)
  if (path.length > 1 && path.charCodeAt(path.length - 1) === 47) path = path.slice(0, -1)
  return path.split("/")
}

/** True when `segment` percent-decodes; the router matches no route through a malformed escape (`%ZZ`). */
const decodes = (segment: string): boolean => segment.indexOf("%") === -1 || decodePathSegment(segment) !== undefined

const matches = (pattern: ReadonlyArray<string>, segments: ReadonlyArray<string>): boolean => {
  if (pattern.length !== segments.length) return false
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!
    const s = segments[i]!
    if (p.charCodeAt(0) === 58 ? s === "" || !decodes(s) : p !== s) return false
  }
  return true
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
  const candidates = (segments: ReadonlyArray<string>): ReadonlyArray<Compiled> =>
    (segments.length > 1 && byFirst.get(segments[1]!)) || []
  return {
    routes: served,
    match: (method, url) => {
      if (method === undefined) return undefined
      const segments = segmentsOf(url)
      for (const c of candidates(segments)) if (c.methods.has(method) && matches(c.segments, segments)) return c.route
      return undefined
    },
    allowed: (url) => {
      const segments = segmentsOf(url)
      const methods = new Set<string>()
      for (const c of candidates(segments)) if (matches(c.segments, segments)) for (const m of c.methods) methods.add(m)
      return methods.size === 0 ? undefined : [...methods].sort()
    },
    template: (url) => {
      const segments = segmentsOf(url)
      for (const c of candidates(segments)) if (matches(c.segments, segments)) return c.route.path
      return undefined
    }
  }
}
