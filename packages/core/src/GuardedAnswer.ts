import { StorageError } from "./Errors.js"

/**
 * Calls `done(error, value)` and never throws: the one defect channel of the storage's callback forms (the direct
 * reads and lookups of `StreamStore` and `AccountStore`, and the answers of the write queue's groups). Those
 * continuations run in an adapter's promise handler or timer, where a throw from the caller's code (its answer, core's
 * rendering) would leave the rest of a batch unanswered and end the process. A throw is answered instead by calling
 * `done` once more, with a `StorageError` carrying it and `none`: the caller answers that 500 and logs the cause, as
 * it does for a store that calls back synchronously. Should that answer throw too, the throw is written to stderr
 * and dropped.
 */
export const answerGuarded = <E, A>(
  done: (error: NoInfer<E> | StorageError | undefined, value: A) => void,
  error: E | undefined,
  value: A,
  none: A
): void => {
  try {
    done(error, value)
  } catch (defect) {
    try {
      done(new StorageError({ cause: defect }), none)
    } catch (again) {
      console.error("dashstream: a storage continuation threw while answering a failure:", again)
    }
  }
}
