import { createHash, timingSafeEqual } from "node:crypto"
import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { type Dashboard, Dashboards, UseCases, viewPath, type Widget } from "@dashstream/core"
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

/** Integer microseconds as an ISO 8601 UTC time (milliseconds). */
const isoTime = (micros: number) => new Date(Math.floor(micros / 1000)).toISOString()

const widgetView = (widget: Widget) => ({
  streamName: widget.streamName,
  type: widget.type,
  createdAt: isoTime(widget.createdAt)
})

/**
 * A dashboard as the admin API shows it (contract section 11). The view token exists only as a digest once stored,
 * so only create and rotate, which make one, pass it; every other answer shows `viewToken` and `url` as `null`.
 */
const dashboardView = (dashboard: Dashboard, viewToken: string | null = null) => ({
  id: dashboard.id,
  name: dashboard.name,
  tiles: dashboard.tiles,
  viewToken,
  url: viewToken === null ? null : viewPath(viewToken),
  createdAt: isoTime(dashboard.createdAt)
})

const withToken = ({ dashboard, viewToken }: Dashboards.DashboardWithToken) => dashboardView(dashboard, viewToken)

/** The admin handlers (contract sections 7 and 11); each one is a use case call. */
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
      .handle("createDashboard", ({ path, payload }) =>
        Effect.map(Dashboards.createDashboard(path.id, payload), withToken)
      )
      .handle("listDashboards", ({ path }) =>
        Effect.map(Dashboards.listDashboards(path.id), (dashboards) => ({
          dashboards: dashboards.map((d) => dashboardView(d))
        }))
      )
      .handle("getDashboard", ({ path }) =>
        Effect.map(Dashboards.getDashboard(path.id, path.dashboardId), (d) => dashboardView(d))
      )
      .handle("updateDashboard", ({ path, payload }) =>
        Effect.map(Dashboards.updateDashboard(path.id, path.dashboardId, payload), (d) => dashboardView(d))
      )
      .handle("deleteDashboard", ({ path }) => Dashboards.deleteDashboard(path.id, path.dashboardId))
      .handle("rotateViewToken", ({ path }) =>
        Effect.map(Dashboards.rotateViewToken(path.id, path.dashboardId), withToken)
      )
  ).pipe(Layer.provide(adminAuthLive(adminToken)))
