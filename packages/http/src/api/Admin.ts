import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import {
  AlertRuleBody,
  CreateDashboardBody,
  ReceiverBody,
  RotationBody,
  UpdateDashboardBody,
  withBoundedIssues
} from "@dashstream/core"
import { Schema } from "effect"
import { errors } from "../HttpErrors.js"
import { AccountIdParam, accountResourceEndpoints, resourcePath } from "./AccountResources.js"
import { AdminAuth } from "./AdminAuth.js"
import { PushSuccess } from "./Push.js"
import {
  AccountView,
  AlertEventView,
  AlertRuleView,
  DashboardView,
  decodedByCore,
  IsoTime,
  ReceiverView,
  RotationView,
  WidgetTypeName,
  WidgetView,
  WidgetWithLatestView
} from "./Views.js"

const RotationIdParam = resourcePath("rotationId", "rotation")

const DashboardIdParam = resourcePath("dashboardId", "dashboard")

const RuleIdParam = resourcePath("ruleId", "alert rule")

const ReceiverIdParam = resourcePath("receiverId", "receiver")

/** The bodies of rules and receivers, decoded by core (`AlertAdmin`) so that every refusal has core's path. */
const AlertRulePayload = decodedByCore(AlertRuleBody, "AlertRuleBody")
const ReceiverPayload = decodedByCore(ReceiverBody, "ReceiverBody")

/**
 * Accounts, widgets (docs/api.md sections 7 and 14), dashboards (section 11), rotations (section 15), alert rules,
 * receivers and alert transitions (section 18); mounted only when the admin API is on
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
  .pipe(
    accountResourceEndpoints({
      name: "AlertRule",
      plural: "AlertRules",
      noun: "alert rule",
      path: "alert-rules",
      idParam: "ruleId",
      listKey: "rules",
      listIdentifier: "AlertRuleList",
      createBody: AlertRulePayload,
      updateBody: AlertRulePayload,
      view: AlertRuleView,
      notFound: "AlertRuleNotFound",
      summaries: {
        create: "Create an alert rule on a widget's stream",
        list: "List the account's alert rules, oldest first, each with its state",
        get: "One alert rule, with its state",
        update: "Replace an alert rule; it keeps its state when its stream, condition and for stay the same",
        delete: "Delete an alert rule; its transitions stay in the history"
      },
      descriptions: {
        create:
          "docs/api.md section 18.1. condition: exactly one of {above: n}, {below: n} (numeric widget types only) or " +
          "{noDataFor: seconds} (10 to 31536000); for: whole seconds 0 to 86400, default 0; receiverIds: at most 20 " +
          "of the account's receivers, each once. Otherwise 400 invalid_request with path (streamName, condition, " +
          "receiverIds[1], an unknown key at its own path)",
        update: "The same rules as create; answers the new version"
      }
    })
  )
  .add(
    HttpApiEndpoint.post("silenceAlertRule", "/admin/accounts/:id/alert-rules/:ruleId/silence")
      .setPath(RuleIdParam)
      .setPayload(decodedByCore(Schema.Struct({ until: Schema.NullOr(IsoTime) }), "AlertRuleSilence"))
      .addSuccess(AlertRuleView)
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("AccountNotFound", "AlertRuleNotFound"))
      .annotate(OpenApi.Summary, "Silence an alert rule until a time, or lift its silence (until: null)")
      .annotate(
        OpenApi.Description,
        "While silenced, the rule's transitions are recorded with silenced deliveries and never sent, also not once " +
          "the silence ends (docs/api.md section 18.3). until: an ISO 8601 time with a zone, else 400 " +
          "invalid_request with path until"
      )
  )
  .pipe(
    accountResourceEndpoints({
      name: "Receiver",
      plural: "Receivers",
      noun: "receiver",
      path: "receivers",
      idParam: "receiverId",
      listKey: "receivers",
      listIdentifier: "ReceiverList",
      createBody: ReceiverPayload,
      updateBody: ReceiverPayload,
      view: ReceiverView,
      notFound: "ReceiverNotFound",
      summaries: {
        create: "Create a receiver of alert notifications (its secret is never shown)",
        list: "List the account's receivers, oldest first",
        get: "One receiver",
        update: "Replace a receiver; without secret the stored one is kept, secret: null removes it",
        delete: "Delete a receiver; its id leaves every rule's receiverIds"
      },
      descriptions: {
        create:
          "docs/api.md section 18.2. kind: webhook, slack or alertmanager; url: an absolute http or https URL of at " +
          "most 2000 characters; secret: 1 to 500 characters, the HMAC-SHA256 key of a webhook's " +
          "X-Dashstream-Signature. Otherwise 400 invalid_request with path",
        update: "The same rules as create; without secret the stored one is kept, secret: null removes it"
      }
    })
  )
  .add(
    HttpApiEndpoint.post("testReceiver", "/admin/accounts/:id/receivers/:receiverId/test")
      .setPath(ReceiverIdParam)
      .addSuccess(
        Schema.Struct({
          status: Schema.Number.annotations({ description: "The receiver's HTTP status, whatever it is" })
        }).annotations({ identifier: "ReceiverTestResult" })
      )
      .addError(errors("AccountNotFound", "ReceiverNotFound"))
      .addError(errors("ReceiverUnreachable"))
      .annotate(OpenApi.Summary, "Send a receiver one test notification of its kind")
      .annotate(
        OpenApi.Description,
        "A firing body for a made-up rule named Dashstream test notification on the stream test, value 1 " +
          "(docs/api.md section 18.4). 200 with the receiver's status whatever it is; 502 receiver_unreachable with " +
          "the reason when it gives no answer (connection refused, timed out after 10 s)"
      )
  )
  .add(
    HttpApiEndpoint.get("listAlertEvents", "/admin/accounts/:id/alert-events")
      .setPath(AccountIdParam)
      .setUrlParams(
        Schema.Struct({
          since: Schema.optional(
            IsoTime.annotations({
              description: "Only transitions made after this time (exclusive); ISO 8601 with a zone"
            })
          )
        })
      )
      .addSuccess(Schema.Struct({ events: Schema.Array(AlertEventView) }).annotations({ identifier: "AlertEventList" }))
      .addError(errors("InvalidRequest"))
      .addError(errors("AccountNotFound"))
      .annotate(OpenApi.Summary, "The account's alert transitions after a time, oldest first, at most 1000")
  )
  .middleware(AdminAuth)
  .annotate(OpenApi.Title, "Admin") {}
