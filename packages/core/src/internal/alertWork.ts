import type { Deferred } from "effect"
import type { ChangedEntry, StreamChange } from "../ChangeFeed.js"
import type { StreamId } from "../Widget.js"

/**
 * The items of the alert engine's queue (`alerts/AlertEngine.ts`), done one at a time by its worker: the start, a
 * change of a followed stream, the stored entries of several changes gathered by {@link batches}, a commit of a sweep
 * of quiet evaluations (`first`: the one that takes what is waiting), the deadlines due, a stream's reload, and a
 * flush of every quiet evaluation (`settled`).
 */
export type Work =
  | { readonly _tag: "Start" }
  | { readonly _tag: "Change"; readonly stream: StreamId; readonly change: StreamChange }
  | { readonly _tag: "Stored"; readonly entries: ReadonlyMap<StreamId, ReadonlyArray<ChangedEntry>> }
  | { readonly _tag: "Sweep"; readonly first: boolean }
  | { readonly _tag: "Due" }
  | { readonly _tag: "Reload"; readonly stream: StreamId }
  | { readonly _tag: "Flush"; readonly done: Deferred.Deferred<void> }

/**
 * `items` in order, with the stored entries of consecutive `Stored` changes (of any streams) gathered into one
 * `Stored` item: what the worker evaluates together and stores in one commit.
 */
export const batches = (items: ReadonlyArray<Work>): Array<Work> => {
  const out: Array<Work> = []
  let entries: Map<StreamId, Array<ChangedEntry>> | undefined
  for (const item of items) {
    if (item._tag === "Change" && item.change._tag === "Stored") {
      entries ??= new Map()
      const list = entries.get(item.stream)
      if (list === undefined) entries.set(item.stream, [...item.change.entries])
      else list.push(...item.change.entries)
      continue
    }
    if (entries !== undefined) out.push({ _tag: "Stored", entries })
    entries = undefined
    out.push(item)
  }
  if (entries !== undefined) out.push({ _tag: "Stored", entries })
  return out
}

/**
 * What to do again a second after `item` failed on storage: reload its streams (their entries are above the cursors),
 * or start again; nothing for the other items.
 */
export const retriesOf = (item: Work): ReadonlyArray<Work> =>
  item._tag === "Change" || item._tag === "Reload"
    ? [{ _tag: "Reload", stream: item.stream }]
    : item._tag === "Stored"
      ? [...item.entries.keys()].map((stream): Work => ({ _tag: "Reload", stream }))
      : item._tag === "Start"
        ? [item]
        : []
