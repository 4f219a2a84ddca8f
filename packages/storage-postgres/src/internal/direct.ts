import { StorageError, type StorageFailure } from "@dashstream/core"
import { toStorageFailure } from "./errors.js"

/**
 * The continuation of a direct (callback) form of the ports (`StreamStore.readDirect`, `AccountStore.lookupWidget`,
 * the latest reads): the storage failure, or `undefined` and the value.
 */
export type Done<A> = (error: StorageFailure | undefined, value: A) => void

/**
 * Calls `done(error, value)` and never throws: the one defect channel of this adapter's direct forms. They answer in
 * promise handlers, where a throw from the continuation (the caller's answer code, core's rendering) would reject a
 * promise nobody awaits and end the process. A throw is answered instead by calling `done` once more, with a
 * `StorageError` carrying it (and `none`): the caller answers that 500 and logs it with its cause, as it answers a
 * throw of a store that calls back synchronously (SQLite). Should that answer throw too, the throw is written to
 * stderr and dropped.
 */
export const answer = <A>(done: Done<A>, error: StorageFailure | undefined, value: A, none: A): void => {
  try {
    done(error, value)
  } catch (defect) {
    try {
      done(new StorageError({ cause: defect }), none)
    } catch (again) {
      console.error("dashstream: a storage callback threw while answering a failure:", again)
    }
  }
}

/**
 * Answers `done` from `query` through {@link answer}: with `value` of its result, with the query's failure as a
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
        return answer(done, new StorageError({ cause: defect }), none, none)
      }
      answer(done, undefined, answered, none)
    },
    (cause: unknown) => answer(done, toStorageFailure(cause), none, none)
  )
}
