import type { IncomingMessage, ServerResponse } from "node:http"
import { gzipSync } from "node:zlib"
import { type AccountStore, type DashboardStore, Dashboards, Rotations } from "@dashstream/core"
import {
  type Asset,
  assets,
  defaultFrameAncestors,
  manifest,
  pageHeadersFor,
  pageHtml,
  rotationPageHtml,
  type TileModel
} from "@dashstream/dashboard-web"
import { Cause, Exit, Runtime } from "effect"
import type { ConsolePage } from "../HttpConfig.js"
import { errorReply, internalReply } from "../HttpErrors.js"
import { decodePathSegment, laneLogs } from "./laneKit.js"
import { routeNotFound, writeErrorReply } from "./replies.js"

/**
 * The dashboard page (docs/api.md section 11): `GET /d/<viewToken>` answers the page of the dashboard the token names
 * (and `GET /r/<viewToken>` the page of a rotation, section 15),
 * and `GET /assets/<name>` the page's own files (script, stylesheet, map outlines), with content-hashed names and
 * year-long cache headers. Everything the page needs comes from here: it makes no request to any other origin. The
 * page's event stream (`/d/<viewToken>/events`) is the live lane's. The console page (docs/api.md section 14, `GET
 * /console` and `GET /console/assets/<name>`) is served the same way, from the files `HandlerConfig.console` gives.
 */

/**
 * The path from a page at `path` (under the base path) back to the served root, relative: `../` for `/d/<token>`,
 * `../../` for `/d/<token>/`, `./` for `/console`. A page's URLs start with it (docs/api.md section 16: pages use URLs
 * relative to where they were served), so they resolve under any base path or proxy prefix.
 */
export const relativeRoot = (path: string): string => {
  const depth = path.split("/").length - 2
  return depth === 0 ? "./" : "../".repeat(depth)
}

const assetHeaders = { "cache-control": "public, max-age=31536000, immutable", "x-content-type-options": "nosniff" }
// `/favicon.ico` keeps its name across releases: cached for a day, not for ever.
const faviconHeaders = { "cache-control": "public, max-age=86400", "x-content-type-options": "nosniff" }

/**
 * Headers of the console page that hold whatever the page's own headers say (docs/api.md section 14: the console's URL
 * may carry the admin token in its fragment, and no other origin may receive it).
 */
const consoleBaseHeaders: Readonly<Record<string, string>> = {
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "cache-control": "no-store"
}

/** The console page's headers over {@link consoleBaseHeaders}, names in lower case so that none is sent twice. */
const consoleHeaders = (own: Readonly<Record<string, string>>): Record<string, string> => {
  const headers: Record<string, string> = { ...consoleBaseHeaders }
  for (const [name, value] of Object.entries(own)) headers[name.toLowerCase()] = value
  headers["content-type"] = "text/html; charset=utf-8"
  return headers
}

/** What the page lane needs from the server. */
export interface PageLaneOptions {
  readonly logRequests: boolean
  /** The page's CSP `frame-ancestors` source list (see `HandlerConfig.frameAncestors`). */
  readonly frameAncestors?: string | undefined
  /** The console page, when the admin API is on and a page was given (see `HandlerConfig.console`). */
  readonly console?: ConsolePage | undefined
}

/**
 * The page lane's request listener for a GET or HEAD the route table (`routeTable.ts`) gave to the route `template`
 * (`/d/:viewToken`, `/r/:viewToken`, `/assets/:file`, `/favicon.ico`, `/console`, `/console/assets/:file`), resolving
 * view tokens on `runtime`.
 */
export const makePageLane = (
  runtime: Runtime.Runtime<AccountStore | DashboardStore>,
  options: PageLaneOptions
): ((req: IncomingMessage, res: ServerResponse, template: string) => void) => {
  const runCallback = Runtime.runCallback(runtime)
  const runFork = Runtime.runFork(runtime)
  const headers = {
    ...pageHeadersFor(options.frameAncestors ?? defaultFrameAncestors),
    "content-type": "text/html; charset=utf-8"
  }

  const logs = laneLogs(runFork, options.logRequests)
  const log = (req: IncomingMessage, status: number, t0: number) =>
    logs.request(req, req.method ?? "GET", req.url ?? "/", status, t0)

  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    t0: number,
    body: string | Buffer,
    headers: Record<string, string>
  ) => {
    const bytes = typeof body === "string" ? Buffer.from(body) : body
    res.writeHead(200, { ...headers, "content-length": String(bytes.length) })
    res.end(req.method === "HEAD" ? undefined : bytes)
    log(req, 200, t0)
  }

  // A missing bundle (not built) or any other defect: logged once per request, answered 500 without details.
  const fail = (req: IncomingMessage, res: ServerResponse, t0: number, error: unknown, secret?: string) => {
    logs.internalError(req.method ?? "GET", req.url ?? "/", Cause.die(error), secret)
    writeErrorReply(res, internalReply)
    log(req, 500, t0)
  }

  // Each asset compressed once, on its first request: the page's bundle travels gzipped (about a third of its size).
  const gzipped = new Map<string, Buffer>()
  const asset = (
    req: IncomingMessage,
    res: ServerResponse,
    t0: number,
    path: string,
    files: () => ReadonlyMap<string, Asset> = assets,
    cacheHeaders: Readonly<Record<string, string>> = assetHeaders
  ) => {
    let found
    try {
      found = files().get(path)
    } catch (error) {
      return fail(req, res, t0, error)
    }
    if (found === undefined) {
      writeErrorReply(res, routeNotFound(path))
      return log(req, 404, t0)
    }
    const headers = { ...cacheHeaders, "content-type": found.contentType, vary: "accept-encoding" }
    if (!/\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""))) return send(req, res, t0, found.body, headers)
    let body = gzipped.get(path)
    if (body === undefined) {
      body = gzipSync(found.body, { level: 9 })
      gzipped.set(path, body)
    }
    send(req, res, t0, body, { ...headers, "content-encoding": "gzip" })
  }

  // A tile as the page draws it; a tile whose widget was deleted shows "stream deleted" whatever its type.
  const tileModel = ({ tile, widget }: Dashboards.ResolvedTile): TileModel => ({
    streamName: tile.streamName,
    title: tile.title,
    type: widget?.type ?? "label",
    x: tile.x,
    y: tile.y,
    w: tile.w,
    h: tile.h,
    deleted: widget === null,
    options: tile.options
  })

  const refused = (
    req: IncomingMessage,
    res: ServerResponse,
    t0: number,
    token: string,
    cause: Cause.Cause<unknown>
  ) => {
    const reply = logs.replyOfCause(req.method ?? "GET", req.url ?? "/", cause, token)
    writeErrorReply(res, reply)
    log(req, reply.status, t0)
  }

  // `GET /r/<viewToken>` (docs/api.md section 15): the rotation page, with the same headers as a dashboard's.
  const rotationPage = (
    req: IncomingMessage,
    res: ServerResponse,
    t0: number,
    token: string,
    query: URLSearchParams,
    root: string
  ) =>
    runCallback(Rotations.resolveRotationView(token), {
      onExit: (exit) => {
        if (Exit.isFailure(exit)) return refused(req, res, t0, token, exit.cause)
        const { rotation, dashboards } = exit.value
        let html: string
        try {
          html = rotationPageHtml({
            name: rotation.name,
            intervalSeconds: rotation.intervalSeconds,
            dashboardIds: rotation.dashboardIds,
            dashboards: dashboards.map(({ dashboard, tiles }) => ({
              id: dashboard.id,
              name: dashboard.name,
              tiles: tiles.map(tileModel)
            })),
            eventsPath: `${root}r/${encodeURIComponent(token)}/events`,
            root,
            theme: query.get("theme") === "light" ? "light" : "dark"
          })
        } catch (error) {
          return fail(req, res, t0, error, token)
        }
        send(req, res, t0, html, headers)
      }
    })

  const page = (
    req: IncomingMessage,
    res: ServerResponse,
    t0: number,
    token: string,
    query: URLSearchParams,
    root: string
  ) =>
    runCallback(Dashboards.resolveView(token), {
      onExit: (exit) => {
        if (Exit.isFailure(exit)) return refused(req, res, t0, token, exit.cause)
        const { dashboard, tiles } = exit.value
        const model = {
          name: dashboard.name,
          tiles: tiles.map(tileModel),
          // The layout the page shows: its event stream starts with the current one if it changed meanwhile.
          eventsPath: `${root}d/${encodeURIComponent(token)}/events?layout=${Dashboards.dashboardLayout(exit.value).version}`,
          root,
          theme: query.get("theme") === "light" ? ("light" as const) : ("dark" as const)
        }
        let html: string
        try {
          html = pageHtml(model)
        } catch (error) {
          return fail(req, res, t0, error, token)
        }
        send(req, res, t0, html, headers)
      }
    })

  const consolePage = (req: IncomingMessage, res: ServerResponse, t0: number, path: string) => {
    const page = options.console
    if (page === undefined) {
      writeErrorReply(res, errorReply(404, "not_found", "the console page is not installed in this server"))
      return log(req, 404, t0)
    }
    if (path.startsWith("/console/assets/")) return asset(req, res, t0, path, page.assets)
    let html: string
    try {
      html = page.html(relativeRoot(path))
    } catch (error) {
      return fail(req, res, t0, error)
    }
    send(req, res, t0, html, consoleHeaders(page.headers))
  }

  return (req, res, template) => {
    const t0 = options.logRequests ? performance.now() : 0
    req.on("error", () => {})
    const url = req.url ?? "/"
    const q = url.indexOf("?")
    const path = q === -1 ? url : url.slice(0, q)
    switch (template) {
      case "/console":
      case "/console/assets/:file":
        return consolePage(req, res, t0, path)
      case "/assets/:file":
        return asset(req, res, t0, path)
      case "/favicon.ico": {
        let ico: string
        try {
          ico = manifest().favicon.ico
        } catch (error) {
          return fail(req, res, t0, error)
        }
        return asset(req, res, t0, ico, assets, faviconHeaders)
      }
    }
    // `/d/:viewToken` or `/r/:viewToken`, one trailing slash allowed.
    const token = decodePathSegment(path.slice(3, path.endsWith("/") ? -1 : undefined))
    if (token === undefined) {
      writeErrorReply(res, routeNotFound(url))
      return log(req, 404, t0)
    }
    const query = new URLSearchParams(q === -1 ? "" : url.slice(q + 1))
    if (template === "/r/:viewToken") return rotationPage(req, res, t0, token, query, relativeRoot(path))
    page(req, res, t0, token, query, relativeRoot(path))
  }
}
