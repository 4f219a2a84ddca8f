/**
 * docs/api.md section 18, "Receivers and delivery", against the real `dashstream serve`: a push crossing a rule's
 * threshold reaches a webhook receiver on loopback (signed, retried after a 500 and after a refused connection,
 * delivered once the receiver is back) and a real Prometheus Alertmanager (listed, then resolved); a server killed
 * with SIGKILL (every process of it) right after an acknowledged crossing push stores and delivers that transition
 * after its restart, once, with one event id; one killed while an attempt is in flight sends it again as soon as it
 * is back, not once the attempt's lease has run out.
 *
 * Rules and receivers are stored through the storage adapters on the server's own database while the server is
 * stopped (the engine loads rules when it starts).
 */
import { createHmac } from "node:crypto"
import { freePort } from "@dashstream/storage-postgres/testing"
import { DELIVERY_LEASE } from "@dashstream/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseExposition, valueOf } from "../../../http/test/support/exposition.js"
import { type Alertmanager, startAlertmanager } from "./alertmanager.js"
import { addRule, events, eventually, killServer, receiverServer } from "./alertSupport.js"
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
    let slow: Awaited<ReturnType<typeof receiverServer>>
    let alertmanager: Alertmanager
    let closedPort: number
    const rules: Record<string, string> = {}

    beforeAll(async () => {
      db = await backend.database()
      // A first run makes the schema, the account and its widgets; rules are stored while no server runs.
      server = await startServer(db.url)
      api = new Api(server.baseUrl)
      account = await api.setup({ hot: "number", back: "number", am: "number", crash: "number", inflight: "number" })
      await server.stop()
      flaky = await receiverServer([500, 500, 200])
      steady = await receiverServer([200])
      // Leaves its first request unanswered: the server is killed while that attempt is in flight.
      slow = await receiverServer(["hang", 200])
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
      rules["inflight"] = await addRule(db.url, account, { stream: "inflight", kind: "webhook", url: slow.url, secret })
      server = await startServer(db.url)
      api = new Api(server.baseUrl)
    }, 180_000)

    afterAll(async () => {
      await server?.stop()
      await Promise.allSettled([flaky?.close(), steady?.close(), slow?.close(), alertmanager?.stop()])
      await db?.drop()
    }, 60_000)

    it("a webhook gets the signed firing body, retried after two 500s with one event id, then the resolution", async () => {
      expectSuccess(await api.pushPoint(account.accessKey, "hot", 95))
      await eventually(() => expect(flaky.received).toHaveLength(3))
      const ids = new Set(flaky.received.map((r) => r.headers["x-dashstream-event-id"]))
      expect(ids.size).toBe(1)
      for (const r of flaky.received) expect(r.headers["x-dashstream-signature"]).toBe(sign(r.body))
      // Backoff from 1 s doubling, jitter at most 10% (less), on a loaded machine (later).
      const [first, second, third] = flaky.received.map((r) => r.at)
      expect(second! - first!).toBeGreaterThanOrEqual(900 - 50)
      expect(second! - first!).toBeLessThan(1_000 + 1_500)
      expect(third! - second!).toBeGreaterThanOrEqual(1_800 - 50)
      expect(third! - second!).toBeLessThan(2_000 + 1_500)
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

    it("SIGKILL right after an acknowledged crossing push: the transition is delivered after the restart, once", async () => {
      expectSuccess(await api.pushPoint(account.accessKey, "crash", 91))
      await killServer(server!)
      server = await startServer(db!.url)
      api = new Api(server.baseUrl)
      // Wherever the kill landed (before the evaluation, before the claim, during the attempt), the restarted server
      // evaluates the entry above its rule's cursor or claims the stored delivery at once.
      await eventually(async () => {
        const crash = (await events(db!.url, account)).filter((e) => e.ruleId === rules["crash"])
        expect(crash.map((e) => [e.to, e.value, e.deliveries[0]!.state])).toEqual([["firing", 91, "delivered"]])
      })
      expect(steady.received.length).toBeGreaterThanOrEqual(1)
      // A second request, if the kill fell between the receiver's 2xx and its record, carries the same event id.
      const ids = new Set(steady.received.map((r) => r.headers["x-dashstream-event-id"]))
      expect(ids.size).toBe(1)
      for (const r of steady.received) expect(r.headers["x-dashstream-signature"]).toBe(sign(r.body))
      expect(JSON.parse(steady.received[0]!.body.toString())).toMatchObject({ state: "firing", value: 91 })
    })

    it("SIGKILL during an attempt: the restarted server sends it again at once, not after the lease", async () => {
      expectSuccess(await api.pushPoint(account.accessKey, "inflight", 93))
      await eventually(() => expect(slow.received).toHaveLength(1))
      await killServer(server!)
      const killedAt = Date.now()
      server = await startServer(db!.url)
      const restart = `restarted in ${Date.now() - killedAt} ms`
      api = new Api(server.baseUrl)
      await eventually(() => expect(slow.received).toHaveLength(2), DELIVERY_LEASE / 1000 + 15_000)
      const [first, second] = slow.received
      // The killed process's lease (30 s from its claim, just before the first request) was released when the new
      // process started: the second request comes before that lease would have run out, restart included (a loaded
      // machine may take 20 s to restart; the claim's request may take a second or two to arrive).
      expect(second!.at - first!.at, restart).toBeLessThan(DELIVERY_LEASE / 1000 - 3_000)
      expect(second!.headers["x-dashstream-event-id"]).toBe(first!.headers["x-dashstream-event-id"])
      expect(second!.body.equals(first!.body)).toBe(true)
      await eventually(async () => {
        const inflight = (await events(db!.url, account)).filter((e) => e.ruleId === rules["inflight"])
        expect(inflight.map((e) => [e.to, e.value, e.deliveries[0]!.state, e.deliveries[0]!.attempts])).toEqual([
          ["firing", 93, "delivered", 1]
        ])
      })
      expect(slow.received).toHaveLength(2)
    })
  })
}
