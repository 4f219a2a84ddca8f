import { quoted, type SkippedStreams } from "@dashstream/core"
import { Effect } from "effect"

/** How long a skipped stream name stays quiet once logged for an account. */
const quietMs = 60_000
/** At most this many (account, name) pairs are remembered; past it, those older than {@link quietMs} go (or all). */
const maxRemembered = 10_000

/**
 * The log of skipped line protocol fields (docs/api.md section 13.1): the stream names a push skipped because they are
 * not widgets of the key's account, logged at the info level (the default), so that an operator sees why a series
 * never appears and can declare the streams they want. Each distinct name is logged at most once per minute for each
 * account (an agent sends the same series every few seconds; another account sending the same name is told
 * apart); one line per request names the account by its id (never its access key) and lists the names not logged
 * for it in the last minute. Returns the log effect, or `undefined` when every name was logged recently. `now` is a
 * clock in milliseconds.
 */
export const makeSkippedLog = (now: () => number = () => performance.now()) => {
  const loggedAt = new Map<string, number>()
  const forgetOld = (time: number) => {
    for (const [key, at] of loggedAt) if (time - at >= quietMs) loggedAt.delete(key)
    if (loggedAt.size >= maxRemembered) loggedAt.clear()
  }
  return (template: string, { accountId, names }: SkippedStreams): Effect.Effect<void> | undefined => {
    const time = now()
    const fresh: Array<string> = []
    for (const name of names) {
      // A name is at most 255 characters; anything longer is no stream name and is remembered by its start. An
      // account id holds no newline, so the pair's key is unambiguous.
      const key = `${accountId}\n${name.length > 300 ? name.slice(0, 300) : name}`
      const at = loggedAt.get(key)
      if (at !== undefined && time - at < quietMs) continue
      if (loggedAt.size >= maxRemembered) forgetOld(time)
      loggedAt.set(key, time)
      fresh.push(quoted(name))
    }
    if (fresh.length === 0) return undefined
    return Effect.logInfo(
      `POST ${template} skipped field values of ${fresh.length} stream${fresh.length === 1 ? "" : "s"} that are not ` +
        `widgets of account ${accountId} (declare a widget with that stream name to store them): ${fresh.join(", ")}`
    )
  }
}
