import { Context, Effect, Layer, Option } from "effect"
import { digestAccessKey, type KeyDigest } from "../../Account.js"
import { AccountStore } from "../../AccountStore.js"
import type { StorageFailure } from "../../Errors.js"
import { isStreamName } from "../../StreamName.js"
import { type StoredEntry, StreamStore } from "../../StreamStore.js"
import type { Widget } from "../../Widget.js"

/**
 * The direct forms of the storage ports, for running the storage contract suites through them (see `storageSuite`):
 * the forms the push and read hot paths call without an effect (`StreamStore.writeDirect`/`readDirect`,
 * `AccountStore.peekAccount`/`peekWidget`), put behind the effect methods the suites call, so that every test of the
 * suites checks them on every adapter.
 */

/** The access keys the suites made, by digest: the direct form of `findAccountByKey` peeks by the key as sent. */
const accessKeys = new Map<string, string>()

/** The ports of the storage contract suite (its fixtures' `Stores`). */
type Stores = AccountStore | StreamStore

/** The digest of `accessKey`, remembered so that {@link directForms} can peek by the key (see `findAccount`). */
export const knownKey = (accessKey: string): KeyDigest => {
  const digest = digestAccessKey(accessKey)
  accessKeys.set(digest, accessKey)
  return digest
}

const disagree = (what: string, peeked: unknown, found: unknown) =>
  Effect.dieMessage(
    `${what}: the direct lookup answered ${JSON.stringify(peeked)}, the effect ${JSON.stringify(found)}`
  )

/**
 * An answer given to a callback that must be called exactly once: a second call is a defect of the adapter, reported
 * by `twice` (the fiber has resumed by then, so it cannot fail it).
 */
const once = <Args extends ReadonlyArray<unknown>>(
  resume: (...args: Args) => void,
  twice: (what: string) => void,
  what: string
) => {
  let called = false
  return (...args: Args) => {
    if (called) return twice(what)
    called = true
    resume(...args)
  }
}

/**
 * `layer`'s stores with their effect methods run through the direct forms:
 * - `StreamStore.write` and `read` call `writeDirect` and `readDirect` and wait for their callback (a second call of
 *   it fails the next operation of the test);
 * - `AccountStore.findAccountByKey` (for keys the suite made, see {@link knownKey}) and `findWidgets` ask
 *   `peekAccount`/`peekWidget` first and fail the test when a synchronous answer disagrees with the effect's (the ports
 *   allow a peek to decline, `undefined`, never to differ); a store with `lookupWidget` is asked every stream name
 *   through it too, and must answer as `findWidgets` did.
 */
export const directForms = (layer: Layer.Layer<Stores, unknown>): Layer.Layer<Stores, unknown> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const accounts = yield* AccountStore
      const streams = yield* StreamStore
      const defects: Array<string> = []
      const twice = (what: string) => void defects.push(`${what} answered its callback twice`)
      const checked = <A, E>(effect: Effect.Effect<A, E>) =>
        Effect.suspend(() => (defects.length > 0 ? Effect.dieMessage(defects.join("; ")) : effect))
      const direct: StreamStore["Type"] = {
        ...streams,
        write: (writes, now) =>
          checked(
            Effect.async((resume) => {
              const queued = streams.writeDirect(
                writes,
                now,
                once((error) => resume(error === undefined ? Effect.void : Effect.fail(error)), twice, "writeDirect")
              )
              if (queued) return Effect.sync(() => queued.withdraw())
            })
          ),
        read: (stream, query) =>
          checked(
            Effect.async<ReadonlyArray<StoredEntry>, StorageFailure>((resume) =>
              streams.readDirect(
                stream,
                query,
                once(
                  (error: StorageFailure | undefined, entries: ReadonlyArray<StoredEntry>) =>
                    resume(error === undefined ? Effect.succeed(entries) : Effect.fail(error)),
                  twice,
                  "readDirect"
                )
              )
            )
          )
      }
      const peeking: AccountStore["Type"] = {
        ...accounts,
        findAccountByKey: (digest) =>
          Effect.flatMap(accounts.findAccountByKey(digest), (found) => {
            const accessKey = accessKeys.get(digest)
            const peeked = accessKey === undefined ? undefined : accounts.peekAccount(accessKey)
            return peeked === undefined || peeked === Option.getOrNull(found)
              ? Effect.succeed(found)
              : disagree(`peekAccount`, peeked, Option.getOrNull(found))
          }),
        findWidgets: (id, names) =>
          Effect.flatMap(accounts.findWidgets(id, names), (found) => {
            for (const name of names) {
              const peeked: Widget | null | undefined = accounts.peekWidget(id, name)
              const widget = found.get(name) ?? null
              if (peeked !== undefined && JSON.stringify(peeked) !== JSON.stringify(widget)) {
                return disagree(`peekWidget(${JSON.stringify(name)})`, peeked, widget)
              }
            }
            // A store's lookup without an effect must answer every stream name as findWidgets did.
            const lookupWidget = accounts.lookupWidget
            if (lookupWidget === undefined) return Effect.succeed(found)
            return Effect.as(
              Effect.forEach(names.filter(isStreamName), (name) =>
                Effect.flatMap(
                  Effect.async<Widget | null, StorageFailure>((resume) =>
                    lookupWidget(
                      id,
                      name,
                      once(
                        (error: StorageFailure | undefined, widget: Widget | null) =>
                          resume(error === undefined ? Effect.succeed(widget) : Effect.fail(error)),
                        twice,
                        "lookupWidget"
                      )
                    )
                  ),
                  (looked) => {
                    const widget = found.get(name) ?? null
                    return JSON.stringify(looked) === JSON.stringify(widget)
                      ? Effect.void
                      : disagree(`lookupWidget(${JSON.stringify(name)})`, looked, widget)
                  }
                )
              ),
              found
            )
          })
      }
      return Context.make(AccountStore, peeking).pipe(Context.add(StreamStore, direct))
    })
  ).pipe(Layer.provide(layer))
