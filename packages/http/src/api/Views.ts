import { Tile, widgetTypes } from "@dashstream/core"
import { Schema } from "effect"
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

const viewTokenNote =
  "Shown only in the answers of create (POST .../dashboards) and rotate (POST .../view-token); null in every other " +
  "answer: the server keeps only a SHA-256 digest of the token (as it does for access keys), so it cannot show it " +
  "again. Rotate to get a new one."

/**
 * A dashboard as the admin API shows it (docs/api.md section 11). Deviation from the contract, which lists `viewToken`
 * and `url` on every answer: they are set only by create and rotate, `null` otherwise (the token is stored as a
 * digest).
 */
export const DashboardView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  tiles: Schema.Array(Tile),
  viewToken: Schema.NullOr(Schema.String).annotations({ description: `The view token. ${viewTokenNote}` }),
  url: Schema.NullOr(Schema.String).annotations({
    description: `The dashboard page's path, /d/<viewToken>, relative to the server. ${viewTokenNote}`
  }),
  createdAt: IsoTime
}).annotations({ identifier: "Dashboard" })

/**
 * A rotation as the admin API shows it (docs/api.md section 15). As for dashboards, `viewToken` and `url` are set only by
 * create and rotate, `null` otherwise (the token is stored as a digest).
 */
export const RotationView = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  dashboardIds: Schema.Array(Schema.String).annotations({
    description: "The dashboards shown in turn, in order; a deleted dashboard leaves this list"
  }),
  intervalSeconds: Schema.Number.annotations({ description: "Seconds each dashboard is shown (5 to 3600)" }),
  viewToken: Schema.NullOr(Schema.String).annotations({ description: `The view token. ${viewTokenNote}` }),
  url: Schema.NullOr(Schema.String).annotations({
    description: `The rotation page's path, /r/<viewToken>, relative to the server. ${viewTokenNote}`
  }),
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
