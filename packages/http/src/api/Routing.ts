import { Context } from "effect"

/**
 * How the server dispatches an endpoint of the `HttpApi`, as annotations on its groups and endpoints (an endpoint's
 * own annotation wins over its group's). The route table (`internal/routeTable.ts`) is derived from the `HttpApi`
 * with them, so an endpoint is declared once: its method and path, its description in the OpenAPI document
 * (unless annotated `OpenApi.Exclude`), and the lane that answers it.
 */

/**
 * Who answers a route. `ingest`: the push protocols (`ingestLane.ts`, counted there); `read`: the latest-entry read
 * (`readLane.ts`, counted there; it takes only the plainest GETs and leaves every other request of its route to the
 * `api` lane); `probe`: InfluxDB's fixed `/ping` and `/query` answers; `live`: Server-Sent Events (`liveLane.ts`);
 * `page`: the dashboard, rotation and console pages and their files (`pageLane.ts`); `api`: the `HttpApi`
 * (`apiLane.ts`), which also answers every request no route serves (404, or 405 with `Allow`).
 */
export type LaneName = "ingest" | "read" | "probe" | "live" | "page" | "api"

/** The lane that answers an endpoint (`.annotate(Lane, "page")`); `api` when not annotated. */
export class Lane extends Context.Reference<Lane>()("@dashstream/http/Lane", {
  defaultValue: (): LaneName => "api"
}) {}

/**
 * Whether `serve --cors-origin` applies to an endpoint (preflights answered, CORS headers set; see `cors.ts`): the
 * push protocols, the export read and the event streams; never admin, console or page routes. `false` when not
 * annotated.
 */
export class Cors extends Context.Reference<Cors>()("@dashstream/http/Cors", {
  defaultValue: (): boolean => false
}) {}
