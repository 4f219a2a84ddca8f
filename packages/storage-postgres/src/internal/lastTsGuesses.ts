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
  // The streams whose rows a group is reading, each with a promise settled once that group learned its plan or
  // failed (see `reading`).
  private readonly pending = new Map<number, Promise<void>>()
  // The turns of the groups planned on guesses (see `turn`): the next one, and each stream's last.
  private turns = 0
  private readonly lastTurn = new Map<number, number>()
  // The turns whose statement has not ended yet, each with a promise settled when it ends.
  private readonly running = new Map<number, Promise<void>>()

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
    if (this.known.size >= LastTsGuesses.maxStreams && !this.known.has(id)) {
      this.known.clear()
      this.lastTurn.clear()
    }
    this.known.set(id, ts)
  }

  /** Remembers what a plan left each of its streams at. */
  learn(plan: WritePlan): void {
    for (const s of plan.streams()) this.set(s.stream, s.lastTs)
  }

  /**
   * Marks `ids` as read by a group from now until the returned function is called (once that group learned its plan
   * with {@link learn}, or failed). A group planned on guesses meanwhile would plan on the `last_ts` before that
   * group and find them wrong under the locks: it waits for {@link settled} first.
   */
  reading(ids: ReadonlyArray<number>): () => void {
    let settle!: () => void
    const read = new Promise<void>((resolve) => (settle = resolve))
    for (const id of ids) this.pending.set(id, read)
    return () => {
      for (const id of ids) if (this.pending.get(id) === read) this.pending.delete(id)
      settle()
    }
  }

  /**
   * Resolves once no group is reading any stream of `ids` (see {@link reading}); `undefined` when none is, so that
   * the caller goes on in the same tick.
   */
  settled(ids: ReadonlyArray<number>): Promise<void> | undefined {
    if (this.pending.size === 0) return undefined
    let reads: Array<Promise<void>> | undefined = undefined
    for (const id of ids) {
      const read = this.pending.get(id)
      if (read !== undefined) (reads ??= []).push(read)
    }
    return reads === undefined ? undefined : Promise.all(reads).then(() => this.settled(ids))
  }

  /**
   * The turn of a group planned on guesses now, for `ids` (its streams): `own`, a number no other running group of
   * this store has, and `after`, the turns of the latest groups planned on guesses for any of these streams (see
   * {@link ahead}). `ended` is to be called once the group's statement ended, whatever the outcome.
   */
  turn(ids: ReadonlyArray<number>): Turn {
    const own = this.turns
    this.turns = (this.turns + 1) % 2147483647
    const after: Array<number> = []
    for (const id of ids) {
      const last = this.lastTurn.get(id)
      if (last !== undefined && !after.includes(last)) after.push(last)
      this.lastTurn.set(id, own)
    }
    let settle!: () => void
    this.running.set(own, new Promise<void>((resolve) => (settle = resolve)))
    const ended = () => {
      this.running.delete(own)
      settle()
    }
    return { own, after, ended }
  }

  /** Resolves once every group of the turns `after` has ended; `undefined` when none is running. */
  ahead(after: ReadonlyArray<number>): Promise<void> | undefined {
    const running: Array<Promise<void>> = []
    for (const turn of after) {
      const ends = this.running.get(turn)
      if (ends !== undefined) running.push(ends)
    }
    return running.length === 0 ? undefined : Promise.all(running).then(() => undefined)
  }

  /** Forgets the streams of `ids`. */
  forget(ids: ReadonlyArray<number>): void {
    for (const id of ids) this.known.delete(id)
  }
}

/** A group's turn (see `LastTsGuesses.turn`); `ended` is called once its statement ended, whatever the outcome. */
export interface Turn {
  readonly own: number
  readonly after: ReadonlyArray<number>
  readonly ended: () => void
}

/**
 * When a group commit plans on its guesses. A wrong guess costs a failed statement (a round trip) before the rows are
 * read, and so does a group whose old entries overlap stored blocks (replacements of stored `ts`, back-fills into a
 * block), which the statement cannot merge: after a run of either (streams that other processes write too, streams
 * whose points replace stored ones), guesses are left alone for the next 2, 4, ... up to 64 groups; one group stored
 * on guesses ends the run.
 */
export class GuessBackOff {
  private staleRun = 0
  private guessAfter = 0

  /** Whether the group numbered `group` (0-based, counting every group started) may be planned on guesses. */
  allows(group: number): boolean {
    return group >= this.guessAfter
  }

  /**
   * Tells how the group numbered `group` went: stored on its guesses, planned again after a wrong one or after its old
   * entries overlapped stored blocks, or planned on the rows from the start.
   */
  record(group: number, planned: "guessed" | "stale" | "occupied" | "read"): void {
    if (planned === "guessed") this.staleRun = 0
    else if (planned === "stale" || planned === "occupied") {
      this.staleRun = Math.min(this.staleRun + 1, 6)
      this.guessAfter = group + 1 + 2 ** this.staleRun
    }
  }
}
