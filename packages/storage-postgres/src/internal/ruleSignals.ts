import type { AlertRuleId, AlertStore, FiringRule, StreamId } from "@dashstream/core"
import { Effect } from "effect"
import type pg from "pg"
import { toStorageFailure } from "./errors.js"

/**
 * The rule-signal reads of the `AlertStore` port (core's `RuleSignal.ts`; migration 0012 writes the signals with
 * triggers): the signals above a floor with the highest `seq` (one statement, one snapshot), and the firing rules of
 * a page's streams. `bigint` columns come back as text and are read as numbers (ids and sequence numbers stay far
 * below 2^53).
 */
export const ruleSignalReads = (pool: pg.Pool): Pick<AlertStore["Type"], "ruleSignals" | "firingRules"> => ({
  ruleSignals: (after) =>
    Effect.tryPromise({
      try: async () => {
        const { rows } = await pool.query<{ head: string; signals: Array<[string, string]> | null }>(
          `SELECT (SELECT coalesce(max(seq), 0) FROM alert_rule_signals) AS head,
            (SELECT json_agg(json_build_array(stream_id::text, seq::text) ORDER BY seq)
              FROM alert_rule_signals WHERE seq > $1) AS signals`,
          [after]
        )
        const row = rows[0]!
        return {
          head: Number(row.head),
          signals: (row.signals ?? []).map(([stream, seq]) => ({
            stream: Number(stream) as StreamId,
            seq: Number(seq)
          }))
        }
      },
      catch: toStorageFailure
    }),
  firingRules: (streams) =>
    streams.length === 0
      ? Effect.succeed([])
      : Effect.tryPromise({
          try: async () => {
            const { rows } = await pool.query<{ stream_id: string; id: string; name: string }>(
              `SELECT stream_id, id, name FROM alert_rules WHERE stream_id = ANY($1::bigint[]) AND state = 'firing'
                ORDER BY stream_id, created_at, id`,
              [streams]
            )
            return rows.map((row): FiringRule => ({
              streamId: Number(row.stream_id) as StreamId,
              ruleId: row.id as AlertRuleId,
              name: row.name
            }))
          },
          catch: toStorageFailure
        })
})
