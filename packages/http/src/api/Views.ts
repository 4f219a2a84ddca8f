import { alertStates, deliveryStates, receiverKinds, Tile, widgetTypes } from "@dashstream/core"
import { JSONSchema, Schema } from "effect"
import { ReadEntry } from "./Read.js"

/** A widget type identifier, documented with the list of types. */
export const WidgetTypeName = Schema.String.annotations({
  description: "A widget type identifier (docs/api.md section 2)",
  jsonSchema: { type: "string", enum: [...widgetTypes] }
})

/** A time as the admin API writes it: ISO 8601, UTC. */
export const IsoTime = Schema.String.annotations({ description: "ISO 8601 time, UTC" })

/** A widget as the admin API shows it. */
export const WidgetView = Schema.Struct({
  streamName: Schema.String,
  type: WidgetTypeName,
  createdAt: IsoTime
}).annotations({ identifier: "Widget" })

/**
 * The share link every answer for a shared view carries (docs/api.md section 11): `viewToken` and `url`, the page's
 * path (`page`, `/d/<viewToken>` or `/r/<viewToken>`) under the server's base path; both `null` for a view made before
 * view tokens were kept.
 */
const shareLinkFields = (page: string) => {
  const note =
    "Shown in every answer, so the link can be copied again; null for a view made by a version that kept only the " +
    "token's SHA-256 digest (POST .../view-token gives it a link that is shown from then on)."
  return {
    viewToken: Schema.NullOr(Schema.String).annotations({ description: `The view token. ${note}` }),
    url: Schema.NullOr(Schema.String).annotations({
      description: `The page's path, ${page}, under the server's base path. ${note}`
    })
  }
}

/** A dashboard as the admin API shows it (docs/api.md section 11), with its share link. */
export const DashboardView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  tiles: Schema.Array(Tile),
  ...shareLinkFields("/d/<viewToken>"),
  createdAt: IsoTime
}).annotations({ identifier: "Dashboard" })

/** A rotation as the admin API shows it (docs/api.md section 15), with its share link. */
export const RotationView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  dashboardIds: Schema.Array(Schema.String).annotations({
    description: "The dashboards shown in turn, in order; a deleted dashboard leaves this list"
  }),
  intervalSeconds: Schema.Number.annotations({ description: "Seconds each dashboard is shown (5 to 3600)" }),
  ...shareLinkFields("/r/<viewToken>"),
  createdAt: IsoTime
}).annotations({ identifier: "Rotation" })

/** An account as the admin API lists it (docs/api.md section 14): never a key. */
export const AccountView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  createdAt: IsoTime
}).annotations({ identifier: "Account" })

/** A widget as `GET .../widgets` lists it: with the latest entry of its stream (docs/api.md section 14). */
export const WidgetWithLatestView = Schema.Struct({
  ...WidgetView.fields,
  latest: Schema.NullOr(ReadEntry).annotations({
    description: "The latest entry of the stream, as a read without since gives it; null when the stream is empty"
  })
}).annotations({ identifier: "WidgetWithLatest" })

/**
 * A request body the handler passes on as sent, for core to decode with its own paths (docs/api.md section 18: an
 * alert rule's or a receiver's body), documented in the OpenAPI document by `schema`'s JSON Schema (its
 * definitions inlined) under `schema`'s identifier.
 */
export const decodedByCore = (schema: Schema.Schema.Any, identifier: string) => {
  const {
    $defs: defs = {},
    $schema: _,
    ...root
  } = JSONSchema.make(schema) as {
    $defs?: Record<string, unknown>
    $schema?: string
  }
  const inline = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(inline)
    if (typeof node !== "object" || node === null) return node
    const ref = (node as { $ref?: unknown }).$ref
    if (typeof ref === "string" && ref.startsWith("#/$defs/")) return inline(defs[ref.slice("#/$defs/".length)])
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, inline(value)]))
  }
  return Schema.Unknown.annotations({ identifier, jsonSchema: inline(root) as object })
}

/** An alert rule's condition as answers show it: exactly one of `above`, `below`, `noDataFor`. */
const ConditionView = Schema.Record({ key: Schema.String, value: Schema.Number }).annotations({
  description: 'One of {"above": n}, {"below": n} or {"noDataFor": seconds}'
})

/** An alert rule as the admin API shows it (docs/api.md section 18). */
export const AlertRuleView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  streamName: Schema.String,
  condition: ConditionView,
  for: Schema.Number.annotations({ description: "Whole seconds the condition must hold before the rule fires" }),
  receiverIds: Schema.Array(Schema.String),
  state: Schema.Literal(...alertStates).annotations({
    description: "ok, pending (the condition holds for less than for) or firing"
  }),
  stateSince: IsoTime,
  value: Schema.NullOr(Schema.Number).annotations({ description: "The value of the last entry evaluated" }),
  silencedUntil: Schema.NullOr(IsoTime),
  createdAt: IsoTime
}).annotations({ identifier: "AlertRule" })

/** A receiver as the admin API shows it (docs/api.md section 18.2): never its secret. */
export const ReceiverView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  kind: Schema.Literal(...receiverKinds),
  url: Schema.String,
  hasSecret: Schema.Boolean,
  createdAt: IsoTime
}).annotations({ identifier: "Receiver" })

/** A transition of an alert rule with its deliveries (docs/api.md section 18.3). */
export const AlertEventView = Schema.Struct({
  id: Schema.String,
  ruleId: Schema.String,
  ruleName: Schema.String,
  streamName: Schema.String,
  from: Schema.Literal(...alertStates),
  to: Schema.Literal(...alertStates),
  value: Schema.NullOr(Schema.Number),
  ts: Schema.NullOr(Schema.Number).annotations({
    description: "The causing entry's ts in UNIX seconds; null for a deadline or a clear"
  }),
  at: IsoTime,
  deliveries: Schema.Array(
    Schema.Struct({
      receiverId: Schema.String,
      state: Schema.Literal(...deliveryStates),
      attempts: Schema.Number,
      lastStatus: Schema.NullOr(Schema.Number).annotations({ description: "The receiver's last HTTP status" })
    })
  )
}).annotations({ identifier: "AlertEvent" })
