import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
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
 * Turns of the event loop for the pages of streamed reads, one page per turn for the whole server (issue 13,
 * defect 1). `next` resumes in a later check phase (`setImmediate`), after the I/O pending by then has been served,
 * and never more than one waiting read per turn: with 8 readers, a turn serves one page and whatever pushes
 * arrived, rather than 8 pages ahead of every push. A fiber that only `yieldNow`s resumes in a microtask, before any
 * I/O: a read whose socket writes all succeed at once (a fast reader on loopback) would fetch and send every page
 * without letting another request in.
 */
export const makePageTurns = (): Effect.Effect<void> => {
  const waiting: Array<() => void> = []
  let scheduled = false
  const schedule = () => {
    if (scheduled) return
    scheduled = true
    setImmediate(release)
  }
  const release = () => {
    scheduled = false
    waiting.shift()?.()
    if (waiting.length > 0) schedule()
  }
  return Effect.async<void>((resume) => {
    const go = () => resume(Effect.void)
    waiting.push(go)
    schedule()
    return Effect.sync(() => {
      const at = waiting.indexOf(go)
      if (at !== -1) waiting.splice(at, 1)
    })
  })
}

/**
 * A read of several pages as a streamed 200 (chunked, one chunk per page, so the server holds one page at a time).
 * Two things keep a large read from holding the server (issue 13, defect 1): each later page is fetched only on its
 * turn of the event loop (see {@link makePageTurns}), so other requests are served between pages; and the platform
 * writes each page and, when the socket's buffer is full, waits for its `drain` before pulling the next one, so a
 * slow reader costs a suspended fiber and one page of memory, not the loop. The status and headers are sent with the
 * first page, so a storage failure on a later page cannot become an error answer any more: the connection is then destroyed, so that the
 * client sees a broken response (not a well-formed but shorter one), and the failure is logged with the access key
 * scrubbed out.
 */
const streamedRead = (pages: UseCases.ReadPages, accessKey: string, pageTurn: Effect.Effect<void>) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    let sent = pages.first.count
    // A loop turn before the second page is fetched and after each later one: between any two fetches.
    const rest = Stream.execute(pageTurn).pipe(
      Stream.concat(
        Stream.mapEffect(pages.rest!, (page) => {
          sent += page.count
          return Effect.as(pageTurn, Buffer.from("," + page.text))
        })
      )
    )
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
  HttpApiBuilder.group(api, "read", (handlers) => {
    const pageTurn = makePageTurns()
    return handlers.handle("read", ({ path, urlParams }) =>
      rateLimit(path.accessKey).pipe(
        Effect.zipRight(UseCases.readPages(path.accessKey, path.streamName, urlParams)),
        Effect.flatMap((pages) =>
          pages.rest === undefined
            ? Effect.succeed(jsonTextResponse(readBodyText(pages.first.text), noStore))
            : streamedRead(pages, path.accessKey, pageTurn)
        )
      )
    )
  })
