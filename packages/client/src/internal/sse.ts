import { createParser, type EventSourceParser } from "eventsource-parser"

/**
 * The Server-Sent Events wire format (WHATWG HTML, "event stream interpretation"), framed by `eventsource-parser`:
 * lines end in CRLF, LF or CR; `event`, `data`, `id` and `retry` fields; `:` comments; a blank line dispatches; a
 * leading byte order mark is skipped. Fed text chunks as they arrive, in any split.
 */

/** One dispatched event (`event` defaults to `message`). `id` is the last event id in force, as the server wrote it. */
export interface SseEvent {
  readonly event: string
  readonly data: string
  readonly id: string | undefined
}

/** Parses a stream of text into events; `retry` holds the last `retry:` value (milliseconds) received. */
export class SseParser {
  /** The last event id: persists from event to event, as the SSE spec says. */
  lastEventId: string | undefined = undefined
  /** The reconnection time the server asked for with `retry:`, in milliseconds. */
  retry: number | undefined = undefined
  // The events of the chunk being fed.
  private out: Array<SseEvent> = []
  private readonly parser: EventSourceParser = createParser({
    onId: (id) => {
      this.lastEventId = id
    },
    onRetry: (retry) => {
      this.retry = retry
    },
    onEvent: (event) => {
      this.out.push({ event: event.event ?? "message", data: event.data, id: this.lastEventId })
    }
  })

  /** Feeds a chunk of text and returns the events it completed. */
  feed(chunk: string): Array<SseEvent> {
    this.parser.feed(chunk)
    const out = this.out
    this.out = []
    return out
  }
}
