import { createHash, timingSafeEqual } from "node:crypto"
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { UseCases, type Widget } from "@dashstream/core"
import { Effect, Layer, Redacted } from "effect"
import { AdminAuth, api } from "../Api.js"
import { Unauthorized } from "../HttpErrors.js"

const digest = (s: string) => createHash("sha256").update(s, "utf8").digest()

/**
 * The admin token check (contract section 7): `Authorization: Bearer <token>`, compared in constant time (both
 * sides hashed first, so neither the length nor the content leaks through timing).
 */
const adminAuthLive = (adminToken: string): Layer.Layer<AdminAuth> => {
  const expected = digest(adminToken)
  const unauthorized = new Unauthorized({ message: "a valid admin bearer token is required" })
  return Layer.succeed(
    AdminAuth,
    AdminAuth.of({
      adminToken: (token) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const header = request.headers["authorization"] ?? ""
          const ok = /^bearer /i.test(header) && timingSafeEqual(digest(Redacted.value(token)), expected)
          return ok ? Effect.void : Effect.fail(unauthorized)
        })
    })
  )
}

const widgetView = (widget: Widget) => ({
  streamName: widget.streamName,
  type: widget.type,
  createdAt: new Date(Math.floor(widget.createdAt / 1000)).toISOString()
})

/** The admin handlers (contract section 7); each one is a use case call. */
export const adminLive = (adminToken: string) =>
  HttpApiBuilder.group(api, "admin", (handlers) =>
    handlers
      .handle("createAccount", ({ payload }) => UseCases.createAccount(payload.name ?? ""))
      .handle("addAccessKey", ({ path, urlParams }) => UseCases.addAccessKey(path.id, urlParams.revokeOthers ?? false))
      .handle("listWidgets", ({ path }) =>
        Effect.map(UseCases.listWidgets(path.id), (widgets) => ({ widgets: widgets.map(widgetView) }))
      )
      .handle("createWidget", ({ path, payload }) =>
        Effect.map(UseCases.createWidget(path.id, payload.streamName, payload.type), widgetView)
      )
      .handle("deleteWidget", ({ path }) => UseCases.deleteWidget(path.id, path.stream))
  ).pipe(Layer.provide(adminAuthLive(adminToken)))
