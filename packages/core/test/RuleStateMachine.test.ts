import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { AlertState, Condition } from "../src/alerts/AlertRule.js"
import {
  initialEvaluation,
  isSent,
  nextDeadline,
  type RuleEvaluation,
  type RuleInput,
  type RuleTerms,
  step,
  type Transition
} from "../src/alerts/RuleStateMachine.js"
import type { Micros } from "../src/Time.js"

/**
 * The alert rule state machine (docs/api.md section 18, "Evaluation"): examples from the API reference, and
 * properties over any sequence of entries, clears and clock ticks against a brute-force replay written
 * independently: each state recomputed from the whole history, with no state carried from input to input.
 */

const S = 1_000_000
/** 2023-11-14T22:13:20Z in microseconds: the rule's creation in every test. */
const T0 = 1_700_000_000 * S
const us = (seconds: number) => (T0 + seconds * S) as Micros

const entry = (at: number, value: number | null, ts = at): RuleInput => ({
  _tag: "Entry",
  at: us(at),
  ts: us(ts),
  value
})
const tickAt = (at: number): RuleInput => ({ _tag: "Tick", at: us(at) })

/** Runs the machine from a new rule over `inputs`; returns every transition and the final evaluation. */
const run = (terms: RuleTerms, inputs: ReadonlyArray<RuleInput>) => {
  let evaluation = initialEvaluation(T0 as Micros, null)
  const transitions: Array<Transition> = []
  for (const input of inputs) {
    const out = step(terms, evaluation, input)
    evaluation = out.evaluation
    transitions.push(...out.transitions)
  }
  return { evaluation, transitions }
}

const brief = (t: Transition) => `${t.from}->${t.to}@${(t.at - T0) / S}`

describe("rule state machine: the API reference's examples", () => {
  const above = (n: number, f = 0): RuleTerms => ({ condition: { above: n }, for: f, silencedUntil: null })

  it("for 0: a meeting entry fires at once (ok to firing), the next one not meeting resolves it", () => {
    const { transitions, evaluation } = run(above(10), [entry(1, 11), entry(2, 12), entry(3, 10)])
    assert.deepStrictEqual(transitions.map(brief), ["ok->firing@1", "firing->ok@3"])
    assert.strictEqual(transitions[0]!.value, 11)
    assert.strictEqual(transitions[0]!.ts, us(1))
    assert.strictEqual(transitions[1]!.startsAt, us(1))
    assert.strictEqual(evaluation.state, "ok")
    assert.strictEqual(evaluation.value, 10)
  })

  it("three entries of one push may cause two transitions", () => {
    const { transitions } = run(above(10), [entry(5, 11, 1), entry(5, 9, 2), entry(5, 12, 3)])
    assert.deepStrictEqual(transitions.map(brief), ["ok->firing@5", "firing->ok@5", "ok->firing@5"])
  })

  it("for 30: pending first, firing at the deadline without an entry; pending to ok is silent", () => {
    const terms = above(10, 30)
    const silent = run(terms, [entry(0, 11), entry(20, 12), entry(25, 3)])
    assert.deepStrictEqual(silent.transitions, [])
    assert.strictEqual(silent.evaluation.state, "ok")

    const fired = run(terms, [entry(0, 11), entry(20, 12), tickAt(29), tickAt(30)])
    assert.deepStrictEqual(fired.transitions.map(brief), ["pending->firing@30"])
    assert.strictEqual(fired.transitions[0]!.value, null)
    assert.strictEqual(fired.transitions[0]!.ts, null)
    assert.strictEqual(nextDeadline(terms, run(terms, [entry(0, 11)]).evaluation), us(30))
  })

  it("for is measured from the first meeting entry's ts: a meeting entry whose ts reaches it fires", () => {
    const { transitions } = run(above(10, 30), [entry(0, 11), entry(1, 12, 31)])
    assert.deepStrictEqual(transitions.map(brief), ["pending->firing@1"])
    assert.strictEqual(transitions[0]!.ts, us(31))
  })

  it("below is met by a value strictly less", () => {
    const terms: RuleTerms = { condition: { below: 0 }, for: 0, silencedUntil: null }
    assert.deepStrictEqual(run(terms, [entry(1, 0), entry(2, -0.5)]).transitions.map(brief), ["ok->firing@2"])
  })

  it("noDataFor: fires once the newest entry is that old (an empty stream from creation), resolves at the next", () => {
    const terms: RuleTerms = { condition: { noDataFor: 60 }, for: 0, silencedUntil: null }
    assert.strictEqual(nextDeadline(terms, initialEvaluation(T0 as Micros, null)), us(60))
    const { transitions } = run(terms, [tickAt(59), tickAt(60), entry(100, null), tickAt(159), tickAt(160)])
    assert.deepStrictEqual(transitions.map(brief), ["ok->firing@60", "firing->ok@100", "ok->firing@160"])
    const cleared = run(terms, [tickAt(60), { _tag: "Cleared", at: us(70), clearedAt: us(70) }, tickAt(129)])
    assert.deepStrictEqual(cleared.transitions.map(brief), ["ok->firing@60", "firing->ok@70"])
  })

  it("a silenced rule records its transitions as silenced; they are never sent, also not once the silence ends", () => {
    const terms: RuleTerms = { condition: { above: 10 }, for: 0, silencedUntil: us(3) }
    const { transitions } = run(terms, [entry(1, 11), entry(2, 1), entry(3, 11)])
    assert.deepStrictEqual(
      transitions.map((t) => [brief(t), t.silenced]),
      [
        ["ok->firing@1", true],
        ["firing->ok@2", true],
        ["ok->firing@3", false]
      ]
    )
  })
})

// ---------------------------------------------------------------------------------------------------------------
// The brute-force replay

/** One instant of the history: the tick every input starts with, then the input's own part. */
type Moment =
  | { readonly kind: "tick"; readonly at: number }
  | { readonly kind: "entry"; readonly at: number; readonly ts: number; readonly value: number | null }
  | { readonly kind: "clear"; readonly at: number; readonly clearedAt: number }

const momentsOf = (inputs: ReadonlyArray<RuleInput>): Array<Moment> =>
  inputs.flatMap((input): Array<Moment> => {
    const tick: Moment = { kind: "tick", at: input.at }
    if (input._tag === "Entry") return [tick, { kind: "entry", at: input.at, ts: input.ts, value: input.value }]
    if (input._tag === "Cleared") return [tick, { kind: "clear", at: input.at, clearedAt: input.clearedAt }]
    return [tick]
  })

/** The state after moment `j`, computed from moments 0..j alone. */
const stateAt = (terms: RuleTerms, moments: ReadonlyArray<Moment>, j: number): AlertState => {
  const condition = terms.condition
  const forMicros = terms.for * S
  if ("noDataFor" in condition) {
    const newestAt = (i: number) => {
      let newest = T0
      for (let k = 0; k <= i; k++) {
        const m = moments[k]!
        if (m.kind === "entry") newest = Math.max(newest, m.ts)
        if (m.kind === "clear") newest = Math.max(newest, m.clearedAt)
      }
      return newest
    }
    const holds = (i: number) => moments[i]!.at >= newestAt(i) + condition.noDataFor * S
    if (!holds(j)) return "ok"
    let start = j
    while (start > 0 && holds(start - 1)) start--
    for (let i = start; i <= j; i++) {
      if (moments[i]!.at >= newestAt(i) + condition.noDataFor * S + forMicros) return "firing"
    }
    return "pending"
  }
  const meets = (value: number | null) =>
    value !== null && ("above" in condition ? value > condition.above : value < (condition as { below: number }).below)
  const entries: Array<number> = []
  for (let k = 0; k <= j; k++) if (moments[k]!.kind === "entry") entries.push(k)
  if (entries.length === 0) return "ok"
  const last = moments[entries[entries.length - 1]!] as Extract<Moment, { kind: "entry" }>
  if (!meets(last.value)) return "ok"
  let r = entries.length - 1
  while (r > 0 && meets((moments[entries[r - 1]!] as Extract<Moment, { kind: "entry" }>).value)) r--
  const first = moments[entries[r]!] as Extract<Moment, { kind: "entry" }>
  for (let i = entries[r]!; i <= j; i++) {
    const m = moments[i]!
    if (Math.max(m.at, m.kind === "entry" ? m.ts : -Infinity) >= first.ts + forMicros) return "firing"
  }
  return "pending"
}

/** Every transition of the history, from the states the replay recomputes at each moment. */
const replay = (terms: RuleTerms, inputs: ReadonlyArray<RuleInput>) => {
  const moments = momentsOf(inputs)
  const transitions: Array<Transition> = []
  let previous: AlertState = "ok"
  let stateSince = T0
  let startsAt = T0
  for (let j = 0; j < moments.length; j++) {
    const m = moments[j]!
    const state = stateAt(terms, moments, j)
    if (state !== previous) stateSince = m.at
    if ((state === "firing") !== (previous === "firing")) {
      if (state === "firing") startsAt = m.at
      transitions.push({
        from: previous,
        to: state,
        at: m.at as Micros,
        value: m.kind === "entry" ? m.value : null,
        ts: m.kind === "entry" ? (m.ts as Micros) : null,
        startsAt: startsAt as Micros,
        silenced: terms.silencedUntil !== null && m.at < terms.silencedUntil
      })
    }
    previous = state
  }
  return { state: previous, stateSince, transitions }
}

// ---------------------------------------------------------------------------------------------------------------
// Arbitraries: times in whole seconds mostly, so that inputs land exactly on deadlines often.

const conditionArb: fc.Arbitrary<Condition> = fc.oneof(
  fc.integer({ min: -3, max: 3 }).map((above) => ({ above })),
  fc.integer({ min: -3, max: 3 }).map((below) => ({ below })),
  fc.integer({ min: 10, max: 40 }).map((noDataFor) => ({ noDataFor }))
)

const inputArb = fc.record({
  kind: fc.constantFrom("entry", "entry", "entry", "tick", "tick", "clear"),
  dt: fc.oneof(
    fc.integer({ min: 0, max: 25 }).map((s) => s * S),
    fc.integer({ min: 0, max: 3 * S })
  ),
  // An entry's ts relative to its push: a server ts (0) or a client ts in the past or a little ahead.
  offset: fc.oneof(
    fc.constant(0),
    fc.integer({ min: -50, max: 5 }).map((s) => s * S)
  ),
  value: fc.integer({ min: -5, max: 5 })
})

/** A history of inputs with non-decreasing `at` from the rule's creation. */
const historyArb = fc.array(inputArb, { maxLength: 40 }).map((raw) => {
  let at = T0
  let maxTs = T0
  return raw.map((r): RuleInput => {
    at += r.dt
    if (r.kind === "tick") return { _tag: "Tick", at: at as Micros }
    if (r.kind === "clear") {
      const clearedAt = Math.max(at, maxTs + 1)
      maxTs = clearedAt
      return { _tag: "Cleared", at: at as Micros, clearedAt: clearedAt as Micros }
    }
    const ts = at + r.offset
    maxTs = Math.max(maxTs, ts)
    return { _tag: "Entry", at: at as Micros, ts: ts as Micros, value: r.value }
  })
})

const termsArb = (silence: fc.Arbitrary<number | null>): fc.Arbitrary<RuleTerms> =>
  fc
    .record({ condition: conditionArb, for: fc.integer({ min: 0, max: 40 }), silencedUntil: silence })
    .map((t) => ({ ...t, silencedUntil: t.silencedUntil === null ? null : (t.silencedUntil as Micros) }))

const anySilence = fc.oneof(
  fc.constant(null),
  fc.integer({ min: 0, max: 300 }).map((s) => T0 + s * S)
)

describe("rule state machine: properties", () => {
  it("for any history of entries, clears and ticks, the transitions and the state equal the brute-force replay", () => {
    fc.assert(
      fc.property(termsArb(anySilence), historyArb, (terms, inputs) => {
        const machine = run(terms, inputs)
        const naive = replay(terms, inputs)
        assert.deepStrictEqual(machine.transitions, naive.transitions)
        assert.strictEqual(machine.evaluation.state, naive.state)
        assert.strictEqual(machine.evaluation.stateSince, naive.stateSince)
      }),
      { numRuns: 2000 }
    )
  })

  it("no transition is emitted twice: they alternate into and out of firing, each from the state the last left", () => {
    fc.assert(
      fc.property(termsArb(anySilence), historyArb, (terms, inputs) => {
        let state: AlertState = "ok"
        let evaluation: RuleEvaluation = initialEvaluation(T0 as Micros, null)
        for (const input of inputs) {
          const out = step(terms, evaluation, input)
          for (const t of out.transitions) {
            assert.strictEqual(t.from === "firing", state === "firing")
            assert.notStrictEqual(t.from === "firing", t.to === "firing")
            state = t.to
          }
          evaluation = out.evaluation
          // A state change that is not a transition never touches firing.
          if (out.transitions.length === 0) assert.strictEqual(evaluation.state === "firing", state === "firing")
          state = evaluation.state
        }
      }),
      { numRuns: 1000 }
    )
  })

  it("a rule silenced throughout sends none of its transitions", () => {
    fc.assert(
      fc.property(termsArb(fc.constant(Number.MAX_SAFE_INTEGER)), historyArb, (terms, inputs) => {
        assert.isTrue(run(terms, inputs).transitions.every((t) => t.silenced && !isSent(t)))
      }),
      { numRuns: 500 }
    )
  })

  it("the deadline is exact: a tick just before it changes nothing, a tick at it changes the state", () => {
    fc.assert(
      fc.property(termsArb(anySilence), historyArb, (terms, inputs) => {
        let evaluation = initialEvaluation(T0 as Micros, null)
        let at = T0
        for (const input of [...inputs, null]) {
          const deadline = nextDeadline(terms, evaluation)
          if (deadline !== null && deadline > at) {
            const before = step(terms, evaluation, { _tag: "Tick", at: (deadline - 1) as Micros })
            assert.strictEqual(before.evaluation.state, evaluation.state)
            assert.deepStrictEqual(before.transitions, [])
            const on = step(terms, evaluation, { _tag: "Tick", at: deadline })
            assert.notStrictEqual(on.evaluation.state, evaluation.state)
          }
          if (input === null) break
          evaluation = step(terms, evaluation, input).evaluation
          at = input.at
        }
      }),
      { numRuns: 1000 }
    )
  })
})
