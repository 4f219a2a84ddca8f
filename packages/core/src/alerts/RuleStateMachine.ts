import { MICROS_PER_SECOND, type Micros } from "../Time.js"
import type { AlertState, Condition } from "./AlertRule.js"

/**
 * How an alert rule moves between its states (docs/api.md section 18, "Evaluation"), as one pure function over
 * (evaluation state, input): no clock, no storage, no I/O. The storage keeps a rule's {@link RuleEvaluation}; the
 * engine feeds every stored entry of the rule's stream, every clear, and a clock tick at each rule's
 * {@link nextDeadline}, and stores what {@link step} returns with its transitions in one transaction.
 *
 * Every time here is integer microseconds since the epoch (`Micros`): an entry's `ts` as stored (the API shows it in
 * seconds), and `at`, the wall-clock instant the input is evaluated at (a push's receive time, or the tick's).
 * `for` and `noDataFor` are whole seconds, as the API gives them.
 *
 * The rules:
 * - An input is evaluated at its instant `at`: first the deadlines that have passed by `at` take effect (as a tick
 *   at `at`), then the input itself. So the outcome does not depend on whether a timer fired on time.
 * - `above`/`below`: an entry meeting the condition (a number strictly above / below) moves `ok` to `pending` and
 *   remembers its `ts` as the start of the run (`since`); the rule fires once `for` seconds have passed since then,
 *   with every entry since meeting it: at the deadline `since + for` (a tick at or after it), or at a meeting entry
 *   whose `ts` or `at` reaches it (at once when `for` is 0: `ok` to `firing`). An entry not meeting it returns the
 *   rule to `ok`: silently from `pending`, resolved from `firing`. A clear changes nothing.
 * - `noDataFor`: the condition holds at `at` once `at >= newest + noDataFor`, where `newest` is the highest `ts` of
 *   the entries seen, or the rule's creation, or the last clear (whichever is latest; an empty stream counts from
 *   the creation or the clear). It starts holding at `newest + noDataFor` (pending, or firing when `for` is 0) and
 *   fires `for` seconds later; an entry or a clear after which it no longer holds at `at` returns the rule to `ok`.
 *   (An entry with a server `ts` always does; a client `ts` older than `noDataFor` does not.)
 * - Only changes into and out of `firing` are transitions (sent to receivers); `ok`/`pending` changes are silent.
 *   A transition made while the rule is silenced (`at < silencedUntil`) is marked `silenced`: recorded, never sent.
 */

/**
 * The part of a stored rule that evaluation changes (docs/api.md section 18: `state`, `stateSince`, `value`), plus
 * what the machine needs to go on after a restart:
 * - `stateSince`: when the rule entered `state` (the `at` of that change), microseconds.
 * - `value`: the number of the last entry evaluated (`null` for none, or a non-numeric stream).
 * - `since`: while `pending` or `firing` under `above`/`below`, the `ts` of the first meeting entry of the run
 *   (microseconds); `null` otherwise.
 * - `newest`: for `noDataFor`, the highest entry `ts` seen, or the creation or last clear if later (microseconds);
 *   kept for every rule.
 * - `cursor`: the highest entry `ts` evaluated (microseconds), `null` before the first. After a crash, the engine
 *   evaluates the stream's entries above it (see `AlertStore`).
 */
export interface RuleEvaluation {
  readonly state: AlertState
  readonly stateSince: Micros
  readonly value: number | null
  readonly since: Micros | null
  readonly newest: Micros
  readonly cursor: Micros | null
}

/** What the machine needs of a rule: its condition, `for` (whole seconds) and its silence (microseconds or `null`). */
export interface RuleTerms {
  readonly condition: Condition
  readonly for: number
  readonly silencedUntil: Micros | null
}

/**
 * One input of the machine, at the instant `at` (microseconds):
 * - `Entry`: an entry stored in the stream, its `ts` (microseconds) and its `value` (`number` of a numeric point after
 *   deltas; `null` for other types).
 * - `Cleared`: the stream was cleared; `clearedAt` is the clear's own `ts` (microseconds).
 * - `Tick`: the clock reached `at`.
 */
export type RuleInput =
  | { readonly _tag: "Entry"; readonly at: Micros; readonly ts: Micros; readonly value: number | null }
  | { readonly _tag: "Cleared"; readonly at: Micros; readonly clearedAt: Micros }
  | { readonly _tag: "Tick"; readonly at: Micros }

/**
 * A change into or out of `firing` (docs/api.md section 18's transition event, without ids): `from` and `to`, the
 * instant `at` it was made (microseconds), the causing entry's `value` and `ts` (microseconds), both `null` for a
 * deadline or a clear, `startsAt` the instant the firing began (`at` itself when `to` is `firing`; a resolution
 * repeats its firing's), and `silenced` when made while the rule was silenced (recorded, never sent).
 */
export interface Transition {
  readonly from: AlertState
  readonly to: AlertState
  readonly at: Micros
  readonly value: number | null
  readonly ts: Micros | null
  readonly startsAt: Micros
  readonly silenced: boolean
}

/** The outcome of one {@link step}: the new evaluation state and the transitions made, in order (0, 1 or 2). */
export interface Step {
  readonly evaluation: RuleEvaluation
  readonly transitions: ReadonlyArray<Transition>
}

/**
 * The evaluation state of a new rule created at `createdAt` (microseconds) on a stream whose newest entry has `ts`
 * `newestTs` (`null` for an empty stream): `ok` since its creation, `newest` that entry's `ts` or the creation.
 */
export const initialEvaluation = (createdAt: Micros, newestTs: Micros | null): RuleEvaluation => ({
  state: "ok",
  stateSince: createdAt,
  value: null,
  since: null,
  newest: newestTs ?? createdAt,
  cursor: newestTs
})

const seconds = (n: number): number => n * MICROS_PER_SECOND

/** The instant (microseconds) `noDataFor` starts holding for a rule whose newest data is at `newest`. */
const silentFrom = (newest: Micros, noDataFor: number): Micros => (newest + seconds(noDataFor)) as Micros

/**
 * The next instant (microseconds) at which the rule changes state without an entry, or `null` when only an entry
 * can change it: for `pending`, when it fires (`since + for`, or for `noDataFor` `newest + noDataFor + for`); for
 * `noDataFor` in `ok`, when it starts holding (`newest + noDataFor`). A tick at or after it changes the state; any
 * earlier tick changes nothing.
 */
export const nextDeadline = (terms: RuleTerms, evaluation: RuleEvaluation): Micros | null => {
  const condition = terms.condition
  if ("noDataFor" in condition) {
    const holdsFrom = silentFrom(evaluation.newest, condition.noDataFor)
    if (evaluation.state === "ok") return holdsFrom
    if (evaluation.state === "pending") return (holdsFrom + seconds(terms.for)) as Micros
    return null
  }
  return evaluation.state === "pending" && evaluation.since !== null
    ? ((evaluation.since + seconds(terms.for)) as Micros)
    : null
}

const meets = (condition: Condition, value: number | null): boolean =>
  value !== null && ("above" in condition ? value > condition.above : "below" in condition && value < condition.below)

// A mutable copy the step works on; frozen into the result.
type Draft = { -readonly [K in keyof RuleEvaluation]: RuleEvaluation[K] }

const move = (
  terms: RuleTerms,
  draft: Draft,
  transitions: Array<Transition>,
  to: AlertState,
  at: Micros,
  cause: { readonly value: number | null; readonly ts: Micros | null }
): void => {
  const from = draft.state
  if (from === to) return
  if (from === "firing" || to === "firing") {
    transitions.push({
      from,
      to,
      at,
      value: cause.value,
      ts: cause.ts,
      startsAt: to === "firing" ? at : draft.stateSince,
      silenced: terms.silencedUntil !== null && at < terms.silencedUntil
    })
  }
  draft.state = to
  draft.stateSince = at
}

const noCause = { value: null, ts: null } as const

// The deadline that has passed by `at`, if any (see `nextDeadline`). One is enough: a rule that starts holding
// `noDataFor` goes straight to `firing` when its `for` has passed too, so no second deadline is ever due.
const tick = (terms: RuleTerms, draft: Draft, transitions: Array<Transition>, at: Micros): void => {
  const deadline = nextDeadline(terms, draft)
  if (deadline === null || at < deadline) return
  const firesAt = draft.state === "ok" ? deadline + seconds(terms.for) : deadline
  move(terms, draft, transitions, at >= firesAt ? "firing" : "pending", at, noCause)
}

/**
 * Applies one input to a rule's evaluation state (see the module comment for the rules). Pure: the same terms,
 * state and input give the same result. Inputs must come with non-decreasing `at`.
 */
export const step = (terms: RuleTerms, evaluation: RuleEvaluation, input: RuleInput): Step => {
  const draft: Draft = { ...evaluation }
  const transitions: Array<Transition> = []
  const at = input.at
  tick(terms, draft, transitions, at)
  const condition = terms.condition
  if (input._tag === "Entry") {
    draft.value = input.value
    if (draft.cursor === null || input.ts > draft.cursor) draft.cursor = input.ts
    if (input.ts > draft.newest) draft.newest = input.ts
    const cause = { value: input.value, ts: input.ts }
    if ("noDataFor" in condition) {
      if (at < silentFrom(draft.newest, condition.noDataFor)) move(terms, draft, transitions, "ok", at, cause)
    } else if (!meets(condition, input.value)) {
      draft.since = null
      move(terms, draft, transitions, "ok", at, cause)
    } else if (draft.state !== "firing") {
      // The first meeting entry of a run starts it; the rule fires once `for` has passed since (by the clock or
      // by this entry's own ts), straight from `ok` when that is at once.
      if (draft.state === "ok") draft.since = input.ts
      const due = draft.since! + seconds(terms.for)
      move(terms, draft, transitions, at >= due || input.ts >= due ? "firing" : "pending", at, cause)
    }
  } else if (input._tag === "Cleared" && "noDataFor" in condition) {
    if (input.clearedAt > draft.newest) draft.newest = input.clearedAt
    if (at < silentFrom(draft.newest, condition.noDataFor)) move(terms, draft, transitions, "ok", at, noCause)
  }
  return { evaluation: draft, transitions }
}

/** True when `transition` is one receivers are sent: it was not made while the rule was silenced. */
export const isSent = (transition: Transition): boolean => !transition.silenced
