/**
 * Alert rules and receivers for end-to-end tests, stored as the CLI stores them: through the storage adapter of the
 * server's `--db`, opened in the test's own process while the server runs (docs/api.md section 18). And a webhook
 * receiver on loopback that records what it gets.
 */
import { createServer, type IncomingMessage, type Server } from "node:http"
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
  StreamName,
  StreamStore
} from "@dashstream/core"
import * as Postgres from "@dashstream/storage-postgres"
import * as Sqlite from "@dashstream/storage-sqlite"
import { Effect, Either, Layer } from "effect"
import type { Account } from "./harness.js"

/** One request a receiver got: when (`performance.now()`), its headers and the exact body bytes. */
export interface Received {
  readonly at: number
  readonly headers: IncomingMessage["headers"]
  readonly body: Buffer
}

/** A webhook receiver on loopback answering 200 to every request, recording each. */
export const webhookReceiver = async () => {
  const received: Array<Received> = []
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({ at: performance.now(), headers: req.headers, body: Buffer.concat(chunks) })
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  return {
    received,
    url: `http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}/hook`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The storage ports of a `--db` URL, opened in this process. */
const storage = (url: string) =>
  url.startsWith("sqlite:")
    ? Sqlite.layer({ filename: url.slice("sqlite:".length) })
    : Postgres.layer(Either.getOrThrow(Postgres.parseUrl(url)))

/** Runs `effect` on the storage of `url`, opened for it and closed after it (one CLI run). */
export const onStorage = <A>(
  url: string,
  effect: Effect.Effect<A, unknown, AccountStore | AlertStore | StreamStore>
): Promise<A> => Effect.runPromise(Effect.scoped(Effect.provide(effect, Layer.orDie(storage(url)))) as Effect.Effect<A>)

/** A rule to store: its name, stream, condition, `for` (seconds) and the webhook URLs it notifies (default none). */
export interface RuleSpec {
  readonly name: string
  readonly stream: string
  readonly condition: Condition
  readonly for?: number
  readonly webhooks?: ReadonlyArray<string>
}

/** Stores a webhook receiver per URL and each rule of `specs` on `url`'s database; returns the rule ids in order. */
export const addRules = (url: string, account: Account, specs: ReadonlyArray<RuleSpec>): Promise<Array<string>> =>
  onStorage(
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

/** The account's transitions, oldest first. */
export const alertEvents = (url: string, account: Account): Promise<ReadonlyArray<AlertEvent>> =>
  onStorage(
    url,
    Effect.flatMap(AlertStore, (alerts) => alerts.listEvents(account.id as AccountId, micros(0), 1000))
  )
