import { createHmac } from "node:crypto"
import { MICROS_PER_SECOND, type Micros } from "../Time.js"
import type { Condition } from "./AlertRule.js"
import type { AlertEvent, AttemptOutcome, ClaimedDelivery } from "./AlertStore.js"
import type { ReceiverForDelivery } from "./Receiver.js"

/**
 * What a receiver is sent (docs/api.md section 18, "Receivers and delivery"), as pure functions: the HTTP request
 * of a delivery for each receiver kind, the test notification, and the retry timing. Sending is an adapter's
 * (see `AlertDeliverer.ts`, whose `NotificationSender` port does the HTTP).
 *
 * A request carries the receiver's URL and, for a signed webhook, a signature made with its secret: neither is ever
 * logged nor put in a metric label (the deliverer logs the receiver's id and kind only).
 */

/** One HTTP `POST` to make: the full URL, the headers (lower-case names) and the exact body bytes as text (UTF-8). */
export interface NotificationRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** The header carrying a delivery's id, the same on every attempt (docs/api.md section 18). */
export const EVENT_ID_HEADER = "x-dashstream-event-id"

/** The header carrying `sha256=<hex HMAC-SHA256 of the body>` when the receiver has a secret. */
export const SIGNATURE_HEADER = "x-dashstream-signature"

/** How long one attempt waits for the receiver's answer, in milliseconds (docs/api.md section 18: 10 seconds). */
export const ATTEMPT_TIMEOUT_MS = 10_000

/** How long a delivery is retried, counted from its transition's `at`, in microseconds (24 hours). */
export const DELIVERY_GIVE_UP_AFTER = 24 * 3600 * MICROS_PER_SECOND

/** The first retry delay and the longest, in microseconds (1 second doubling up to 5 minutes). */
export const FIRST_RETRY_DELAY = MICROS_PER_SECOND
export const MAX_RETRY_DELAY = 300 * MICROS_PER_SECOND

/** How often a firing rule is sent again to an `alertmanager` receiver, in microseconds (60 seconds, as Prometheus). */
export const ALERTMANAGER_RESEND_EVERY = 60 * MICROS_PER_SECOND

/** What a notification says of its event: the event without its deliveries, and the account's name. */
export type NotifiedEvent = Omit<AlertEvent, "deliveries">

const iso = (micros: Micros): string => new Date(Math.floor(micros / 1000)).toISOString()

const seconds = (micros: Micros | null): number | null => (micros === null ? null : micros / MICROS_PER_SECOND)

const conditionText = (condition: Condition): string =>
  "above" in condition
    ? `above ${condition.above}`
    : "below" in condition
      ? `below ${condition.below}`
      : `no data for ${condition.noDataFor} s`

/** `firing` for a transition into firing, `resolved` for one out of it. */
export const notifiedState = (event: Pick<NotifiedEvent, "to">): "firing" | "resolved" =>
  event.to === "firing" ? "firing" : "resolved"

/**
 * The `webhook` body (docs/api.md section 18): `{"version": 1, "state", "rule": {"id", "name", "streamName",
 * "condition", "for"}, "value", "ts" (seconds), "startsAt", "endsAt" (resolved only), "account": {"id", "name"}}`.
 */
export const webhookBody = (event: NotifiedEvent, accountName: string): string => {
  const state = notifiedState(event)
  return JSON.stringify({
    version: 1,
    state,
    rule: {
      id: event.ruleId,
      name: event.ruleName,
      streamName: event.streamName,
      condition: event.condition,
      for: event.for
    },
    value: event.value,
    ts: seconds(event.ts),
    startsAt: iso(event.startsAt),
    ...(state === "resolved" ? { endsAt: iso(event.at) } : {}),
    account: { id: event.accountId, name: accountName }
  })
}

/** The `slack` body: `{"text"}` naming the rule, the state (`firing` / `resolved`), the stream and the value. */
export const slackBody = (event: NotifiedEvent, accountName: string): string => {
  const state = notifiedState(event)
  const value = event.value === null ? "no value" : `value ${event.value}`
  return JSON.stringify({
    text:
      `${state === "firing" ? ":red_circle:" : ":large_green_circle:"} ${event.ruleName} is ${state}: ` +
      `stream ${event.streamName} (${conditionText(event.condition)}), ${value}, account ${accountName}`
  })
}

/**
 * The `alertmanager` body: Prometheus Alertmanager's `POST /api/v2/alerts` array with one alert: labels `alertname`,
 * `stream`, `account` (its name), `dashstream_rule` (the rule id); annotations `summary` and `value`; `startsAt`;
 * `endsAt` when resolved. `at` is when a firing rule is sent again (the same `startsAt` every time).
 */
export const alertmanagerBody = (event: NotifiedEvent, accountName: string): string => {
  const state = notifiedState(event)
  return JSON.stringify([
    {
      labels: {
        alertname: event.ruleName,
        stream: event.streamName,
        account: accountName,
        dashstream_rule: event.ruleId
      },
      annotations: {
        summary: `${event.ruleName} is ${state}: stream ${event.streamName} ${conditionText(event.condition)}`,
        value: event.value === null ? "" : String(event.value)
      },
      startsAt: iso(event.startsAt),
      ...(state === "resolved" ? { endsAt: iso(event.at) } : {})
    }
  ])
}

const bodies = { webhook: webhookBody, slack: slackBody, alertmanager: alertmanagerBody } as const

/** `sha256=<hex HMAC-SHA256 of body's UTF-8 bytes keyed by secret>`: the `X-Dashstream-Signature` value. */
export const signature = (secret: string, body: string): string =>
  `sha256=${createHmac("sha256", secret).update(body, "utf8").digest("hex")}`

/** The URL a receiver is posted to: its own, or `<url>/api/v2/alerts` for `alertmanager` (one slash between). */
export const targetUrl = (receiver: Pick<ReceiverForDelivery, "kind" | "url">): string =>
  receiver.kind === "alertmanager" ? `${receiver.url.replace(/\/+$/, "")}/api/v2/alerts` : receiver.url

const requestOf = (receiver: ReceiverForDelivery, body: string, eventId: string): NotificationRequest => ({
  url: targetUrl(receiver),
  headers: {
    "content-type": "application/json",
    [EVENT_ID_HEADER]: eventId,
    ...(receiver.secret === null ? {} : { [SIGNATURE_HEADER]: signature(receiver.secret, body) })
  },
  body
})

/**
 * The request notifying `receiver` of `event` (docs/api.md section 18): the body of the receiver's kind, JSON
 * content type, `X-Dashstream-Event-Id: eventId` and, when the receiver has a secret, `X-Dashstream-Signature`.
 * Pure: the same arguments give the same bytes.
 */
export const notificationRequest = (
  receiver: ReceiverForDelivery,
  event: NotifiedEvent,
  accountName: string,
  eventId: string
): NotificationRequest => requestOf(receiver, bodies[receiver.kind](event, accountName), eventId)

/** The request of a claimed delivery: its id is the `X-Dashstream-Event-Id`. */
export const deliveryRequest = (delivery: ClaimedDelivery): NotificationRequest =>
  notificationRequest(delivery.receiver, delivery.event, delivery.accountName, delivery.id)

/** The made-up rule name of a test notification. */
export const TEST_RULE_NAME = "Dashstream test notification"

/**
 * The test notification of `POST .../receivers/<id>/test` (docs/api.md section 18): a `firing` body of the receiver's
 * kind for a made-up rule named {@link TEST_RULE_NAME} on the stream `test`, value 1, at `now` (microseconds), with
 * the given event id (a fresh UUID). For `alertmanager` the alert also carries `endsAt` one minute later, so the
 * test alert goes away by itself.
 */
export const testNotification = (
  receiver: ReceiverForDelivery,
  accountName: string,
  now: Micros,
  eventId: string
): NotificationRequest => {
  const event: NotifiedEvent = {
    id: eventId as NotifiedEvent["id"],
    accountId: receiver.accountId,
    ruleId: "test" as NotifiedEvent["ruleId"],
    ruleName: TEST_RULE_NAME,
    streamName: "test",
    condition: { above: 0 },
    for: 0,
    from: "ok",
    to: "firing",
    value: 1,
    ts: now,
    at: now,
    startsAt: now
  }
  if (receiver.kind !== "alertmanager") return notificationRequest(receiver, event, accountName, eventId)
  const [alert] = JSON.parse(alertmanagerBody(event, accountName)) as [object]
  const endsAt = iso((now + 60 * MICROS_PER_SECOND) as Micros)
  return requestOf(receiver, JSON.stringify([{ ...alert, endsAt }]), eventId)
}

/** What one attempt came to: the receiver's HTTP status, or why there was none (refused, timed out, bad address). */
export type AttemptResult =
  { readonly _tag: "Answered"; readonly status: number } | { readonly _tag: "Unreachable"; readonly reason: string }

/**
 * The delay before retry number `attempts` (the count of attempts made, 1 or more), in microseconds: 1 second
 * doubling (1, 2, 4, ...) up to 5 minutes, then with a jitter of at most 10% (`random` in [0, 1) picks it, so the
 * delay is in [0.9, 1.0] of the base). Pure.
 *
 * The attempt count is stored with the delivery, so this is a function of it rather than a running effect
 * `Schedule`: a restart goes on where the previous process stopped.
 */
export const retryDelay = (attempts: number, random: number): Micros => {
  const base = Math.min(MAX_RETRY_DELAY, FIRST_RETRY_DELAY * 2 ** Math.min(Math.max(attempts - 1, 0), 30))
  return Math.round(base * (1 - 0.1 * random)) as Micros
}

/**
 * The outcome to record of one attempt of a delivery whose transition was made at `madeAt`, attempted at `now`
 * (microseconds), `attempts` counting this one: `delivered` on a 2xx; else `pending` with the next attempt after
 * {@link retryDelay}, or `failed` once that attempt would be later than 24 hours after `madeAt`. Pure.
 */
export const attemptOutcome = (
  result: AttemptResult,
  madeAt: Micros,
  now: Micros,
  attempts: number,
  random: number
): AttemptOutcome => {
  const status = result._tag === "Answered" ? result.status : null
  if (status !== null && status >= 200 && status < 300) return { state: "delivered", status, nextAttemptAt: null }
  const next = (now + retryDelay(attempts, random)) as Micros
  return next > madeAt + DELIVERY_GIVE_UP_AFTER
    ? { state: "failed", status, nextAttemptAt: null }
    : { state: "pending", status, nextAttemptAt: next }
}
