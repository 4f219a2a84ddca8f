import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { UseCases } from "@dashstream/core"
import { Effect, Layer, Stream } from "effect"
import { api } from "../Api.js"
import type { RateLimited } from "../HttpErrors.js"
import { causeText } from "./causeText.js"
import { redactPath } from "./redact.js"
import { jsonTextResponse } from "./replies.js"

const noStore = { "cache-control": "no-store" } as const

const bodyStart = '{"message":"Success!","data":['
const bodyEnd = "]}"

/**
 * The 200 body of a read (docs/api.md section 6), `{"message":"Success!","data":[{"ts","point"}...]}`, around the
 * `data` elements as a `RenderedPage` holds them.
 */
export const readBodyText = (dataText: string): string => bodyStart + dataText + bodyEnd

/**
 * Runs one page fetch of a streamed read on its turn. One queue for the whole server: at most
 * one later page is being fetched at any moment, whatever the number of readers, and each turn starts in a later
 * check phase of the event loop (`setImmediate`), after the I/O pending by then (pushes) has been served. So 8 readers
 * of a large stream take turns with each other, not with everyone else: on SQLite a turn is one page query on the
 * store's page reader thread (the event loop only sends the page); on PostgreSQL at most one page query is running and holding a pool
 * connection, instead of one per reader. While pushes are in flight ({@link WritePressure}), the next turn also
 * waits as long as the last fetch took, and at least 1 ms (a timer), so reads get at most about half of the event
 * loop and pushes the rest; with no push in flight, reads take turns back to back.
 * A fiber that only `yieldNow`s would resume in a microtask, before any I/O: a read whose socket writes all succeed
 * at once (a fast reader on loopback) would fetch and send every page without letting another request in.
 * Interrupting a fetch that waits for its turn (the client went away) takes it out of the queue; the turn is given
 * back whatever way the fetch ends.
 */
export type ReadTurns = <A, E>(fetch: Effect.Effect<A, E>) => Effect.Effect<A, E>

/** A new {@link ReadTurns} queue (one per server), paced by `pressure` (default: never under pressure). */
export const makeReadTurns = (pressure: WritePressure = { inFlight: 0 }): ReadTurns => {
  interface Waiter {
    readonly go: () => void
    granted: boolean
  }
  const waiting: Array<Waiter> = []
  let held = false
  let scheduled = false
  let fetchStart = 0
  const grant = () => {
    scheduled = false
    if (held) return
    const waiter = waiting.shift()
    if (waiter === undefined) return
    held = true
    waiter.granted = true
    fetchStart = performance.now()
    waiter.go()
  }
  const schedule = (pauseMs: number) => {
    if (scheduled) return
    scheduled = true
    if (pauseMs >= 1) setTimeout(grant, pauseMs)
    else setImmediate(grant)
  }
  const release = () => {
    held = false
    // Under pressure, at least a timer's millisecond: a page also costs its write after the fetch is measured.
    if (waiting.length > 0) schedule(pressure.inFlight > 0 ? Math.max(1, performance.now() - fetchStart) : 0)
  }
  const turn = Effect.async<void>((resume) => {
    const waiter: Waiter = { go: () => resume(Effect.void), granted: false }
    waiting.push(waiter)
    if (!held) schedule(0)
    return Effect.sync(() => {
      if (waiter.granted) return release()
      const at = waiting.indexOf(waiter)
      if (at !== -1) waiting.splice(at, 1)
    })
  })
  return (fetch) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.zipRight(restore(turn), Effect.ensuring(restore(fetch), Effect.sync(release)))
    )
}

/**
 * How many pushes the server is handling (body received, answer not yet written): the push lane counts them, the
 * read turns yield to them. A plain mutable counter, shared by the lanes of one server.
 */
export interface WritePressure {
  inFlight: number
}

/**
 * A read of several pages as a streamed 200 (chunked, one chunk per page, so the server holds one page at a time).
 * Two things keep a large read from holding the server: each later page is fetched only on its
 * turn of the server's read queue (see {@link makeReadTurns}), so other requests are served between pages; and the platform
 * writes each page and, when the socket's buffer is full, waits for its `drain` before pulling the next one, so a
 * slow reader costs a suspended fiber and one page of memory, not the loop. The status and headers are sent with the
 * first page, so a storage failure on a later page cannot become an error answer any more: the connection is then destroyed, so that the
 * client sees a broken response (not a well-formed but shorter one), and the failure is logged with the access key
 * scrubbed out.
 */
const streamedRead = (pages: UseCases.ReadPages, accessKey: string, turns: ReadTurns) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    let sent = pages.first.count
    // Each later page is pulled (fetched from the storage) on its turn of the server's read turns.
    const rest = Stream.unwrapScoped(
      Effect.map(Stream.toPull(pages.rest!), (pull) => Stream.repeatEffectChunkOption(turns(pull)))
    ).pipe(
      Stream.map((page) => {
        sent += page.count
        return Buffer.from("," + page.text)
      })
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
 * The 200 answer of a read's pages, keyed or through a view token: one that fits in one page with a
 * `Content-Length`, a larger one streamed a page at a time (see {@link streamedRead}; `secret`, the access key or view
 * token, is scrubbed from its log line). Answers with `Cache-Control: no-store`.
 */
const readAnswer = (pages: UseCases.ReadPages, secret: string, turns: ReadTurns) =>
  pages.rest === undefined
    ? Effect.succeed(jsonTextResponse(readBodyText(pages.first.text), noStore))
    : streamedRead(pages, secret, turns)

/**
 * The export read handler (`GET /api/v2/:accessKey/datastream/:streamName`): rate limit by the path's key, then
 * `UseCases.readPages`. Every error answer (403, 404, 400, a storage failure on the first page) is decided before
 * the first byte; the answer is {@link readAnswer}'s. The view token's reads (`GET /d/:viewToken/range`,
 * `/r/:viewToken/range`, docs/api.md section 6.1) give the same answers through `UseCases.readViewPages` of their
 * kind, rate limited by the view token (one handler per kind of shared view; the compiler refuses the group while
 * a kind's endpoint has none). All share one queue of read turns.
 */
export const readLive = (
  rateLimit: (accessKey: string) => Effect.Effect<void, RateLimited>,
  pressure: WritePressure
) => {
  const turns = makeReadTurns(pressure)
  const keyed = HttpApiBuilder.group(api, "read", (handlers) =>
    handlers.handle("read", ({ path, urlParams }) =>
      rateLimit(path.accessKey).pipe(
        Effect.zipRight(UseCases.readPages(path.accessKey, path.streamName, urlParams)),
        Effect.flatMap((pages) => readAnswer(pages, path.accessKey, turns))
      )
    )
  )
  // A view token's read: rate limited by the token, then the read `pages` gives for it.
  const viewRead =
    <E, R>(pages: (viewToken: string, params: UseCases.ViewReadParams) => Effect.Effect<UseCases.ReadPages, E, R>) =>
    ({
      path,
      urlParams
    }: {
      readonly path: { readonly viewToken: string }
      readonly urlParams: UseCases.ViewReadParams
    }) =>
      rateLimit(path.viewToken).pipe(
        Effect.zipRight(pages(path.viewToken, urlParams)),
        Effect.flatMap((read) => readAnswer(read, path.viewToken, turns))
      )
  const viewed = HttpApiBuilder.group(api, "viewRead", (handlers) =>
    handlers
      .handle("dashboardRange", viewRead(UseCases.readViewPages.dashboard))
      .handle("rotationRange", viewRead(UseCases.readViewPages.rotation))
  )
  return Layer.merge(keyed, viewed)
}
