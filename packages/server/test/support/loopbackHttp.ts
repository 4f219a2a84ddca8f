import {
  type AccountStore,
  type AlertStore,
  type ChangeFeed,
  type DashboardStore,
  defaultLimits,
  type SessionStore,
  type StreamStore,
  withAccountCache,
  withSessionCache
} from "@dashstream/core"
import { layer as httpLayer } from "@dashstream/http"
import { Effect, Layer, Logger, type Scope } from "effect"

/**
 * The HTTP layer over a real adapter, as `serve` composes them (the account and session caches in front of the
 * stores), on an ephemeral loopback port, with every log line captured: for the tests that look at what one request
 * does to the server and its log without a whole `serve` process.
 */

/** The stores the HTTP layer asks for (what `Storage.ts` gives `serve`). */
export type HttpStores = AccountStore | StreamStore | ChangeFeed | DashboardStore | SessionStore | AlertStore

/** A logger that appends each log line's message (its parts joined by a space) to `lines`. */
export const capturedLogger = (lines: Array<string>) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ message }) => void lines.push((Array.isArray(message) ? message : [message]).join(" ")))
  )

/**
 * Serves the HTTP layer over `stores` (no admin token, default limits, no rate limit, no request log) on a loopback
 * port until the scope closes; returns its base URL (`http://127.0.0.1:<port>`) and the log lines so far and to come.
 */
export const serveHttp = <E>(
  stores: Layer.Layer<HttpStores, E>
): Effect.Effect<{ readonly url: string; readonly logs: Array<string> }, E, Scope.Scope> =>
  Effect.suspend(() => {
    const logs: Array<string> = []
    let url = ""
    return Layer.build(
      httpLayer({
        host: "127.0.0.1",
        port: 0,
        adminToken: undefined,
        limits: defaultLimits,
        rateLimit: undefined,
        logRequests: false,
        onListening: (listening) => {
          url = listening
        }
      }).pipe(Layer.provide(withSessionCache(withAccountCache(stores))))
    ).pipe(
      Effect.provide(capturedLogger(logs)),
      Effect.map(() => ({ url, logs }))
    )
  })
