import type { IncomingMessage, ServerResponse } from "node:http"
import {
  type HttpApi,
  HttpApiBuilder,
  HttpIncomingMessage,
  HttpMiddleware,
  HttpRouter,
  HttpServerError,
  HttpServerRequest,
  type HttpServerResponse
} from "@effect/platform"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import {
  type AccountStore,
  type AlertStore,
  ConsoleSession,
  type DashboardStore,
  NotificationSender,
  type SessionStore,
  type StreamStore
} from "@dashstream/core"
import { Cause, Context, Effect, Layer, Option, type Scope } from "effect"
import { api, publicApi } from "../Api.js"
import type { HandlerConfig } from "../HttpConfig.js"
import { type ErrorReply, errorReply, type RateLimited } from "../HttpErrors.js"
import { adminLive } from "./adminHandlers.js"
import { consoleLive } from "./consoleHandlers.js"
import { docsLive } from "./docs.js"
import { healthLive } from "./healthHandlers.js"
import type { Metrics } from "../Metrics.js"
import { metricsLive } from "./metricsHandlers.js"
import type { RateLimiter } from "./rateLimiter.js"
import { readLive, type WritePressure } from "./readHandlers.js"
import { clientInfo } from "./clientInfo.js"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { internalErrorLog, replyOfError, requestLog, takeToken } from "./laneKit.js"
import { accessKeyOfPath } from "./redact.js"
import { bodyTooLarge, errorResponse, routeNotFound } from "./replies.js"
import type { RouteTable } from "./routeTable.js"

/**
 * Everything except the push path goes through the `HttpApi` built here: export reads, health, docs and the
 * admin API (mounted only with an admin token). Handler failures, the platform's own decode errors, unknown
 * routes and defects all leave as the contract's error body; the platform's default answers (empty 400/404/500)
 * never reach a client.
 */

/** A rate-limit check for one access key: fails with `RateLimited` when over budget. */
const rateLimitCheck =
  (limiter: RateLimiter | undefined) =>
  (accessKey: string): Effect.Effect<void, RateLimited> => {
    if (limiter === undefined) return Effect.void
    return Effect.async<void, RateLimited>((resume) =>
      takeToken(limiter, accessKey, (refusal) => resume(refusal === undefined ? Effect.void : Effect.fail(refusal)))
    )
  }

const issuePath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    out += typeof key === "number" ? `[${key}]` : out === "" ? String(key) : `.${String(key)}`
  }
  return out
}

const decodeErrorReply = (error: {
  readonly issues: ReadonlyArray<{ readonly path: ReadonlyArray<PropertyKey>; readonly message: string }>
}): ErrorReply => {
  const issue = error.issues[0]
  if (issue === undefined) return errorReply(400, "invalid_request", "the request does not have the expected shape")
  const path = issuePath(issue.path)
  return errorReply(400, "invalid_request", issue.message, path === "" ? undefined : path)
}

const isDecodeError = (u: unknown): u is Parameters<typeof decodeErrorReply>[0] =>
  typeof u === "object" && u !== null && (u as { _tag?: unknown })._tag === "HttpApiDecodeError"

const requestErrorReply = (error: HttpServerError.RequestError, maxBodyBytes: number): ErrorReply => {
  const cause = error.cause
  if (cause instanceof Error && cause.message === "maxBytes exceeded") return bodyTooLarge(maxBodyBytes)
  if (error.reason === "Decode" && cause instanceof SyntaxError) {
    return errorReply(400, "invalid_json", "the request body is not valid JSON")
  }
  return errorReply(400, "invalid_request", "the request body could not be read")
}

const routeNotFoundReply = (method: string, url: string, routes: RouteTable): ErrorReply => {
  const allowed = routes.allowed(url)
  // A 405 whose Allow names the refused method would contradict itself: a path a lane serves in
  // another shape than the one asked is answered 404.
  if (allowed === undefined || allowed.includes(method)) {
    return routeNotFound(url)
  }
  const allow = allowed.join(", ")
  return errorReply(405, "method_not_allowed", `${method} is not allowed here; allowed: ${allow}`, undefined, { allow })
}

/**
 * The answer to a failed request, whatever the cause: an unknown route (404, or 405 with `Allow` when the path
 * exists with other methods), the platform's decode errors (400), a known error, or 500 for anything else (the
 * caller logs those).
 */
const causeReply = (
  cause: Cause.Cause<unknown>,
  method: string,
  url: string,
  routes: RouteTable,
  maxBodyBytes: number
): ErrorReply => {
  const failure = Cause.failureOption(cause)
  const error = Option.isSome(failure) ? failure.value : Option.getOrUndefined(Cause.dieOption(cause))
  if (error === undefined) {
    return errorReply(503, "unavailable", "the request was interrupted; nothing was stored, retry later")
  }
  if (HttpServerError.isServerError(error)) {
    if (error._tag === "RouteNotFound") return routeNotFoundReply(method, url, routes)
    if (error._tag === "RequestError") return requestErrorReply(error, maxBodyBytes)
  }
  if (isDecodeError(error)) return decodeErrorReply(error)
  return replyOfError(error)
}

/** Turns every failure of `app` into the contract's error response (and logs what answers 500). */
const answerErrors =
  (routes: RouteTable, maxBodyBytes: number) =>
  <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.catchAllCause(app, (cause) =>
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const reply = causeReply(cause, request.method, request.url, routes, maxBodyBytes)
        const response = errorResponse(reply)
        return reply.status === 500
          ? Effect.as(internalErrorLog(request.method, request.url, cause, accessKeyOfPath(request.url)), response)
          : Effect.succeed(response)
      })
    )

const logRequest = <E, R>(app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const start = performance.now()
    return Effect.tap(app, (response) =>
      requestLog(
        request.method,
        request.url,
        response.status,
        start,
        clientInfo(NodeHttpServerRequest.toIncomingMessage(request)).address
      )
    )
  })

/**
 * find-my-way's defaults would answer 404 for a path parameter over 100 characters (stream names may have 255,
 * more once URL-encoded) and match paths case-insensitively; the contract's paths are exact. A trailing slash is
 * still ignored (the route table does the same).
 */
const routerConfig = {
  caseSensitive: true,
  ignoreTrailingSlash: true,
  ignoreDuplicateSlashes: false,
  maxParamLength: 4096
} as const

/** The sender of a server without one (see `HandlerConfig.notificationSender`): no test notification leaves it. */
const noNotificationSender: NotificationSender["Type"] = {
  send: () => Effect.succeed({ _tag: "Unreachable", reason: "this server sends no notifications" })
}

/** The API served with this configuration: admin and console included only with an admin token. */
const servedApi = (config: HandlerConfig): HttpApi.HttpApi.Any => (config.adminToken === undefined ? publicApi : api)

/**
 * Builds the `HttpApi` lane once (routes, decoders, OpenAPI document, Swagger page) and returns a Node request
 * listener for it. `routes` is the server's route table (`routeTable.ts`), for its 404/405 answers. Tracing is off: a
 * span would carry the URL, and read URLs carry access keys.
 */
export const makeApiLane = (
  config: HandlerConfig,
  routes: RouteTable,
  limiter: RateLimiter | undefined,
  metrics: Metrics,
  pressure: WritePressure
): Effect.Effect<
  (req: IncomingMessage, res: ServerResponse) => void,
  never,
  AccountStore | StreamStore | DashboardStore | SessionStore | AlertStore | Scope.Scope
> =>
  Effect.gen(function* () {
    const served = servedApi(config)
    const adminToken = config.adminToken
    // Derived once: the bearer token and every console session are checked against it.
    const key = adminToken === undefined ? undefined : ConsoleSession.sessionKey(adminToken)
    const groups = Layer.mergeAll(
      readLive(rateLimitCheck(limiter), pressure),
      healthLive,
      metricsLive(metrics),
      docsLive(served, config.basePath ?? ""),
      key === undefined
        ? Layer.empty
        : Layer.merge(
            adminLive(key, config.limits, config.basePath ?? "").pipe(
              Layer.provide(Layer.succeed(NotificationSender, config.notificationSender ?? noNotificationSender))
            ),
            consoleLive(key, config.basePath ?? "")
          )
    )
    const built = yield* Layer.build(Layer.merge(groups, HttpApiBuilder.Router.Live))
    const router = yield* Context.get(built, HttpApiBuilder.Router).router
    const maxBodyBytes = config.limits.maxBodyBytes
    const app = (yield* HttpRouter.toHttpApp(router).pipe(HttpRouter.withRouterConfig(routerConfig))).pipe(
      answerErrors(routes, maxBodyBytes),
      (app) => (config.logRequests ? logRequest(app) : app)
    )
    const platform = yield* Layer.build(NodeHttpServer.layerContext)
    // Everything per-server goes into the handler's runtime once, rather than being provided per request.
    return yield* NodeHttpServer.makeHandler(app).pipe(
      Effect.provide(platform),
      HttpIncomingMessage.withMaxBodySize(Option.some(maxBodyBytes)),
      Effect.locally(HttpMiddleware.currentTracerDisabledWhen, () => true)
    )
  })
