import { HttpApiBuilder } from "@effect/platform"
import { formatTs, type StoredEntry, UseCases } from "@dashstream/core"
import { Effect } from "effect"
import { api } from "../Api.js"
import type { RateLimited } from "../HttpErrors.js"
import { jsonTextResponse } from "./replies.js"

const noStore = { "cache-control": "no-store" } as const

/**
 * The 200 body of a read (contract section 6), concatenated from the stored JSON texts: no parse, no re-stringify.
 * `ts` is printed exactly to the microsecond by `formatTs`.
 */
export const readBodyText = (entries: ReadonlyArray<StoredEntry>): string => {
  let out = '{"message":"Success!","data":['
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    out += (i === 0 ? '{"ts":' : ',{"ts":') + formatTs(entry.ts) + ',"point":' + entry.json + "}"
  }
  return out + "]}"
}

/**
 * The export read handler (`GET /api/v2/:accessKey/datastream/:streamName`): rate limit by the path's key, then
 * `UseCases.read`. Answers with `Cache-Control: no-store`.
 */
export const readLive = (rateLimit: (accessKey: string) => Effect.Effect<void, RateLimited>) =>
  HttpApiBuilder.group(api, "read", (handlers) =>
    handlers.handle("read", ({ path, urlParams }) =>
      rateLimit(path.accessKey).pipe(
        Effect.zipRight(UseCases.read(path.accessKey, path.streamName, urlParams)),
        Effect.map((entries) => jsonTextResponse(readBodyText(entries), noStore))
      )
    )
  )
