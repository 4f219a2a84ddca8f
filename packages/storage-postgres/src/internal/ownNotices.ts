import { type Micros, mutationChanges, type StreamChange } from "@dashstream/core"
import type { NetChange, StoreArrays } from "./changePlan.js"

/**
 * The changes this process's own groups made to the streams it follows, kept until their notifications arrive, so
 * that the listener publishes them without reading the entries back (see `listener.ts`).
 *
 * A group's transaction notifies one payload per changed stream (`notify.ts`) from the connection that ran it. Before
 * that transaction is sent, the write path hands over, for each followed stream, the payload and the changes the
 * group makes (`mutationChanges` of the stream's net change: a `Cleared` at the group's last clear, then a `Stored` of
 * its entries ascending, `fresh` above `clearedAt ?? before`: what a read-back of the payload's range gives, without
 * the older entries a range with more than `maxListed` back-filled `ts` also holds). When a notification arrives with
 * the same payload from the same server process (the connection's backend pid), the listener takes its changes from
 * here, at the notification's place in the commit order. A transaction that fails withdraws them first.
 *
 * Nothing here is needed for correctness: a notification without kept changes (another process's, or one whose
 * changes were dropped) is read back as before. So what is kept is bounded: at most {@link maxKept} changes (beyond
 * that everything is dropped, as after a lost connection, when notifications may never come).
 */
export class OwnNotices {
  // By backend pid, then payload: the changes in commit order (two groups of one connection may send the same
  // payload, replacing the same `ts`; a connection's notifications arrive in its commit order).
  private readonly kept = new Map<number, Map<string, Array<ReadonlyArray<StreamChange>>>>()
  private count = 0

  /** `follows(stream)`: true while this process has a subscriber of `stream` (only its changes are kept). */
  constructor(readonly follows: (stream: number) => boolean) {}

  /** The number of changes kept now. */
  get size(): number {
    return this.count
  }

  /**
   * Keeps the changes `known` of a group about to be sent on the connection of backend `pid` (see {@link knownChanges}),
   * until their notifications arrive or {@link withdraw} forgets them.
   */
  expect(pid: number, known: ReadonlyArray<KnownChange>): void {
    if (known.length === 0) return
    if (this.count + known.length > maxKept) this.clear()
    let byPayload = this.kept.get(pid)
    if (byPayload === undefined) {
      byPayload = new Map()
      this.kept.set(pid, byPayload)
    }
    for (const { payload, changes } of known) {
      const list = byPayload.get(payload)
      if (list === undefined) byPayload.set(payload, [changes])
      else list.push(changes)
      this.count++
    }
  }

  /** Forgets the changes `known` that {@link expect} kept for backend `pid` (their transaction failed). */
  withdraw(pid: number, known: ReadonlyArray<KnownChange>): void {
    const byPayload = this.kept.get(pid)
    if (byPayload === undefined) return
    for (const { payload, changes } of known) {
      const list = byPayload.get(payload)
      const at = list === undefined ? -1 : list.lastIndexOf(changes)
      if (at < 0) continue
      list!.splice(at, 1)
      this.count--
      if (list!.length === 0) byPayload.delete(payload)
    }
    if (byPayload.size === 0) this.kept.delete(pid)
  }

  /** The changes kept for the notification `payload` from backend `pid` (taken: given once), or `undefined`. */
  take(pid: number, payload: string): ReadonlyArray<StreamChange> | undefined {
    if (this.count === 0) return undefined
    const byPayload = this.kept.get(pid)
    const list = byPayload?.get(payload)
    if (list === undefined) return undefined
    const changes = list.shift()!
    this.count--
    if (list.length === 0) {
      byPayload!.delete(payload)
      if (byPayload!.size === 0) this.kept.delete(pid)
    }
    return changes
  }

  /** Forgets everything kept (the listening connection was lost: those notifications may never arrive). */
  clear(): void {
    this.kept.clear()
    this.count = 0
  }
}

/** The most changes an {@link OwnNotices} keeps at once. */
export const maxKept = 10_000

/** One followed stream's notification payload and the changes it stands for (see {@link OwnNotices}). */
export interface KnownChange {
  readonly payload: string
  readonly changes: ReadonlyArray<StreamChange>
}

/**
 * The changes of the streams of `arrays.payloads` that `follows` (see {@link OwnNotices}), from the group's net
 * changes `changes` (by stream id, as `storeArrays` took them). Empty when no changed stream is followed.
 */
export const knownChanges = (
  changes: ReadonlyMap<number, NetChange>,
  arrays: StoreArrays,
  follows: (stream: number) => boolean
): Array<KnownChange> => {
  const known: Array<KnownChange> = []
  for (let i = 0; i < arrays.payloadStreams.length; i++) {
    const stream = arrays.payloadStreams[i]!
    if (!follows(stream)) continue
    const change = changes.get(stream)!
    known.push({
      payload: arrays.payloads[i]!,
      changes: mutationChanges(
        {
          clear: change.clearedAt !== null,
          clearedAt: change.clearedAt,
          entries: change.entries,
          lastTs: change.lastTs
        },
        change.startTs as Micros | null
      )
    })
  }
  return known
}
