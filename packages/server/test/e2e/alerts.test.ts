/**
 * docs/api.md section 18, "Receivers and delivery", against the real `dashstream serve`: a push crossing a rule's
 * threshold reaches a webhook receiver on loopback (signed, retried after a 500 and after a refused connection,
 * delivered once the receiver is back) and a real Prometheus Alertmanager (listed, then resolved).
 *
 * Rules and receivers have no HTTP routes yet: the test stores them through the storage adapters on the server's own
 * database while the server is stopped (the engine loads rules when it starts).
 */
import { createHmac } from "node:crypto"
import { createServer, type IncomingMessage, type Server } from "node:http"
import {
  type AccountId,
  AccountStore,
  type AlertEvent,
  AlertStore,
  initialEvaluation,
  micros,
  newAlertRuleId,
  newReceiverId,
  type ReceiverKind,
  StreamName
} from "@dashstream/core"
import * as Postgres from "@dashstream/storage-postgres"
import * as Sqlite from "@dashstream/storage-sqlite"
import { Effect, Either, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest"
import { parseExposition, valueOf } from "../../../http/test/support/exposition.js"
import { type Alertmanager, startAlertmanager } from "./alertmanager.js"
import {
  type Account,
  Api,
  backends,
  type Database,
  expectSuccess,
  type RunningServer,
  startServer,
  suiteName
} from "./harness.js"
import { freePort } from "./nginx.js"

/** One request a receiver got: headers and the exact body bytes. */
interface Received {
  readonly headers: IncomingMessage["headers"]
  readonly body: Buffer
}

/** A webhook receiver on loopback answering from `statuses` in turn (the last repeats). */
const receiverServer = async (statuses: ReadonlyArray<number>, port = 0) => {
  const received: Array<Received> = []
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks) })
      res.statusCode = statuses[Math.min(received.length - 1, statuses.length - 1)]!
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
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

const run = <A>(url: string, effect: Effect.Effect<A, unknown, AccountStore | AlertStore>): Promise<A> =>
  Effect.runPromise(Effect.scoped(Effect.provide(effect, Layer.orDie(storage(url)))) as Effect.Effect<A>)

interface RuleSpec {
  readonly stream: string
  readonly kind: ReceiverKind
  readonly url: string
  readonly secret: string | null
}

/** Stores one receiver and one rule `above 90` (for 0) on `stream` notifying it; returns the rule id. */
const addRule = (url: string, account: Account, spec: RuleSpec): Promise<string> =>
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
        name: `${spec.stream} too high`,
        streamName: StreamName.make(spec.stream),
        condition: { above: 90 },
        for: 0,
        receiverIds: [receiverId],
        createdAt: now,
        silencedUntil: null,
        evaluation: initialEvaluation(now, null)
      })
      return id
    })
  )

const events = (url: string, account: Account): Promise<ReadonlyArray<AlertEvent>> =>
  run(
    url,
    Effect.flatMap(AlertStore, (alerts) => alerts.listEvents(account.id as AccountId, micros(0), 1000))
  )

/** Polls `check` until it holds (or fails after `timeoutMs` with its last error). */
const eventually = (check: () => void | Promise<void>, timeoutMs = 20_000) =>
  vi.waitFor(check, { timeout: timeoutMs, interval: 100 })

const secret = "whsec-0123456789"
const sign = (body: Buffer) => `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`

for (const backend of backends) {
  describe(suiteName("alert delivery", backend), { timeout: 120_000 }, () => {
    let db: Database | undefined
    let server: RunningServer | undefined
    let api: Api
    let account: Account
    let flaky: Awaited<ReturnType<typeof receiverServer>>
    let steady: Awaited<ReturnType<typeof receiverServer>>
    let alertmanager: Alertmanager
    let closedPort: number
    const rules: Record<string, string> = {}

    beforeAll(async () => {
      db = await backend.database()
      // A first run makes the schema, the account and its widgets; rules are stored while no server runs.
      server = await startServer(db.url)
      api = new Api(server.baseUrl)
      account = await api.setup({ hot: "number", back: "number", am: "number", crash: "number" })
      await server.stop()
      flaky = await receiverServer([500, 500, 200])
      steady = await receiverServer([200])
      alertmanager = await startAlertmanager()
      closedPort = await freePort()
      rules["hot"] = await addRule(db.url, account, { stream: "hot", kind: "webhook", url: flaky.url, secret })
      rules["back"] = await addRule(db.url, account, {
        stream: "back",
        kind: "webhook",
        url: `http://127.0.0.1:${closedPort}/hook`,
        secret: null
      })
      rules["am"] = await addRule(db.url, account, {
        stream: "am",
        kind: "alertmanager",
        url: alertmanager.url,
        secret: null
      })
      rules["crash"] = await addRule(db.url, account, { stream: "crash", kind: "webhook", url: steady.url, secret })
      server = await startServer(db.url)
      api = new Api(server.baseUrl)
    }, 180_000)

    afterAll(async () => {
      await server?.stop()
      await Promise.allSettled([flaky?.close(), steady?.close(), alertmanager?.stop()])
      await db?.drop()
    }, 60_000)

    it("a webhook gets the signed firing body, retried after two 500s with one event id, then the resolution", async () => {
      expectSuccess(await api.pushPoint(account.accessKey, "hot", 95))
      await eventually(() => expect(flaky.received).toHaveLength(3))
      const ids = new Set(flaky.received.map((r) => r.headers["x-dashstream-event-id"]))
      expect(ids.size).toBe(1)
      for (const r of flaky.received) expect(r.headers["x-dashstream-signature"]).toBe(sign(r.body))
      const body = JSON.parse(flaky.received[2]!.body.toString())
      expect(body).toMatchObject({
        version: 1,
        state: "firing",
        rule: { id: rules["hot"], name: "hot too high", streamName: "hot", condition: { above: 90 }, for: 0 },
        value: 95,
        account: { id: account.id, name: account.name }
      })
      expect(body.endsAt).toBeUndefined()

      expectSuccess(await api.pushPoint(account.accessKey, "hot", 10))
      await eventually(() => expect(flaky.received).toHaveLength(4))
      const resolved = JSON.parse(flaky.received[3]!.body.toString())
      expect(resolved.state).toBe("resolved")
      expect(resolved.startsAt).toBe(body.startsAt)
      expect(typeof resolved.endsAt).toBe("string")
      expect(flaky.received[3]!.headers["x-dashstream-event-id"]).not.toBe(
        flaky.received[0]!.headers["x-dashstream-event-id"]
      )
      await eventually(async () => {
        const hot = (await events(db!.url, account)).filter((e) => e.ruleId === rules["hot"])
        expect(hot.map((e) => [e.to, e.deliveries[0]!.state, e.deliveries[0]!.attempts])).toEqual([
          ["firing", "delivered", 3],
          ["ok", "delivered", 1]
        ])
      })
      // The receiver's URL and secret never reach a log line, nor /metrics, which counts transitions and attempts.
      expect(server!.output()).not.toContain(flaky.url)
      expect(server!.output()).not.toContain(secret)
      const metrics = await api.fetch("/metrics")
      const exposition = parseExposition(metrics.text)
      expect(valueOf(exposition, "dashstream_alert_transitions_total", { to: "firing" })).toBeGreaterThanOrEqual(1)
      expect(valueOf(exposition, "dashstream_alert_transitions_total", { to: "resolved" })).toBeGreaterThanOrEqual(1)
      const attempts = (outcome: string) =>
        valueOf(exposition, "dashstream_alert_delivery_attempts_total", { kind: "webhook", outcome })
      expect(attempts("retried")).toBeGreaterThanOrEqual(2)
      expect(attempts("delivered")).toBeGreaterThanOrEqual(2)
      for (const hidden of [flaky.url, secret, rules["hot"]!]) expect(metrics.text).not.toContain(hidden)
    })

    it("a refused connection is retried and delivered once the receiver listens", async () => {
      expectSuccess(await api.pushPoint(account.accessKey, "back", 99))
      await eventually(async () => {
        const back = (await events(db!.url, account)).filter((e) => e.ruleId === rules["back"])
        expect(back[0]?.deliveries[0]?.attempts).toBeGreaterThanOrEqual(2)
      })
      const late = await receiverServer([200], closedPort)
      try {
        await eventually(() => expect(late.received).toHaveLength(1))
        expect(JSON.parse(late.received[0]!.body.toString())).toMatchObject({ state: "firing", value: 99 })
        await eventually(async () => {
          const back = (await events(db!.url, account)).filter((e) => e.ruleId === rules["back"])
          expect(back[0]!.deliveries[0]!.state).toBe("delivered")
        })
        expect(server!.output()).not.toContain(`127.0.0.1:${closedPort}`)
      } finally {
        await late.close()
      }
    })

    it("a real Alertmanager lists the firing alert, then resolves it", async () => {
      expectSuccess(await api.pushPoint(account.accessKey, "am", 120))
      await eventually(async () => {
        const alerts = await alertmanager.alerts()
        const alert = alerts.find((a) => a.labels["dashstream_rule"] === rules["am"])
        expect(alert, alertmanager.output()).toBeDefined()
        expect(alert!.labels).toMatchObject({ alertname: "am too high", stream: "am", account: account.name })
        expect(alert!.annotations["value"]).toBe("120")
        expect(alert!.status.state).toBe("active")
      })
      expectSuccess(await api.pushPoint(account.accessKey, "am", 1))
      await eventually(async () => {
        const alerts = await alertmanager.alerts()
        expect(alerts.find((a) => a.labels["dashstream_rule"] === rules["am"])).toBeUndefined()
      })
    })
  })
}
