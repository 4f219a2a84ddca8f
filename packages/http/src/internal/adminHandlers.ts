import { HttpApiBuilder } from "@effect/platform"
import {
  type Account,
  type ConsoleSession,
  Dashboards,
  formatTs,
  type Limits,
  Rotations,
  UseCases,
  isoTime,
  type Widget
} from "@dashstream/core"
import { Effect, Layer } from "effect"
import { api } from "../Api.js"
import { adminAuthLive } from "./adminAuth.js"

/** Integer microseconds as an ISO 8601 UTC time (milliseconds). */

const accountView = (account: Account) => ({
  id: account.id,
  name: account.name,
  createdAt: isoTime(account.createdAt)
})

const widgetView = (widget: Widget) => ({
  streamName: widget.streamName,
  type: widget.type,
  createdAt: isoTime(widget.createdAt)
})

/** A widget with its latest entry as a read body shows it: `ts` in UNIX seconds, the stored point (docs/api.md section 6, 14). */
const widgetWithLatestView = ({ widget, latest }: UseCases.WidgetWithLatest) => ({
  ...widgetView(widget),
  latest: latest === null ? null : { ts: Number(formatTs(latest.ts)), point: JSON.parse(latest.json) as unknown }
})

const withToken =
  (basePath: string) =>
  ({ dashboard, viewToken }: Dashboards.DashboardWithToken) =>
    Dashboards.dashboardView(dashboard, viewToken, basePath)

const pushSuccess = { message: "Success!" } as const

/**
 * The admin handlers (docs/api.md sections 7, 11, 14 and 15); each one is a use case call. `key` is the session key of the
 * admin token (bearer token and console sessions are checked against it), `limits` the push limits a pushed point is
 * held to, `basePath` the prefix of the view URLs it returns (docs/api.md section 16; `""` for the root).
 */
export const adminLive = (key: ConsoleSession.SessionKey, limits: Limits, basePath = "") =>
  HttpApiBuilder.group(api, "admin", (handlers) =>
    handlers
      .handle("listAccounts", () =>
        Effect.map(UseCases.listAccounts, (accounts) => ({ accounts: accounts.map(accountView) }))
      )
      .handle("createAccount", ({ payload }) => UseCases.createAccount(payload.name ?? ""))
      .handle("addAccessKey", ({ path, urlParams }) => UseCases.addAccessKey(path.id, urlParams.revokeOthers ?? false))
      .handle("listWidgets", ({ path }) =>
        Effect.map(UseCases.listWidgetsWithLatest(path.id), (widgets) => ({
          widgets: widgets.map(widgetWithLatestView)
        }))
      )
      .handle("createWidget", ({ path, payload }) =>
        Effect.map(UseCases.createWidget(path.id, payload.streamName, payload.type), widgetView)
      )
      .handle("deleteWidget", ({ path }) => UseCases.deleteWidget(path.id, path.stream))
      .handle("pushPoint", ({ path, payload }) =>
        Effect.as(UseCases.pushPoint(path.id, path.stream, payload, limits), pushSuccess)
      )
      .handle("createDashboard", ({ path, payload }) =>
        Effect.map(Dashboards.createDashboard(path.id, payload), withToken(basePath))
      )
      .handle("listDashboards", ({ path }) =>
        Effect.map(Dashboards.listDashboards(path.id), (dashboards) => ({
          dashboards: dashboards.map((d) => Dashboards.dashboardView(d, null, basePath))
        }))
      )
      .handle("getDashboard", ({ path }) =>
        Effect.map(Dashboards.getDashboard(path.id, path.dashboardId), (d) =>
          Dashboards.dashboardView(d, null, basePath)
        )
      )
      .handle("updateDashboard", ({ path, payload }) =>
        Effect.map(Dashboards.updateDashboard(path.id, path.dashboardId, payload), (d) =>
          Dashboards.dashboardView(d, null, basePath)
        )
      )
      .handle("deleteDashboard", ({ path }) => Dashboards.deleteDashboard(path.id, path.dashboardId))
      .handle("rotateViewToken", ({ path }) =>
        Effect.map(Dashboards.rotateViewToken(path.id, path.dashboardId), withToken(basePath))
      )
      .handle("createRotation", ({ path, payload }) =>
        Effect.map(Rotations.createRotation(path.id, payload), (r) =>
          Rotations.rotationView(r.rotation, r.viewToken, basePath)
        )
      )
      .handle("listRotations", ({ path }) =>
        Effect.map(Rotations.listRotations(path.id), (rotations) => ({
          rotations: rotations.map((r) => Rotations.rotationView(r, null, basePath))
        }))
      )
      .handle("getRotation", ({ path }) =>
        Effect.map(Rotations.getRotation(path.id, path.rotationId), (r) => Rotations.rotationView(r, null, basePath))
      )
      .handle("updateRotation", ({ path, payload }) =>
        Effect.map(Rotations.updateRotation(path.id, path.rotationId, payload), (r) =>
          Rotations.rotationView(r, null, basePath)
        )
      )
      .handle("deleteRotation", ({ path }) => Rotations.deleteRotation(path.id, path.rotationId))
      .handle("rotateRotationViewToken", ({ path }) =>
        Effect.map(Rotations.rotateRotationViewToken(path.id, path.rotationId), (r) =>
          Rotations.rotationView(r.rotation, r.viewToken, basePath)
        )
      )
  ).pipe(Layer.provide(adminAuthLive(key)))
