import { HttpApiBuilder } from "@effect/platform"
import {
  type Account,
  AlertAdmin,
  type ConsoleSession,
  type Dashboard,
  Dashboards,
  formatTs,
  type Limits,
  type Rotation,
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

/**
 * The handlers of an account resource's list, get and delete endpoints (docs/api.md sections 11, 15 and 18; the
 * endpoints of `accountResourceEndpoints`), from its use cases and its answer (`json`): list (under `listKey`), get
 * and delete. `idOf` names the resource's id in the path.
 */
const resourceHandlers = <A, J, K extends string, EL, RL, E, R, P extends { readonly id: string }>(
  resources: {
    readonly list: (accountId: string) => Effect.Effect<ReadonlyArray<A>, EL, RL>
    readonly get: (accountId: string, id: string) => Effect.Effect<A, E, R>
    readonly delete: (accountId: string, id: string) => Effect.Effect<void, E, R>
  },
  json: (resource: A) => J,
  listKey: K,
  idOf: (path: P) => string
) => ({
  list: ({ path }: { readonly path: { readonly id: string } }) =>
    Effect.map(resources.list(path.id), (list) => ({ [listKey]: list.map(json) }) as { [key in K]: Array<J> }),
  get: ({ path }: { readonly path: P }) => Effect.map(resources.get(path.id, idOf(path)), json),
  delete: ({ path }: { readonly path: P }) => resources.delete(path.id, idOf(path))
})

/**
 * The handlers of an account resource's create and replace endpoints (the other two of `accountResourceEndpoints`):
 * the use case called with the account id (and the resource's id, named by `idOf`) and the decoded body, its answer
 * as `json` shows it.
 */
const writeHandlers = <A, J, B, C, EC, RC, EU, RU, P extends { readonly id: string }>(
  create: (accountId: string, body: B) => Effect.Effect<A, EC, RC>,
  update: (accountId: string, id: string, body: C) => Effect.Effect<A, EU, RU>,
  json: (resource: A) => J,
  idOf: (path: P) => string
) => ({
  create: ({ path, payload }: { readonly path: { readonly id: string }; readonly payload: B }) =>
    Effect.map(create(path.id, payload), json),
  update: ({ path, payload }: { readonly path: P; readonly payload: C }) =>
    Effect.map(update(path.id, idOf(path), payload), json)
})

/**
 * The handlers every shared view kind has (docs/api.md sections 11 and 15): those of {@link resourceHandlers} and a
 * new view token, whose answer (`json`) carries the share link.
 */
const sharedViewHandlers = <A, J, K extends string, EL, E, R, P extends { readonly id: string }>(
  views: {
    readonly list: (accountId: string) => Effect.Effect<ReadonlyArray<A>, EL, R>
    readonly get: (accountId: string, id: string) => Effect.Effect<A, E, R>
    readonly delete: (accountId: string, id: string) => Effect.Effect<void, E, R>
    readonly rotateToken: (accountId: string, id: string) => Effect.Effect<A, E, R>
  },
  json: (view: A) => J,
  listKey: K,
  idOf: (path: P) => string
) => ({
  ...resourceHandlers(views, json, listKey, idOf),
  rotateToken: ({ path }: { readonly path: P }) => Effect.map(views.rotateToken(path.id, idOf(path)), json)
})

const pushSuccess = { message: "Success!" } as const

/**
 * The admin handlers (docs/api.md sections 7, 11, 14, 15 and 18); each one is a use case call. `key` is the session key of the
 * admin token (bearer token and console sessions are checked against it), `limits` the push limits a pushed point is
 * held to, `basePath` the prefix of the view URLs it returns (docs/api.md section 16; `""` for the root).
 */
export const adminLive = (key: ConsoleSession.SessionKey, limits: Limits, basePath = "") => {
  const dashboard = (d: Dashboard) => Dashboards.dashboardView(d, basePath)
  const rotation = (r: Rotation) => Rotations.rotationView(r, basePath)
  const dashboardId = (path: { readonly id: string; readonly dashboardId: string }) => path.dashboardId
  const dashboards = {
    ...sharedViewHandlers(Dashboards.views, dashboard, "dashboards", dashboardId),
    ...writeHandlers(Dashboards.createDashboard, Dashboards.updateDashboard, dashboard, dashboardId)
  }
  const rotationId = (path: { readonly id: string; readonly rotationId: string }) => path.rotationId
  const rotations = {
    ...sharedViewHandlers(Rotations.views, rotation, "rotations", rotationId),
    ...writeHandlers(Rotations.createRotation, Rotations.updateRotation, rotation, rotationId)
  }
  const ruleId = (path: { readonly id: string; readonly ruleId: string }) => path.ruleId
  const rules = {
    ...resourceHandlers(AlertAdmin.rules, AlertAdmin.ruleJson, "rules", ruleId),
    ...writeHandlers(AlertAdmin.createRule, AlertAdmin.updateRule, AlertAdmin.ruleJson, ruleId)
  }
  const receiverId = (path: { readonly id: string; readonly receiverId: string }) => path.receiverId
  const receivers = {
    ...resourceHandlers(AlertAdmin.receivers, AlertAdmin.receiverJson, "receivers", receiverId),
    ...writeHandlers(AlertAdmin.createReceiver, AlertAdmin.updateReceiver, AlertAdmin.receiverJson, receiverId)
  }
  return HttpApiBuilder.group(api, "admin", (handlers) =>
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
      .handle("createDashboard", dashboards.create)
      .handle("listDashboards", dashboards.list)
      .handle("getDashboard", dashboards.get)
      .handle("updateDashboard", dashboards.update)
      .handle("deleteDashboard", dashboards.delete)
      .handle("rotateViewToken", dashboards.rotateToken)
      .handle("createRotation", rotations.create)
      .handle("listRotations", rotations.list)
      .handle("getRotation", rotations.get)
      .handle("updateRotation", rotations.update)
      .handle("deleteRotation", rotations.delete)
      .handle("rotateRotationViewToken", rotations.rotateToken)
      .handle("createAlertRule", rules.create)
      .handle("listAlertRules", rules.list)
      .handle("getAlertRule", rules.get)
      .handle("updateAlertRule", rules.update)
      .handle("deleteAlertRule", rules.delete)
      .handle("silenceAlertRule", ({ path, payload }) =>
        Effect.map(AlertAdmin.silenceRule(path.id, path.ruleId, payload), AlertAdmin.ruleJson)
      )
      .handle("createReceiver", receivers.create)
      .handle("listReceivers", receivers.list)
      .handle("getReceiver", receivers.get)
      .handle("updateReceiver", receivers.update)
      .handle("deleteReceiver", receivers.delete)
      .handle("testReceiver", ({ path }) => AlertAdmin.testReceiver(path.id, path.receiverId))
      .handle("listAlertEvents", ({ path, urlParams }) =>
        Effect.map(AlertAdmin.listEvents(path.id, urlParams.since), (events) => ({
          events: events.map(AlertAdmin.eventJson)
        }))
      )
  ).pipe(Layer.provide(adminAuthLive(key)))
}
