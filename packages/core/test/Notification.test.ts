import { createHmac } from "node:crypto"
import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import type { AccountId } from "../src/Account.js"
import type { AlertRuleId } from "../src/alerts/AlertRule.js"
import type { AlertEventId } from "../src/alerts/AlertStore.js"
import {
  attemptOutcome,
  DELIVERY_GIVE_UP_AFTER,
  notificationRequest,
  type NotifiedEvent,
  retryDelay,
  testNotification
} from "../src/alerts/Notification.js"
import type { ReceiverForDelivery, ReceiverId, ReceiverKind } from "../src/alerts/Receiver.js"
import { type Micros, micros } from "../src/Time.js"

/**
 * The bodies, headers and retry timing of alert delivery (docs/api.md section 18), as pure functions: each receiver
 * kind's body, the signature over the exact body bytes, the Alertmanager URL and `endsAt`, and the backoff.
 */

const S = 1_000_000
const T0 = micros(1_700_000_000_000_000)
const at = (seconds: number): Micros => micros(T0 + seconds * S)

const receiver = (kind: ReceiverKind, secret: string | null = null): ReceiverForDelivery => ({
  id: "r-1" as ReceiverId,
  accountId: "a-1" as AccountId,
  name: "ops",
  kind,
  url: kind === "alertmanager" ? "http://127.0.0.1:9093/" : "http://127.0.0.1:8080/hook?token=x",
  hasSecret: secret !== null,
  secret,
  createdAt: at(0)
})

const firing: NotifiedEvent = {
  id: "e-1" as AlertEventId,
  accountId: "a-1" as AccountId,
  ruleId: "rule-1" as AlertRuleId,
  ruleName: "CPU hot",
  streamName: "cpu",
  condition: { above: 90 },
  for: 0,
  from: "ok",
  to: "firing",
  value: 95.5,
  ts: at(10),
  at: at(10),
  startsAt: at(10)
}
const resolved: NotifiedEvent = { ...firing, from: "firing", to: "ok", value: 20, ts: at(70), at: at(70) }

describe("notification bodies", () => {
  it("webhook: the documented body, the event id header, no signature without a secret", () => {
    const request = notificationRequest(receiver("webhook"), firing, "Acme", "d-1")
    assert.strictEqual(request.url, "http://127.0.0.1:8080/hook?token=x")
    assert.deepStrictEqual(JSON.parse(request.body), {
      version: 1,
      state: "firing",
      rule: { id: "rule-1", name: "CPU hot", streamName: "cpu", condition: { above: 90 }, for: 0 },
      value: 95.5,
      ts: 1_700_000_010,
      startsAt: "2023-11-14T22:13:30.000Z",
      account: { id: "a-1", name: "Acme" }
    })
    assert.strictEqual(request.headers["x-dashstream-event-id"], "d-1")
    assert.strictEqual(request.headers["content-type"], "application/json")
    assert.isUndefined(request.headers["x-dashstream-signature"])
  })

  it("webhook: a resolution repeats its firing's startsAt and adds endsAt; a deadline has null value and ts", () => {
    const body = JSON.parse(notificationRequest(receiver("webhook"), resolved, "Acme", "d-2").body)
    assert.strictEqual(body.state, "resolved")
    assert.strictEqual(body.startsAt, "2023-11-14T22:13:30.000Z")
    assert.strictEqual(body.endsAt, "2023-11-14T22:14:30.000Z")
    const deadline = JSON.parse(
      notificationRequest(receiver("webhook"), { ...firing, value: null, ts: null }, "Acme", "d-3").body
    )
    assert.isNull(deadline.value)
    assert.isNull(deadline.ts)
  })

  it("the signature is the hex HMAC-SHA256 of the exact body bytes with the receiver's secret", () => {
    const request = notificationRequest(receiver("webhook", "s3cr3t"), { ...firing, ruleName: "Température" }, "Å", "d")
    const expected = createHmac("sha256", "s3cr3t").update(Buffer.from(request.body, "utf8")).digest("hex")
    assert.strictEqual(request.headers["x-dashstream-signature"], `sha256=${expected}`)
    const other = notificationRequest(receiver("webhook", "other"), firing, "Acme", "d")
    assert.notStrictEqual(other.headers["x-dashstream-signature"], request.headers["x-dashstream-signature"])
  })

  it("slack: one text naming the rule, the state word, the stream and the value", () => {
    const fired = JSON.parse(notificationRequest(receiver("slack"), firing, "Acme", "d").body)
    assert.deepStrictEqual(Object.keys(fired), ["text"])
    for (const word of ["CPU hot", "firing", "cpu", "95.5"]) assert.include(fired.text, word)
    const back = JSON.parse(notificationRequest(receiver("slack"), resolved, "Acme", "d").body)
    assert.include(back.text, "resolved")
  })

  it("alertmanager: POST <url>/api/v2/alerts with one alert; endsAt only when resolved", () => {
    const request = notificationRequest(receiver("alertmanager"), firing, "Acme", "d")
    assert.strictEqual(request.url, "http://127.0.0.1:9093/api/v2/alerts")
    const [alert, ...rest] = JSON.parse(request.body)
    assert.lengthOf(rest, 0)
    assert.deepStrictEqual(alert.labels, {
      alertname: "CPU hot",
      stream: "cpu",
      account: "Acme",
      dashstream_rule: "rule-1"
    })
    assert.strictEqual(alert.annotations.value, "95.5")
    assert.include(alert.annotations.summary, "firing")
    assert.strictEqual(alert.startsAt, "2023-11-14T22:13:30.000Z")
    assert.isUndefined(alert.endsAt)
    const [gone] = JSON.parse(notificationRequest(receiver("alertmanager"), resolved, "Acme", "d").body)
    assert.strictEqual(gone.startsAt, "2023-11-14T22:13:30.000Z")
    assert.strictEqual(gone.endsAt, "2023-11-14T22:14:30.000Z")
  })

  it("a test notification is a firing body of the receiver's kind, signed like any other", () => {
    const hook = testNotification(receiver("webhook", "k"), "Acme", at(0), "t-1")
    const body = JSON.parse(hook.body)
    assert.strictEqual(body.state, "firing")
    assert.strictEqual(body.rule.name, "Dashstream test notification")
    assert.strictEqual(
      hook.headers["x-dashstream-signature"],
      `sha256=${createHmac("sha256", "k").update(hook.body).digest("hex")}`
    )
    const [alert] = JSON.parse(testNotification(receiver("alertmanager"), "Acme", at(0), "t-2").body)
    assert.strictEqual(alert.endsAt, new Date((T0 + 60 * S) / 1000).toISOString())
  })
})

describe("retry timing", () => {
  it("1 second doubling up to 5 minutes, jitter at most 10%", () => {
    assert.deepStrictEqual(
      [1, 2, 3, 4, 9, 10, 40].map((n) => retryDelay(n, 0) / S),
      [1, 2, 4, 8, 256, 300, 300]
    )
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, r) => {
          const base = Math.min(300, 2 ** (n - 1)) * S
          const delay = retryDelay(n, r)
          return delay <= base && delay >= base * 0.9 - 1
        }
      )
    )
  })

  it("2xx delivers; any other status or no answer is retried, until 24 hours after the transition", () => {
    assert.deepStrictEqual(attemptOutcome({ _tag: "Answered", status: 204 }, at(0), at(1), 1, 0), {
      state: "delivered",
      status: 204,
      nextAttemptAt: null
    })
    for (const status of [199, 302, 404, 500]) {
      assert.deepStrictEqual(attemptOutcome({ _tag: "Answered", status }, at(0), at(1), 1, 0), {
        state: "pending",
        status,
        nextAttemptAt: at(2)
      })
    }
    assert.deepStrictEqual(attemptOutcome({ _tag: "Unreachable", reason: "connection refused" }, at(0), at(1), 2, 0), {
      state: "pending",
      status: null,
      nextAttemptAt: at(3)
    })
    const late = micros(at(0) + DELIVERY_GIVE_UP_AFTER - 100 * S)
    assert.deepStrictEqual(attemptOutcome({ _tag: "Answered", status: 503 }, at(0), late, 30, 0), {
      state: "failed",
      status: 503,
      nextAttemptAt: null
    })
  })
})
