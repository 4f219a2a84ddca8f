import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"

/** `{"status": "ok"}`. */
export const HealthStatus = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "HealthStatus" })

/** `GET /healthz` and `GET /readyz` (docs/api.md section 1). */
export class HealthGroup extends HttpApiGroup.make("health", { topLevel: true })
  .add(
    HttpApiEndpoint.get("healthz", "/healthz").addSuccess(HealthStatus).annotate(OpenApi.Summary, "The process is up")
  )
  .add(
    HttpApiEndpoint.get("readyz", "/readyz")
      .addSuccess(HealthStatus)
      .annotate(OpenApi.Summary, "The storage answers (503 unavailable otherwise)")
  )
  .annotate(OpenApi.Title, "Health") {}

/** The Prometheus text exposition format, as `GET /metrics` answers it. */
export const MetricsText = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/plain; version=0.0.4; charset=utf-8" })
).annotations({ identifier: "MetricsText", description: "Prometheus text exposition format 0.0.4" })

/** `GET /metrics` (docs/api.md section 12). */
export class MetricsGroup extends HttpApiGroup.make("metrics", { topLevel: true })
  .add(
    HttpApiEndpoint.get("metrics", "/metrics")
      .addSuccess(MetricsText)
      .annotate(OpenApi.Summary, "Prometheus metrics")
      .annotate(
        OpenApi.Description,
        "Request counts and durations by route template and status, points stored, push errors by code, " +
          "group-commit sizes, open event streams and events sent, decimation pass results, and the process's own " +
          "metrics (docs/api.md section 12). No label carries an access key, a view token, or a stream or account name"
      )
  )
  .annotate(OpenApi.Title, "Metrics") {}

/**
 * `GET /openapi.json` (this document) and `GET /docs` (Swagger UI), served by the `HttpApi` lane (`internal/docs.ts`);
 * left out of the document itself.
 */
export class DocsGroup extends HttpApiGroup.make("docs", { topLevel: true })
  .add(HttpApiEndpoint.get("openApi", "/openapi.json").addSuccess(Schema.Unknown))
  .add(HttpApiEndpoint.get("swagger", "/docs").addSuccess(HttpApiSchema.Text({ contentType: "text/html" })))
  .annotate(OpenApi.Exclude, true) {}
