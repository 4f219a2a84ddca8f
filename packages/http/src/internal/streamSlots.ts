/**
 * Counts open event streams per access key (or a dashboard's view token) against the bound of docs/api.md section 10.
 * The default counts in this process; `serve --workers N` passes one whose counts are the server's (its primary
 * process holds them), so the bound is per server, not per worker.
 */
export interface StreamSlots {
  /** Takes a slot of `key` when fewer than `max` are taken: true when taken; or a promise of that. */
  readonly take: (key: string, max: number) => boolean | PromiseLike<boolean>
  /** Gives back a slot `take` gave for `key`. */
  readonly release: (key: string) => void
}

/** {@link StreamSlots} counted in this process. */
export const localStreamSlots = (): StreamSlots => {
  const perKey = new Map<string, number>()
  return {
    take: (key, max) => {
      const open = perKey.get(key) ?? 0
      if (open >= max) return false
      perKey.set(key, open + 1)
      return true
    },
    release: (key) => {
      const n = (perKey.get(key) ?? 1) - 1
      if (n <= 0) perKey.delete(key)
      else perKey.set(key, n)
    }
  }
}

/** Runs `then` with a slot answer, at once when it is not a promise; a promise that rejects counts as no slot. */
export const whenSlot = (answer: boolean | PromiseLike<boolean>, then: (taken: boolean) => void): void => {
  if (typeof answer === "boolean") return then(answer)
  answer.then(then, () => then(false))
}
