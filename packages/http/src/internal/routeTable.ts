import type { HttpApi, HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { OpenApi } from "@effect/platform"
import { Context } from "effect"
import { api, publicApi } from "../Api.js"
import { Cors, Lane, type LaneName } from "../api/Routing.js"
import type { AnyIngestProtocol, AnyIngestRoute } from "./ingestLane.js"
import { ingestRoutes } from "./ingestRoutes.js"
import { decodePathSegment } from "./laneKit.js"

/**
 * Every route Dashstream serves, as data: one table, from which the server dispatches each request to its lane, tells
 * 404 `not_found` from 405 `method_not_allowed` (with `Allow`), labels request metrics, and applies CORS. It is
 * derived from the `HttpApi` definition (`Api.ts`): each endpoint's method and path, its `Lane` and `Cors` annotations
 * (`api/Routing.ts`), whether the OpenAPI document describes it (not `OpenApi.Exclude`), and whether it is served only
 * with the admin API on (its group is in `api` and not in `publicApi`).
 *
 * A new route is an endpoint in `Api.ts` plus its handler in its lane (a push protocol: an entry of `ingestRoutes.ts`
 * under the endpoint's name).
 */

/** Who answers a route (see {@link LaneName}). */
export type { LaneName as Lane } from "../api/Routing.js"

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
  readonly lane: LaneName
  /** Described in the OpenAPI document (`GET /openapi.json`). */
  readonly documented: boolean
  /** Served only with the admin API on (`serve --admin-token`); otherwise no route (404). */
  readonly admin: boolean
  /** `serve --cors-origin` applies (see `cors.ts`): never on admin, console or page routes. */
  readonly cors: boolean
  /** The push protocol's entry (lane `ingest`): how its body is read and parsed, how it answers. */
  readonly ingest?: AnyIngestRoute
}

/** A path without its one trailing slash (`/customSend/` is `/customSend`: the matcher ignores it). */
const trimSlash = (path: string): string => (path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path)

/**
 * The routes of an `HttpApi`, one per path (its endpoints' methods together), in declaration order. An endpoint whose
 * path and method an earlier one has (`/customSend/` after `/customSend`) adds nothing. Throws at module load when a
 * path's endpoints disagree on lane, CORS or admin, or an `ingest` endpoint has no entry in `ingestRoutes`.
 */
export const routesOf = (
  definition: HttpApi.HttpApi.Any,
  publicGroups: ReadonlySet<string>,
  protocols: Readonly<Record<string, AnyIngestProtocol>> = ingestRoutes
): ReadonlyArray<Route> => {
  const byPath = new Map<string, Route & { methods: Array<string> }>()
  const groups = Object.values((definition as unknown as HttpApi.HttpApi.AnyWithProps).groups)
  for (const group of groups as ReadonlyArray<HttpApiGroup.HttpApiGroup.AnyWithProps>) {
    for (const endpoint of Object.values(
      group.endpoints
    ) as ReadonlyArray<HttpApiEndpoint.HttpApiEndpoint.AnyWithProps>) {
      const { method, name } = endpoint
      const annotations = Context.merge(group.annotations, endpoint.annotations)
      const path = trimSlash(endpoint.path)
      const lane = Context.get(annotations, Lane)
      const route = {
        path,
        methods: [method],
        lane,
        documented: !Context.get(annotations, OpenApi.Exclude),
        admin: !publicGroups.has(group.identifier),
        cors: Context.get(annotations, Cors)
      }
      const seen = byPath.get(path)
      if (seen === undefined) {
        if (lane !== "ingest") byPath.set(path, route)
        else {
          const protocol = protocols[name]
          if (protocol === undefined) throw new Error(`${method} ${path}: no push protocol named ${name}`)
          byPath.set(path, { ...route, ingest: { ...protocol, template: path, method, params: paramsOf(path) } })
        }
        continue
      }
      if (seen.methods.includes(method)) continue
      if (seen.lane !== lane || seen.cors !== route.cors || seen.admin !== route.admin || lane === "ingest")
        throw new Error(`${method} ${path}: its lane, CORS or admin differ from the path's other endpoints`)
      seen.methods.push(method)
    }
  }
  return [...byPath.values()]
}

const noParams: Readonly<Record<string, string>> = {}

/**
 * The path parameters of `pattern` (`/widgets/:streamName`) in a URL that matches it (see {@link makeRouteTable}),
 * percent-decoded: `{streamName: "a b"}` for `/widgets/a%20b/?x=1`. A pattern without parameters gives one shared
 * empty object (nothing allocated per request).
 */
export const paramsOf = (pattern: string): ((url: string) => Readonly<Record<string, string>>) => {
  const segments = pattern.split("/")
  if (!segments.some((segment) => segment.startsWith(":"))) return () => noParams
  return (url) => {
    const end = pathEnd(url)
    const params: Record<string, string> = {}
    let from = 1
    for (let i = 1; i < segments.length; i++) {
      const to = segmentEnd(url, from, end)
      const segment = segments[i]!
      if (segment.startsWith(":")) params[segment.slice(1)] = decodePathSegment(url.slice(from, to)) ?? ""
      from = to + 1
    }
    return params
  }
}

/** The table: every route of {@link api} (the admin and console routes marked `admin`). */
export const routes: ReadonlyArray<Route> = routesOf(api, new Set(Object.keys(publicApi.groups)))

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
