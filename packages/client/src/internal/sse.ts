/**
 * An incremental parser of the Server-Sent Events wire format (WHATWG HTML, "event stream interpretation"): lines end
 * in CRLF, LF or CR; `event`, `data`, `id` and `retry` fields; `:` comments; a blank line dispatches. Fed text chunks
 * as they arrive, in any split.
 */

/** One dispatched event (`event` defaults to `message`). `id` is the last event id in force, as the server wrote it. */
export interface SseEvent {
  readonly event: string
  readonly data: string
  readonly id: string | undefined
}

/** Parses a stream of text into events; `retry` holds the last `retry:` value (milliseconds) received. */
export class SseParser {
  private buffer = ""
  private start = true
  private sawCr = false
  private event = ""
  private data: Array<string> = []
  private hasData = false
  /** The last event id: persists from event to event, as the SSE spec says. */
  lastEventId: string | undefined = undefined
  /** The reconnection time the server asked for with `retry:`, in milliseconds. */
  retry: number | undefined = undefined

  /** Feeds a chunk of text and returns the events it completed. */
  feed(chunk: string): Array<SseEvent> {
    let text = chunk
    if (this.start && text.length > 0) {
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
      this.start = false
    }
    // A CR at the end of the previous chunk already ended its line; a LF right after it belongs to that line end.
    if (this.sawCr && text.startsWith("\n")) text = text.slice(1)
    this.sawCr = false
    this.buffer += text
    const out: Array<SseEvent> = []
    let from = 0
    for (let i = 0; i < this.buffer.length; i++) {
      const c = this.buffer.charCodeAt(i)
      if (c !== 10 && c !== 13) continue
      this.line(this.buffer.slice(from, i), out)
      if (c === 13) {
        if (i + 1 === this.buffer.length) this.sawCr = true
        else if (this.buffer.charCodeAt(i + 1) === 10) i++
      }
      from = i + 1
    }
    this.buffer = this.buffer.slice(from)
    return out
  }

  private line(line: string, out: Array<SseEvent>): void {
    if (line === "") {
      if (this.hasData)
        out.push({
          event: this.event === "" ? "message" : this.event,
          data: this.data.join("\n"),
          id: this.lastEventId
        })
      this.event = ""
      this.data = []
      this.hasData = false
      return
    }
    if (line.startsWith(":")) return
    const colon = line.indexOf(":")
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? "" : line.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    switch (field) {
      case "event":
        this.event = value
        break
      case "data":
        this.data.push(value)
        this.hasData = true
        break
      case "id":
        if (!value.includes("\0")) this.lastEventId = value
        break
      case "retry":
        if (/^\d+$/.test(value)) this.retry = Number(value)
        break
    }
  }
}
