/**
 * The most telling one-line message of an error for stderr: walks `cause` chains (a `StorageUnavailable` wraps the
 * driver's error) and `AggregateError`s (node's happy-eyeballs connect), and keeps the first line only, so no
 * stack trace or multi-line SQL reaches the user.
 */
export const errorMessage = (error: unknown): string => {
  let current: unknown = error
  let best: string | undefined
  for (let depth = 0; depth < 8 && current !== undefined && current !== null; depth++) {
    if (typeof current !== "object") {
      best = String(current)
      break
    }
    const e = current as { message?: unknown; cause?: unknown; errors?: unknown; _tag?: unknown }
    const message = typeof e.message === "string" ? e.message.split("\n")[0]!.trim() : ""
    // Tagged wrappers (StorageError, StorageUnavailable) have no message of their own; the innermost one is best.
    if (message !== "" && !(typeof e._tag === "string" && message === e._tag)) best = message
    if (e.cause !== undefined) current = e.cause
    else if (Array.isArray(e.errors) && e.errors.length > 0) current = e.errors[0]
    else break
  }
  return best ?? "unknown error"
}
