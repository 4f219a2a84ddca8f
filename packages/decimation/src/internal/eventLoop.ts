import { Effect } from "effect"

/**
 * Suspends the fiber for one turn of the event loop: resumes from a `setImmediate` callback, which Node runs after
 * the poll phase, so pending I/O (an HTTP request, a push waiting for the SQLite connection) is handled first.
 * `Effect.yieldNow` only reschedules on the microtask queue, which I/O never gets between; a zero-length timer
 * does yield but costs a millisecond or more per call. Interruptible.
 */
export const yieldToEventLoop: Effect.Effect<void> = Effect.async<void>((resume) => {
  const handle = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(handle))
})
