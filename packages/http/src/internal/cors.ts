import type { IncomingMessage, ServerResponse } from "node:http"

/**
 * Cross-origin requests from web pages (`serve --cors-origin`): so that a page on another origin can push (the push
 * protocols), read an export and follow an event stream. Off by default; on, only the routes that declare it get CORS
 * headers and preflight answers (the ingest routes with `cors: true`, the export read, the event streams), never the
 * admin API, the console or the dashboard pages: their answers stay same-origin.
 *
 * No credentials (cookies) are involved: the routes that allow CORS carry their access key or view token in the
 * request itself, so `Access-Control-Allow-Credentials` is never sent.
 */

/** The request headers a cross-origin request may send (the preflight's `Access-Control-Allow-Headers`). */
const allowedHeaders = "Content-Type, Content-Encoding, Authorization, Last-Event-ID"
/** The answer headers a page may read besides the CORS-safelisted ones. */
const exposedHeaders = "Retry-After, X-Dashstream-Skipped"
/** How long a browser may cache a preflight answer, in seconds. */
const preflightMaxAgeSeconds = "600"

/** A route CORS applies to: its template (as `RouteTable.template` gives it) and the methods allowed on it. */
export interface CorsRoute {
  readonly template: string
  readonly methods: ReadonlyArray<string>
}

/** CORS for the routes that declare it. */
export interface Cors {
  /**
   * Handles the CORS part of a request from another origin (one with an `Origin` header) to one of the CORS routes
   * (`template` is the request's route template, `undefined` for none): a preflight (`OPTIONS` with
   * `Access-Control-Request-Method`) from an allowed origin is answered 204 and `true` returned (the request is done);
   * any other request from an allowed origin gets the CORS headers set on `res` (then written with the lane's answer)
   * and `false`. From an origin not allowed, nothing is set: the browser then refuses the answer to the page.
   */
  readonly handle: (req: IncomingMessage, res: ServerResponse, template: string | undefined) => boolean
}

/**
 * CORS allowing `origins` (`*` for any origin, else exact origins such as `https://example.com`, scheme, host and
 * port as the browser sends them in `Origin`) on `routes`; `undefined` when `origins` is empty (CORS off).
 */
export const makeCors = (origins: ReadonlyArray<string>, routes: ReadonlyArray<CorsRoute>): Cors | undefined => {
  if (origins.length === 0) return undefined
  const any = origins.includes("*")
  const allowed = new Set(origins)
  const methods = new Map<string, string>()
  for (const route of routes) {
    const known = methods.get(route.template)
    const list = new Set([...(known === undefined ? [] : known.split(", ")), ...route.methods])
    if (list.has("GET")) list.add("HEAD")
    methods.set(route.template, [...list].sort().join(", "))
  }
  return {
    handle: (req, res, template) => {
      const origin = req.headers.origin
      if (origin === undefined || template === undefined) return false
      const allow = methods.get(template)
      if (allow === undefined || !(any || allowed.has(origin))) return false
      res.setHeader("access-control-allow-origin", any ? "*" : origin)
      if (!any) res.setHeader("vary", "Origin")
      if (req.method === "OPTIONS" && req.headers["access-control-request-method"] !== undefined) {
        res.writeHead(204, {
          "access-control-allow-methods": allow,
          "access-control-allow-headers": allowedHeaders,
          "access-control-max-age": preflightMaxAgeSeconds,
          "content-length": "0"
        })
        res.end()
        return true
      }
      res.setHeader("access-control-expose-headers", exposedHeaders)
      return false
    }
  }
}
