import type { PendingChange } from "@dashstream/core"
import type { MetricsSnapshot } from "@dashstream/http"

/**
 * The messages between the primary of `serve --workers N` and its workers, over node:cluster's IPC channel (JSON).
 * Every message has a `ds` field (so nothing else on the channel is mistaken for one). A request carries an `id`; its
 * answer is a `reply` with the same `id`. Stream ids and `ts` are plain numbers (microseconds; safe integers).
 */

/**
 * What a worker forgets from its caches when a change was made through another worker: revoked keys or a created or
 * deleted widget (account cache: the widget, or the name's remembered absence), a signed-out console session
 * (session cache).
 */
export type Forget =
  | { readonly keys: true }
  | { readonly widget: readonly [accountId: string, streamName: string] }
  | { readonly session: string }

/** Worker to primary. */
export type FromWorker =
  /**
   * Sent once the worker listens for messages; the primary answers `welcome`: at once to the worker it picks to bring
   * the schema up to date, to the others once that worker says `migrated`.
   */
  | { readonly ds: "hello" }
  /** The schema is up to date (the worker welcomed with `migrate`). */
  | { readonly ds: "migrated" }
  /** The worker's HTTP server is bound: `url` is `http://HOST:PORT`. */
  | { readonly ds: "listening"; readonly url: string }
  /**
   * The database is empty (`demo`: but for the demo's account): the primary prints the first-start hint after the
   * listening line.
   */
  | { readonly ds: "hint"; readonly demo: boolean }
  /**
   * `serve --demo`: the demo dashboard's view token, printed by the primary as a link after the console line;
   * `renewed` when it replaced the link of an earlier start (see `Demo.demoLine`).
   */
  | { readonly ds: "demo"; readonly viewToken: string; readonly renewed: boolean }
  /** The worker's first subscriber of `stream`: answered once every other worker knows (see `Hub`). */
  | { readonly ds: "follow"; readonly id: number; readonly stream: number }
  /**
   * After its first `follow` was answered, the last commit sequence number the file had taken: everything at or
   * below it is in what its subscriber reads from the file next (see `Hub.baseline`).
   */
  | { readonly ds: "baseline"; readonly seq: number }
  /** The worker's last subscriber of `stream` left. */
  | { readonly ds: "unfollow"; readonly stream: number }
  /** The changes of a durable transaction; `seq` its commit sequence number, absent for a widget deletion. */
  | { readonly ds: "changes"; readonly seq?: number; readonly changes: ReadonlyArray<PendingChange> }
  /** Sequence number `seq` was committed but is not durable: nothing to publish for it. */
  | { readonly ds: "skip"; readonly seq: number }
  /** Asks for up to `want` tokens of `key`'s bucket (`--rate-limit`); answered with a {@link TokenGrant}. */
  | { readonly ds: "tokens"; readonly id: number; readonly key: string; readonly want: number }
  /** Asks for an event-stream slot of `key` (at most `max` per server); answered with a boolean. */
  | { readonly ds: "slot"; readonly id: number; readonly key: string; readonly max: number }
  /** Gives back a slot of `key`. */
  | { readonly ds: "unslot"; readonly key: string }
  /** An admin change: every other worker forgets `what`; answered once they all have (or after a bound). */
  | { readonly ds: "invalidate"; readonly id: number; readonly what: Forget }
  /** Asks for the other workers' metrics (`GET /metrics`); answered with their snapshots. */
  | { readonly ds: "metrics"; readonly id: number }
  /** Answers a request of the primary. */
  | { readonly ds: "reply"; readonly id: number; readonly value?: unknown }

/** Primary to worker. */
export type FromPrimary =
  /**
   * Open the storage: with `migrate`, bring the schema up to date first and say `migrated` (the others wait for it);
   * without, it is up to date. `decimate`: this worker runs the daily decimation pass. `followed`: the streams other
   * workers follow, with how many workers follow each. `adminToken`: the admin token the primary generated for this
   * run (first run, docs/api.md section 14), the same for every worker; absent otherwise. `replacement`: the server
   * already listened when this worker joined (it replaces one that exited); absent otherwise.
   */
  | {
      readonly ds: "welcome"
      readonly migrate: boolean
      readonly decimate: boolean
      readonly followed: ReadonlyArray<readonly [stream: number, workers: number]>
      readonly adminToken?: string
      readonly replacement?: true
    }
  /** Another worker started (`on`) or stopped following `stream`; with `id`, answer with a `reply` once recorded. */
  | { readonly ds: "followed"; readonly id?: number; readonly stream: number; readonly on: boolean }
  /** Changes to publish to this worker's subscribers, in commit order. */
  | { readonly ds: "changes"; readonly changes: ReadonlyArray<PendingChange> }
  /** Changes may have been lost: every subscriber catches up from the storage. */
  | { readonly ds: "gap" }
  /** Forget `what` from the account cache, then reply. */
  | { readonly ds: "forget"; readonly id: number; readonly what: Forget }
  /** Reply with this worker's metrics snapshot. */
  | { readonly ds: "metricsGet"; readonly id: number }
  /** Answers a request of the worker. */
  | { readonly ds: "reply"; readonly id: number; readonly value?: unknown }

/** The answer to `tokens`: as core's `Grant`. */
export interface TokenGrant {
  readonly granted: number
  readonly waitMs: number
}

/** The answer to `metrics`: the other workers' snapshots. */
export type MetricsReply = ReadonlyArray<MetricsSnapshot>

/** True for a message of this protocol (anything else on the channel is someone else's). */
export const isMessage = (message: unknown): message is { readonly ds: string } =>
  typeof message === "object" && message !== null && typeof (message as { ds?: unknown }).ds === "string"
