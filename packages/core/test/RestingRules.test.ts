import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import type { Condition } from "../src/alerts/AlertRule.js"
import { atRest, RestingRules, settle } from "../src/alerts/RestingRules.js"
import {
  initialEvaluation,
  type RuleEvaluation,
  type RuleInput,
  type RuleTerms,
  step,
  type Transition
} from "../src/alerts/RuleStateMachine.js"
import type { Micros } from "../src/Time.js"

/**
 * The group of rules at rest (docs/api.md section 18, "Evaluation"): evaluating a stream's entries through the group
 * (the rules it meets stepped one by one, the others given the shared tail) gives every rule the evaluation and the
 * transitions that stepping each rule through each entry gives.
 */

const S = 1_000_000
const T0 = 1_700_000_000 * S
const us = (seconds: number) => (T0 + seconds * S) as Micros

interface Entry {
  readonly ts: Micros
  readonly fresh: boolean
  readonly value: number | null
}

// The entries a rule evaluates, as the engine gives them: those above its cursor, or not fresh.
const inputsOf = (evaluation: RuleEvaluation, entries: ReadonlyArray<Entry>, at: Micros): Array<RuleInput> =>
  entries
    .filter((e) => !(evaluation.cursor !== null && e.ts <= evaluation.cursor && e.fresh))
    .map((e) => ({ _tag: "Entry", at, ts: e.ts, value: e.value }))

const run = (terms: RuleTerms, evaluation: RuleEvaluation, inputs: ReadonlyArray<RuleInput>) => {
  const transitions: Array<Transition> = []
  for (const input of inputs) {
    const out = step(terms, evaluation, input)
    evaluation = out.evaluation
    transitions.push(...out.transitions)
  }
  return { evaluation, transitions }
}

const condition: fc.Arbitrary<Condition> = fc.oneof(
  fc.integer({ min: -3, max: 3 }).map((above) => ({ above })),
  fc.integer({ min: -3, max: 3 }).map((below) => ({ below })),
  fc.constantFrom(10, 30).map((noDataFor) => ({ noDataFor }))
)
const rule = fc.record({
  condition,
  for: fc.constantFrom(0, 0, 2),
  silencedUntil: fc.constant(null),
  cursor: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null })
})
const entry = fc.record({
  ts: fc.integer({ min: 0, max: 40 }).map(us),
  fresh: fc.boolean(),
  // Mostly values that meet no threshold, so that rules rest for a while.
  value: fc.oneof(
    { weight: 6, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.integer({ min: -5, max: 5 }) },
    { weight: 1, arbitrary: fc.constant(null) }
  )
})

describe("rules at rest", () => {
  it("only above/below rules that are ok with no run are at rest", () => {
    const ok = initialEvaluation(us(0), null)
    assert.isTrue(atRest({ condition: { above: 1 }, for: 0, silencedUntil: null }, ok))
    assert.isFalse(atRest({ condition: { noDataFor: 10 }, for: 0, silencedUntil: null }, ok))
    assert.isFalse(atRest({ condition: { below: 1 }, for: 0, silencedUntil: null }, { ...ok, state: "pending" }))
  })

  it("an entry is checked against the sorted thresholds: only the rules it meets are found", () => {
    const group = new RestingRules<string>()
    const ok = initialEvaluation(us(0), us(0))
    const terms = (condition: Condition): RuleTerms => ({ condition, for: 0, silencedUntil: null })
    for (const [key, c] of [
      ["a5", { above: 5 }],
      ["a1", { above: 1 }],
      ["a9", { above: 9 }],
      ["b0", { below: 0 }],
      ["b-4", { below: -4 }]
    ] as const) {
      group.join(key, terms(c), ok)
    }
    const batch = (value: number) => group.batch([{ ts: us(1), fresh: true }], [value])!
    assert.deepStrictEqual(group.metBy(batch(1)), [])
    assert.deepStrictEqual(group.metBy(batch(6)), ["a1", "a5"])
    assert.deepStrictEqual(group.metBy(batch(-5)), ["b0", "b-4"])
    assert.strictEqual(group.batch([{ ts: us(0), fresh: true }], [100]), undefined)
  })

  it.prop(
    "evaluating through the group gives every rule what stepping it through every entry gives",
    [fc.array(rule, { minLength: 1, maxLength: 8 }), fc.array(fc.array(entry, { maxLength: 4 }), { maxLength: 12 })],
    ([specs, batches]) => {
      const terms: Array<RuleTerms> = specs.map(({ cursor: _, ...t }) => t)
      const start = specs.map((s) => initialEvaluation(us(0), s.cursor === null ? null : us(s.cursor)))
      const reference = [...start]
      const referenceTransitions: Array<Array<Transition>> = specs.map(() => [])
      // The engine's view: each rule's evaluation (a member's without its group's tail), and the group.
      const evaluations = [...start]
      const transitions: Array<Array<Transition>> = specs.map(() => [])
      const group = new RestingRules<number>()
      const current = (i: number) =>
        group.has(i) && group.tail !== undefined ? settle(evaluations[i]!, group.tail) : evaluations[i]!
      const rest = (ids: ReadonlyArray<number>) => {
        for (const i of ids) {
          if (group.size > 0 && group.tail !== undefined && group.cursor === evaluations[i]!.cursor) {
            for (const key of group.keys()) evaluations[key] = settle(evaluations[key]!, group.tail)
            group.clearTail()
          }
          if (group.canJoin(terms[i]!, evaluations[i]!)) group.join(i, terms[i]!, evaluations[i]!)
        }
      }
      rest(specs.map((_, i) => i))
      batches.forEach((entries, b) => {
        const at = us(100 + b)
        for (let i = 0; i < specs.length; i++) {
          const out = run(terms[i]!, reference[i]!, inputsOf(reference[i]!, entries, at))
          reference[i] = out.evaluation
          referenceTransitions[i]!.push(...out.transitions)
        }
        const ids = specs.map((_, i) => i).filter((i) => !group.has(i))
        const batch =
          group.size > 0
            ? group.batch(
                entries,
                entries.map((e) => e.value)
              )
            : undefined
        if (batch !== undefined) {
          assert.strictEqual(group.meetsAny(batch), group.metBy(batch).length > 0)
          for (const i of group.metBy(batch)) {
            evaluations[i] = current(i)
            group.leave(i)
            ids.push(i)
          }
          group.advance(batch)
        }
        for (const i of ids) {
          const out = run(terms[i]!, evaluations[i]!, inputsOf(evaluations[i]!, entries, at))
          evaluations[i] = out.evaluation
          transitions[i]!.push(...out.transitions)
        }
        rest(ids)
        for (let i = 0; i < specs.length; i++) {
          assert.deepStrictEqual(current(i), reference[i], `rule ${i} after batch ${b}`)
          assert.deepStrictEqual(transitions[i], referenceTransitions[i], `rule ${i} after batch ${b}`)
        }
      })
    },
    { fastCheck: { numRuns: 2000 } }
  )
})
