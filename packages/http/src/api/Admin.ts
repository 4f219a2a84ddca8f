import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { CreateDashboardBody, RotationBody, UpdateDashboardBody, withBoundedIssues } from "@dashstream/core"
import { Schema } from "effect"
import { errors } from "../HttpErrors.js"
import { AccountIdParam, accountResourceEndpoints, resourcePath } from "./AccountResources.js"
import { AdminAuth } from "./AdminAuth.js"
import { PushSuccess } from "./Push.js"
import { DashboardView, RotationView, WidgetTypeName, WidgetView, WidgetWithLatestView, AccountView } from "./Views.js"

const RotationIdParam = resourcePath("rotationId", "rotation")

const DashboardIdParam = resourcePath("dashboardId", "dashboard")

/**
 * Accounts, widgets (docs/api.md sections 7 and 14), dashboards (section 11) and rotations (section 15); mounted only
 * when the admin API is on
 * (an admin token configured, or generated for the run).
 */
export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.get("listAccounts", "/admin/accounts")
      .addSuccess(Schema.Struct({ accounts: Schema.Array(AccountView) }).annotations({ identifier: "AccountList" }))
      .annotate(OpenApi.Summary, "List every account, oldest first (never an access key)")
  )
  .add(
    HttpApiEndpoint.post("createAccount", "/admin/accounts")
      .setPayload(withBoundedIssues(Schema.Struct({ name: Schema.optional(Schema.String) })))
      .addSuccess(
        Schema.Struct({
          id: Schema.String,
          name: Schema.String,
          accessKey: Schema.String.annotations({ description: "Shown only here" })
        }).annotations({ identifier: "CreatedAccount" }),
        { status: 201 }
      )
      .addError(errors("InvalidJson", "InvalidRequest"))
      .annotate(OpenApi.Summary, "Create an account and its first access key")
  )
  .add(
    HttpApiEndpoint.post("addAccessKey", "/admin/accounts/:id/access-keys")
      .setPath(AccountIdParam)
      .setUrlParams(
        Schema.Struct({
          revokeOthers: Schema.optional(
            Schema.BooleanFromString.annotations({ description: "true revokes every older key of the account" })
          )
        })
      )
      .addSuccess(Schema.Struct({ accessKey: Schema.String }).annotations({ identifier: "NewAccessKey" }), {
        status: 201
      })
      .addError(errors("InvalidRequest"))
      .addError(errors("AccountNotFound"))
      .annotate(OpenApi.Summary, "Add an access key")
  )
  .add(
    HttpApiEndpoint.get("listWidgets", "/admin/accounts/:id/widgets")
      .setPath(AccountIdParam)
      .addSuccess(
        Schema.Struct({ widgets: Schema.Array(WidgetWithLatestView) }).annotations({ identifier: "WidgetList" })
      )
      .addError(errors("AccountNotFound"))
      .annotate(OpenApi.Summary, "List the account's widgets, by stream name, each with its latest entry")
  )
  .add(
    HttpApiEndpoint.post("createWidget", "/admin/accounts/:id/widgets")
      .setPath(AccountIdParam)
      .setPayload(
        withBoundedIssues(
          Schema.Struct({
            streamName: Schema.String.annotations({ description: "1 to 255 characters, no control characters, no /" }),
            type: WidgetTypeName
          })
        )
      )
      .addSuccess(WidgetView, { status: 201 })
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("AccountNotFound"))
      .addError(errors("Conflict"))
      .annotate(OpenApi.Summary, "Declare a widget (its stream and widget type)")
  )
  .add(
    HttpApiEndpoint.del("deleteWidget", "/admin/accounts/:id/widgets/:stream")
      .setPath(Schema.Struct({ id: Schema.String, stream: Schema.String }))
      .addSuccess(Schema.Void, { status: 204 })
      .addError(errors("AccountNotFound", "StreamNotFound"))
      .annotate(OpenApi.Summary, "Delete a widget and its stream's data")
  )
  .add(
    HttpApiEndpoint.post("pushPoint", "/admin/accounts/:id/widgets/:stream/points")
      .setPath(
        Schema.Struct({
          id: Schema.String.annotations({ description: "The account id" }),
          stream: Schema.String.annotations({ description: "The stream name, URL-encoded" })
        })
      )
      .setPayload(
        Schema.Unknown.annotations({
          identifier: "PointBody",
          description: "A point, exactly as a push's `point` (docs/api.md section 3); an empty point clears the stream"
        })
      )
      .addSuccess(PushSuccess)
      .addError(errors("InvalidJson", "InvalidRequest", "InvalidPoint", "UnsupportedCommand"))
      .addError(errors("AccountNotFound", "StreamNotFound"))
      .addError(errors("PayloadTooLarge"))
      .annotate(OpenApi.Summary, "Push a point to a widget's stream, as a push with the account's key would")
      .annotate(
        OpenApi.Description,
        "Stored exactly as `POST /customSend` with `{accessKey: <a key of this account>, streamName, point: <body>}` " +
          "stores it (docs/api.md section 3: the widget type's rules, live updates, durability), and answered as that " +
          "push is: 200 `{message: Success!}`, or its error (paths start at `point`)"
      )
  )
  .pipe(
    accountResourceEndpoints({
      name: "Dashboard",
      plural: "Dashboards",
      noun: "dashboard",
      path: "dashboards",
      idParam: "dashboardId",
      listKey: "dashboards",
      listIdentifier: "DashboardList",
      createBody: withBoundedIssues(CreateDashboardBody),
      updateBody: withBoundedIssues(UpdateDashboardBody),
      view: DashboardView,
      notFound: "DashboardNotFound",
      summaries: {
        create: "Create a dashboard and its view token",
        list: "List the account's dashboards, oldest first, each with its view URL",
        get: "One dashboard, with its view URL",
        update: "Replace a dashboard's name and tiles; its view URL keeps working",
        delete: "Delete a dashboard; its view URL stops working"
      },
      descriptions: {
        create:
          "Without tiles: one tile per widget of the account, in creation order, laid out to fill a 16:9 screen. " +
          "Tiles lie on a grid 12 columns wide (0 <= x, x + w <= 12, w, h >= 1, y >= 0, integers, no overlap) and " +
          "each names a widget of the account; otherwise 400 invalid_request with path (tiles[2].streamName). At " +
          "most 100 tiles; name 1 to 200 characters. A tile may carry options (docs/api.md section 15, TileOptions): " +
          "thresholds [{above|below: n, color}] on number, horizontal-bar, vertical-bar, dial, sparkline and " +
          "line-graph tiles; min and max (min < max) on horizontal-bar, vertical-bar and dial tiles; staleAfter " +
          "(whole seconds, 10 to 31536000) on any tile; range (whole seconds, 60 to 31536000: the time shown) on number, " +
          "sparkline and line-graph tiles; unknown keys, or an option the tile's widget type does not " +
          "take, are 400 invalid_request with path (tiles[1].options.thresholds[0].color). Every answer for a dashboard " +
          "carries its view token and url",
        update: "The same tile rules as create; answers the new version"
      }
    })
  )
  .add(
    HttpApiEndpoint.post("rotateViewToken", "/admin/accounts/:id/dashboards/:dashboardId/view-token")
      .setPath(DashboardIdParam)
      .addSuccess(DashboardView, { status: 201 })
      .addError(errors("AccountNotFound", "DashboardNotFound"))
      .annotate(OpenApi.Summary, "Give a dashboard a new view token; the old view URL stops working at once")
  )
  .pipe(
    accountResourceEndpoints({
      name: "Rotation",
      plural: "Rotations",
      noun: "rotation",
      path: "rotations",
      idParam: "rotationId",
      listKey: "rotations",
      listIdentifier: "RotationList",
      createBody: withBoundedIssues(RotationBody),
      updateBody: withBoundedIssues(RotationBody),
      view: RotationView,
      notFound: "RotationNotFound",
      summaries: {
        create: "Create a rotation and its view token",
        list: "List the account's rotations, oldest first, each with its view URL",
        get: "One rotation, with its view URL",
        update: "Replace a rotation's name, dashboards and interval; its view URL keeps working",
        delete: "Delete a rotation; its view URL stops working"
      },
      descriptions: {
        create:
          "Several dashboards of the account shown in turn on one screen (docs/api.md section 15). intervalSeconds a " +
          "whole number 5 to 3600; dashboardIds at most 50 of the account's dashboards (may be empty; one may repeat); " +
          "name 1 to 200 characters. Otherwise 400 invalid_request with path (dashboardIds[1]). Every answer for a " +
          "rotation carries its view token and url",
        update: "The same rules as create; answers the new version. Open rotation pages follow it"
      }
    })
  )
  .add(
    HttpApiEndpoint.post("rotateRotationViewToken", "/admin/accounts/:id/rotations/:rotationId/view-token")
      .setPath(RotationIdParam)
      .addSuccess(RotationView, { status: 201 })
      .addError(errors("AccountNotFound", "RotationNotFound"))
      .annotate(OpenApi.Summary, "Give a rotation a new view token; the old view URL stops working at once")
  )
  .middleware(AdminAuth)
  .annotate(OpenApi.Title, "Admin") {}
