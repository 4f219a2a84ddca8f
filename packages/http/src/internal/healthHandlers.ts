import { HttpApiBuilder } from "@effect/platform"
import { StorageUnavailable, StreamStore } from "@dashstream/core"
import { Effect } from "effect"
import { api } from "../Api.js"

const ok = { status: "ok" } as const

/** `/healthz` (the process answers) and `/readyz` (the storage answers `ping`; any storage failure is 503). */
export const healthLive = HttpApiBuilder.group(api, "health", (handlers) =>
  handlers
    .handle("healthz", () => Effect.succeed(ok))
    .handle("readyz", () =>
      Effect.flatMap(StreamStore, (store) => store.ping).pipe(
        Effect.mapError((error) =>
          error._tag === "StorageUnavailable" ? error : new StorageUnavailable({ cause: error.cause })
        ),
        Effect.as(ok)
      )
    )
)
