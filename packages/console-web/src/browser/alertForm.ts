/**
 * Pure rules of the console's alert forms (docs/api.md sections 18.1, 18.2, 18.5), no DOM: a condition as a person
 * reads it, the bodies the rule and receiver forms send, which field a server error's `path` names, and the times a
 * silence preset ends. The server validates; the forms send what was typed.
 */
import type { components } from "./generated/api.js"
import { intervalText } from "./rotationForm.js"

type AlertRuleBody = components["schemas"]["AlertRuleBody"]
type ReceiverBody = components["schemas"]["ReceiverBody"]

/** The kinds of condition a rule has (docs/api.md section 18.1). */
export const conditionKinds = ["above", "below", "noDataFor"] as const

/** One kind of condition: `above` and `below` a number, `noDataFor` whole seconds. */
export type ConditionKind = (typeof conditionKinds)[number]

/** The kinds of receiver (docs/api.md section 18.2). */
export const receiverKinds = ["webhook", "slack", "alertmanager"] as const

/** One kind of receiver. */
export type ReceiverKind = (typeof receiverKinds)[number]

/** Every key of a union of object types (`keyof` of a union gives only the shared ones). */
type KeysOf<T> = T extends unknown ? keyof T : never

/**
 * The kinds of condition and of receiver as the API declares them; the lists here are checked against them, so a kind
 * added to the API and not to the forms fails the type check.
 */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const conditionKindsMatch: Same<ConditionKind, KeysOf<AlertRuleBody["condition"]>> = true
const receiverKindsMatch: Same<ReceiverKind, ReceiverBody["kind"]> = true
void conditionKindsMatch
void receiverKindsMatch

/** How the form names each kind of condition. */
export const conditionKindLabels: Readonly<Record<ConditionKind, string>> = {
  above: "above",
  below: "below",
  noDataFor: "no data for (seconds)"
}

/**
 * A stored rule's condition as a person reads it: `above 90`, `below 5`, `no data for 5 min` (seconds as
 * {@link intervalText} writes them); a condition of no known kind as its JSON.
 */
export const conditionText = (condition: { readonly [key: string]: number }): string => {
  if (condition.above !== undefined) return `above ${condition.above}`
  if (condition.below !== undefined) return `below ${condition.below}`
  if (condition.noDataFor !== undefined) return `no data for ${intervalText(condition.noDataFor)}`
  return JSON.stringify(condition)
}

/** A rule's form as typed: numbers as text, the receivers picked by id. */
export interface RuleDraft {
  readonly name: string
  readonly streamName: string
  readonly kind: ConditionKind
  readonly value: string
  readonly for: string
  readonly receiverIds: ReadonlyArray<string>
}

/** The form of a stored rule (`condition` as the API answers it). */
export const ruleDraftOf = (rule: {
  readonly name: string
  readonly streamName: string
  readonly condition: { readonly [key: string]: number }
  readonly for: number
  readonly receiverIds: ReadonlyArray<string>
}): RuleDraft => {
  const kind = conditionKinds.find((k) => rule.condition[k] !== undefined) ?? "above"
  return {
    name: rule.name,
    streamName: rule.streamName,
    kind,
    value: String(rule.condition[kind] ?? ""),
    for: String(rule.for),
    receiverIds: rule.receiverIds
  }
}

/** A number when `text` reads as one, else the text itself, for the server to refuse with its path. */
const numberOrText = (text: string): number => {
  const trimmed = text.trim()
  const n = trimmed === "" ? Number.NaN : Number(trimmed)
  return (Number.isFinite(n) ? n : text) as number
}

/**
 * The body of `POST` or `PUT .../alert-rules` (docs/api.md section 18.1) for `draft`: `for` left out when empty (the
 * server's default, 0), numbers sent as numbers when they read as ones, else as typed (the server answers 400 with
 * `path` `condition` or `for`; the bounds are the server's to check, in one place).
 */
export const ruleBody = (draft: RuleDraft): AlertRuleBody => {
  const condition = { [draft.kind]: numberOrText(draft.value) } as unknown as AlertRuleBody["condition"]
  return {
    name: draft.name,
    streamName: draft.streamName,
    condition,
    ...(draft.for.trim() === "" ? {} : { for: numberOrText(draft.for) }),
    receiverIds: draft.receiverIds
  }
}

/** A receiver's form as typed; `secret` is what to do with the secret (on a new receiver, "keep" means none). */
export interface ReceiverDraft {
  readonly name: string
  readonly kind: ReceiverBody["kind"]
  readonly url: string
  readonly secret:
    { readonly action: "keep" } | { readonly action: "remove" } | { readonly action: "set"; readonly value: string }
}

/**
 * The body of `POST` or `PUT .../receivers` (docs/api.md section 18.2) for `draft`: `secret` absent to keep the stored
 * one (none on a new receiver), `null` to remove it, the typed text to set it.
 */
export const receiverBody = (draft: ReceiverDraft): ReceiverBody => ({
  name: draft.name,
  kind: draft.kind,
  url: draft.url,
  ...(draft.secret.action === "keep" ? {} : { secret: draft.secret.action === "remove" ? null : draft.secret.value })
})

/**
 * The form field a 400's `path` names in a rule's or receiver's body (docs/api.md sections 18.1, 18.2): the top-level
 * key (`condition.limit` is the condition's, `receiverIds[2]` the receivers'), `undefined` for no path (the form as a
 * whole).
 */
export const fieldOfPath = (path: string | undefined): string | undefined => {
  if (path === undefined || path === "") return undefined
  const field = /^[^.[]+/.exec(path)
  return field === null ? undefined : field[0]
}

/** The silence presets the console offers, each a length in seconds. */
export const silencePresets: ReadonlyArray<{ readonly label: string; readonly seconds: number }> = [
  { label: "1 h", seconds: 3600 },
  { label: "1 day", seconds: 86_400 }
]

/** The end of a silence of `seconds` from `nowMs` (milliseconds since the epoch), as the API takes it: ISO 8601 UTC. */
export const silenceUntil = (nowMs: number, seconds: number): string => new Date(nowMs + seconds * 1000).toISOString()

/**
 * The value of a `datetime-local` field (`2026-12-06T18:00`, the browser's local time) as the API takes it (ISO 8601
 * with a zone), `undefined` when it is empty or no time.
 */
export const localTimeToIso = (local: string): string | undefined => {
  if (local.trim() === "") return undefined
  const ms = new Date(local).getTime()
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined
}
