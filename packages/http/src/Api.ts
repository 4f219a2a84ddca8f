import { HttpApi, OpenApi } from "@effect/platform"
import { errors } from "./HttpErrors.js"
import { cleanDecodeErrors } from "./internal/openApiCleanup.js"
import { AdminGroup } from "./api/Admin.js"
import { ConsoleGroup, ConsolePageGroup } from "./api/Console.js"
import { InfluxGroup } from "./api/Influx.js"
import { LiveGroup } from "./api/Live.js"
import { DocsGroup, HealthGroup, MetricsGroup } from "./api/Operations.js"
import { ViewGroup, ViewReadGroup } from "./api/Pages.js"
import { PushGroup } from "./api/Push.js"
import { ReadGroup } from "./api/Read.js"
import { SmashingGroup } from "./api/Smashing.js"

/**
 * The HTTP contract of Dashstream (docs/api.md sections 1, 5, 6, 7, 11, 14) as an `HttpApi`: paths, parameters, bodies and
 * every error response, one group per file under `api/`. The OpenAPI document (`/openapi.json`, `/docs`) and the
 * server's route table (`internal/routeTable.ts`) are derived from it; handlers live in `internal/`.
 */

export * from "./api/Admin.js"
export * from "./api/AdminAuth.js"
export * from "./api/Console.js"
export * from "./api/Influx.js"
export * from "./api/Live.js"
export * from "./api/Operations.js"
export * from "./api/Pages.js"
export * from "./api/Push.js"
export * from "./api/Read.js"
export * from "./api/Smashing.js"
export * from "./api/Views.js"

const base = HttpApi.make("dashstream")
  .addError(errors("StorageError"))
  .addError(errors("StorageUnavailable"))
  .annotate(OpenApi.Title, "Dashstream")
  .annotate(OpenApi.Version, "2")
  .annotate(
    OpenApi.Description,
    "Push points into dashboard widget streams and read them back (export API v2). " +
      'Every error answers a non-2xx status and {"error": {"code", "message", "path"?}}.'
  )
  .annotate(OpenApi.Transform, cleanDecodeErrors)

/** The API without the admin and console groups: what is served when the admin API is off. */
export const publicApi = base
  .add(PushGroup)
  .add(InfluxGroup)
  .add(SmashingGroup)
  .add(ReadGroup)
  .add(LiveGroup)
  .add(ViewGroup)
  .add(ViewReadGroup)
  .add(HealthGroup)
  .add(MetricsGroup)
  .add(DocsGroup)

/** The whole API, admin and console included (docs/api.md sections 1, 5, 6, 7, 11, 14). */
export const api = publicApi.add(AdminGroup).add(ConsolePageGroup).add(ConsoleGroup)

/**
 * The OpenAPI 3.1 document of {@link api} (admin and console included), as `GET /openapi.json` serves it with the
 * admin API on and no base path. The console's API types are generated from it at build time.
 */
export const openApiDocument = (): OpenApi.OpenAPISpec => OpenApi.fromApi(api)
