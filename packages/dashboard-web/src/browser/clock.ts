/**
 * The server's clock as the page knows it: the page's own clock plus the offset measured from the last snapshot's
 * `now` (docs/api.md section 11.5). Stale ages (section 15.1) are reckoned by it, so a wall screen whose clock is
 * minutes off still says the right "No data for" age. Before any snapshot, or from a server that sends no `now`, it is
 * the page's own clock.
 */
let offsetSeconds = 0

/** The server's time now, in seconds since the epoch (fractional). */
export const serverNow = (): number => Date.now() / 1000 + offsetSeconds

/** Takes the server's time `now` (seconds, a snapshot's `now`) as of this moment. */
export const syncServerClock = (now: number): void => {
  offsetSeconds = now - Date.now() / 1000
}

/** The server's clock minus the page's, in seconds (0 until a snapshot has told it). */
export const serverClockOffset = (): number => offsetSeconds
