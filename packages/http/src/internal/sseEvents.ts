import { formatTs, type Micros } from "@dashstream/core"

/** The Server-Sent Events of the live lane (docs/api.md sections 10 and 11), as text. */

/** The headers of an event stream's 200 (docs/api.md section 10). */
export const eventStreamHeaders = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
  "x-accel-buffering": "no",
  connection: "keep-alive"
} as const

/**
 * A `data:` field ends at a line break, so a payload holding one is sent as several `data:` lines (SSE joins them
 * with "\n" again). Stored JSON never holds a raw line break; this keeps the framing right whatever it holds.
 */
export const dataLines = (data: string): string =>
  data.includes("\n") || data.includes("\r") ? data.split(/\r\n|\r|\n/).join("\ndata: ") : data

/** `event: entry` (docs/api.md section 10): `id` is the entry's `ts` printed as a read body prints it. */
export const entryEvent = (ts: Micros, data: string): string =>
  `event: entry\nid: ${formatTs(ts)}\ndata: ${dataLines(data)}\n\n`

/** `event: clear` with the clear's own id. */
export const clearEvent = (id: Micros): string => `event: clear\nid: ${formatTs(id)}\ndata: {}\n\n`

/** `event: deleted` of a stream's event stream (its widget was deleted; the stream ends). */
export const deletedEvent = "event: deleted\ndata: {}\n\n"

/** An event without an id (a dashboard's events, docs/api.md section 11: a reconnect takes a fresh snapshot). */
export const plainEvent = (event: string, data: string): string => `event: ${event}\ndata: ${dataLines(data)}\n\n`
/**
 * An event serialised once, for every subscriber it goes to: its UTF-8 bytes (`raw`, what a response without chunked
 * transfer encoding sends, such as one to an HTTP/1.0 proxy) and the same bytes as one HTTP/1.1 chunk (`chunk`:
 * length in hex, CRLF, the bytes, CRLF), as `ServerResponse.write` would frame them. `raw` is a view into `chunk`.
 */
export interface EventBytes {
  readonly raw: Buffer
  readonly chunk: Buffer
}

const crlf = Buffer.from("\r\n")

/** The {@link EventBytes} of an event's text. */
export const eventBytes = (text: string): EventBytes => {
  const length = Buffer.byteLength(text)
  const head = `${length.toString(16)}\r\n`
  const chunk = Buffer.allocUnsafe(head.length + length + 2)
  chunk.write(head, 0, "latin1")
  chunk.write(text, head.length, "utf8")
  crlf.copy(chunk, head.length + length)
  return { raw: chunk.subarray(head.length, head.length + length), chunk }
}

/**
 * Several events as one write: one chunk holding them all when `chunked`, their bytes joined otherwise. `bytes` is the
 * sum of their `raw` lengths.
 */
export const joinedBytes = (events: ReadonlyArray<EventBytes>, bytes: number, chunked: boolean): Buffer => {
  const head = chunked ? `${bytes.toString(16)}\r\n` : ""
  const out = Buffer.allocUnsafe(head.length + bytes + (chunked ? 2 : 0))
  let at = out.write(head, 0, "latin1")
  for (let i = 0; i < events.length; i++) at += events[i]!.raw.copy(out, at)
  if (chunked) crlf.copy(out, at)
  return out
}

/** The comment that keeps an idle event stream open through proxies. */
export const ping = ": ping\n\n"
