import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { api } from "../Api.js"
import type { Metrics } from "../Metrics.js"

/** `GET /metrics`: every metric of `metrics` in the Prometheus text format (docs/api.md section 12). */
export const metricsLive = (metrics: Metrics) =>
  HttpApiBuilder.group(api, "metrics", (handlers) =>
    handlers.handle("metrics", () => Effect.promise(() => metrics.exposition()))
  )
