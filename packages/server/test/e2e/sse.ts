/**
 * A Server-Sent Events client for the end-to-end suites (docs/api.md section 10), on node:http so that a test sees the
 * wire exactly: status and headers, every `event`/`id`/`data` field, comment lines (`: ping`), the `retry:` line, and
 * how the stream ends (cleanly, or cut off). It can stop reading (a slow client) and resume.
 */
import { type ClientRequest, type IncomingMessage, request } from "node:http"
import { expect } from "vitest"

/** One event as the SSE format defines it (`event` defaults to `message`). */
export interface SseEvent {
  readonly event: string
  readonly id: string | undefined
  readonly data: string
}

/** An open (or ended) event stream. */
export interface SseStream {
  readonly status: number
  readonly headers: IncomingMessage["headers"]
  /** The body of a non-200 answer (a JSON error body). */
  readonly errorBody: string
  /** Every event received so far, in order. */
  readonly events: Array<SseEvent>
  /** Comment lines received (without the leading `:`, trimmed). */
  readonly comments: Array<string>
  /** The `retry:` values received. */
  readonly retries: Array<number>
  /** Bytes of body received so far. */
  readonly bytes: () => number
  /** The `id` of the last event that carried one (what a browser sends as `Last-Event-ID`). */
  readonly lastId: () => string | undefined
  /** `"open"`, `"ended"` (the server ended the response cleanly) or `"aborted"` (the connection was cut). */
  readonly state: () => "open" | "ended" | "aborted"
  /** Resolves when `predicate` holds (checked on every chunk), rejects after `timeoutMs`. */
  readonly until: (what: string, predicate: () => boolean, timeoutMs?: number) => Promise<void>
  /** Stops reading from the socket (a slow client) until {@link resume}. */
  readonly pause: () => void
  readonly resume: () => void
  /** Closes the connection from the client side. */
  readonly close: () => void
}

/** The entries of `entry` events, parsed: `{ts, point}` with the event's id. */
export const entriesOf = (events: ReadonlyArray<SseEvent>): Array<{ id: string; ts: number; point: unknown }> =>
  events
    .filter((e) => e.event === "entry")
    .map((e) => {
      const data = JSON.parse(e.data) as { ts: number; point: unknown }
      return { id: e.id!, ts: data.ts, point: data.point }
    })

/** The event names in order (`entry`, `clear`, `deleted`). */
export const kindsOf = (events: ReadonlyArray<SseEvent>): Array<string> => events.map((e) => e.event)

/**
 * Opens `GET <baseUrl><path>` with `headers` and resolves once the status line and headers arrived (and, for a
 * non-200, the whole error body).
 */
export const openEvents = (
  baseUrl: string,
  path: string,
  headers: Readonly<Record<string, string>> = {}
): Promise<SseStream> =>
  new Promise((resolve, reject) => {
    const events: Array<SseEvent> = []
    const comments: Array<string> = []
    const retries: Array<number> = []
    const waiters = new Set<() => void>()
    let state: "open" | "ended" | "aborted" = "open"
    // The pieces of the line being received.
    let partial: Array<string> = []
    let bytes = 0
    let lastId: string | undefined
    let event = ""
    let id: string | undefined
    let data: Array<string> = []
    let res: IncomingMessage | undefined
    const notify = () => {
      for (const w of [...waiters]) w()
    }
    const line = (text: string) => {
      if (text === "") {
        if (data.length > 0 || event !== "")
          events.push({ event: event === "" ? "message" : event, id, data: data.join("\n") })
        if (id !== undefined) lastId = id
        event = ""
        id = undefined
        data = []
        return
      }
      if (text.startsWith(":")) return void comments.push(text.slice(1).trim())
      const colon = text.indexOf(":")
      const field = colon === -1 ? text : text.slice(0, colon)
      let value = colon === -1 ? "" : text.slice(colon + 1)
      if (value.startsWith(" ")) value = value.slice(1)
      if (field === "event") event = value
      else if (field === "data") data.push(value)
      else if (field === "id") id = value
      else if (field === "retry") retries.push(Number(value))
    }
    const req: ClientRequest = request(
      baseUrl + path,
      { headers: { accept: "text/event-stream", ...headers } },
      (r) => {
        res = r
        r.setEncoding("utf8")
        let errorBody = ""
        const stream: SseStream = {
          status: r.statusCode ?? 0,
          headers: r.headers,
          get errorBody() {
            return errorBody
          },
          events,
          comments,
          retries,
          bytes: () => bytes,
          lastId: () => lastId,
          state: () => state,
          until: (what, predicate, timeoutMs = 10_000) =>
            new Promise<void>((ok, fail) => {
              if (predicate()) return ok()
              const timer = setTimeout(() => {
                waiters.delete(check)
                fail(
                  new Error(
                    `timed out after ${timeoutMs} ms waiting for ${what}; state ${state}; events: ` +
                      JSON.stringify(events.slice(-20))
                  )
                )
              }, timeoutMs)
              const check = () => {
                if (!predicate()) return
                clearTimeout(timer)
                waiters.delete(check)
                ok()
              }
              waiters.add(check)
            }),
          pause: () => r.pause(),
          resume: () => r.resume(),
          close: () => {
            req.destroy()
          }
        }
        if (r.statusCode !== 200) {
          r.on("data", (chunk: string) => (errorBody += chunk))
          r.on("end", () => resolve(stream))
          r.on("error", () => resolve(stream))
          return
        }
        r.on("data", (chunk: string) => {
          bytes += Buffer.byteLength(chunk)
          // Only the new chunk is searched, and a line's pieces joined once it ends: a long line (a large snapshot)
          // arrives in many chunks, and searching all of it again on each would take quadratic time.
          const lineBreak = /\r\n|\r|\n/g
          let found: RegExpExecArray | null
          let from = 0
          while ((found = lineBreak.exec(chunk)) !== null) {
            partial.push(chunk.slice(from, found.index))
            line(partial.join(""))
            partial = []
            from = found.index + found[0].length
          }
          if (from < chunk.length) partial.push(chunk.slice(from))
          notify()
        })
        r.on("end", () => {
          if (state === "open") state = "ended"
          notify()
        })
        r.on("aborted", () => {
          state = "aborted"
          notify()
        })
        r.on("error", () => {
          if (state === "open") state = "aborted"
          notify()
        })
        r.on("close", () => {
          if (state === "open") state = r.complete ? "ended" : "aborted"
          notify()
        })
        resolve(stream)
      }
    )
    req.on("error", (error) => {
      if (res === undefined) reject(error)
    })
    req.end()
  })

/** Opens an event stream and expects the 200 of docs/api.md section 10 with its headers. */
export const openOk = async (
  baseUrl: string,
  path: string,
  headers: Readonly<Record<string, string>> = {}
): Promise<SseStream> => {
  const stream = await openEvents(baseUrl, path, headers)
  expect(stream.status, stream.errorBody).toBe(200)
  expect(stream.headers["content-type"]).toMatch(/^text\/event-stream/)
  expect(stream.headers["cache-control"]).toBe("no-store")
  expect(stream.headers["x-accel-buffering"]).toBe("no")
  return stream
}

/** The events path of a stream, with an optional query (`?since=0`). */
export const eventsPath = (accessKey: string, streamName: string, query = ""): string =>
  `/api/v2/${encodeURIComponent(accessKey)}/datastream/${encodeURIComponent(streamName)}/events${query}`
