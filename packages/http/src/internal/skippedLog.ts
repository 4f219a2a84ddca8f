import { quoted } from "@dashstream/core"
import { Effect } from "effect"

/** How long a skipped stream name stays quiet once logged. */
const quietMs = 60_000
/** At most this many names are remembered; past it, names older than {@link quietMs} are forgotten (or all). */
const maxRemembered = 10_000

/**
 * `serve --log-skipped` (docs/api.md section 13.1, "Only declared streams are written"): the stream names a push skipped
 * because they are not widgets of the key's account, so that an operator can see what an agent sends and declare
 * the streams they want. Each distinct name is logged at most once per minute (an agent sends the same series every
 * few seconds); one line per request lists the names not logged in the last minute. Returns the log effect, or
 * `undefined` when every name was logged recently.
 */
export const makeSkippedLog = () => {
  const loggedAt = new Map<string, number>()
  const forgetOld = (now: number) => {
    for (const [name, at] of loggedAt) if (now - at >= quietMs) loggedAt.delete(name)
    if (loggedAt.size >= maxRemembered) loggedAt.clear()
  }
  return (template: string, names: ReadonlyArray<string>): Effect.Effect<void> | undefined => {
    const now = performance.now()
    const fresh: Array<string> = []
    for (const name of names) {
      // A name is at most 255 characters; anything longer is no stream name and is remembered by its start.
      const key = name.length > 300 ? name.slice(0, 300) : name
      const at = loggedAt.get(key)
      if (at !== undefined && now - at < quietMs) continue
      if (loggedAt.size >= maxRemembered) forgetOld(now)
      loggedAt.set(key, now)
      fresh.push(quoted(name))
    }
    if (fresh.length === 0) return undefined
    return Effect.logInfo(
      `POST ${template} skipped field values of ${fresh.length} stream${fresh.length === 1 ? "" : "s"} that are not ` +
        `widgets of the access key's account (declare a widget with that stream name to store them): ${fresh.join(", ")}`
    )
  }
}
