import type { ServerResponse } from "node:http"
import type { Micros } from "@dashstream/core"
import type { EventStreamObserver } from "../HttpConfig.js"
import { entryEvent, type EventBytes, eventBytes, joinedBytes, plainEvent } from "./sseEvents.js"

/**
 * How the live lane writes events to many event streams (docs/api.md section 10): an event is serialised once
 * ({@link EventBytes}, shared by every connection it goes to within an event-loop turn), and what waits for one
 * connection is written at the end of the turn as one write on its socket, framed as the response's chunked encoding
 * would frame it. So a connection costs one write per turn however many events the turn brought, and a lone event is
 * not copied per connection.
 */

/** The state of one event stream that the writer reads and keeps. */
export interface SseTarget {
  readonly res: ServerResponse
  /** The response uses chunked transfer encoding (HTTP/1.1): what is written to its socket is framed as chunks. */
  readonly chunked: boolean
  readonly closed: boolean
  /** Sending live changes: the slow-client bound applies. */
  readonly live: boolean
  /** `performance.now()` of the last write, for the heartbeat. */
  lastWrite: number
  /** Events waiting for the end of this event-loop turn, and the sum of their `raw` bytes. */
  queue: Array<EventBytes>
  queued: number
}

/** What {@link makeSseWriter} gives the live lane. */
export interface SseWriter {
  /** Queues an event for the end of the turn (nothing once the stream is closed or destroyed); counted as sent. */
  readonly write: (target: SseTarget, bytes: EventBytes) => void
  /** Writes what waits for `target` now: before anything written straight to its response. */
  readonly flush: (target: SseTarget) => void
  /** Ends the response once what waits for it is written. */
  readonly end: (target: SseTarget) => void
  /** `event: entry` of a stream, `id` the entry's `ts` (microseconds), serialised once per turn. */
  readonly entryBytes: (ts: Micros, data: string) => EventBytes
  /** An event without an id (a dashboard's), serialised once per turn. */
  readonly plainBytes: (event: string, data: string) => EventBytes
}

/**
 * The writer of a live lane. After each write, a live target with more than `maxUnsentBytes` waiting in its buffer is
 * given to `cutOff` (a slow reader: docs/api.md section 10's bound), as when each event was its own write.
 */
export const makeSseWriter = (
  maxUnsentBytes: number,
  observer: EventStreamObserver | undefined,
  cutOff: (target: SseTarget) => void
): SseWriter => {
  // Targets with queued events, and whether the turn's flush is scheduled.
  let dirty: Array<SseTarget> = []
  let flushScheduled = false
  // The events serialised this turn, by their data (see `EventBytes`): entries of streams, and dashboards' events by
  // event name. Emptied at each flush, so they hold at most one turn's events.
  const entryFrames = new Map<string, { readonly ts: number; readonly bytes: EventBytes }>()
  const plainFrames = new Map<string, Map<string, EventBytes>>()

  const entryBytes = (ts: Micros, data: string): EventBytes => {
    const known = entryFrames.get(data)
    if (known !== undefined && known.ts === ts) return known.bytes
    const bytes = eventBytes(entryEvent(ts, data))
    entryFrames.set(data, { ts, bytes })
    return bytes
  }

  const plainBytes = (event: string, data: string): EventBytes => {
    let frames = plainFrames.get(event)
    if (frames === undefined) plainFrames.set(event, (frames = new Map()))
    let bytes = frames.get(data)
    if (bytes === undefined) frames.set(data, (bytes = eventBytes(plainEvent(event, data))))
    return bytes
  }

  const write = (conn: SseTarget, bytes: EventBytes): void => {
    if (conn.closed || conn.res.destroyed) return
    if (conn.queue.length === 0) {
      dirty.push(conn)
      if (!flushScheduled) {
        flushScheduled = true
        setImmediate(flushAll)
      }
    }
    conn.queue.push(bytes)
    conn.queued += bytes.raw.length
    observer?.sent(1)
  }

  const flushAll = (): void => {
    flushScheduled = false
    const conns = dirty
    dirty = []
    entryFrames.clear()
    plainFrames.clear()
    const now = performance.now()
    for (let i = 0; i < conns.length; i++) flush(conns[i]!, now)
  }

  // Writes what waits for `conn` now (see `SseWriter.flush`), and at the end of the turn.
  const flush = (conn: SseTarget, now: number = performance.now()): void => {
    const queue = conn.queue
    if (queue.length === 0) return
    conn.queue = []
    const bytes = conn.queued
    conn.queued = 0
    const socket = conn.res.socket
    if (conn.closed || conn.res.destroyed || socket === null) return
    socket.write(
      queue.length === 1 ? (conn.chunked ? queue[0]!.chunk : queue[0]!.raw) : joinedBytes(queue, bytes, conn.chunked)
    )
    conn.lastWrite = now
    if (conn.live && conn.res.writableLength > maxUnsentBytes) cutOff(conn)
  }

  const end = (conn: SseTarget): void => {
    flush(conn)
    conn.res.end()
  }

  return { write, flush, end, entryBytes, plainBytes }
}
