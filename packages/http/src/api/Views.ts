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
