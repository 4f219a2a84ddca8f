import { answerGuarded, StorageError, type StorageFailure } from "@dashstream/core"
import { toStorageFailure } from "./errors.js"

/**
 * The continuation of a direct (callback) form of the ports (`StreamStore.readDirect`, `AccountStore.lookupWidget`,
 * the latest reads): the storage failure, or `undefined` and the value.
 */
export type Done<A> = (error: StorageFailure | undefined, value: A) => void

/**
 * Answers `done` from `query` through core's `answerGuarded`: with `value` of its result, with the query's failure as a
 * storage failure (`toStorageFailure`: `StorageUnavailable` when the server is unreachable), or with a `StorageError`
 * carrying what `value` threw; `none` is the value beside a failure.
 */
export const answerQuery = <R, A>(query: Promise<R>, done: Done<A>, value: (result: R) => A, none: A): void => {
  query.then(
    (result) => {
      let answered: A
      try {
        answered = value(result)
      } catch (defect) {
        return answerGuarded(done, new StorageError({ cause: defect }), none, none)
      }
      answerGuarded(done, undefined, answered, none)
    },
    (cause: unknown) => answerGuarded(done, toStorageFailure(cause), none, none)
  )
}
