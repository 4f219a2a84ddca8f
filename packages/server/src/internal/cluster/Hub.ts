import { type PendingChange, TokenBuckets } from "@dashstream/core"
import type { Forget, FromPrimary, FromWorker } from "./protocol.js"

/**
 * What the primary of `serve --workers N` keeps for the whole server, and how it answers its workers: every piece of
 * state that must be per server rather than per process. Free of node:cluster (a transport is passed in), so the
 * rules are tested without processes.
 *
 * - Live updates on a shared SQLite file (docs/api.md section 10): the streams each worker follows; a worker's first
 *   subscriber of a stream is answered once every other worker knows the stream is followed (from then on their
 *   writes to it collect changes), and the changes of every durable transaction are sent on to the workers that
 *   follow its streams, in commit sequence order (see {@link Hub.changes}).
 * - The rate limit per access key (docs/api.md section 5): the token buckets; workers take tokens a few at a time.
 * - The bound on open event streams per access key (section 10): the counts.
 * - Admin changes: a revocation or widget deletion made through one worker is forgotten by every other worker's
 *   account cache before the admin call is answered; so is a console sign-out by their session caches.
 * - The admin token of a first run (docs/api.md section 14): made by the primary, given to every worker.
 * - `GET /metrics`: the other workers' snapshots, for the worker that serves the scrape.
 */

/** How the hub reaches the workers, and its settings. */
export interface HubOptions {
  /** Sends `message` to worker `worker` (dropped when it is gone). */
  readonly send: (worker: number, message: FromPrimary) => void
  /** `--rate-limit` (requests per second per access key), `null` when off. */
  readonly rateLimit: number | null
  /** Milliseconds, monotonic. */
  readonly now: () => number
  /**
   * How long a change waits for the changes of earlier sequence numbers (whose worker has not sent them yet: still
   * syncing, or dead) before the hub stops waiting and sends a `gap` (default 1,000 ms).
   */
  readonly sequenceWaitMs?: number
  /** How long a request waits for the other workers' answers (default 2,000 ms). */
  readonly answerWaitMs?: number
  /** The admin token generated for this run (first run, docs/api.md section 14), sent to every worker in `welcome`. */
  readonly adminToken?: string | undefined
}

interface WorkerState {
  readonly id: number
  ready: boolean
  readonly follows: Set<number>
  readonly slots: Map<string, number>
}

/** A request of a worker waiting for the answers of the others. */
interface Gathering {
  readonly from: number
  readonly id: number
  readonly waiting: Set<number>
  readonly answers: Array<unknown>
  readonly timer: NodeJS.Timeout
  readonly done: (answers: ReadonlyArray<unknown>) => void
}

/** The hub of one `serve --workers N` server (see the module comment). */
export class Hub {
  private readonly workers = new Map<number, WorkerState>()
  private readonly buckets: TokenBuckets | undefined
  private readonly slots = new Map<string, number>()
  // Sequencing: the next commit sequence number to deliver, and the changes that arrived ahead of it.
  private nextSeq: number | undefined = undefined
  private readonly held = new Map<number, ReadonlyArray<PendingChange>>()
  // Unsequenced changes (widget deletions) that arrived while changes were held: delivered after them.
  private after: Array<PendingChange> = []
  private holdTimer: NodeJS.Timeout | undefined = undefined
  private readonly gatherings = new Map<number, Gathering>()
  private nextGathering = 1
  private gapCount = 0

  constructor(private readonly options: HubOptions) {
    this.buckets = options.rateLimit === null ? undefined : new TokenBuckets(options.rateLimit, options.now)
  }

  /** Gaps sent so far (changes lost or given up on), for tests. */
  get gaps(): number {
    return this.gapCount
  }

  /** A worker was forked: it counts once it says `hello` (see {@link ready}). */
  added(worker: number): void {
    this.workers.set(worker, { id: worker, ready: false, follows: new Set(), slots: new Map() })
  }

  /**
   * The worker is ready to take part (it said `hello`, and the schema is up to date unless it is to `migrate` it):
   * it is sent `welcome`, with the streams the others follow; `decimate` when it runs the daily pass; `replacement`
   * when the server already listened (the worker replaces one that exited).
   */
  ready(worker: number, decimate: boolean, migrate: boolean, replacement = false): void {
    const state = this.workers.get(worker)
    if (state === undefined) return
    state.ready = true
    const followed = [...this.followCounts(worker)]
    const adminToken = this.options.adminToken
    this.options.send(worker, {
      ds: "welcome",
      migrate,
      decimate,
      followed,
      ...(adminToken === undefined ? {} : { adminToken }),
      ...(replacement ? { replacement } : {})
    })
  }

  /**
   * A worker is gone (exited): what it followed is unfollowed, its event-stream slots freed, the answers others
   * waited from it given up, and every subscriber told of a `gap`.
   */
  removed(worker: number): void {
    const state = this.workers.get(worker)
    if (state === undefined) return
    this.workers.delete(worker)
    for (const stream of state.follows) this.broadcast({ ds: "followed", stream, on: false }, worker)
    for (const [key, n] of state.slots) this.releaseSlots(key, n)
    for (const gathering of [...this.gatherings.values()]) {
      if (gathering.from === worker) this.finishGathering(gathering, false)
      else if (gathering.waiting.delete(worker) && gathering.waiting.size === 0) this.finishGathering(gathering, true)
    }
    // It may have committed changes it never sent: every subscriber reads the file again. If a number it took is
    // missing, the next changes wait for it at most `sequenceWaitMs` (see `giveUpWaiting`).
    this.gap()
  }

  /** Handles a message of worker `worker`. */
  receive(worker: number, message: FromWorker): void {
    const state = this.workers.get(worker)
    if (state === undefined) return
    switch (message.ds) {
      case "follow":
        return this.follow(state, message.id, message.stream)
      case "unfollow":
        if (state.follows.delete(message.stream))
          this.broadcast({ ds: "followed", stream: message.stream, on: false }, worker)
        return
      case "baseline":
        return this.baseline(message.seq)
      case "changes":
        return message.seq === undefined
          ? this.unsequenced(message.changes)
          : this.changes(message.seq, message.changes)
      case "skip":
        return this.changes(message.seq, [])
      case "tokens":
        return this.reply(worker, message.id, this.tokens(message.key, message.want))
      case "slot":
        return this.reply(worker, message.id, this.slot(state, message.key, message.max))
      case "unslot": {
        const n = state.slots.get(message.key) ?? 0
        if (n <= 0) return
        if (n === 1) state.slots.delete(message.key)
        else state.slots.set(message.key, n - 1)
        return this.releaseSlots(message.key, 1)
      }
      case "invalidate":
        return this.gather(
          worker,
          message.id,
          (id) => ({ ds: "forget", id, what: message.what }),
          () => undefined
        )
      case "metrics":
        return this.gather(
          worker,
          message.id,
          (id) => ({ ds: "metricsGet", id }),
          (answers) => answers
        )
      case "reply":
        return this.answered(worker, message.id, message.value)
      default:
        return
    }
  }

  /** Stops the timers (shutdown). */
  close(): void {
    clearTimeout(this.holdTimer)
    for (const gathering of [...this.gatherings.values()]) this.finishGathering(gathering, false)
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Live updates

  // The streams other workers than `worker` follow, with how many of them follow each.
  private followCounts(worker: number): Map<number, number> {
    const counts = new Map<number, number>()
    for (const state of this.workers.values()) {
      if (state.id === worker) continue
      for (const stream of state.follows) counts.set(stream, (counts.get(stream) ?? 0) + 1)
    }
    return counts
  }

  private follow(state: WorkerState, id: number, stream: number): void {
    if (state.follows.has(stream)) return this.reply(state.id, id, undefined)
    state.follows.add(stream)
    // Answered once every other ready worker has recorded it: from then on their writes to it collect its changes.
    this.gather(
      state.id,
      id,
      (gid) => ({ ds: "followed", id: gid, stream, on: true }),
      () => undefined
    )
  }

  /**
   * Where the sequence starts: a worker's first subscriber of a stream read the file's last sequence number `seq`
   * once every worker collected that stream's changes, and reads the stream from the file next, so everything
   * numbered up to `seq` is in that read. The first baseline starts the sequence at `seq + 1` (changes held until then
   * at or below `seq` are dropped); later ones change nothing (the sequence runs).
   */
  baseline(seq: number): void {
    if (this.nextSeq !== undefined) return
    this.nextSeq = seq + 1
    for (const held of [...this.held.keys()]) if (held <= seq) this.held.delete(held)
    this.release()
  }

  /**
   * The changes of the transaction with commit sequence number `seq` (empty for a `skip`). Delivered at once when it
   * is the next number, after which the held ones that follow it are; held when earlier numbers are missing (or
   * before the first {@link baseline}), for at most `sequenceWaitMs`: then a `gap` (every subscriber reads the file
   * again) and delivery goes on from the lowest number held. A number below the next one arrives after the hub gave
   * up waiting for it, so after that gap, which read its data (it committed before the numbers held then): dropped.
   */
  changes(seq: number, changes: ReadonlyArray<PendingChange>): void {
    if (this.nextSeq !== undefined && seq < this.nextSeq) return
    this.held.set(seq, changes)
    this.release()
  }

  private unsequenced(changes: ReadonlyArray<PendingChange>): void {
    if (this.held.size === 0) return this.deliver(changes)
    this.after = this.after.concat(changes)
  }

  // Delivers the held changes from `nextSeq` on while there is no hole; (re)arms the wait for a hole.
  private release(): void {
    let progressed = false
    for (;;) {
      if (this.nextSeq === undefined) break
      const next = this.held.get(this.nextSeq)
      if (next === undefined) break
      this.held.delete(this.nextSeq)
      this.nextSeq++
      progressed = true
      if (next.length > 0) this.deliver(next)
    }
    if (progressed && this.holdTimer !== undefined) {
      // The wait is for the hole now at the head.
      clearTimeout(this.holdTimer)
      this.holdTimer = undefined
    }
    if (this.held.size === 0) {
      clearTimeout(this.holdTimer)
      this.holdTimer = undefined
      if (this.after.length > 0) {
        const after = this.after
        this.after = []
        this.deliver(after)
      }
    } else if (this.holdTimer === undefined) {
      this.holdTimer = setTimeout(() => this.giveUpWaiting(), this.options.sequenceWaitMs ?? 1_000)
      this.holdTimer.unref?.()
    }
  }

  // Some sequence number never came (its worker died between commit and send, or is very slow), or no baseline did:
  // every subscriber catches up from the storage, and delivery goes on from the lowest number held.
  private giveUpWaiting(): void {
    this.holdTimer = undefined
    if (this.held.size === 0) return
    this.gap()
    this.nextSeq = Math.min(...this.held.keys())
    this.release()
  }

  private gap(): void {
    this.gapCount++
    this.broadcast({ ds: "gap" })
  }

  // Sends each worker the changes of the streams it follows (the writer included: its own subscribers get its
  // changes in the same order as everyone else's).
  private deliver(changes: ReadonlyArray<PendingChange>): void {
    for (const state of this.workers.values()) {
      if (!state.ready || state.follows.size === 0) continue
      let mine: Array<PendingChange> | undefined
      for (const change of changes) if (state.follows.has(change.stream)) (mine ??= []).push(change)
      if (mine !== undefined) this.options.send(state.id, { ds: "changes", changes: mine })
    }
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Limits

  private tokens(key: string, want: number): { granted: number; waitMs: number } {
    if (this.buckets === undefined) return { granted: want, waitMs: 0 }
    return this.buckets.take(key, Math.max(1, Math.floor(want)))
  }

  private slot(state: WorkerState, key: string, max: number): boolean {
    const open = this.slots.get(key) ?? 0
    if (open >= max) return false
    this.slots.set(key, open + 1)
    state.slots.set(key, (state.slots.get(key) ?? 0) + 1)
    return true
  }

  private releaseSlots(key: string, n: number): void {
    const left = (this.slots.get(key) ?? n) - n
    if (left <= 0) this.slots.delete(key)
    else this.slots.set(key, left)
  }

  // ---------------------------------------------------------------------------------------------------------------
  // Requests answered by the other workers

  // Sends `ask(gid)` to every other ready worker and answers `from`'s request `id` with `answer(their replies)` once
  // all replied, a worker that went away counting as replied, or after `answerWaitMs`.
  private gather(
    from: number,
    id: number,
    ask: (gid: number) => FromPrimary,
    answer: (answers: ReadonlyArray<unknown>) => unknown
  ): void {
    const others = [...this.workers.values()].filter((w) => w.ready && w.id !== from).map((w) => w.id)
    if (others.length === 0) return this.reply(from, id, answer([]))
    const gid = this.nextGathering++
    const gathering: Gathering = {
      from,
      id,
      waiting: new Set(others),
      answers: [],
      timer: setTimeout(() => this.finishGathering(gathering, true), this.options.answerWaitMs ?? 2_000),
      done: (answers) => this.reply(from, id, answer(answers))
    }
    gathering.timer.unref?.()
    this.gatherings.set(gid, gathering)
    for (const worker of others) this.options.send(worker, ask(gid))
  }

  private answered(worker: number, gid: number, value: unknown): void {
    const gathering = this.gatherings.get(gid)
    if (gathering === undefined || !gathering.waiting.delete(worker)) return
    if (value !== undefined) gathering.answers.push(value)
    if (gathering.waiting.size === 0) this.finishGathering(gathering, true)
  }

  private finishGathering(gathering: Gathering, answer: boolean): void {
    for (const [gid, g] of this.gatherings) if (g === gathering) this.gatherings.delete(gid)
    clearTimeout(gathering.timer)
    if (answer && this.workers.has(gathering.from)) gathering.done(gathering.answers)
  }

  // ---------------------------------------------------------------------------------------------------------------

  private reply(worker: number, id: number, value: unknown): void {
    this.options.send(worker, value === undefined ? { ds: "reply", id } : { ds: "reply", id, value })
  }

  private broadcast(message: FromPrimary, except?: number): void {
    for (const state of this.workers.values())
      if (state.ready && state.id !== except) this.options.send(state.id, message)
  }
}

/** The `Forget` of a revocation (every cached access key). */
export const forgetKeys: Forget = { keys: true }
