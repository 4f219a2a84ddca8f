import { isDeepStrictEqual } from "node:util"
import type { AlertRule } from "./AlertStore.js"

export type { FiringRule, RuleSignal, RuleSignals } from "./AlertStore.js"

/**
 * Rule signals (docs/api.md section 18): how every process on one database learns, within a second, that the rules of
 * a stream changed, whoever changed them (the admin API of any `serve` process, the CLI, an engine storing a
 * transition), without reading every rule.
 *
 * The store keeps one signal per stream that has (or had) rules: the stream and a number, `seq`, taken from one
 * sequence that grows with every signalled change, in the transaction of the change. A reader remembers the `seq` it
 * saw of each stream and asks for the signals above a floor (`AlertStore.ruleSignals`); a stream whose `seq` grew has
 * changed rules, and the reader reads that stream's rules again, not every rule (`RuleWatch.ts`).
 *
 * What is signalled, on every backend alike ({@link signalled}): a rule created or deleted (also by its widget's
 * deletion), and a change of its stream, name, condition, `for`, receivers (`receiverIds`, also by a receiver's
 * deletion), silence, or of whether it is `firing`. An evaluation that only moves a rule between `ok` and `pending`,
 * or its cursor, is not: that is every push to a stream with rules, and nothing outside the engine shows it. SQL
 * stores write the signal with triggers on the rules table and on its receivers table, so no code path that changes
 * a rule can forget it.
 */

const firing = (rule: AlertRule): boolean => rule.evaluation.state === "firing"

/**
 * True when changing a rule from `before` to `after` is signalled (see the module comment); `undefined` for a rule
 * that does not exist (before its creation, after its deletion). The SQL stores' triggers state the same rule.
 */
export const signalled = (before: AlertRule | undefined, after: AlertRule | undefined): boolean =>
  before === undefined ||
  after === undefined ||
  before.streamId !== after.streamId ||
  before.name !== after.name ||
  !isDeepStrictEqual(before.condition, after.condition) ||
  before.for !== after.for ||
  !isDeepStrictEqual(before.receiverIds, after.receiverIds) ||
  before.silencedUntil !== after.silencedUntil ||
  firing(before) !== firing(after)
