/**
 * Alert lease owners on PostgreSQL (docs/api.md section 18; `internal/leaseOwner.ts`): a lease is over at once when
 * no session holds its owner's advisory lock, never while one does, and an owner whose lock connection breaks takes
 * its lock again on a new connection.
 */
import { type AccountStore, AlertStore, micros } from "@dashstream/core"
import { AlertFixtures } from "@dashstream/core/testing"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { Context, Effect, Exit, Schedule, Scope } from "effect"
import { makePool } from "../src/internal/pool.js"
import { OWNER_LOCK_SPACE } from "../src/internal/leaseOwner.js"
import { parseUrl } from "../src/index.js"
import { openTestDatabase, withSchema } from "../src/testing/index.js"
import { freshSchema, processes, T0 } from "./fixtures.js"

const db = await openTestDatabase()
afterAll(() => db.close())
const url = db.url

const at = (seconds: number) => micros(T0 + seconds * 1_000_000)

/** A schema with one firing transition to one webhook: its delivery is pending from `at(10)`. */
const oneDelivery = (schema: string) =>
  Effect.gen(function* () {
    const [built] = yield* processes(url, schema, 1)
    const stores = built as unknown as Context.Context<AccountStore | AlertStore>
    const { commitOne, evaluationAfter, firing, newAccount, newReceiver, newRule, newWidget } = AlertFixtures
    return yield* Effect.provide(
      Effect.gen(function* () {
        const account = yield* newAccount()
        const rule = yield* newRule(yield* newWidget(account, "cpu"), [yield* newReceiver(account, "ops")])
        yield* commitOne(rule.id, 1, evaluationAfter("firing", 10), [firing(10, 95)])
        return yield* AlertStore
      }),
      stores
    )
  })

/** Runs `sql` on the schema with a pool of its own. */
const query = (schema: string, sql: string, values: Array<unknown> = []) =>
  Effect.acquireUseRelease(
    Effect.map(parseUrl(withSchema(url, schema)), (config) => makePool(config, { max: 1 })),
    (pool) => Effect.promise(() => pool.query(sql, values).then((r) => r.rows)),
    (pool) => Effect.promise(() => pool.end())
  )

const ownerLocked = (schema: string, owner: number) =>
  Effect.map(
    query(
      schema,
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
        AND classid = $1::int::oid AND objid = $2::int::oid`,
      [OWNER_LOCK_SPACE, owner]
    ),
    (rows) => rows.map((r) => r.pid as number)
  )

describe("alert lease owners on PostgreSQL", () => {
  it.scopedLive(
    "a lease whose owner holds no lock is claimed at once; a live owner's is not",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("lease")
        const alerts = yield* oneDelivery(schema)
        const live = yield* alerts.openDeliveryOwner
        const other = yield* alerts.openDeliveryOwner
        const [claimed] = yield* alerts.claimDeliveries(live, at(20), at(1000), 10)
        assert.isDefined(claimed)
        assert.deepStrictEqual(yield* alerts.claimDeliveries(other, at(21), at(1000), 10), [])
        // The lease handed to an owner that no session holds, as a killed process leaves it.
        const gone = live === 7 ? 8 : 7
        yield* query(schema, "UPDATE alert_deliveries SET lease_owner = $1", [gone])
        assert.deepStrictEqual((yield* ownerLocked(schema, gone)).length, 0)
        const taken = yield* alerts.claimDeliveries(other, at(22), at(1000), 10)
        assert.deepStrictEqual(
          taken.map((d) => d.id),
          [claimed!.id]
        )
      }),
    60_000
  )

  it.scopedLive(
    "an owner whose lock connection breaks takes its lock again on a new connection",
    () =>
      Effect.gen(function* () {
        const schema = freshSchema("lease")
        const alerts = yield* oneDelivery(schema)
        const owner = yield* alerts.openDeliveryOwner
        const [before] = yield* ownerLocked(schema, owner)
        assert.isDefined(before)
        yield* query(schema, "SELECT pg_terminate_backend($1)", [before])
        const after = yield* ownerLocked(schema, owner).pipe(
          Effect.filterOrFail((pids) => pids.length === 1 && pids[0] !== before),
          Effect.retry({ times: 150, schedule: Schedule.spaced("100 millis") })
        )
        assert.notStrictEqual(after[0], before)
        // Closing the owner frees its lock.
        const scope = yield* Scope.make()
        const second = yield* Scope.extend(alerts.openDeliveryOwner, scope)
        assert.strictEqual((yield* ownerLocked(schema, second)).length, 1)
        yield* Scope.close(scope, Exit.void)
        assert.strictEqual((yield* ownerLocked(schema, second)).length, 0)
      }),
    60_000
  )
})
