/**
 * What the alert suites share (docs/api.md section 18): a webhook receiver on loopback that records what it gets,
 * the storage ports of a server's `--db` opened in the test process (to store rules and receivers, and to read the
 * events), and ways to kill a server outright.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import {
  type AccountId,
  AccountStore,
  type AlertEvent,
  AlertStore,
  type Condition,
  initialEvaluation,
  micros,
  newAlertRuleId,
  newReceiverId,
  type ReceiverKind,
  StreamName,
  StreamStore
} from "@dashstream/core"
import * as Postgres from "@dashstream/storage-postgres"
import * as Sqlite from "@dashstream/storage-sqlite"
import { Effect, Either, Layer } from "effect"
import { vi } from "vitest"
import type { Account, RunningServer } from "./harness.js"

/** One request a receiver got: when (milliseconds since the epoch), its headers and the exact body bytes. */
export interface Received {
  readonly at: number
  readonly headers: IncomingMessage["headers"]
  readonly body: Buffer
}

/** How a receiver answers its `n`th request (0-based): a status, or `"hang"` to leave it unanswered. */
export type Answer = number | "hang"

/** A webhook receiver on loopback answering from `answers` in turn (the last repeats), on `port` (0: any free one). */
export const receiverServer = async (answers: ReadonlyArray<Answer> | ((n: number) => Answer), port = 0) => {
  const received: Array<Received> = []
  const hanging: Array<ServerResponse> = []
  const answerOf = typeof answers === "function" ? answers : (n: number) => answers[Math.min(n, answers.length - 1)]!
  const server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const answer = answerOf(received.length)
      received.push({ at: Date.now(), headers: req.headers, body: Buffer.concat(chunks) })
      if (answer === "hang") {
        hanging.push(res)
        return
      }
      res.statusCode = answer
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const address = server.address()
  return {
    received,
    url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy()
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

/** The storage ports of a `--db` URL, opened in this process. */
const storage = (url: string) =>
  url.startsWith("sqlite:")
    ? Sqlite.layer({ filename: url.slice("sqlite:".length) })
    : Postgres.layer(Either.getOrThrow(Postgres.parseUrl(url)))

/** Runs `effect` on the storage of `url`, opened for it and closed after (as one CLI run does). */
export const run = <A>(
  url: string,
  effect: Effect.Effect<A, unknown, AccountStore | AlertStore | StreamStore>
): Promise<A> => Effect.runPromise(Effect.scoped(Effect.provide(effect, Layer.orDie(storage(url)))) as Effect.Effect<A>)

/** A rule to store with its own receiver (see {@link addRule}). */
export interface RuleSpec {
  readonly stream: string
  readonly kind: ReceiverKind
  readonly url: string
  readonly secret: string | null
  /** Default `{"above": 90}`. */
  readonly condition?: Condition
  /** Default `"<stream> too high"`. */
  readonly name?: string
}

/** Stores one receiver and one rule (for 0) on `spec.stream` notifying it; returns the rule id. */
export const addRule = (url: string, account: Account, spec: RuleSpec): Promise<string> =>
  run(
    url,
    Effect.gen(function* () {
      const accounts = yield* AccountStore
      const alerts = yield* AlertStore
      const accountId = account.id as AccountId
      const widgets = yield* accounts.listWidgets(accountId)
      const widget = widgets.find((w) => w.streamName === spec.stream)!
      const now = micros(Date.now() * 1000)
      const receiverId = newReceiverId()
      yield* alerts.createReceiver(
        {
          id: receiverId,
          accountId,
          name: `${spec.kind} ${spec.stream}`,
          kind: spec.kind,
          url: spec.url,
          hasSecret: spec.secret !== null,
          createdAt: now
        },
        spec.secret
      )
      const id = newAlertRuleId()
      yield* alerts.createRule({
        id,
        accountId,
        streamId: widget.id,
        name: spec.name ?? `${spec.stream} too high`,
        streamName: StreamName.make(spec.stream),
        condition: spec.condition ?? { above: 90 },
        for: 0,
        receiverIds: [receiverId],
        createdAt: now,
        silencedUntil: null,
        evaluation: initialEvaluation(now, null)
      })
      return id
    })
  )

/** A rule to store: its name, stream, condition, `for` (seconds) and the webhook URLs it notifies (default none). */
export interface StoredRule {
  readonly name: string
  readonly stream: string
  readonly condition: Condition
  readonly for?: number
  readonly webhooks?: ReadonlyArray<string>
}

/** Stores a webhook receiver per URL and each rule of `specs` on `url`'s database; returns the rule ids in order. */
export const addRules = (url: string, account: Account, specs: ReadonlyArray<StoredRule>): Promise<Array<string>> =>
  run(
    url,
    Effect.gen(function* () {
      const accounts = yield* AccountStore
      const alerts = yield* AlertStore
      const streams = yield* StreamStore
      const accountId = account.id as AccountId
      const widgets = yield* accounts.listWidgets(accountId)
      const receivers = new Map<string, ReturnType<typeof newReceiverId>>()
      const ids: Array<string> = []
      for (const spec of specs) {
        const widget = widgets.find((w) => w.streamName === spec.stream)
        if (widget === undefined) throw new Error(`no widget ${spec.stream}`)
        const now = micros(Date.now() * 1000)
        for (const hook of spec.webhooks ?? []) {
          if (receivers.has(hook)) continue
          const id = newReceiverId()
          receivers.set(hook, id)
          yield* alerts.createReceiver(
            {
              id,
              accountId,
              name: `hook ${receivers.size}`,
              kind: "webhook",
              url: hook,
              hasSecret: false,
              createdAt: now
            },
            null
          )
        }
        const id = newAlertRuleId()
        // A new rule starts after the stream's newest entry (docs/api.md section 18.3).
        const [latest] = yield* streams.read(widget.id, { since: null, limit: null })
        const newest = latest?.ts ?? null
        yield* alerts.createRule({
          id,
          accountId,
          streamId: widget.id,
          name: spec.name,
          streamName: StreamName.make(spec.stream),
          condition: spec.condition,
          for: spec.for ?? 0,
          receiverIds: (spec.webhooks ?? []).map((hook) => receivers.get(hook)!),
          createdAt: now,
          silencedUntil: null,
          evaluation: initialEvaluation(now, newest)
        })
        ids.push(id)
      }
      return ids
    })
  )

/** Every alert event of the account, oldest first, read from the storage. */
export const events = (url: string, account: Account): Promise<ReadonlyArray<AlertEvent>> =>
  run(
    url,
    Effect.flatMap(AlertStore, (alerts) => alerts.listEvents(account.id as AccountId, micros(0), 1000))
  )

/** Polls `check` until it holds (or fails after `timeoutMs` with its last error). */
export const eventually = (check: () => void | Promise<void>, timeoutMs = 20_000) =>
  vi.waitFor(check, { timeout: timeoutMs, interval: 100 })

// The child processes of `pid` (a `serve --workers N` primary's workers).
const childrenOf = (pid: number): Array<number> => {
  try {
    return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
      .split("\n")
      .map((line) => Number(line.trim()))
      .filter((child) => child > 0)
  } catch {
    return []
  }
}

// Whether `pid` is a process that has not exited (a zombie has).
const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

/**
 * SIGKILL to the server and, under `serve --workers N`, to every worker at once (the whole process group, as a
 * crash or the OOM killer of a container would); resolves once all of them are gone.
 */
export const killServer = async (server: RunningServer): Promise<void> => {
  const workers = childrenOf(server.pid)
  // The primary first, so that it forks no replacement for a worker it sees die.
  process.kill(server.pid, "SIGKILL")
  for (const pid of workers) process.kill(pid, "SIGKILL")
  await server.stop(0, "SIGKILL")
  await eventually(() => {
    if (workers.some(alive)) throw new Error("a worker is still running")
  }, 10_000)
}
