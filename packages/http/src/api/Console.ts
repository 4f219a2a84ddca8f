import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { errors } from "../HttpErrors.js"
import { consoleHeader, sessionCookieName } from "./AdminAuth.js"
import { Lane } from "./Routing.js"
import { IsoTime } from "./Views.js"

/** `GET /console/session`: the session the cookie names. */
export const SessionView = Schema.Struct({
  expiresAt: IsoTime.annotations({ description: "When the session ends (12 hours after sign-in)" })
}).annotations({ identifier: "ConsoleSession" })

/**
 * `GET /console` and `GET /console/assets/:file` (docs/api.md section 14); served by the page lane, only when the admin
 * API is on (otherwise 404).
 */
export class ConsolePageGroup extends HttpApiGroup.make("consolePage", { topLevel: true })
  .add(
    HttpApiEndpoint.get("consolePage", "/console")
      .addSuccess(HttpApiSchema.Text({ contentType: "text/html" }))
      .annotate(OpenApi.Summary, "The console page")
      .annotate(
        OpenApi.Description,
        "The web page from which an operator runs the service, with a Content-Security-Policy and " +
          "Referrer-Policy: no-referrer. Opening `/console#token=<admin token>` signs in (the page posts the " +
          "fragment to POST /console/session; a fragment never reaches the server)"
      )
  )
  .add(
    HttpApiEndpoint.get("consoleAsset", "/console/assets/:file")
      .setPath(Schema.Struct({ file: Schema.String }))
      .addSuccess(HttpApiSchema.Text({ contentType: "application/octet-stream" }))
      .annotate(OpenApi.Summary, "A file of the console page (content-hashed name, cached for a year)")
  )
  .annotate(Lane, "page")
  .annotate(OpenApi.Title, "Console") {}

/**
 * The console's sign-in and sign-out (docs/api.md section 14). Mounted only when the admin API is on; otherwise every
 * path of it answers 404.
 */
export class ConsoleGroup extends HttpApiGroup.make("console", { topLevel: true })
  .add(
    HttpApiEndpoint.post("signIn", "/console/session")
      .setPayload(Schema.Struct({ token: Schema.String.annotations({ description: "The admin token" }) }))
      .addSuccess(Schema.Void, { status: 204 })
      .addError(errors("InvalidJson", "InvalidRequest"))
      .addError(errors("Unauthorized"))
      .addError(errors("RateLimited"))
      .annotate(OpenApi.Summary, "Sign in with the admin token: sets the session cookie")
      .annotate(
        OpenApi.Description,
        `204 and \`Set-Cookie: ${sessionCookieName}=<signed session>; Path=/; Max-Age=43200; HttpOnly; ` +
          "SameSite=Strict` (plus `Secure` over HTTPS); the cookie never holds the token. A wrong token is 401. The " +
          "sixth failed sign-in from one address within a minute, and every sign-in from it for the rest of that " +
          "minute, is 429 with Retry-After. The session lasts 12 hours, works on every process of the deployment, " +
          "and ends when the admin token changes"
      )
  )
  .add(
    HttpApiEndpoint.get("getSession", "/console/session")
      .addSuccess(SessionView)
      .addError(errors("Unauthorized"))
      .annotate(OpenApi.Summary, "The session of the cookie: 200 while signed in, 401 otherwise")
  )
  .add(
    HttpApiEndpoint.del("signOut", "/console/session")
      .addSuccess(Schema.Void, { status: 204 })
      .addError(errors("Forbidden"))
      .annotate(OpenApi.Summary, "Sign out: clears the cookie; the session is refused from then on, also replayed")
      .annotate(
        OpenApi.Description,
        `Needs \`${consoleHeader.name}: ${consoleHeader.value}\` (403 forbidden without it, and nothing changes). ` +
          "The session of the cookie, if any, is recorded as signed out, so every process refuses it from then on; " +
          "the answer clears the cookie"
      )
  )
  .annotate(OpenApi.Title, "Console") {}
