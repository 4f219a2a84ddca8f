import { HttpApi } from "@effect/platform"
import { decodePathSegment } from "./laneKit.js"

/**
 * The known paths and their methods, for telling 404 `not_found` (no such path) from 405 `method_not_allowed`
 * (the path exists, not with this method; the answer carries `Allow`). Built once from the served `HttpApi` plus
 * the routes outside it (`/openapi.json`, `/docs`).
 */
export interface RouteTable {
  /**
   * The methods allowed on `url`'s path (HEAD wherever GET is, but on event streams), or `undefined` when no route
   * has that path (also when a parameter segment holds a malformed percent escape: 404, not 405).
   */
  readonly allowed: (url: string) => ReadonlyArray<string> | undefined
  /**
   * The route template `url`'s path matches (`/api/v2/:accessKey/datastream/:streamName`), for labelling metrics
   * without the URL's access key or stream name; `undefined` when no route has that path.
   */
  readonly template: (url: string) => string | undefined
}

interface Pattern {
  readonly path: string
  readonly segments: ReadonlyArray<string>
  readonly methods: Set<string>
}

const split = (path: string) => path.split("/")

/** True when `segment` percent-decodes; the router matches no route through a malformed escape (`%ZZ`). */
const decodes = (segment: string): boolean => decodePathSegment(segment) !== undefined

const matches = (pattern: ReadonlyArray<string>, segments: ReadonlyArray<string>): boolean => {
  if (pattern.length !== segments.length) return false
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i]!
    if (p.startsWith(":") ? segments[i] === "" || !decodes(segments[i]!) : p !== segments[i]) return false
  }
  return true
}

const segmentsOf = (url: string): ReadonlyArray<string> => {
  const q = url.indexOf("?")
  const path = q === -1 ? url : url.slice(0, q)
  // The router ignores one trailing slash; so does this table.
  return split(path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path)
}

/** The route table of `api`'s endpoints and `extra` `[method, path]` routes. Paths use `:param` segments. */
export const makeRouteTable = (
  api: HttpApi.HttpApi.Any,
  extra: ReadonlyArray<readonly [method: string, path: string]>
): RouteTable => {
  const patterns = new Map<string, Pattern>()
  const add = (method: string, path: string) => {
    let pattern = patterns.get(path)
    if (pattern === undefined) {
      pattern = { path, segments: split(path), methods: new Set() }
      patterns.set(path, pattern)
    }
    pattern.methods.add(method)
    // HEAD is answered wherever GET is, except by event streams (the live lane serves them to GET only).
    if (method === "GET" && !path.endsWith("/events")) pattern.methods.add("HEAD")
  }
  HttpApi.reflect(api as HttpApi.HttpApi<string, any, any, any>, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) =>
      add(endpoint.method, endpoint.path.length > 1 ? endpoint.path.replace(/\/$/, "") : endpoint.path)
  })
  for (const [method, path] of extra) add(method, path)
  const all = [...patterns.values()]
  return {
    allowed: (url) => {
      const segments = segmentsOf(url)
      const methods = new Set<string>()
      for (const pattern of all) {
        if (matches(pattern.segments, segments)) for (const m of pattern.methods) methods.add(m)
      }
      return methods.size === 0 ? undefined : [...methods].sort()
    },
    template: (url) => {
      const segments = segmentsOf(url)
      return all.find((pattern) => matches(pattern.segments, segments))?.path
    }
  }
}
