import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { UseCases } from "@dashstream/core"
import { Effect, Stream } from "effect"
import { api } from "../Api.js"
import type { RateLimited } from "../HttpErrors.js"
import { causeText } from "./causeText.js"
import { redactPath } from "./redact.js"
import { jsonTextResponse } from "./replies.js"

const noStore = { "cache-control": "no-store" } as const

const bodyStart = '{"message":"Success!","data":['
const bodyEnd = "]}"

/**
 * The 200 body of a read (contract section 6), `{"message":"Success!","data":[{"ts","point"}...]}`, around the
 * `data` elements as a `RenderedPage` holds them.
 */
export const readBodyText = (dataText: string): string => bodyStart + dataText + bodyEnd

/**
 * A read of several pages as a streamed 200 (chunked, one chunk per page, so the server holds one page at a time;
 * Node's `drain` paces the pages to the client). The status and headers are sent with the first page, so a storage
 * failure on a later page cannot become an error answer any more: the connection is then destroyed, so that the
 * client sees a broken response (not a well-formed but shorter one), and the failure is logged with the access key
 * scrubbed out.
 */
const streamedRead = (pages: UseCases.ReadPages, accessKey: string) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    let sent = pages.first.count
    const rest = Stream.map(pages.rest!, (page) => {
      sent += page.count
      return Buffer.from("," + page.text)
    })
    const body = Stream.succeed(Buffer.from(bodyStart + pages.first.text)).pipe(
      Stream.concat(rest),
      Stream.concat(Stream.succeed(Buffer.from(bodyEnd))),
      // Nothing more is written after a failure: the stream ends once the connection is destroyed.
      Stream.catchAllCause((cause) =>
        Stream.fromEffect(
          Effect.zipRight(
            Effect.sync(() => NodeHttpServerRequest.toServerResponse(request).destroy()),
            Effect.logError(
              `read of ${redactPath(request.url)} aborted after ${sent} entries: a later page could not be read; ` +
                `the connection was closed\n${causeText(cause, accessKey)}`
            )
          )
        ).pipe(Stream.drain)
      )
    )
    return HttpServerResponse.stream(body, { contentType: "application/json", headers: noStore })
  })

/**
 * The export read handler (`GET /api/v2/:accessKey/datastream/:streamName`): rate limit by the path's key, then
 * `UseCases.readPages`. Every error answer (403, 404, 400, a storage failure on the first page) is decided before
 * the first byte. A read that fits in one page is answered with a `Content-Length`; a larger one is streamed a
 * page at a time (see {@link streamedRead}). Answers with `Cache-Control: no-store`.
 */
export const readLive = (rateLimit: (accessKey: string) => Effect.Effect<void, RateLimited>) =>
  HttpApiBuilder.group(api, "read", (handlers) =>
    handlers.handle("read", ({ path, urlParams }) =>
      rateLimit(path.accessKey).pipe(
        Effect.zipRight(UseCases.readPages(path.accessKey, path.streamName, urlParams)),
        Effect.flatMap((pages) =>
          pages.rest === undefined
            ? Effect.succeed(jsonTextResponse(readBodyText(pages.first.text), noStore))
            : streamedRead(pages, path.accessKey)
        )
      )
    )
  )
