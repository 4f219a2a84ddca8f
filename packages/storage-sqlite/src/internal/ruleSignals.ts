import type Database from "better-sqlite3"
import type { AlertRuleId, AlertStore, FiringRule, StreamId } from "@dashstream/core"
import { Effect } from "effect"
import { storageFailure } from "./errors.js"

/**
 * The rule-signal reads of the `AlertStore` port (core's `RuleSignal.ts`; migration 0011 writes the signals with
 * triggers): the signals above a floor with the highest `seq`, and the firing rules of a page's streams.
 */
export const ruleSignalReads = (db: Database.Database): Pick<AlertStore["Type"], "ruleSignals" | "firingRules"> => {
  const head = db.prepare<[], number>("SELECT coalesce(max(seq), 0) FROM alert_rule_signals").pluck()
  const above = db.prepare<[number], { stream_id: number; seq: number }>(
    "SELECT stream_id, seq FROM alert_rule_signals WHERE seq > ? ORDER BY seq"
  )
  const firing = db.prepare<[string], { stream_id: number; id: string; name: string }>(
    `SELECT stream_id, id, name FROM alert_rules
      WHERE stream_id IN (SELECT value FROM json_each(?)) AND state = 'firing' ORDER BY stream_id, created_at, id`
  )
  const read = db.transaction((after: number) => ({
    head: head.get() ?? 0,
    signals: above.all(after).map((row) => ({ stream: row.stream_id as StreamId, seq: row.seq }))
  }))
  return {
    ruleSignals: (after) => Effect.try({ try: () => read.deferred(after), catch: storageFailure }),
    firingRules: (streams) =>
      streams.length === 0
        ? Effect.succeed([])
        : Effect.try({
            try: () =>
              firing.all(JSON.stringify(streams)).map((row): FiringRule => ({
                streamId: row.stream_id as StreamId,
                ruleId: row.id as AlertRuleId,
                name: row.name
              })),
            catch: storageFailure
          })
  }
}
