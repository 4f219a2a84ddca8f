import {
  type AccountCache,
  type ChangeFeed,
  type ChangeSink,
  Fanout,
  gapChange,
  type PendingChange,
  retryAfterSeconds,
  type SessionCache,
  type StreamId
} from "@dashstream/core"
import type { MetricsSnapshot, RateLimiter, StreamSlots } from "@dashstream/http"
import { type Context, Effect } from "effect"
import type { Forget, FromPrimary, FromWorker, MetricsReply, TokenGrant } from "./protocol.js"
import { isMessage } from "./protocol.js"

/**
 * A worker's side of `serve --workers N`: its channel to the primary, and the pieces that make the server's state
 * per server rather than per worker (see `Hub.ts` for the primary's side).
 */

/** The worker's channel to the primary: messages, and requests answered with a `reply`. */
export class WorkerLink {
  private nextId = 1
  private readonly waiting = new Map<number, (value: unknown) => void>()
  private handler: (message: FromPrimary) => void = () => {}

  constructor(private readonly channel: NodeJS.Process = process) {
    channel.on("message", (message: unknown) => {
      if (!isMessage(message)) return
      const m = message as FromPrimary
      if (m.ds === "reply") {
        const resolve = this.waiting.get(m.id)
        this.waiting.delete(m.id)
        resolve?.(m.value)
      } else this.handler(m)
    })
  }

  /** Where the primary's messages other than replies go. */
  onMessage(handler: (message: FromPrimary) => void): void {
    this.handler = handler
  }

  /** Sends a message; dropped when the channel is closed (the primary is gone and this process exits). */
  send(message: FromWorker): void {
    if (this.channel.connected === true) this.channel.send!(message)
  }

  /** Sends the request `make(id)` and resolves with the primary's reply (never, if the primary is gone). */
  request<A>(make: (id: number) => FromWorker): Promise<A> {
    const id = this.nextId++
    return new Promise<A>((resolve) => {
      this.waiting.set(id, resolve as (value: unknown) => void)
      this.send(make(id))
    })
  }
}

/**
 * The `ChangeSink` of a worker on a shared SQLite file (docs/api.md section 10): its write path collects the changes
 * of every stream some worker follows, takes a commit sequence number for them, and sends them to the primary once
 * durable; the primary sends every worker the changes of the streams it follows in sequence order, which this
 * publishes to its subscribers through a core `Fanout`. The writer's own subscribers get its changes the same way,
 * so every subscriber sees one stream's changes in commit order, whichever worker wrote them (core's `Follow`
 * relies on that order). A `gap` from the primary (changes it gave up waiting for) makes them catch up from the
 * file. After its first subscriber of a stream joined, it tells the primary the file's last sequence number (the
 * primary's starting point when it has none yet).
 */
export class ClusterRelay implements ChangeSink {
  readonly sequenced = true
  private readonly local = new Fanout()
  // Streams other workers follow: how many of them.
  private readonly remote = new Map<number, number>()
  private readonly joining = new Map<number, Promise<void>>()
  private readSequence: (() => number) | undefined = undefined

  constructor(
    private readonly link: WorkerLink,
    followed: ReadonlyArray<readonly [number, number]>
  ) {
    for (const [stream, workers] of followed) this.remote.set(stream, workers)
  }

  get active(): boolean {
    return this.local.active || this.remote.size > 0
  }

  has(stream: StreamId): boolean {
    return this.local.has(stream) || this.remote.has(stream)
  }

  committed(changes: ReadonlyArray<PendingChange>, seq: number | undefined): void {
    this.link.send(seq === undefined ? { ds: "changes", changes } : { ds: "changes", seq, changes })
  }

  skipped(seq: number): void {
    this.link.send({ ds: "skip", seq })
  }

  sequenceReader(read: () => number): void {
    this.readSequence = read
  }

  /**
   * Subscribes locally at once (changes arriving meanwhile are kept by the subscriber), then, for this worker's first
   * subscriber of the stream, waits until every other worker knows it is followed: a write committed after that
   * collects its changes, one committed before is in what the subscriber reads from the file next.
   */
  feed(): Context.Tag.Service<ChangeFeed> {
    return {
      subscribe: (stream, listener) =>
        Effect.promise(async () => {
          const first = !this.local.has(stream)
          const unsubscribe = this.local.subscribe(stream, listener)
          let joined = this.joining.get(stream)
          if (first) {
            const asked = this.link
              .request<void>((id) => ({ ds: "follow", id, stream }))
              .then(() => {
                // Read once every worker collects the stream's changes, before the subscriber reads the file: what
                // committed up to this number is in that read (see `Hub.baseline`).
                const seq = this.readSequence?.()
                if (seq !== undefined) this.link.send({ ds: "baseline", seq })
              })
            joined = asked
            this.joining.set(stream, asked)
            void asked.then(() => {
              if (this.joining.get(stream) === asked) this.joining.delete(stream)
            })
          }
          if (joined !== undefined) await joined
          let done = false
          return () => {
            if (done) return
            done = true
            unsubscribe()
            if (!this.local.has(stream)) this.link.send({ ds: "unfollow", stream })
          }
        })
    }
  }

  /** Handles the primary's live-update messages; false for other messages. */
  receive(message: FromPrimary): boolean {
    switch (message.ds) {
      case "followed": {
        const n = (this.remote.get(message.stream) ?? 0) + (message.on ? 1 : -1)
        if (n > 0) this.remote.set(message.stream, n)
        else this.remote.delete(message.stream)
        if (message.id !== undefined) this.link.send({ ds: "reply", id: message.id })
        return true
      }
      case "changes":
        this.local.committed(message.changes)
        return true
      case "gap":
        this.local.broadcast(gapChange)
        return true
      default:
        return false
    }
  }
}

/** How long a worker keeps tokens granted by the primary before dropping what it did not use (milliseconds). */
const leaseMs = 1_000

interface Lease {
  tokens: number
  until: number
}

/**
 * The per-access-key rate limit (docs/api.md section 5) of a worker: the server's token buckets are the primary's; a
 * worker asks for a few tokens at a time (a tenth of a second's worth of its share of the rate, at least one) and
 * answers from them while they last, without a message. A key refused by the primary is refused here, without
 * asking, until its next token is due. So the server never allows more than the rate, and a key may be refused
 * while another worker still holds up to one batch of its tokens (unused tokens are dropped after a second).
 */
export class LeasedRateLimiter implements RateLimiter {
  private readonly leases = new Map<string, Lease>()
  private readonly refusedUntil = new Map<string, number>()
  private readonly asking = new Map<string, Array<(wait: number) => void>>()
  private readonly batch: number

  constructor(
    private readonly link: WorkerLink,
    perSecond: number,
    workers: number,
    private readonly now: () => number = performance.now.bind(performance)
  ) {
    this.batch = Math.max(1, Math.floor(perSecond / (workers * 10)))
  }

  size(): number {
    return this.leases.size
  }

  take(key: string): number | Promise<number> {
    const t = this.now()
    const lease = this.leases.get(key)
    if (lease !== undefined) {
      if (lease.tokens > 0 && lease.until > t) {
        if (--lease.tokens === 0) this.leases.delete(key)
        return 0
      }
      this.leases.delete(key)
    }
    const refused = this.refusedUntil.get(key)
    if (refused !== undefined) {
      if (refused > t) return retryAfterSeconds(refused - t)
      this.refusedUntil.delete(key)
    }
    return new Promise<number>((resolve) => {
      const waiting = this.asking.get(key)
      if (waiting !== undefined) return void waiting.push(resolve)
      this.asking.set(key, [resolve])
      this.ask(key, this.batch)
    })
  }

  // Asks the primary for `want` tokens of `key`, and shares the answer among the requests waiting for it.
  private ask(key: string, want: number): void {
    void this.link
      .request<TokenGrant>((id) => ({ ds: "tokens", id, key, want }))
      .then((grant) => {
        const waiting = this.asking.get(key) ?? []
        const t = this.now()
        let granted = grant.granted
        while (granted > 0 && waiting.length > 0) {
          granted--
          waiting.shift()!(0)
        }
        if (granted > 0) this.leases.set(key, { tokens: granted, until: t + leaseMs })
        if (waiting.length === 0) return void this.asking.delete(key)
        if (grant.granted === 0) {
          this.asking.delete(key)
          this.refusedUntil.set(key, t + grant.waitMs)
          const wait = retryAfterSeconds(grant.waitMs)
          for (const resolve of waiting) resolve(wait)
          return
        }
        // More requests arrived than the grant covered: ask again for them.
        this.ask(key, Math.max(this.batch, waiting.length))
      })
  }
}

/** The bound on open event streams per access key (docs/api.md section 10), counted by the primary for the server. */
export const clusterStreamSlots = (link: WorkerLink): StreamSlots => ({
  take: (key, max) => link.request<boolean>((id) => ({ ds: "slot", id, key, max })),
  release: (key) => link.send({ ds: "unslot", key })
})

/** Asks the primary for the other workers' metrics (`GET /metrics` covers the whole server). */
export const otherWorkersMetrics = (link: WorkerLink) => (): Promise<MetricsReply> =>
  link.request<MetricsReply>((id) => ({ ds: "metrics", id }))

/** Applies a {@link Forget} to this worker's caches (either may not exist yet: nothing to forget there). */
export const forget = (
  caches: { readonly accounts: AccountCache | undefined; readonly sessions: SessionCache | undefined },
  what: Forget
): void => {
  if ("session" in what) caches.sessions?.ended(what.session)
  else if ("keys" in what) caches.accounts?.forgetKeys()
  else caches.accounts?.forgetWidget(what.widget[0] as never, what.widget[1])
}

/** What a worker answers the primary's `metricsGet` with. */
export type SnapshotSource = () => Promise<MetricsSnapshot>
