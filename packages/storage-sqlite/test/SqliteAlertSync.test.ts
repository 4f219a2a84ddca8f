import {
  type Account,
  digestAccessKey,
  initialEvaluation,
  micros,
  newAccessKey,
  newAccountId,
  newAlertRuleId,
  StreamName
} from "@dashstream/core"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { acquire } from "../src/internal/database.js"
import { runMigrations } from "../src/Migrations.js"
import * as SqliteAccountStore from "../src/SqliteAccountStore.js"
import * as SqliteAlertStore from "../src/SqliteAlertStore.js"
import { T0, tempFiles } from "./fixtures/writer.js"

// Evaluations without a transition are committed without a WAL sync on the event loop (the port's
// `commitEvaluations`); the connection's own level is back after each.

describe("alert evaluation commits and synchronous", () => {
  const freshFile = tempFiles("alert-sync")

  it.effect("a quiet commit runs with synchronous=NORMAL; the connection is back to FULL after it", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { db, kysely } = yield* acquire({ filename: freshFile() })
        yield* runMigrations({ db, kysely })
        const accounts = SqliteAccountStore.make(db, kysely)
        const t0 = micros(T0)
        const account: Account = { id: newAccountId(), name: "a", createdAt: t0 }
        yield* accounts.createAccount(account, digestAccessKey(newAccessKey()))
        const widget = yield* accounts.createWidget(account.id, StreamName.make("cpu"), "number", t0)
        const alerts = SqliteAlertStore.make(db)
        const id = newAlertRuleId()
        const evaluation = initialEvaluation(t0, null)
        yield* alerts.createRule({
          id,
          accountId: account.id,
          streamId: widget.id,
          name: "hot",
          streamName: widget.streamName,
          condition: { above: 90 },
          for: 0,
          receiverIds: [],
          createdAt: t0,
          silencedUntil: null,
          evaluation
        })
        // The level in force while the commit's statements run, read by a function its UPDATE trigger calls.
        const seen: Array<number> = []
        let level = 2
        db.function("seen_level", () => {
          seen.push(level)
          return null
        })
        db.exec(`CREATE TEMP TRIGGER watch_rules AFTER UPDATE ON alert_rules BEGIN SELECT seen_level(); END`)
        const exec = db.exec.bind(db)
        db.exec = (sql: string) => {
          const m = /^PRAGMA synchronous = (\w+)$/.exec(sql)
          if (m !== null) level = m[1] === "NORMAL" ? 1 : Number(m[1])
          return exec(sql)
        }
        const quiet = { ...evaluation, value: 10, cursor: micros(T0 + 1) }
        const [stored] = yield* alerts.commitEvaluations([{ rule: id, version: 1, evaluation: quiet, transitions: [] }])
        assert.strictEqual(Option.getOrThrow(stored!).evaluation.value, 10)
        const firing = { ...quiet, state: "firing" as const, value: 95, cursor: micros(T0 + 2) }
        const transition = { from: "ok" as const, to: "firing" as const, at: t0, value: 95, ts: t0, startsAt: t0 }
        yield* alerts.commitEvaluations([
          { rule: id, version: 2, evaluation: firing, transitions: [{ ...transition, silenced: false }] }
        ])
        assert.deepStrictEqual(seen, [1, 2])
        assert.strictEqual(db.pragma("synchronous", { simple: true }), 2)
      })
    )
  )
})
