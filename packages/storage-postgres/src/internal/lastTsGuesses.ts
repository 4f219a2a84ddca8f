import type { Micros, WritePlan } from "@dashstream/core"

/**
 * The `last_ts` a group commit expects each stream to hold (microseconds; `null`: none assigned yet), as the groups
 * it planned left them. A guess, never trusted: a group planned on guesses checks every one of them under the row
 * locks of its own transaction (`guessedSql` in `storeSql.ts`) and falls back to reading the rows when one is wrong
 * (another process wrote the stream, a widget was deleted, a decimation pass or an import ran). Set when a group is
 * planned, before it commits, so that the next group can be planned while this one runs; a group that fails forgets
 * its streams.
 */
export class LastTsGuesses {
  private readonly known = new Map<number, Micros | null>()

  /** At most this many streams are remembered; past it the guesses start again. */
  static readonly maxStreams = 100_000

  /** The guess for the stream `id`, `undefined` when there is none. */
  get(id: number): Micros | null | undefined {
    return this.known.get(id)
  }

  /** The guess for every id of `ids` (same order), or `undefined` when one has none. */
  all(ids: ReadonlyArray<number>): Array<Micros | null> | undefined {
    const out: Array<Micros | null> = []
    for (let i = 0; i < ids.length; i++) {
      const ts = this.known.get(ids[i]!)
      if (ts === undefined && !this.known.has(ids[i]!)) return undefined
      out.push(ts as Micros | null)
    }
    return out
  }

  /** Remembers the stream's `last_ts`. */
  set(id: number, ts: Micros | null): void {
    if (this.known.size >= LastTsGuesses.maxStreams && !this.known.has(id)) this.known.clear()
    this.known.set(id, ts)
  }

  /** Remembers what a plan left each of its streams at. */
  learn(plan: WritePlan): void {
    for (const s of plan.streams()) this.set(s.stream, s.lastTs)
  }

  /** Forgets the streams of `ids`. */
  forget(ids: ReadonlyArray<number>): void {
    for (const id of ids) this.known.delete(id)
  }
}

/**
 * When a group commit plans on its guesses. A wrong guess costs a failed statement (a round trip) before the rows are
 * read: after a run of them (streams that other processes write too), guesses are left alone for the next 2, 4, ...
 * up to 64 groups; one group stored on guesses ends the run.
 */
export class GuessBackOff {
  private staleRun = 0
  private guessAfter = 0

  /** Whether the group numbered `group` (0-based, counting every group started) may be planned on guesses. */
  allows(group: number): boolean {
    return group >= this.guessAfter
  }

  /** Tells how the group numbered `group` went: stored on its guesses, or planned again after a wrong one. */
  record(group: number, planned: "guessed" | "stale" | "read"): void {
    if (planned === "guessed") this.staleRun = 0
    else if (planned === "stale") {
      this.staleRun = Math.min(this.staleRun + 1, 6)
      this.guessAfter = group + 1 + 2 ** this.staleRun
    }
  }
}
