import { createServer, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { assets, pageHeaders, pageHtml, type DashboardModel, type Entry } from "../../src/index.js"

/** Path of the test dashboard page and its event stream. */
export const pagePath = "/d/test-view-token"
export const eventsPath = `${pagePath}/events`

/** A small SVG picture served at `/img/<name>.svg`, so image tiles load from the page's own origin in tests. */
export const pictureSvg = (name: string): string => {
  let h = 0
  for (const c of name) h = (h * 31 + c.charCodeAt(0)) % 360
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="320" height="200" viewBox="0 0 320 200">` +
    `<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="hsl(${h},70%,55%)"/>` +
    `<stop offset="1" stop-color="hsl(${(h + 60) % 360},70%,40%)"/></linearGradient></defs>` +
    `<rect width="320" height="200" fill="url(#g)"/><circle cx="230" cy="70" r="34" fill="rgba(255,255,255,0.85)"/>` +
    `<path d="M0 200 L110 90 L180 160 L230 120 L320 200 Z" fill="rgba(0,0,0,0.35)"/></svg>`
  )
}

/**
 * A component-test server for the page: `GET /d/test-view-token` answers `pageHtml(model)` with `pageHeaders`,
 * `/assets/...` answers `assets()`, `/img/<name>.svg` a picture, and the events path is a section-11 event stream
 * that starts with a snapshot of `snapshot` (mutable) and then sends whatever the test sends.
 */
export interface PageServer {
  readonly origin: string
  readonly url: string
  /** The snapshot every new event-stream connection starts with. */
  snapshot: Record<string, ReadonlyArray<Entry>>
  /** The stream names the snapshot names as deleted (its `deleted` member). */
  deleted: ReadonlyArray<string>
  /** The server's time the snapshot carries (its `now`, seconds); the real clock's when `undefined`. */
  now: number | undefined
  /** Sends one event to every open event stream. */
  readonly send: (type: "entry" | "clear" | "deleted" | "layout" | "snapshot", data: unknown) => void
  /** Number of open event streams. */
  readonly openStreams: () => number
  /** Stops listening and drops every connection (a server restart), then listens again on the same port after `downMs`. */
  readonly restart: (downMs: number) => Promise<void>
  readonly close: () => Promise<void>
}

export const startPageServer = async (model: Omit<DashboardModel, "eventsPath">): Promise<PageServer> => {
  const streams = new Set<ServerResponse>()
  const sockets = new Set<Socket>()
  const files = assets()
  const state: {
    snapshot: Record<string, ReadonlyArray<Entry>>
    deleted: ReadonlyArray<string>
    now: number | undefined
  } = {
    snapshot: {},
    deleted: [],
    now: undefined
  }
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? "/", "http://x").pathname
    if (path === pagePath) {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", ...pageHeaders })
      res.end(req.method === "HEAD" ? undefined : pageHtml({ ...model, eventsPath }))
      return
    }
    if (path === eventsPath) {
      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-store" })
      const snapshot = { tiles: state.snapshot, deleted: state.deleted, now: state.now ?? Date.now() / 1000 }
      res.write(`retry: 300\n\nevent: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`)
      streams.add(res)
      res.on("close", () => streams.delete(res))
      return
    }
    const asset = files.get(path)
    if (asset !== undefined) {
      res.writeHead(200, { "Content-Type": asset.contentType, "Cache-Control": "public, max-age=31536000, immutable" })
      res.end(asset.body)
      return
    }
    const img = /^\/img\/([a-z0-9-]+)\.svg$/.exec(path)
    if (img !== null) {
      res.writeHead(200, { "Content-Type": "image/svg+xml" })
      res.end(pictureSvg(img[1]!))
      return
    }
    res.writeHead(404, { "Content-Type": "text/plain" })
    res.end("not found")
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const origin = `http://127.0.0.1:${port}`
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      for (const s of sockets) s.destroy()
    })
  return {
    origin,
    url: `${origin}${pagePath}`,
    get snapshot() {
      return state.snapshot
    },
    set snapshot(s) {
      state.snapshot = s
    },
    get deleted() {
      return state.deleted
    },
    set deleted(d) {
      state.deleted = d
    },
    get now() {
      return state.now
    },
    set now(n) {
      state.now = n
    },
    send: (type, data) => {
      for (const res of streams) res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`)
    },
    openStreams: () => streams.size,
    restart: async (downMs) => {
      await stop()
      await new Promise((r) => setTimeout(r, downMs))
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
    },
    close: stop
  }
}
