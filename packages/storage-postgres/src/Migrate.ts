import { type StorageFailure, summarizeBlock } from "@dashstream/core"
import { Effect, Runtime } from "effect"
import { Kysely, type Migration, Migrator, PostgresDialect, sql } from "kysely"
import { toStorageFailure } from "./internal/errors.js"
import { makePool } from "./internal/pool.js"
import * as m0001 from "./migrations/0001_initial.js"
import * as m0002 from "./migrations/0002_live.js"
import * as m0003 from "./migrations/0003_dashboards.js"
import * as m0004 from "./migrations/0004_console_sessions.js"
import * as m0005 from "./migrations/0005_rotations.js"
import * as m0006 from "./migrations/0006_entries_without_id.js"
import * as m0007 from "./migrations/0007_entry_blocks.js"
import * as m0008 from "./migrations/0008_group_commit_conditions.js"
import * as m0009 from "./migrations/0009_view_token_text.js"
import * as m0010 from "./migrations/0010_alerts.js"
import * as m0011 from "./migrations/0011_alert_leases.js"
import * as m0012 from "./migrations/0012_rule_signals.js"
import * as m0013 from "./migrations/0013_rule_receiver_signals.js"
import * as m0014 from "./migrations/0014_block_summaries.js"
import type { PostgresConfig } from "./PostgresConfig.js"

/** Every migration, by name; names sort in the order they run. Never edit one that has shipped: add a new one. */
export const migrations: Readonly<Record<string, Migration>> = {
  "0001_initial": m0001,
  "0002_live": m0002,
  "0003_dashboards": m0003,
  "0004_console_sessions": m0004,
  "0005_rotations": m0005,
  "0006_entries_without_id": m0006,
  "0007_entry_blocks": m0007,
  "0008_group_commit_conditions": m0008,
  "0009_view_token_text": m0009,
  "0010_alerts": m0010,
  "0011_alert_leases": m0011,
  "0012_rule_signals": m0012,
  "0013_rule_receiver_signals": m0013,
  "0014_block_summaries": m0014
}

/**
 * Brings the schema of `config` up to date (the CLI's `migrate`, and `serve` before it listens) and returns the
 * names of the migrations it applied (`[]` when already up to date). Creates `config.schema` if missing.
 *
 * Safe when several processes start at once: the whole run, including the creation of the schema and of Kysely's
 * migration tables, holds a session-level `pg_advisory_lock` keyed on the schema, so the others wait and then find
 * nothing to do. Fails with `StorageUnavailable` when the server is unreachable, `StorageError` when a migration
 * fails (that migration's transaction is rolled back).
 */
export const migrate = (config: PostgresConfig): Effect.Effect<ReadonlyArray<string>, StorageFailure> =>
  Effect.flatMap(Effect.runtime<never>(), (runtime) => {
    // 0007 converts every entry (minutes on a large database): its progress is logged.
    const told: m0007.Progress = (converted, total) =>
      Runtime.runSync(runtime)(
        Effect.logInfo(`migration 0007_entry_blocks: ${converted} of ${total} entries converted into blocks`)
      )
    // 0014 summarises every stored block (core's rule, given to it): its progress is logged too.
    const summarised: m0014.Progress = (done, total) =>
      Runtime.runSync(runtime)(Effect.logInfo(`migration 0014_block_summaries: ${done} of ${total} blocks summarised`))
    const all = {
      ...migrations,
      "0007_entry_blocks": { ...m0007, up: (db: Kysely<any>) => m0007.convert(db, told) },
      "0014_block_summaries": { ...m0014, up: (db: Kysely<any>) => m0014.addSummaries(db, summarizeBlock, summarised) }
    }
    return run(config, all)
  })

const run = (
  config: PostgresConfig,
  all: Readonly<Record<string, Migration>>
): Effect.Effect<ReadonlyArray<string>, StorageFailure> =>
  Effect.acquireUseRelease(
    // Two connections: one holds the advisory lock, the Migrator runs on the other. No statement timeout: waiting
    // for another process's migration is expected.
    Effect.sync(
      () =>
        new Kysely<any>({
          dialect: new PostgresDialect({ pool: makePool(config, { max: 2, statementTimeout: false }) })
        })
    ),
    (kysely) =>
      Effect.tryPromise({
        try: () =>
          kysely.connection().execute(async (lockConnection) => {
            const key = `dashstream migrate ${config.schema}`
            await sql`select pg_advisory_lock(hashtextextended(${key}, 0))`.execute(lockConnection)
            try {
              // Checked first: CREATE SCHEMA IF NOT EXISTS needs the CREATE privilege even when the schema exists.
              const found = await sql`select 1 from pg_namespace where nspname = ${config.schema}`.execute(kysely)
              if (found.rows.length === 0)
                await sql`create schema if not exists ${sql.id(config.schema)}`.execute(kysely)
              const migrator = new Migrator({
                db: kysely,
                provider: { getMigrations: async () => all },
                ...(config.schema === "public" ? {} : { migrationTableSchema: config.schema })
              })
              const { error, results } = await migrator.migrateToLatest()
              if (error !== undefined) throw error
              return (results ?? []).filter((r) => r.status === "Success").map((r) => r.migrationName)
            } finally {
              await sql`select pg_advisory_unlock(hashtextextended(${key}, 0))`.execute(lockConnection)
            }
          }),
        catch: toStorageFailure
      }),
    (kysely) => Effect.promise(() => kysely.destroy().catch(() => undefined))
  )
