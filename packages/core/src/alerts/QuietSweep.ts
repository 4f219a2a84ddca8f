import { Duration } from "effect"

/**
 * How the alert engine stores its quiet evaluations (docs/api.md section 18.1: a steady rule's `value` and cursor are
 * stored behind, within a minute): a sweep every {@link QUIET_SWEEP} stores what was waiting when it started, in
 * commits of {@link QUIET_CHUNK} rules, {@link QUIET_PAUSE} apart, so that one commit never holds the writer long and
 * pushes are served between two. A {@link QuietSweep} is the sweep under way: the streams whose group tail it has yet
 * to settle and the rules it has yet to store. Pure data; the engine stores.
 */

/**
 * How long a quiet evaluation may wait in memory before it is stored: the stored `value` and cursor of a steady rule
 * lag by at most this (docs/api.md section 18.1).
 */
export const QUIET_FLUSH = Duration.minutes(1)

/**
 * How often a sweep starts: {@link QUIET_FLUSH} less the ten seconds a sweep may take (at {@link QUIET_CHUNK} rules
 * every {@link QUIET_PAUSE}, some 100,000 rules).
 */
export const QUIET_SWEEP = Duration.seconds(50)

/** The most quiet evaluations stored in one commit (some 1-2 ms of a SQLite writer's time). */
export const QUIET_CHUNK = 64

/** The pause between two commits of a sweep, in which the event loop serves pushes. */
export const QUIET_PAUSE = Duration.millis(5)

/** A sweep under way over streams `S` (their groups' tails) and rules `K` (their own evaluations). */
export class QuietSweep<S, K> {
  private streams: Array<S> = []
  private keys: Array<K> = []

  /** True while the sweep has streams or rules left. */
  get running(): boolean {
    return this.streams.length > 0 || this.keys.length > 0
  }

  /** Starts a sweep of what waits now, unless one is running. */
  start(streams: Iterable<S>, keys: Iterable<K>): void {
    if (this.running) return
    this.streams = [...streams]
    this.keys = [...keys]
  }

  /**
   * The next at most `size` rules to store: those left, then the members of the streams left, each stream's given by
   * `settle` (which applies its group's tail to them).
   */
  next(size: number, settle: (stream: S) => Iterable<K>): Array<K> {
    const out: Array<K> = []
    while (out.length < size && this.running) {
      const key = this.keys.pop()
      if (key !== undefined) out.push(key)
      else for (const member of settle(this.streams.pop()!)) this.keys.push(member)
    }
    return out
  }

  /** Ends the sweep (everything waiting is being stored at once). */
  clear(): void {
    this.streams = []
    this.keys = []
  }
}
