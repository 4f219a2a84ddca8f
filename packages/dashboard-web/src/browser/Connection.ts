import { decodeEvent, type DashboardEvent } from "./TileData.js"

/**
 * The page's connection state, shown in the header and as `<html data-connection>`:
 * `connecting` (first connection), `live`, `reconnecting` (connection lost, retrying by itself), `gone` (the view
 * link answers 404: the token was rotated or the dashboard deleted; no more retries).
 */
export type ConnectionState = "connecting" | "live" | "reconnecting" | "gone"

const eventTypes = ["snapshot", "entry", "clear", "deleted", "layout", "alerts"] as const

/**
 * Opens ONE `EventSource` on the dashboard's event stream (docs/api.md section 11) and keeps it open: the browser
 * reconnects by itself after a network error (each reconnect gets a fresh snapshot); when the browser gives up
 * (an HTTP error answer, e.g. a proxy's 502 while the server restarts), a new `EventSource` is opened after a
 * backoff of 1 to 30 seconds, unless the page itself now answers 404.
 */
export const connect = (
  eventsPath: string,
  onEvent: (event: DashboardEvent) => void,
  onState: (state: ConnectionState) => void,
  /** Events of other types this page follows (a rotation's `rotation` event), each given its `data` text. */
  others: Readonly<Record<string, (data: string) => void>> = {}
): void => {
  let backoff = 1000
  const open = () => {
    const source = new EventSource(eventsPath)
    for (const type of eventTypes) {
      source.addEventListener(type, (message) => {
        const event = decodeEvent(type, (message as MessageEvent<string>).data)
        if (event !== undefined) onEvent(event)
      })
    }
    for (const [type, handle] of Object.entries(others)) {
      source.addEventListener(type, (message) => handle((message as MessageEvent<string>).data))
    }
    source.addEventListener("open", () => {
      backoff = 1000
      onState("live")
    })
    source.addEventListener("error", () => {
      if (source.readyState !== EventSource.CLOSED) {
        onState("reconnecting")
        return
      }
      source.close()
      void fetch(location.pathname, { method: "HEAD", cache: "no-store" })
        .then((r) => r.status === 404 || r.status === 410)
        .catch(() => false)
        .then((gone) => {
          if (gone) {
            onState("gone")
            return
          }
          onState("reconnecting")
          setTimeout(open, backoff)
          backoff = Math.min(backoff * 2, 30_000)
        })
    })
  }
  onState("connecting")
  open()
}
