import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { errors } from "../HttpErrors.js"

/** The name of the console's session cookie (docs/api.md section 14). */
export const sessionCookieName = "dashstream_session"

/** The header a cookie-authenticated change must carry (docs/api.md section 14), and its only accepted value. */
export const consoleHeader = { name: "X-Dashstream-Console", value: "1" } as const

/**
 * The console session cookie as a security scheme (docs/api.md section 14). `apiKey` in a cookie is how OpenAPI
 * describes it; the value is a signed session, not a key.
 */
const sessionCookie = HttpApiSecurity.apiKey({ in: "cookie", key: sessionCookieName }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "The console session set by POST /console/session (HttpOnly, SameSite=Strict, 12 hours). A request that changes " +
      `anything (any method but GET and HEAD) must also carry \`${consoleHeader.name}: ${consoleHeader.value}\`, ` +
      "otherwise 403 forbidden and nothing changes. An invalid, tampered, expired or signed-out session is 401"
  )
)

/**
 * The admin API's credentials (docs/api.md sections 7 and 14): `Authorization: Bearer <admin token>`, or the console's
 * session cookie. A request with an `Authorization` header is judged by it alone.
 */
export class AdminAuth extends HttpApiMiddleware.Tag<AdminAuth>()("AdminAuth", {
  // The storage errors: the session's sign-out check reads the storage (500, 503).
  failure: Schema.Union(
    errors("Unauthorized"),
    errors("Forbidden"),
    errors("StorageError"),
    errors("StorageUnavailable")
  ),
  security: {
    adminToken: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "The admin token (DASHSTREAM_ADMIN_TOKEN)")
    ),
    consoleSession: sessionCookie
  }
}) {}
